"""Plain-text helpers shared by the corpus, the offline judge and the reports: tokens, sentences, hashing.

Deterministic and dependency-free, so ids and offline labels never change between machines or versions of a library.

Texts are folded three ways, each for its own reason:

* :func:`normalize`, for contents (a quote inside a chunk, a judge's reason): NFKC, case folded, whitespace folded,
  punctuation kept.
* :func:`question_key`, to match a question written elsewhere (a RAGAS row, a trace) to a golden question: the words
  as the aligner compares them (:func:`normalized_words`: NFKC, case folded, HTML tags and punctuation dropped,
  ``_`` a separator, a word hyphenated across a line break one word), so that loaders and exporters that differ in
  such details still match.
* :func:`query_log_key`, to group a query log's lines (``assay build --queries``): lower case, punctuation dropped,
  whitespace folded. Its value is hashed into the ids of the questions built from the log (``lq-`` + hash) and
  drives the sampling, so it is kept exactly as it was: a broader fold would rename those questions. It differs from
  :func:`question_key` on ``_`` (kept), case (``lower``, not ``casefold``: ``ß`` stays), NFKC forms (``ﬁ`` stays),
  HTML tags (their names are words) and line-break hyphens (two words).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from array import array
from typing import Any

__all__ = [
    "STOPWORDS",
    "WORD_RUN",
    "blank_markup",
    "blank_tags",
    "canonical_json",
    "content_hash",
    "count_tokens",
    "fold_word",
    "normalize",
    "normalized_words",
    "numbers",
    "query_log_key",
    "question_key",
    "sentences",
    "terms",
    "words",
    "words_with_offsets",
]

_PUNCT = re.compile(r"[^\w\s]+")  # what query_log_key drops
_WORD = re.compile(r"\w+(?:[-'’.]\w+)*", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?:%|\b)")
# A sentence ends at . ! ? (or their CJK forms) followed by space and an upper-case letter, digit or quote, or at a
# blank line. Common abbreviations do not end a sentence.
_ABBREVIATIONS = {"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "inc", "ltd", "no", "fig", "approx", "st"}
_SENTENCE_END = re.compile(r"([.!?。！？]+[\"'”’)\]]*)(\s+)(?=[\"'“‘(\[]?[\w])|\n\s*\n")

STOPWORDS = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have having he her here
    hers him his how i if in into is it its itself just me more most my no nor not of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there these they this those
    through to too under until up very was we were what when where which while who whom why will with would you your
    yours""".split()
)


def normalize(text: str) -> str:
    """Unicode NFKC, lower case, whitespace folded: the form used for matching and hashing of contents."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def words(text: str) -> list[str]:
    """Word tokens of ``text`` in lower case (letters and digits; inner hyphens, apostrophes and dots kept)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def terms(text: str) -> list[str]:
    """Content words: :func:`words` without stop words and one-letter tokens (digits are kept)."""
    return content_terms(words(text))


