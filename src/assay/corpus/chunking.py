"""Split documents into chunks: by headings, then paragraphs, then sentences, packed to a token budget.

How :func:`chunk_document` works, for a document's ``text``:

1. **Sections.** Markdown ATX headings (``#`` to ``######`` at the start of a line, outside fenced code blocks)
   cut the text into sections; each keeps its heading path (``["Policy", "Refunds", "Exceptions"]``). A heading
   with no text before the next heading is folded into the next section (which keeps its own, deeper path).
2. **Units.** A section's paragraphs (separated by blank lines) are split into sentences
   (:func:`assay.text.sentences`); a sentence longer than ``max_tokens`` is cut at word boundaries.
3. **Packing.** Whole paragraphs are added while the chunk stays within ``max_tokens``
   (:func:`assay.text.count_tokens` of the chunk text); a paragraph that does not fit starts a new chunk, and one
   that is too big on its own is packed sentence by sentence. A new chunk in the same section starts with the last
   sentences of the previous one, up to ``overlap`` tokens (never the whole previous chunk, never more than fits).
4. **Tiny fragments.** A section's last chunk whose new text is under ``min_tokens`` is absorbed by the chunk
   before it; any chunk still under ``min_tokens`` is merged into the neighbour sharing more of its heading path
   (the previous one on a tie: "Exceptions" joins its parent "Refunds" rather than the next sibling section).
   A merged chunk's heading path is the common prefix of the paths it spans.
5. **Short documents.** A document of at most ``max_tokens`` tokens is one chunk.

Offsets: ``chunk.text == doc.text[chunk.start:chunk.end]`` exactly (no whitespace normalisation); the span never
begins or ends with whitespace. Chunks of one section overlap by the shared sentences.

Ids: ``f"{doc_id}#{ordinal}-{content_hash(text)[:8]}"``. Chunking is deterministic, so an unchanged document gives
the same ids on every run, and editing one document changes only the ids of that document's chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from assay.errors import ConfigError
from assay.text import content_hash, count_tokens, sentences
from assay.types import Chunk, Document

__all__ = ["chunk_corpus", "chunk_document", "chunk_id", "heading_sections"]

_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")
_WORD_SPAN = re.compile(r"\S+")


@dataclass(frozen=True)
class Section:
    """A span of a document under one heading path (``start``/``end`` are offsets into the text)."""

    path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class _Piece:
    start: int
    end: int
    path: tuple[str, ...]
    new_start: int  # where the text not shared with the previous chunk begins


def chunk_id(doc_id: str, ordinal: int, text: str) -> str:
    """The stable chunk id: document id, ordinal and the first 8 hex digits of the text's content hash."""
    return f"{doc_id}#{ordinal}-{content_hash(text)[:8]}"


def chunk_corpus(
    documents: Iterable[Document], *, max_tokens: int = 512, overlap: int = 64, min_tokens: int = 32
) -> list[Chunk]:
    """Chunk every document, in order (see :func:`chunk_document`)."""
    out: list[Chunk] = []
    for doc in documents:
        out.extend(chunk_document(doc, max_tokens=max_tokens, overlap=overlap, min_tokens=min_tokens))
    return out


def chunk_document(doc: Document, *, max_tokens: int = 512, overlap: int = 64, min_tokens: int = 32) -> list[Chunk]:
    """Split one document into chunks (module docstring); a blank document gives no chunks."""
    _check_settings(max_tokens, overlap, min_tokens)
    text = doc.text
    sections = heading_sections(text)
    if count_tokens(text) <= max_tokens:
        pieces = _whole(text, sections)
    else:
        pieces = []
        for section in sections:
            pieces.extend(_pack_section(text, section, max_tokens, overlap, min_tokens))
        pieces = _merge_tiny(text, pieces, min_tokens)
    return [_make_chunk(doc, i, piece) for i, piece in enumerate(pieces)]


def _check_settings(max_tokens: int, overlap: int, min_tokens: int) -> None:
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}")
    if not 0 <= overlap < max_tokens:
        raise ConfigError(f"overlap must be between 0 and max_tokens - 1 ({max_tokens - 1}), got {overlap}")
    if not 0 <= min_tokens <= max_tokens:
        raise ConfigError(f"min_tokens must be between 0 and max_tokens ({max_tokens}), got {min_tokens}")


