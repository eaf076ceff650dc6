"""What an evaluation produced beside its result: the per-query rows, the claim x chunk support rows and the
per-passage rows, with the writers of ``support_matrix.jsonl`` and ``passages.jsonl``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.formats.atomic import atomic_write_text
from assay.results import EvalResult, QueryResult, QuestionView

__all__ = ["Evaluated"]


def _write_rows(path: str | Path, kind: str, rows: Sequence[dict[str, Any]]) -> Path:
    """A versioned JSONL file: a header ``{"assay": kind, "version": 1}``, then one row per line, atomically."""
    lines = [json.dumps({"assay": kind, "version": 1}), *(json.dumps(row, ensure_ascii=False) for row in rows)]
    atomic_write_text(path, "\n".join(lines) + "\n")
    return Path(path)


@dataclass
class Evaluated:
    """Everything an evaluation produced: the result, the per-query rows, the support-matrix rows, the passage rows
    and the per-question views of the report's explorer."""

    result: EvalResult
    per_query: list[QueryResult]
    support_rows: list[dict[str, Any]] = field(default_factory=list)
    passage_rows: list[dict[str, Any]] = field(default_factory=list)
    questions: list[QuestionView] = field(default_factory=list)

    def write_support_matrix(self, path: str | Path) -> Path:
        """``support_matrix.jsonl``: one line per claim (reference or answer) with its support per top-K chunk and
        the judge's reason."""
        return _write_rows(path, "support_matrix", self.support_rows)

    def write_passages(self, path: str | Path) -> Path:
        """``passages.jsonl``: one line per retrieved passage in the top k_max of each run and query: its rank, unit
        id, how it was matched (id, offsets, exact, approximate, unmatched), document, span, match score, grade and
        how the grade was found (chunk, rule, stored, judged, unlabelled)."""
        return _write_rows(path, "passages_report", self.passage_rows)
