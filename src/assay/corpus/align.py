"""Locate passages in documents: the character span of a golden document that a retrieved text came from.

A user's RAG system loads and chunks the same documents its own way, so its passages are not assay's chunks. This
module finds each one in the golden documents through an index built once over them (never a scan of every document
per passage), and says how it was matched:

* **exact**: the passage's words, in order and contiguous, are a run of the document's words. Words are runs of
  letters and digits after Unicode NFKC and case folding; whitespace, punctuation and Markdown syntax (``#``, ``*``,
  ``_``, backticks, brackets) are not words, HTML tags (``<p>``, ``</div>``) are skipped on both sides, and a word
  hyphenated across a line break (``exam-\\nple``) is one word. Score 1.0.
* **approximate**: the densest region of the document holding the passage's words in about their order (a diagonal
  band of (passage word, document word) matches, anchored on words that are rare in the document). It tolerates
  what differs between loaders: a title prepended, link targets or tags kept or dropped, ellipses, a sentence cut.
  ``score`` = the share of the passage's words found in the span; accepted at ``score >= min_score`` (0.6 by
  default: most of the passage must come from that document).
* **unmatched**: no document holds enough of it.

The index, built once: every document's word triples whose CRC-32 (of the three words joined by ``\\x1f``) is a
multiple of 8 ("anchors", one triple in eight, chosen by content alone, so a passage picks the same triples its
document did, in every process and on every machine) with where they occur, and an inverted index of words to
documents. An exact occurrence of a passage holds each of the passage's anchors at the same offset, so looking up
one anchor gives every place it can be (a passage too short to hold an anchor looks up its rarest words instead).
Approximate candidates are the documents holding most of the passage's anchors (else its rarest words). Only the
few documents so named are read.

Which place wins when several could (documents are numbered in document-id order, whatever order they were given
in; "id order" is Python's string order; no choice depends on a hash seed or on the order of a set or a dict):

1. **Exact**: among every place holding the passage exactly (in the documents named by ``doc_ids`` when given),
   the lowest document id, then the earliest position in that document.
2. **Approximate candidates**: the three documents holding the most of the passage's anchors, ties by document id;
   without an anchor in common, the three holding the most of its rarest words (words taken rarest first, ties by
   the word), ties by document id. With ``doc_ids``, every document named.
3. **Approximate**: the candidates are read in that order (most votes first); the first to score 0.95 or more wins
   and the rest are not read (a speed-up: most passages that match at all score that much in their first
   candidate); else the highest score wins, ties by document id, then the earliest span. Within a document: the
   densest band of matches, the earliest of equally dense ones.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import zlib
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from assay.text import normalized_words, words_with_offsets
from assay.types import Document

__all__ = ["Aligner", "Span", "normalized_words"]

_ANCHOR_EVERY = 8  # one word triple in eight, on average, is an anchor
_POSITION_BITS = 24  # an anchor stores (document number << 24) | word position
_POSITION_MASK = (1 << _POSITION_BITS) - 1
_RARE_VOTERS = 8
_VOTE_BUDGET = 4096  # postings read to pick an approximate passage's candidate documents
_CANDIDATES = 3  # documents read per approximate passage (fewer when one scores _GOOD_ENOUGH)
_GOOD_ENOUGH = 0.95
_ANCHOR_MAX = 16  # a word occurring more often than this in a document does not anchor the band


@dataclass(frozen=True)
class Span:
    """Where a passage was found: document, character offsets ``[start, end)`` into its text, how, how well."""

    doc_id: str
    start: int
    end: int
    match: str  # "offsets" | "exact" | "approximate"
    score: float


@dataclass
class _Doc:
    id: str
    text: str
    norm: str  # the words joined by single spaces
    starts: array[int]
    ends: array[int]
    at: array[int]  # where each word starts in ``norm``


def _anchors(words: Sequence[str], first: int = 0, stop: int | None = None) -> Iterator[tuple[int, int]]:
    """``(position, key)`` of the anchor word triples among ``words[first:stop]``: those whose key, the CRC-32 of the
    three words joined by ``\\x1f`` (never in a word), is a multiple of 8. Chosen by content alone, the same in
    every process (Python's built-in string hash is salted per process), so a passage and its document pick the
    same triples. Two triples may share a key (32 bits): a lookup then returns more places, each one checked."""
    end = len(words) - 2 if stop is None else min(stop, len(words)) - 2
    crc32 = zlib.crc32
    for i in range(first, end):
        key = crc32(f"{words[i]}\x1f{words[i + 1]}\x1f{words[i + 2]}".encode())
        if key % _ANCHOR_EVERY == 0:
            yield i, key


class Aligner:
    """An index over ``documents`` that locates passages in them (see the module docstring).

    ``min_score``: the least share of a passage's words an approximate match must find in its span. Documents are
    numbered in id order (the order ties are broken in), so the order they are given in does not matter.
    """

    def __init__(self, documents: Iterable[Document], *, min_score: float = 0.6) -> None:
        if not 0.0 < min_score <= 1.0:
            raise ValueError(f"min_score must be in (0, 1], got {min_score}")
        self.min_score = min_score
        self._docs: list[_Doc] = []
        self._by_id: dict[str, int] = {}
        self._postings: dict[str, array[int]] = {}
        self._anchors: dict[int, int | list[int]] = {}
        for doc in sorted(documents, key=lambda d: (d.id, d.text)):
            self._add(doc)
        self._df = {word: len(posting) for word, posting in self._postings.items()}

    def _add(self, doc: Document) -> None:
        words, starts, ends = words_with_offsets(doc.text)
        index = len(self._docs)
        at: array[int] = array("l", [0] * len(words))
        offset = 0
        for i, word in enumerate(words):
            at[i] = offset
            offset += len(word) + 1
        self._docs.append(_Doc(doc.id, doc.text, " ".join(words), starts, ends, at))
        self._by_id[doc.id] = index
        anchors = self._anchors
        for i, key in _anchors(words):
            packed = index << _POSITION_BITS | i
            old = anchors.get(key)
            if old is None:
                anchors[key] = packed
            elif isinstance(old, int):
                anchors[key] = [old, packed]
            else:
                old.append(packed)
        for word in set(words):
            posting = self._postings.get(word)
            if posting is None:
                posting = self._postings[word] = array("l")
            posting.append(index)

    def word_offsets(self, doc_id: str) -> tuple[array[int], array[int]]:
        """Start and end offsets of the words of a document, in order (the words spans are measured in)."""
        doc = self._docs[self._by_id[doc_id]]
        return doc.starts, doc.ends

    # ------------------------------------------------------------------ locating

    def locate(self, text: str, *, doc_ids: Sequence[str] = ()) -> Span | None:
        """The span ``text`` came from: exact first, then approximate; None when unmatched. ``doc_ids`` (known
        documents, in any order) restrict the search to them. Ties: see the module docstring."""
        words = normalized_words(text)
        if not words:
            return None
        candidates = self._restricted(doc_ids)
        exact = self._exact(words, candidates)
        return exact if exact is not None else self._approximate(words, candidates)

    def exact_places(self, text: str, *, doc_ids: Sequence[str] = (), most: int = 64) -> list[Span]:
        """Every place ``text`` stands exactly (as :meth:`locate`'s exact match: the end words may be cut), in the
        documents named by ``doc_ids`` when given, else in any: in document-id order, then by position; at most
        ``most`` of them (a text repeated more often than that is boilerplate, not a place)."""
        words = normalized_words(text)
        if not words:
            return []
        candidates = self._restricted(doc_ids)
        inner = words if len(words) < 3 else words[1:-1]
        needle = " ".join(inner)
        out: list[Span] = []
        for index in candidates if candidates is not None else self._holding(inner):
            doc = self._docs[index]
            for at in _occurrences(doc.norm, needle):
                first = doc.norm.count(" ", 0, at)
                if len(words) < 3:
                    out.append(self._span(index, first, first + len(words) - 1, "exact", 1.0))
                elif (found := _cut_span(doc, first - 1, words, needle)) is not None:
                    out.append(found)
                if len(out) >= most:
                    return out
        return out

    def _restricted(self, doc_ids: Sequence[str]) -> list[int] | None:
        if not doc_ids:
            return None
        return sorted({self._by_id[d] for d in doc_ids if d in self._by_id})  # id order

    def _exact(self, words: list[str], candidates: list[int] | None) -> Span | None:
        """The passage's words as a run of a document's words; the first and last may be cut (a window taken by
        characters starts and ends inside words): then the inner words match exactly and the end words are the
        end of the word before and the start of the word after. Documents are read in id order (``candidates`` and
        :meth:`_holding` are sorted document numbers), each from its start: the first place found wins."""
        if len(words) < 3:
            needle = " ".join(words)
            for index in candidates if candidates is not None else self._holding(words):
                for at in _occurrences(self._docs[index].norm, needle):
                    first = self._docs[index].norm.count(" ", 0, at)
                    return self._span(index, first, first + len(words) - 1, "exact", 1.0)
            return None
        inner = words[1:-1]
        needle = " ".join(inner)
        if candidates is None:
            best: tuple[int, int, int] | None = None  # (hits, position, key): an anchor found in few places
            for i, key in itertools.islice(_anchors(words, 1, len(words) - 1), 6):
                count = self._hit_count(key)
                if best is None or count < best[0]:
                    best = (count, i, key)
                if count <= 2:
                    break
            if best is not None:
                return self._exact_at_anchor(words, needle, best[1], best[2])
        for index in candidates if candidates is not None else self._holding(inner):
            found = self._ends(self._docs[index], needle, words)
            if found is not None:
                return found
        return None

    def _hit_count(self, key: int) -> int:
        hits = self._anchors.get(key)
        return 0 if hits is None else 1 if isinstance(hits, int) else len(hits)

    def _exact_at_anchor(self, words: list[str], needle: str, i: int, key: int) -> Span | None:
        """Every exact occurrence holds each of the passage's anchors at the same place: check each document
        position one anchor (the one found in the fewest places) has, in stored order: by document number (id
        order), then position, so the first that holds the passage is the lowest id's earliest place."""
        hits = self._anchors.get(key)
        for packed in (hits,) if isinstance(hits, int) else hits or ():
            doc = self._docs[packed >> _POSITION_BITS]
            found = _cut_span(doc, (packed & _POSITION_MASK) - i, words, needle)
            if found is not None:
                return found
        return None

    def _ends(self, doc: _Doc, needle: str, words: list[str]) -> Span | None:
        """The first place of ``doc`` where ``needle`` (the inner words) occurs between the passage's end words."""
        for at in _occurrences(doc.norm, needle):
            found = _cut_span(doc, doc.norm.count(" ", 0, at) - 1, words, needle)
            if found is not None:
                return found
        return None

    def _holding(self, words: list[str]) -> list[int]:
        """Documents that may hold all of ``words``: those holding both the rarest word of a sample of the first
        half and the rarest of a sample of the second half (postings are sorted document numbers)."""
        df = self._df
        half, step = max(1, len(words) // 2), max(1, len(words) // 64)
        try:
            picks = [min(part, key=df.__getitem__) for part in (words[:half:step], words[half::step]) if part]
        except KeyError:
            return []  # a word no document has: no exact match
        lists = sorted((self._postings[w] for w in picks), key=len)
        small, big = lists[0], lists[-1]
        if len(lists) == 1 or len(small) <= 2:
            return list(small)
        return sorted(set(small).intersection(big))

    def _span(self, index: int, first: int, last: int, match: str, score: float) -> Span:
        doc = self._docs[index]
        return Span(doc.id, doc.starts[first], doc.ends[last], match, round(score, 6))

    def _anchored(self, words: list[str]) -> list[int]:
        """Candidate documents for an approximate match: those holding the most of the passage's anchors."""
        votes: Counter[int] = Counter()
        for _, key in _anchors(words):
            hits = self._anchors.get(key)
            if isinstance(hits, int):
                votes[hits >> _POSITION_BITS] += 1
            elif hits:
                votes.update({packed >> _POSITION_BITS for packed in hits})
        return _most_voted(votes)

    def _voted(self, words: list[str]) -> list[int]:
        """Candidate documents for an approximate match: those holding most of the passage's rarest words (words
        taken rarest first while their postings stay under a budget, at least two)."""
        df, postings = self._df, self._postings
        known = sorted({w for w in words if w in df}, key=lambda w: (df[w], w))  # ties by the word, not set order
        votes: Counter[int] = Counter()
        budget = 0
        for i, word in enumerate(known[:_RARE_VOTERS]):
            budget += df[word]
            if i >= 2 and budget > _VOTE_BUDGET:
                break
            votes.update(postings[word])
        return _most_voted(votes)

    def _approximate(self, words: list[str], candidates: list[int] | None) -> Span | None:
        """The first candidate band scoring ``_GOOD_ENOUGH``, else the best: highest score, then lowest document number
        (id order), then earliest (rule 3 of the module docstring)."""
        best: tuple[float, int, int, int] | None = None  # (-score, document, first word, last word): least is best
        wanted = set(words)
        for index in candidates if candidates is not None else self._anchored(words) or self._voted(words):
            found = self._band(words, self._word_positions(index, wanted))
            if found is not None and (best is None or (-found[0], index, found[1]) < best[:3]):
                best = (-found[0], index, found[1], found[2])
            if best is not None and -best[0] >= _GOOD_ENOUGH:
                break
        if best is None or -best[0] < self.min_score:
            return None
        score, index, first, last = best
        return self._span(index, first, last, "approximate", -score)

    def _word_positions(self, index: int, wanted: set[str]) -> dict[str, list[int]]:
        """Positions in a document of the words in ``wanted``."""
        positions: dict[str, list[int]] = {}
        for i, word in enumerate(self._docs[index].norm.split(" ")):
            if word in wanted:
                found = positions.get(word)
                if found is None:
                    positions[word] = [i]
                else:
                    found.append(i)
        return positions

    def _band(self, words: list[str], positions: dict[str, list[int]]) -> tuple[float, int, int] | None:
        """(score, first word, last word) of the densest diagonal band of matches, or None without an anchor."""
        diagonals = sorted(
            p - i for i, word in enumerate(words) if len(found := positions.get(word, ())) <= _ANCHOR_MAX for p in found
        )
        if not diagonals:
            return None
        width = max(8, len(words) // 4)
        low, _ = _densest(diagonals, width)
        lo, hi = low - width // 2, low + width + width // 2
        matched = [p for i, word in enumerate(words) if (p := _near(positions.get(word), i + lo, i + hi)) is not None]
        if not matched:
            return None
        return len(matched) / len(words), min(matched), max(matched)


def _most_voted(votes: Counter[int]) -> list[int]:
    """The ``_CANDIDATES`` documents with the most votes, ties by document number (id order, never insertion order)."""
    return heapq.nsmallest(_CANDIDATES, votes, key=lambda index: (-votes[index], index))


def _cut_span(doc: _Doc, first: int, words: list[str], needle: str) -> Span | None:
    """The span of ``words`` in ``doc`` if they stand there from word ``first``: the inner words (``needle``) exactly,
    the first word the end of the document's word (or all of it), the last word the start of its word."""
    last = first + len(words) - 1
    if first < 0 or last >= len(doc.at) or doc.at[first + 1] + len(needle) + 1 != doc.at[last]:
        return None  # the inner words must end where the document's word ``last`` begins (whole words)
    if not doc.norm.startswith(needle, doc.at[first + 1]):
        return None
    head = doc.norm[doc.at[first] : doc.at[first + 1] - 1]
    tail = doc.norm[doc.at[last] : doc.at[last + 1] - 1 if last + 1 < len(doc.at) else len(doc.norm)]
    if not (head.endswith(words[0]) and tail.startswith(words[-1])):
        return None
    start = doc.starts[first] if head == words[0] else max(doc.starts[first], doc.ends[first] - len(words[0]))
    stop = doc.ends[last] if tail == words[-1] else min(doc.ends[last], doc.starts[last] + len(words[-1]))
    return Span(doc.id, start, stop, "exact", 1.0)


def _densest(values: list[int], width: int) -> tuple[int, int]:
    """(start, count) of the window ``[start, start + width]`` over sorted ``values`` holding the most of them."""
    best_start, best_count, j = values[0], 0, 0
    for i, value in enumerate(values):
        while value - values[j] > width:
            j += 1
        if i - j + 1 > best_count:
            best_start, best_count = values[j], i - j + 1
    return best_start, best_count


def _near(found: list[int] | None, lo: int, hi: int) -> int | None:
    """The first position in ``[lo, hi]`` of a sorted list, or None."""
    if not found:
        return None
    at = bisect.bisect_left(found, lo)
    return found[at] if at < len(found) and found[at] <= hi else None


def _occurrences(haystack: str, needle: str) -> Iterator[int]:
    """Character positions where ``needle`` occurs in ``haystack`` as whole words (both space-joined words)."""
    at = haystack.find(needle)
    while at >= 0:
        end = at + len(needle)
        if (at == 0 or haystack[at - 1] == " ") and (end == len(haystack) or haystack[end] == " "):
            yield at
        at = haystack.find(needle, at + 1)