def _make_chunk(doc: Document, ordinal: int, piece: _Piece) -> Chunk:
    body = doc.text[piece.start : piece.end]
    return Chunk(
        id=chunk_id(doc.id, ordinal, body),
        doc_id=doc.id,
        ordinal=ordinal,
        text=body,
        heading_path=list(piece.path),
        start=piece.start,
        end=piece.end,
        metadata={"tokens": count_tokens(body)},
    )


# ------------------------------------------------------------------------------------------------ sections


def heading_sections(text: str) -> list[Section]:
    """Cut ``text`` at Markdown ATX headings (outside code fences) into sections with heading paths.

    Text before the first heading is a section with an empty path. A heading-only section is folded into the
    next section. Sections with only whitespace are dropped.
    """
    marks: list[tuple[int, tuple[str, ...]]] = [(0, ())]
    stack: list[tuple[int, str]] = []
    fenced = False
    offset = 0
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line.rstrip("\n"))) and match.group(2).strip():
            level = len(match.group(1))
            stack = [(lv, title) for lv, title in stack if lv < level] + [(level, match.group(2).strip())]
            marks.append((offset, tuple(title for _, title in stack)))
        offset += len(line)
    return _fold_heading_only(text, marks)


def _fold_heading_only(text: str, marks: list[tuple[int, tuple[str, ...]]]) -> list[Section]:
    out: list[Section] = []
    pending: int | None = None  # start of heading-only sections waiting for a body
    for i, (start, path) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        body = text[start:end]
        if not body.strip():
            continue
        _, _, rest = body.partition("\n")
        if path and not rest.strip() and i + 1 < len(marks):
            pending = start if pending is None else pending
            continue
        out.append(Section(path, start if pending is None else pending, end))
        pending = None
    return out


# ------------------------------------------------------------------------------------------------ packing


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _paragraphs(text: str, section: Section) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    cursor = section.start
    for sep in _BLANK_LINES.finditer(text, section.start, section.end):
        spans.append(_trim(text, cursor, sep.start()))
        cursor = sep.end()
    spans.append(_trim(text, cursor, section.end))
    return [(s, e) for s, e in spans if e > s]


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Offsets of each sentence of ``text[start:end]``, found by matching its words in order."""
    spans: list[tuple[int, int]] = []
    cursor = start
    for sentence in sentences(text[start:end]):
        words = sentence.split()
        span = _words_at_first(text, words, cursor, end) or _words_by_regex(text, words, cursor, end)
        if span is None:  # cannot happen for sentences() output; keep the rest whole rather than lose text
            return [*spans, _trim(text, cursor, end)]
        spans.append(span)
        cursor = span[1]
    return spans


def _words_at_first(text: str, words: list[str], start: int, end: int) -> tuple[int, int] | None:
    """The span of ``words`` separated by whitespace, starting at the first occurrence of the first word in
    ``text[start:end]``; None when they do not follow there (then :func:`_words_by_regex` searches further). Where it
    finds a span it is the leftmost one, the one the regex would find (no match can start before that word)."""
    if not words:
        return None
    first = text.find(words[0], start, end)
    if first < 0:
        return None
    at = first + len(words[0])
    for word in words[1:]:
        gap = at
        while at < end and text[at].isspace():
            at += 1
        if at == gap or not text.startswith(word, at, end):
            return None
        at += len(word)
    return first, at


def _words_by_regex(text: str, words: list[str], start: int, end: int) -> tuple[int, int] | None:
    match = re.compile(r"\s+".join(re.escape(word) for word in words)).search(text, start, end)
    return None if match is None else (match.start(), match.end())


def _split_long(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Cut one over-long span at word boundaries into spans of at most ``max_tokens`` tokens."""
    out: list[tuple[int, int]] = []
    piece_start: int | None = None
    last_end = start
    for word in _WORD_SPAN.finditer(text, start, end):
        if piece_start is None:
            piece_start = word.start()
        elif count_tokens(text[piece_start : word.end()]) > max_tokens:
            out.append((piece_start, last_end))
            piece_start = word.start()
        last_end = word.end()
    if piece_start is not None:
        out.append((piece_start, last_end))
    return out


