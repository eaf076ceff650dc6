"""A golden set as two CSV files for spreadsheets: ``labels.csv`` and ``questions.csv``.

``labels.csv`` has one row per judged (question, chunk) pair, with the label that stands for the pair (the same
choice as :meth:`GoldenSet.qrels_map`: a scored label beats an unscored one, then ``human`` > ``imported`` >
``judge`` > ``generator``, then the newest). A pair with no scored label has an empty ``grade`` and its
``unscored_reason``: it is listed so someone can grade it, never written as a grade. ``questions.csv`` has one row
per question with its reference answer and label counts.

Files are UTF-8 without a byte-order mark, comma-separated, one header line (as ``assay audit``'s CSV). Cells of
free text (questions, passages, rationales, titles, answers) that begin with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return get a leading ``'`` so that a spreadsheet shows them as text instead of running them as formulas
(CSV injection); ids and grades are written as they are.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.formats.atomic import atomic_write
from assay.formats.golden import GoldenSet
from assay.formats.progress import writing
from assay.types import RelevanceLabel

__all__ = [
    "LABEL_COLUMNS",
    "QUESTION_COLUMNS",
    "LabelRows",
    "label_rows",
    "neutralize",
    "question_rows",
    "standing_labels",
    "write_csv",
]

LABEL_COLUMNS = (
    "query_id", "question", "chunk_id", "doc_id", "doc_title", "heading_path", "grade", "source", "model",
    "annotator", "prompt", "rationale", "time", "unscored_reason", "chunk_text",
)  # fmt: skip
QUESTION_COLUMNS = (
    "query_id", "question", "type", "difficulty", "reference_answer", "source_doc_ids", "source_chunk_ids",
    "labels", "relevant", "unscored",
)  # fmt: skip
_TEXT_COLUMNS = frozenset({"question", "doc_title", "heading_path", "rationale", "chunk_text", "reference_answer"})
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class LabelRows:
    """Rows of ``labels.csv`` and what was left out by ``min_grade``."""

    rows: list[dict[str, Any]]
    scored: int
    unscored: int
    below_min_grade: int


def neutralize(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def standing_labels(golden: GoldenSet) -> list[RelevanceLabel]:
    """The label that stands for each judged pair (:meth:`GoldenSet.standing`), scored ones first."""
    return sorted(golden.standing(), key=lambda label: label.grade is None)


def label_rows(golden: GoldenSet, *, min_grade: int | None = None) -> LabelRows:
    """Rows of ``labels.csv``; with ``min_grade`` only scored labels with ``grade >= min_grade`` are kept."""
    rows: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for label in standing_labels(golden):
        if label.grade is None:
            counts["unscored"] += 1
        else:
            counts["scored"] += 1
        if min_grade is not None and (label.grade is None or label.grade < min_grade):
            counts["below"] += label.grade is not None  # unscored pairs are counted as unscored, not as below
            continue
        rows.append(_label_row(golden, label))
    rows.sort(key=lambda r: (r["query_id"], r["grade"] == "", -int(r["grade"] or 0), r["chunk_id"]))
    return LabelRows(rows, counts["scored"], counts["unscored"], counts["below"])


def _label_row(golden: GoldenSet, label: RelevanceLabel) -> dict[str, Any]:
    chunk = golden.chunk(label.chunk_id)
    prov = label.provenance
    return {
        "query_id": label.query_id,
        "question": golden.question(label.query_id).text,
        "chunk_id": chunk.id,
        "doc_id": chunk.doc_id,
        "doc_title": _title(golden, chunk.doc_id),
        "heading_path": " > ".join(chunk.heading_path),
        "grade": "" if label.grade is None else label.grade,
        "source": prov.source,
        "model": prov.model or "",
        "annotator": prov.annotator or "",
        "prompt": prov.prompt or "",
        "rationale": prov.rationale or "",
        "time": prov.time.isoformat(),
        "unscored_reason": label.unscored.reason if label.unscored else "",
        "chunk_text": chunk.text,
    }


def _title(golden: GoldenSet, doc_id: str) -> str:
    try:
        return golden.document(doc_id).title or ""
    except KeyError:
        return ""


def question_rows(golden: GoldenSet, *, min_grade: int = 1) -> list[dict[str, Any]]:
    """Rows of ``questions.csv``: ``labels`` scored pairs, ``relevant`` those with ``grade >= min_grade``,
    ``unscored`` pairs without a scored label."""
    grades = golden.qrels_map()
    unscored = Counter(label.query_id for label in golden.unscored())
    rows = []
    for q in golden.questions:
        mine = grades.get(q.id, {})
        rows.append(
            {
                "query_id": q.id,
                "question": q.text,
                "type": q.type,
                "difficulty": q.difficulty or "",
                "reference_answer": q.reference_answer or "",
                "source_doc_ids": " ".join(q.source_doc_ids),
                "source_chunk_ids": " ".join(q.source_chunk_ids),
                "labels": len(mine),
                "relevant": sum(1 for g in mine.values() if g >= min_grade),
                "unscored": unscored[q.id],
            }
        )
    return rows


def write_csv(path: str | Path, columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` under a header of ``columns`` atomically, free-text cells neutralized; returns the count."""
    count = 0
    with atomic_write(path) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in writing(path, rows):
            writer.writerow([_cell(name, row.get(name, "")) for name in columns])
            count += 1
    return count


def _cell(column: str, value: Any) -> str:
    text = "" if value is None else str(value)
    return neutralize(text) if column in _TEXT_COLUMNS else text
