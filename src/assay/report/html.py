"""``report.html``: one self-contained file that opens offline, with plots and a sortable per-query table.

Everything is inline: CSS, a little plain JavaScript (sorting and filtering the per-query table) and the plots as SVG
(:mod:`assay.report.plots`). A Content-Security-Policy meta tag forbids loading anything from elsewhere, so the page
behaves the same on a plane. Text from the data is escaped by jinja2's autoescape; the script only reads and writes
``textContent`` and ``data-`` attributes. The output is deterministic: the same result renders the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from assay.formats.atomic import atomic_write_text
from assay.report import _agreement as agr
from assay.report import _diagnosis as diag
from assay.report import _format as fmt
from assay.report import _planning as plan
from assay.report import _system as sysr
from assay.report import panel as pn
from assay.report import plots
from assay.results import AgreementBlock, EvalResult, MetricSummary, QueryResult, RunResult

__all__ = ["render_html", "write_html"]


@dataclass(frozen=True)
class Cell:
    """A summary shown in a table cell: mean, interval, scored count and the unscored note (never hidden)."""

    mean: str
    interval: str
    n_scored: int
    unscored: str  # "" when all were scored
    missing: bool = False  # the run has no such metric


@dataclass(frozen=True)
class QueryCell:
    text: str
    sort_value: str  # "" sorts last (unscored)
    title: str = ""
    unscored: bool = False


@dataclass
class QueryTable:
    columns: list[tuple[str, bool]] = field(default_factory=list)  # (label, numeric)
    rows: list[list[QueryCell]] = field(default_factory=list)


def _cell(summary: MetricSummary | None) -> Cell:
    if summary is None:
        return Cell("—", "", 0, "", missing=True)
    unscored = fmt.fmt_unscored(summary) if summary.n_unscored else ""
    return Cell(fmt.fmt_mean(summary), fmt.fmt_interval(summary.low, summary.high), summary.n_scored, unscored)


def _metric_rows(runs: Sequence[RunResult], names: Sequence[str]) -> list[tuple[str, list[Cell]]]:
    return [(name, [_cell(run.metrics.get(name)) for run in runs]) for name in names]


def _diagnosis_view(result: EvalResult) -> dict[str, Any] | None:
    """The diagnosis section: module rows (summary cells per run), strongest differences, example groups with safe
    anchors, and an index of the groups per run."""
    if not diag.has_diagnosis(result):
        return None
    modules = diag.module_rows(result)
    rows = [(f"{row.arrow} {row.module}: {row.label}", [_cell(s) for s in row.summaries]) for row in modules]
    differences = [
        {
            "c": d.comparison,
            "label": d.label,
            "delta": f"{d.comparison.delta:+.3f}",
            "interval": fmt.fmt_interval(d.comparison.low, d.comparison.high),
            "p": fmt.fmt_p(d.comparison.p_adjusted),
            "verdict": f"{d.better} better" if d.better else "no reliable difference",
        }
        for d in diag.differences(result)
    ]
    groups = diag.example_groups(result)
    index = [(run.name, [g for g in groups if g.run == run.name]) for run in result.runs]
    return {"rows": rows, "differences": differences, "groups": groups, "index": [i for i in index if i[1]]}


def _strata_view(result: EvalResult) -> list[dict[str, Any]]:
    fields = list(dict.fromkeys(f for run in result.runs for f in run.strata))
    views = []
    for name in fields:
        tables = []
        for run in (r for r in result.runs if name in r.strata):
            values = run.strata[name]
            metrics = fmt.strata_metrics(run, fmt.headline_metrics(result))
            rows = [(m, [_cell(values[v].get(m)) for v in values]) for m in metrics]
            tables.append({"run": run.name, "groups": list(values), "rows": rows})
        views.append({"field": name, "svg": _svg(plots.strata_svg(result, name)), "tables": tables})
    return views


def _comparison_view(result: EvalResult) -> list[dict[str, Any]]:
    """One table per metric family, the primary metric first."""
    out = []
    for comps in fmt.by_metric(result.comparisons):
        rows = [
            {
                "pair": f"{c.b} vs {c.a}",
                "n": c.n,
                "delta": fmt.fmt_delta(c),
                "d_z": "—" if c.d_z is None else f"{c.d_z:+.2f}",
                "wtl": f"{c.wins}/{c.ties}/{c.losses}",
                "p": fmt.fmt_p(c.p_value),
                "p_adjusted": fmt.fmt_p(c.p_adjusted),
                "mc": fmt.fmt_mc(c),
                "level": fmt.fmt_level(c),
                "significant": c.significant,
                "verdict": fmt.verdict_text(c),
            }
            for c in comps
        ]
        first = comps[0]
        out.append({"metric": first.metric, "primary": first.primary, "label": fmt.correction_label(first),
                    "rows": rows})  # fmt: skip
    return out


def _heat(count: int, most: int) -> str:
    """Inline style of a confusion-matrix cell: blue, more opaque the more items (white text on the dark ones)."""
    share = count / most if most else 0.0
    ink = "#fff" if share > 0.55 else "var(--ink)"
    return f"background: rgba(0, 114, 178, {0.85 * share:.3f}); color: {ink}"


def _matrix_view(block: AgreementBlock) -> dict[str, Any]:
    most = max((v for row in block.confusion_matrix for v in row), default=0)
    rows = [
        {"grade": g, "cells": [(v, _heat(v, most)) for v in row], "total": block.judge_histogram[g]}
        for g, row in enumerate(block.confusion_matrix)
    ]
    return {"rows": rows, "human": block.human_histogram, "total": sum(block.human_histogram)}


def _agreement_view(result: EvalResult) -> dict[str, Any] | None:
    summary = result.agreement
    if summary is None:
        return None
    strata = [
        {
            "field": name,
            "rows": [
                {"value": value, "n": b.n, "cells": [agr.stat_text(b, key) for key in agr.STRATUM_STATS]}
                for value, b in blocks.items()
            ],
        }
        for name, blocks in summary.strata.items()
    ]
    return {
        "line": agr.summary_line(summary),
        "rows": agr.stat_rows(summary.overall),
        "humans": agr.human_rows(summary),
        "annotators": summary.between_humans.annotators if summary.between_humans else [],
        "matrix": _matrix_view(summary.overall),
        "svg": _svg(plots.agreement_grades_svg(summary)),
        "stat_names": list(agr.STRATUM_STATS.values()),
        "strata": strata,
    }


def _judges_view(result: EvalResult) -> dict[str, Any] | None:
    agreement = result.judges
    if agreement is None:
        return None
    return {
        "line": pn.summary_line(agreement),
        "judges": pn.judge_lines(agreement),
        "columns": pn.PAIR_COLUMNS,
        "rows": pn.pair_rows(agreement),
    }


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _query_table(rows: Sequence[QueryResult]) -> QueryTable:
    strata = list(dict.fromkeys(k for row in rows for k in row.strata))
    metrics = list(dict.fromkeys(k for row in rows for k in row.metrics))
    table = QueryTable(columns=[("run", False), ("query", False)] + [(s, False) for s in strata])
    table.columns += [(m, True) for m in metrics]
    for row in rows:
        cells = [QueryCell(row.run, row.run), QueryCell(row.query_id, row.query_id)]
        cells += [QueryCell(row.strata.get(s, ""), row.strata.get(s, "")) for s in strata]
        for m in metrics:
            value = row.metrics.get(m)
            if value is None:
                reason = row.unscored.get(m, "not computed" if m not in row.metrics else "no reason given")
                cells.append(QueryCell("unscored", "", title=reason, unscored=True))
            else:
                cells.append(QueryCell(fmt.fmt_value(value), _number(value)))
        table.rows.append(cells)
    return table


def _svg(svg: str | None) -> Markup | None:
    # matplotlib's SVG writer escapes every text and attribute it writes; the plot functions scope its ids.
    return None if svg is None else Markup(svg)  # noqa: S704


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("assay.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _context(result: EvalResult, per_query: Sequence[QueryResult] | None) -> dict[str, Any]:
    headline = fmt.headline_metrics(result)
    every = fmt.all_metrics(result)
    return {
        "r": result,
        "judge": fmt.judge_label(result),
        "judge_card": fmt.judge_card_lines(result),
        "level": fmt.confidence_label(result),
        "colors": [plots.color(i) for i in range(len(result.runs))],
        "headline_rows": _metric_rows(result.runs, headline),
        "other_rows": _metric_rows(result.runs, [m for m in every if m not in headline]),
        "runs": [
            {
                "run": run,
                "notes": fmt.count_notes(run.counts),
                "judged": fmt.fmt_judged(run),
                "passages": fmt.fmt_passages(run),
            }
            for run in result.runs
        ],
        "comparisons": _comparison_view(result),
        "diagnosis": _diagnosis_view(result),
        "comparison_intro": fmt.comparison_intro(result),
        "planning": plan.planning_lines(result),
        "forest": _svg(plots.forest_svg(result)),
        "curves": _svg(plots.curves_svg(result)),
        "pr": _svg(plots.pr_svg(result)),
        "grades": _svg(plots.grades_svg(result)),
        "strata": _strata_view(result),
        "corrected": [
            {
                "c": c,
                "judge_only": fmt.fmt_value(c.judge_only),
                "estimate": fmt.fmt_value(c.estimate),
                "interval": fmt.fmt_interval(c.low, c.high),
                "classical": fmt.fmt_interval(c.classical_low, c.classical_high) or "—",
                "lam": fmt.fmt_value(c.lambda_, 2),
                "audit": agr.audit_cell(c),
            }
            for c in result.corrected
        ],
        "agreement": _agreement_view(result),
        "judges": _judges_view(result),
        "not_audited": agr.not_audited(result),
        "labels": agr.labels_line(result),
        "queries": None if per_query is None else _query_table(per_query),
        "system": _system_view(result),
    }


def _system_view(result: EvalResult) -> dict[str, Any]:
    plot, metric = _svg(sysr.quality_vs_latency_svg(result)), sysr.quality_metric(result)
    return {"header": sysr.HEADER, "rows": sysr.system_rows(result), "metric": metric, "plot": plot}


def render_html(result: EvalResult, per_query: Sequence[QueryResult] | None = None) -> str:
    """The whole report as one HTML string; ``per_query`` rows (when given) fill the sortable per-query table."""
    template = _environment().get_template("report.html.j2")
    return template.render(**_context(result, per_query))


def write_html(result: EvalResult, path: str | Path, per_query: list[QueryResult] | None = None) -> None:
    """Render :func:`render_html` and write it to ``path`` atomically (nothing half-written is ever left)."""
    atomic_write_text(path, render_html(result, per_query))
