"""The parts of a golden set the audit needs, indexed by id: questions, chunks, documents, judged passages, and the
judge's labels of chunks (``qrels.jsonl``) and of spans (the labels of ``passages.jsonl``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.formats.golden import GoldenSet
from assay.types import Chunk, Document, Passage, Question, RelevanceLabel

__all__ = ["GoldenView", "load_golden"]


@dataclass
class GoldenView:
    """Questions, chunks, documents and passages by id, and the judge labels of the qrels and of the passages in file
    order (other sources left out). An item ``(query_id, chunk_id)`` names a chunk or, for a span label, a passage
    id (``p:{doc_id}:{start}-{end}``, or ``t:{hash}`` for a passage found in no document)."""

    path: Path
    questions: dict[str, Question] = field(default_factory=dict)
    chunks: dict[str, Chunk] = field(default_factory=dict)
    qrels: list[RelevanceLabel] = field(default_factory=list)
    documents: dict[str, Document] = field(default_factory=dict)
    passages: dict[str, Passage] = field(default_factory=dict)
    span_labels: list[RelevanceLabel] = field(default_factory=list)

    def is_span(self, item_id: str) -> bool:
        """Whether ``item_id`` names a judged passage (a span label) rather than a golden chunk."""
        return item_id in self.passages and item_id not in self.chunks

    def knows(self, item_id: str) -> bool:
        """Whether ``item_id`` is a chunk or a judged passage of the golden set."""
        return item_id in self.chunks or item_id in self.passages


def load_golden(path: str | Path) -> GoldenView:
    """Read a golden folder with :meth:`GoldenSet.load` (DatasetError / FormatError name what is wrong)."""
    golden = GoldenSet.load(path)
    judge = [label for label in golden.qrels if label.provenance.source == "judge"]
    spans = [label for p in golden.passages for label in p.labels if label.provenance.source == "judge"]
    return GoldenView(
        Path(path),
        {q.id: q for q in golden.questions},
        {c.id: c for c in golden.chunks},
        judge,
        {d.id: d for d in golden.documents},
        {p.id: p for p in golden.passages},
        spans,
    )