def content_terms(tokens: list[str]) -> list[str]:
    """The content words among :func:`words` output (what :func:`terms` keeps)."""
    return [w for w in tokens if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def numbers(text: str) -> list[str]:
    """Numbers as written (``3``, ``1,250``, ``4.5``, ``20%``), with thousands separators removed."""
    return [m.group(0).replace(",", "") for m in _NUMBER.finditer(text)]


def count_tokens(text: str) -> int:
    """An estimate of model tokens: about 4 characters or 0.75 words per token, whichever is larger.

    Good to ~15% for English prose against common BPE tokenizers; used for chunk sizes and dry-run estimates, never
    for billing (bills use the token counts the server reports).
    """
    return max(len(text) // 4, round(len(text.split()) / 0.75)) if text.strip() else 0


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences; whitespace inside each is folded. Blank lines always end a sentence."""
    out: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if match.group(1):
            before = text[start : match.start(1)].rsplit(None, 1)
            last = before[-1].casefold().rstrip(".") if before else ""
            if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
                continue
            end = match.end(1)
        else:
            end = match.start()
        piece = " ".join(text[start:end].split())
        if piece:
            out.append(piece)
        start = match.end()
    tail = " ".join(text[start:].split())
    if tail:
        out.append(tail)
    return out


# Words as passages, quotes and documents are matched: runs of letters and digits (a word hyphenated across a line
# break is one word); HTML tags and comments are not words.
WORD_RUN = re.compile(r"[^\W_]+(?:-[ \t]*\r?\n[ \t]*[^\W_]+)*")
_HYPHEN_BREAK = re.compile(r"-[ \t]*\r?\n[ \t]*")
_TAG_RE = re.compile(r"</?[A-Za-z][^<>\n]{0,300}>|<!--.*?-->", re.DOTALL)
# ASCII letters and digits lower-cased, every other ASCII character a space
_ASCII_WORDS = {i: (chr(i).lower() if chr(i).isalnum() else " ") for i in range(128)}


def fold_word(word: str) -> list[str]:
    """A word as matched: hyphen breaks removed, NFKC, case folded (one written word may give several)."""
    if "\n" in word:
        word = _HYPHEN_BREAK.sub("", word)
    if word.isascii():
        return [word.lower()]
    return WORD_RUN.findall(unicodedata.normalize("NFKC", word).casefold())


def blank_tags(text: str) -> str:
    """HTML tags and comments replaced by spaces of the same length (offsets are kept)."""
    if "<" not in text:
        return text
    return _TAG_RE.sub(lambda m: " " * (m.end() - m.start()), text)


_TAG_HEAD = re.compile(r"<[A-Za-z/!][^<>\n]{0,300}$")  # a tag cut by the end of a passage
_TAG_TAIL = re.compile(r"^[^<>\n]{0,300}?=\s*[\"'][^<>\n]{0,300}?>")  # a tag's attributes cut by its start


def blank_markup(text: str) -> str:
    """:func:`blank_tags`, and a tag cut by either end of a passage (``<img src="a.png`` at its end, ``alt="x">`` at
    its start) blanked too: a splitter may cut inside a tag, and its pieces are markup, not text."""
    text = blank_tags(text)
    if ">" in text:
        text = _TAG_TAIL.sub(lambda m: " " * (m.end() - m.start()), text, count=1)
    if "<" in text:
        text = _TAG_HEAD.sub(lambda m: " " * (m.end() - m.start()), text, count=1)
    return text


def normalized_words(text: str) -> list[str]:
    """The words of ``text`` as the aligner compares them (see the module docstring)."""
    text = blank_tags(text)
    if text.isascii() and ("-" not in text or not _HYPHEN_BREAK.search(text)):
        return text.translate(_ASCII_WORDS).split()  # the same words as WORD_RUN finds in ASCII text, faster
    return [w for raw in WORD_RUN.findall(text) for w in fold_word(raw)]


def question_key(text: str) -> str:
    """A question as runs (RAGAS rows, traces) are matched to golden questions: its :func:`normalized_words` joined
    by single spaces (module doc)."""
    return " ".join(normalized_words(text))


def query_log_key(text: str) -> str:
    """A query log's line as its lines are grouped and its questions named: lower case, punctuation removed,
    whitespace collapsed (module doc: kept as it is, ids depend on it)."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def words_with_offsets(text: str) -> tuple[list[str], array[int], array[int]]:
    """The words of ``text`` as :func:`normalized_words` gives them, with each word's start and end offset in
    ``text`` (a written word that folds into several gives each of them its offsets)."""
    words: list[str] = []
    starts, ends = array("l"), array("l")
    ascii_text = text.isascii()
    for m in WORD_RUN.finditer(blank_tags(text)):
        raw = m.group()
        folded = [raw.lower()] if ascii_text and "\n" not in raw else fold_word(raw)
        for w in folded:
            words.append(w)
            starts.append(m.start())
            ends.append(m.end())
    return words, starts, ends


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces and no ASCII escaping: equal values give equal strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(value: str | bytes, size: int = 8) -> str:
    """A short hex blake2b digest (``size`` bytes) of a string or bytes: stable ids and prompt hashes."""
    data = value.encode("utf-8") if isinstance(value, str) else value
    return hashlib.blake2b(data, digest_size=size).hexdigest()
