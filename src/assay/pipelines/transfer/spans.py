"""The pooled spans of a golden set as an export writes them: each judged passage with its text, offsets and grades.

A passage of ``passages.jsonl`` is exported when one of its labels is scored (the label that stands for each
question, :meth:`GoldenSet.passage_labels`: a person's grade before the judge's) and at least ``min_grade``. Its
text is the span's, ``document.text[start:end]`` (the text whose label joins the pool, so that text and offsets
agree), else, for a passage found in no document (``t:`` ids), the passage's own text with no offsets.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.formats.atomic import atomic_write
from assay.formats.golden import GoldenSet
from assay.types import Document, Passage

__all__ = ["PASSAGE_MAP", "PooledPassage", "PooledSpans", "pooled_passages", "write_passage_map"]

PASSAGE_MAP = "passages.jsonl"  # the TREC export's side file


@dataclass(frozen=True)
class PooledPassage:
    """One exported passage: its text and where it sits (``doc_id``, ``start``, ``end``; None when found in no
    document), and its grades per question, sorted by question id."""

    passage: Passage
    text: str
    document: Document | None
    grades: tuple[tuple[str, int], ...]

    @property
    def id(self) -> str:
        return self.passage.id

    @property
    def located(self) -> bool:
        return self.document is not None

    def offsets(self) -> dict[str, Any]:
        """``doc_id``, ``start`` and ``end`` (all None for a passage found in no document)."""
        p = self.passage
        return {"doc_id": p.doc_id, "start": p.start, "end": p.end}


@dataclass(frozen=True)
class PooledSpans:
    """The passages to export, and the (question, passage) pairs left out: below ``min_grade``, or unscored."""

    passages: list[PooledPassage]
    below_min_grade: int
    unscored: int

    @property
    def grades(self) -> int:
        return sum(len(p.grades) for p in self.passages)


def pooled_passages(golden: GoldenSet, min_grade: int | None = None) -> PooledSpans:
    """The passages of ``golden`` with a scored grade ``>= min_grade``, in ``passages.jsonl`` order."""
    docs = {d.id: d for d in golden.documents}
    grades: dict[str, list[tuple[str, int]]] = {}
    below = unscored = 0
    for (qid, pid), label in golden.passage_labels().items():
        if label.grade is None:
            unscored += 1
        elif min_grade is not None and label.grade < min_grade:
            below += 1
        else:
            grades.setdefault(pid, []).append((qid, label.grade))
    out = []
    for passage in golden.passages:
        if passage.id in grades:
            document = _document(passage, docs)
            text = passage.text if document is None else document.text[passage.start : passage.end]
            out.append(PooledPassage(passage, text, document, tuple(sorted(grades[passage.id]))))
    return PooledSpans(out, below, unscored)


def _document(passage: Passage, docs: dict[str, Document]) -> Document | None:
    """The passage's document when its offsets fall inside it, else None."""
    document = docs.get(passage.doc_id or "")
    start, end = passage.start, passage.end
    if document is None or start is None or end is None or not 0 <= start < end <= len(document.text):
        return None
    return document


def write_passage_map(path: Path, passages: Sequence[PooledPassage], ids: Callable[[str], str]) -> int:
    """The TREC export's side file: one JSON object per line, ``{"id", "doc_id", "start", "end", "text"}`` (``id``
    as the qrels write it); returns the lines written."""
    with atomic_write(path) as out:
        for pooled in passages:
            row = {"id": ids(pooled.id), **pooled.offsets(), "text": pooled.text}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(passages)
