"""``write_report``: the report folder of ``assay eval`` in one call.

Writes ``report.html``, ``report.md``, ``results.json`` (the :class:`EvalResult`, with its ``verdict`` filled in by
:func:`assay.report.verdict.build_verdict`) and ``per_query.jsonl`` (a header
line ``{"assay": "per_query", "version": N, "assay_version": ...}``, then one :class:`QueryResult` per line, readable
with ``assay.formats.jsonl.read_jsonl(path, QueryResult, "per_query")``), and, when the evaluation has them,
``criteria.csv`` (the judged criteria's verdicts) and ``pairwise.csv`` (the pairs of answers judged in both orders;
:mod:`assay.report.csv_tables`); an earlier evaluation's copy of either is removed when this one has none, so the
folder never mixes two evaluations. Everything is rendered in memory first and
each file is written atomically, so a failure leaves the previous files (or none), never half of one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from assay.formats.atomic import atomic_write_text
from assay.report.csv_tables import criteria_csv, pairwise_csv
from assay.report.html import render_html
from assay.report.markdown import render_markdown
from assay.report.verdict import build_verdict
from assay.results import EvalResult, QueryResult, QuestionView

__all__ = ["REPORT_FILES", "TABLE_FILES", "per_query_jsonl", "write_report"]

REPORT_FILES = ("report.html", "report.md", "results.json", "per_query.jsonl")
TABLE_FILES = ("criteria.csv", "pairwise.csv")  # written when the evaluation has them
# The version of the QueryResult rows; results.json carries its own (RESULTS_FORMAT_VERSION in its format_version).
PER_QUERY_VERSION = 1


def per_query_jsonl(result: EvalResult, per_query: Sequence[QueryResult]) -> str:
    """``per_query.jsonl`` as text: the versioned header line, then one row per line in the order given."""
    head = {"assay": "per_query", "version": PER_QUERY_VERSION, "assay_version": result.assay_version}
    lines = [json.dumps(head, ensure_ascii=False)]
    lines += [json.dumps(row.model_dump(mode="json"), ensure_ascii=False) for row in per_query]
    return "\n".join(lines) + "\n"


def write_report(
    result: EvalResult,
    out_dir: str | Path,
    per_query: Sequence[QueryResult],
    questions: Sequence[QuestionView] = (),
) -> dict[str, Path]:
    """Write the four report files, and the tables the evaluation has (``TABLE_FILES``), into ``out_dir`` (created
    when missing); returns file name -> path.
    ``questions`` (:attr:`Evaluated.questions`) fill the report's per-question explorer."""
    result = result.model_copy(update={"verdict": build_verdict(result)})
    texts = {
        "report.html": render_html(result, per_query, questions),
        "report.md": render_markdown(result),
        "results.json": result.model_dump_json(indent=2) + "\n",
        "per_query.jsonl": per_query_jsonl(result, per_query),
    }
    tables = {"criteria.csv": criteria_csv(result), "pairwise.csv": pairwise_csv(result)}
    folder = Path(out_dir)
    paths = {}
    for name in REPORT_FILES:
        paths[name] = folder / name
        atomic_write_text(paths[name], texts[name])
    for name, text in tables.items():
        if text is None:
            (folder / name).unlink(missing_ok=True)
        else:
            paths[name] = folder / name
            atomic_write_text(paths[name], text)
    return paths