def _units(text: str, para: tuple[int, int], max_tokens: int) -> list[tuple[int, int]]:
    units: list[tuple[int, int]] = []
    for s, e in _sentence_spans(text, *para):
        units.extend(_split_long(text, s, e, max_tokens) if count_tokens(text[s:e]) > max_tokens else [(s, e)])
    return units


class _Packer:
    """Greedy packing of sentence units into chunks of one section, with sentence-aligned overlap."""

    def __init__(self, text: str, path: tuple[str, ...], max_tokens: int, overlap: int) -> None:
        self.text, self.path, self.max, self.overlap = text, path, max_tokens, overlap
        self.pieces: list[_Piece] = []
        self.current: list[tuple[int, int]] = []
        self.new_from = 0  # index in ``current`` of the first unit not carried over

    def tokens(self, units: list[tuple[int, int]]) -> int:
        return count_tokens(self.text[units[0][0] : units[-1][1]]) if units else 0

    def add(self, units: list[tuple[int, int]]) -> None:
        """Add units that fit together within max_tokens, starting a new chunk first if they do not fit here."""
        if self.current and self.tokens(self.current + units) > self.max:
            carried = self._tail()
            self.close()
            while carried and self.tokens(carried + units) > self.max:
                carried = carried[1:]
            self.current, self.new_from = carried, len(carried)
        self.current.extend(units)

    def _tail(self) -> list[tuple[int, int]]:
        tail: list[tuple[int, int]] = []
        for unit in reversed(self.current[1:]):
            if self.tokens([unit, *tail]) > self.overlap:
                break
            tail.insert(0, unit)
        return tail

    def close(self) -> None:
        if self.current[self.new_from :]:
            new_start = self.current[self.new_from][0]
            self.pieces.append(_Piece(self.current[0][0], self.current[-1][1], self.path, new_start))
        self.current, self.new_from = [], 0


def _pack_section(text: str, section: Section, max_tokens: int, overlap: int, min_tokens: int) -> list[_Piece]:
    packer = _Packer(text, section.path, max_tokens, overlap)
    for para in _paragraphs(text, section):
        units = _units(text, para, max_tokens)
        if packer.tokens(units) <= max_tokens:
            packer.add(units)
        else:
            for unit in units:
                packer.add([unit])
    packer.close()
    pieces = packer.pieces
    if len(pieces) > 1 and count_tokens(text[pieces[-1].new_start : pieces[-1].end]) < min_tokens:
        last, before = pieces.pop(), pieces.pop()
        pieces.append(_Piece(before.start, last.end, before.path, before.new_start))
    return pieces


# ------------------------------------------------------------------------------------------------ merging


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _merge(a: _Piece, b: _Piece) -> _Piece:
    return _Piece(min(a.start, b.start), max(a.end, b.end), _common_prefix(a.path, b.path), a.new_start)


def _merge_tiny(text: str, pieces: list[_Piece], min_tokens: int) -> list[_Piece]:
    """Merge chunks under ``min_tokens`` into a neighbour until none is left (or only one chunk remains)."""
    pieces = list(pieces)
    i = 0
    while len(pieces) > 1 and i < len(pieces):
        piece = pieces[i]
        if count_tokens(text[piece.start : piece.end]) >= min_tokens:
            i += 1
            continue
        if i > 0 and (i == len(pieces) - 1 or _shared(pieces[i - 1], piece) >= _shared(pieces[i + 1], piece)):
            pieces[i - 1 : i + 1] = [_merge(pieces[i - 1], piece)]
            i -= 1
        else:
            pieces[i : i + 2] = [_merge(piece, pieces[i + 1])]
    return pieces


def _shared(a: _Piece, b: _Piece) -> int:
    return len(_common_prefix(a.path, b.path))


def _whole(text: str, sections: list[Section]) -> list[_Piece]:
    start, end = _trim(text, 0, len(text))
    if start == end:
        return []
    path = sections[0].path if sections else ()
    for section in sections[1:]:
        path = _common_prefix(path, section.path)
    return [_Piece(start, end, path, start)]
