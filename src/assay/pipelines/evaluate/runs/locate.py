"""Step 1b of an evaluation: every retrieved passage that is not a golden chunk id is located in the golden
documents (:mod:`assay.corpus.align`) and given a unit id the rest of the evaluation ranks and labels.

How an item is matched (``RunCounts.matched_by``):

* ``id``: its id is a chunk of the golden set (its text, if any, is not read);
* ``offsets``: ``doc_id``, ``start``, ``end`` into a golden document's text (checked: known document, ``0 <= start
  < end <= len(text)``);
* ``exact`` / ``approximate``: located by its text (:class:`~assay.corpus.align.Aligner`); ``doc_id`` alone, when
  given, restricts the search to that document;
* ``unmatched``: a text found in no document, or an id that is neither a chunk nor given with a text.

**The same text in several places**: a passage whose words stand exactly in more than one place is placed by
:mod:`~.placing` (beside its neighbours in the ranking) before the aligner's global tie-break.

Unit ids: a located span whose words are exactly a golden chunk's words is that chunk (so assay's own chunks given by
text score exactly what they score by id); any other span is ``p:{doc_id}:{start}-{end}``; an unmatched text is
``t:{hash}`` of its normalized words; an unknown id without text keeps its id (never relevant, as in trec_eval).

Alignments are cached per golden-set version (the documents' ids and content hashes, the aligner's settings) in the
golden folder's ``.alignments.jsonl``, so a second evaluation of the same passages reads them back.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from assay.corpus.align import Aligner, Span, normalized_words
from assay.errors import FormatError
from assay.formats.atomic import atomic_write_text
from assay.formats.golden import GoldenSet
from assay.text import canonical_json, content_hash
from assay.types import Chunk, RetrievedItem

__all__ = ["ALIGNMENT_CACHE", "Located", "Resolver"]

ALIGNMENT_CACHE = ".alignments.jsonl"
_ALIGNER_VERSION = "align-2"
ITEM_FORMS = 'an id, {"text": ...}, or {"doc_id": ..., "start": ..., "end": ...}'


@dataclass(frozen=True)
class Located:
    """A retrieved item resolved: its unit id, how it was matched, its span (None when unmatched) and text."""

    unit: str
    match: str
    span: Span | None
    text: str | None


class Resolver:
    """Resolves retrieved items against one golden set; builds the document index on first need.

    ``folder``: where the alignment cache lives (None: no cache on disk).
    """

    def __init__(self, golden: GoldenSet, folder: Path | None = None) -> None:
        self.golden = golden
        self._doc_ids = {d.id for d in golden.documents}
        self._aligner: Aligner | None = None
        self._chunk_at: dict[tuple[str, int, int], str] | None = None
        self._spans: dict[str, Span | None] = {}
        self._all_places: dict[tuple[str, str], list[Span]] = {}
        self._edges: dict[str, list[int]] | None = None
        self._cache_path = folder / ALIGNMENT_CACHE if folder is not None else None
        self._version = self._golden_version()
        self._cached = self._read_cache()
        self._new = 0

    # ------------------------------------------------------------------ public

    @property
    def aligner(self) -> Aligner:
        if self._aligner is None:
            self._aligner = Aligner(self.golden.documents)
        return self._aligner

    def resolve(self, item: RetrievedItem, where: Path | str, line: int | None) -> Located:
        """The unit of ``item`` (see the module docstring); bad offsets raise :class:`FormatError` at ``where``."""
        if item.id is not None and self.golden.has_chunk(item.id):
            return Located(item.id, "id", self.chunk_span(item.id), self.golden.chunk(item.id).text)
        if item.start is not None or item.end is not None:
            return self._offsets(item, where, line)
        if item.text is not None and item.text.strip():
            return self._by_text(item.text, item.doc_id, where, line)
        if item.id is not None:
            return Located(item.id, "unmatched", None, None)
        raise FormatError(where, line, f"retrieved item {_shown(item)} has no id, text or offsets", ITEM_FORMS)

    def chunk_span(self, chunk_id: str) -> Span | None:
        """A golden chunk's span in its document: its offsets, or its text located in its document."""
        if chunk_id not in self._spans:
            self._spans[chunk_id] = self._chunk_span(self.golden.chunk(chunk_id))
        return self._spans[chunk_id]

    def locate(self, text: str, doc_ids: Iterable[str] = ()) -> Span | None:
        """``text`` located (exact, else approximate), cached; ``doc_ids`` restrict the search when given."""
        restrict = tuple(d for d in doc_ids if self.golden_has_document(d))
        key = hashlib.blake2b("\x1f".join((text, *restrict)).encode(), digest_size=12).hexdigest()
        if key in self._cached:
            return self._cached[key]
        span = self.aligner.locate(text, doc_ids=restrict)
        self._cached[key] = span
        self._new += 1
        return span

    def places(self, item: Located, doc_id: str | None) -> list[Span]:
        """Every place the text of ``item`` (located exactly) stands, as :meth:`Aligner.exact_places` finds them,
        in ``doc_id`` when given; empty for an item not located exactly by its text."""
        if item.match != "exact" or item.span is None or item.text is None:
            return []
        return self.text_places(item.text, doc_id)

    def unit_at(self, span: Span, text: str) -> Located:
        """The unit of ``text`` placed at ``span`` (a golden chunk when its words are the chunk's)."""
        return self._unit(span, text)

    def chunk_edges(self, doc_id: str) -> list[int]:
        """Where the golden chunks of ``doc_id`` start and end, sorted (every document's, computed on first need)."""
        if self._edges is None:
            self._edges = {}
            for chunk in self.golden.chunks:
                span = self.chunk_span(chunk.id)
                if span is not None:
                    self._edges.setdefault(span.doc_id, []).extend((span.start, span.end))
            for edges in self._edges.values():
                edges.sort()
        return self._edges.get(doc_id, [])

    def text_places(self, text: str, doc_id: str | None = None) -> list[Span]:
        """Every place ``text``'s words stand exactly (:meth:`Aligner.exact_places`), in ``doc_id`` when given (None or
        "": in any document), cached per text and document."""
        key = (text, doc_id or "")
        if key not in self._all_places:
            self._all_places[key] = self.aligner.exact_places(text, doc_ids=(doc_id,) if doc_id else ())
        return self._all_places[key]

    def golden_has_document(self, doc_id: str) -> bool:
        return doc_id in self._doc_ids

    def save_cache(self) -> None:
        """Write the alignment cache (atomically) when this resolver located anything new."""
        if self._cache_path is None or not self._new or not self._cache_path.parent.is_dir():
            return
        head = json.dumps({"assay": "alignments", "version": 1, "golden": self._version})
        rows = (json.dumps([key, None if s is None else [s.doc_id, s.start, s.end, s.match, s.score]])
                for key, s in self._cached.items())  # fmt: skip
        try:
            atomic_write_text(self._cache_path, "\n".join([head, *rows]) + "\n")
        except OSError:
            return  # a read-only golden folder: the cache is an optimisation, the evaluation goes on
        self._new = 0

    # ------------------------------------------------------------------ matching

    def _offsets(self, item: RetrievedItem, where: Path | str, line: int | None) -> Located:
        doc_id, start, end = item.doc_id, item.start, item.end
        if doc_id is None or start is None or end is None:
            raise FormatError(where, line, f"item {_shown(item)} needs doc_id, start and end together", ITEM_FORMS)
        if not self.golden_has_document(doc_id):
            raise FormatError(where, line, f"unknown doc_id {doc_id!r}", "the id of a document of the golden set")
        size = len(self.golden.document(doc_id).text)
        if not 0 <= start < end <= size:
            raise FormatError(
                where, line, f"offsets {start}-{end} outside document {doc_id!r} ({size} characters)",
                "0 <= start < end <= the document's length",
            )  # fmt: skip
        text = self.golden.document(doc_id).text[start:end]
        return self._unit(Span(doc_id, start, end, "offsets", 1.0), text)

    def _by_text(self, text: str, doc_id: str | None, where: Path | str, line: int | None) -> Located:
        if doc_id is not None and not self.golden_has_document(doc_id):
            raise FormatError(where, line, f"unknown doc_id {doc_id!r}", "the id of a document of the golden set")
        span = self.locate(text, (doc_id,) if doc_id else ())
        if span is None:
            words = normalized_words(text)
            return Located("t:" + content_hash(" ".join(words), 16), "unmatched", None, text)
        return self._unit(span, text)

    def _unit(self, span: Span, text: str) -> Located:
        chunk = self._chunk_with_words(span)
        if chunk is not None:
            return Located(chunk, span.match, self.chunk_span(chunk), text)
        return Located(f"p:{span.doc_id}:{span.start}-{span.end}", span.match, span, text)

    def _chunk_with_words(self, span: Span) -> str | None:
        """The golden chunk whose words are exactly the span's words, if any."""
        if self._chunk_at is None:
            self._chunk_at = {}
            for chunk in self.golden.chunks:
                found = self.chunk_span(chunk.id)
                if found is not None:
                    self._chunk_at.setdefault(self._trimmed(found), chunk.id)
        return self._chunk_at.get(self._trimmed(span))

    def _trimmed(self, span: Span) -> tuple[str, int, int]:
        """A span shrunk to the words it holds (punctuation and spaces at its ends do not count)."""
        starts, ends = self.aligner.word_offsets(span.doc_id)
        first = bisect.bisect_left(starts, span.start)
        last = bisect.bisect_right(ends, span.end) - 1
        if first > last:
            return (span.doc_id, span.start, span.end)
        return (span.doc_id, starts[first], ends[last])

    def _chunk_span(self, chunk: Chunk) -> Span | None:
        if not self.golden_has_document(chunk.doc_id):
            return None
        if chunk.start is not None and chunk.end is not None:
            return Span(chunk.doc_id, chunk.start, chunk.end, "offsets", 1.0)
        return self.locate(chunk.text, (chunk.doc_id,))

    # ------------------------------------------------------------------ cache

    def _golden_version(self) -> str:
        docs = sorted((d.id, d.content_hash) for d in self.golden.documents)
        return content_hash(canonical_json([_ALIGNER_VERSION, docs]), 16)

    def _read_cache(self) -> dict[str, Span | None]:
        if self._cache_path is None or not self._cache_path.is_file():
            return {}
        try:
            lines = self._cache_path.read_text(encoding="utf-8").splitlines()
            head = json.loads(lines[0]) if lines else {}
            if head.get("golden") != self._version:
                return {}
            rows = (json.loads(line) for line in lines[1:] if line.strip())
            return {key: None if s is None else Span(*s) for key, s in rows}
        except (OSError, ValueError, TypeError):
            return {}  # an unreadable cache is rebuilt, never trusted


def _shown(item: RetrievedItem) -> str:
    shown = json.dumps(item.model_dump(exclude_none=True), ensure_ascii=False)
    return shown if len(shown) <= 80 else shown[:77] + "..."
