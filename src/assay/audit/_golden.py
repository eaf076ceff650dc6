"""The parts of a golden set the audit needs, indexed by id: questions, chunks and the judge's labels."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.formats.golden import GoldenSet
from assay.types import Chunk, Question, RelevanceLabel

__all__ = ["GoldenView", "load_golden"]


@dataclass
class GoldenView:
    """Questions and chunks by id, and the judge labels of the qrels in file order (other sources left out)."""

    path: Path
    questions: dict[str, Question] = field(default_factory=dict)
    chunks: dict[str, Chunk] = field(default_factory=dict)
    qrels: list[RelevanceLabel] = field(default_factory=list)


def load_golden(path: str | Path) -> GoldenView:
    """Read a golden folder with :meth:`GoldenSet.load` (DatasetError / FormatError name what is wrong)."""
    golden = GoldenSet.load(path)
    judge = [label for label in golden.qrels if label.provenance.source == "judge"]
    return GoldenView(Path(path), {q.id: q for q in golden.questions}, {c.id: c for c in golden.chunks}, judge)
