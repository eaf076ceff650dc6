"""What an evaluation produced beside its result: the per-query rows, the claim x chunk support rows
(:class:`SupportRow`) and the per-passage rows (:class:`PassageRow`), with the writers of ``support_matrix.jsonl``
and ``passages.jsonl``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assay.formats.atomic import atomic_write_text
from assay.results import EvalResult, QueryResult, QuestionView

__all__ = ["Evaluated", "PassageRow", "SupportRow"]


@dataclass(frozen=True)
class PassageRow:
    """One passage of a run's top k_max for one question: its rank, unit id, how it was matched (id, offsets, exact,
    approximate, unmatched), where it lies (document, span, match score), its grade and how the grade was found
    (``labelled_by``: ``chunk``, ``rule``, ``stored``, ``judged`` or ``unlabelled``). A repeated run's row carries
    the run's own name and the asking (``repeat``)."""

    run: str
    query_id: str
    rank: int
    unit: str
    match: str
    doc_id: str | None
    start: int | None
    end: int | None
    score: float | None
    grade: int | None
    labelled_by: str
    repeat: int | None = None

    @property
    def place(self) -> tuple[str, int, int] | None:
        """Where the passage lies: (document id, start, end); None when it was found in no golden document."""
        if self.doc_id is None or self.start is None or self.end is None:
            return None
        return self.doc_id, self.start, self.end

    def to_json(self) -> dict[str, Any]:
        """The line of ``passages.jsonl`` (``repeat`` only for an asking of a repeated run)."""
        out: dict[str, Any] = {
            "run": self.run, "query_id": self.query_id, "rank": self.rank, "unit": self.unit, "match": self.match,
            "doc_id": self.doc_id, "start": self.start, "end": self.end, "score": self.score, "grade": self.grade,
            "labelled_by": self.labelled_by,
        }  # fmt: skip
        if self.repeat is not None:
            out["repeat"] = self.repeat
        return out


@dataclass(frozen=True)
class SupportRow:
    """One claim checked for one question of one run: a ``reference`` claim (do the top-K chunks hold it?) or an
    ``answer`` claim (is it supported?), the judge's verdict and reason, and its support level per top-K chunk id
    (0 where the claim does not draw on the chunk)."""

    run: str
    query_id: str
    kind: str
    claim: str
    verdict: str
    support: Mapping[str, float]
    reason: str

    def to_json(self) -> dict[str, Any]:
        """The line of ``support_matrix.jsonl``."""
        return {"run": self.run, "query_id": self.query_id, "kind": self.kind, "claim": self.claim,
                "verdict": self.verdict, "support": dict(self.support), "reason": self.reason}  # fmt: skip


class _Row(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def _write_rows(path: str | Path, kind: str, rows: Sequence[_Row]) -> Path:
    """A versioned JSONL file: a header ``{"assay": kind, "version": 1}``, then one row per line, atomically."""
    header = json.dumps({"assay": kind, "version": 1})
    lines = [header, *(json.dumps(row.to_json(), ensure_ascii=False) for row in rows)]
    atomic_write_text(path, "\n".join(lines) + "\n")
    return Path(path)


@dataclass
class Evaluated:
    """Everything an evaluation produced: the result, the per-query rows, the support-matrix rows, the passage rows,
    the per-question views of the report's explorer, and per audit item of a judged criterion's verdict the inputs
    the judge saw (``criterion_items``; what ``assay audit --criteria`` shows people)."""

    result: EvalResult
    per_query: list[QueryResult]
    support_rows: list[SupportRow] = field(default_factory=list)
    passage_rows: list[PassageRow] = field(default_factory=list)
    questions: list[QuestionView] = field(default_factory=list)
    criterion_items: dict[str, dict[str, Any]] = field(default_factory=dict)

    def write_support_matrix(self, path: str | Path) -> Path:
        """``support_matrix.jsonl``: one line per claim (reference or answer) with its support per top-K chunk and
        the judge's reason."""
        return _write_rows(path, "support_matrix", self.support_rows)

    def write_passages(self, path: str | Path) -> Path:
        """``passages.jsonl``: one line per retrieved passage in the top k_max of each run and query: its rank, unit
        id, how it was matched (id, offsets, exact, approximate, unmatched), document, span, match score, grade and
        how the grade was found (chunk, rule, stored, judged, unlabelled)."""
        return _write_rows(path, "passages_report", self.passage_rows)
