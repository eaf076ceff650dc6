"""``report.html``: one self-contained file that opens offline, written as a decision document.

Top down: the verdict (:mod:`assay.report.verdict`) above the fold; the summary metrics (the primary, then one per
group), the others folded by group; the comparisons as a pair x metric matrix whose cells open their full sentence;
the per-question paired differences on the primary metric and the metric@k curves; the strata, agreement, cost and
system sections; a per-question explorer (each run's passages with their grades and how each got it, the answer
with its claims, the diagnosis, a link that opens the label in ``assay audit``) and the sortable per-query table.

Everything is inline: CSS, a little plain JavaScript and the plots as SVG (:mod:`assay.report.plots`). Heavy data
is loaded lazily: the explorer's questions, the per-query rows and the folded plots are gzip-compressed JSON in
``<script type="application/octet-stream">`` blocks (base64), decompressed by the browser's DecompressionStream on
first use and rendered on demand, so a report of hundreds of runs still opens. A Content-Security-Policy meta tag
forbids loading anything from elsewhere, so the page behaves the same on a plane. Text from the data is escaped by
jinja2's autoescape; the script writes data only through ``textContent`` and attributes (the plots it inserts are
matplotlib's SVG, escaped when drawn). The output is deterministic: the same result renders the same bytes. The
lazy blocks' data is :mod:`assay.report.html_data`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
from assay.report._conversations import conversation_lines
from assay.report._statistics import noise_lines
from assay.report._trajectory import trajectory_lines
from assay.report.html_data import explorer_data, packed, query_data
from assay.report.verdict import build_verdict, primary_metric
from assay.results import (
    METRIC_GROUPS,
    AgreementBlock,
    Comparison,
    EvalResult,
    MetricSummary,
    QueryResult,
    QuestionView,
    RunResult,
    Verdict,
    metric_group,
    summary_metrics,
)

__all__ = ["render_html", "write_html"]


@dataclass(frozen=True)
class Cell:
    """A summary shown in a table cell: mean, interval, scored count and the unscored note (never hidden)."""

    mean: str
    interval: str
    n_scored: int
    unscored: str  # "" when all were scored
    missing: bool = False  # the run has no such metric


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


def _strata_view(result: EvalResult, wanted: list[str], lazy: dict[str, str]) -> list[dict[str, Any]]:
    """One view per stratum field; its plot (the summary metrics) goes into ``lazy``, drawn when the reader opens it."""
    fields = list(dict.fromkeys(f for run in result.runs for f in run.strata))
    views: list[dict[str, Any]] = []
    for name in fields:
        tables = []
        for run in (r for r in result.runs if name in r.strata):
            values = run.strata[name]
            metrics = fmt.strata_metrics(run, wanted)
            rows = [(m, [_cell(values[v].get(m)) for v in values]) for m in metrics]
            tables.append({"run": run.name, "groups": list(values), "rows": rows})
        svg = plots.strata_svg(result, name, wanted)
        key = f"strata-{len(views)}"
        if svg is not None:
            lazy[key] = svg
        views.append({"field": name, "svg": key if svg is not None else None, "tables": tables})
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


def _matrix_cells(result: EvalResult, metrics: list[str]) -> dict[str, Any]:
    """The comparisons as a pair x metric matrix: the summary metrics that were compared, one row per pair (the
    leader's pairs first); each cell holds the delta, whether it is significant and its full sentence."""
    compared = [m for m in metrics if any(c.metric == m for c in result.comparisons)]
    found: dict[tuple[str, str, str], Comparison] = {(c.a, c.b, c.metric): c for c in result.comparisons}
    pairs = list(dict.fromkeys((c.a, c.b) for c in result.comparisons if c.metric in compared))
    places = build_verdict(result).places
    leader = places[0].run if places else None
    pairs.sort(key=lambda pair: leader not in pair)
    rows = []
    for a, b in pairs:
        cells = []
        for metric in compared:
            c = found.get((a, b, metric))
            cells.append(None if c is None else {"delta": f"{c.delta:+.3f}", "significant": c.significant,
                         "sentence": fmt.verdict_text(c), "detail": f"{fmt.fmt_delta(c)}, p adj. "
                         f"{fmt.fmt_p(c.p_adjusted)}, n = {c.n}, {fmt.correction_label(c)}"})  # fmt: skip
        rows.append({"pair": f"{b} − {a}", "cells": cells})
    return {"metrics": compared, "rows": rows}


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


def _folded(result: EvalResult, shown: list[str]) -> list[tuple[str, list[tuple[str, list[Cell]]]]]:
    """Every metric not in the summary, by group (:data:`~assay.results.METRIC_GROUPS` order)."""
    rest = [m for m in fmt.all_metrics(result) if m not in shown]
    groups = [(group, [m for m in rest if metric_group(m) == group]) for group in METRIC_GROUPS]
    return [(group, _metric_rows(result.runs, names)) for group, names in groups if names]


def _reference(result: EvalResult) -> str | None:
    """The run the paired differences are drawn against: the baseline, else the first run."""
    baseline = result.settings.get("baseline")
    names = [run.name for run in result.runs]
    return baseline if isinstance(baseline, str) and baseline in names else next(iter(names), None)


def _paired(result: EvalResult, per_query: Sequence[QueryResult] | None, metric: str | None) -> Markup | None:
    reference = _reference(result)
    if not per_query or metric is None or reference is None:
        return None
    others = [p.run for p in build_verdict(result).places if p.run != reference]
    return _svg(plots.paired_svg(result, per_query, metric, others, reference))


PLOTTED_RUNS = 12  # runs drawn in the plots at most: the first by the primary metric's place (tables have them all)


def _drawn(result: EvalResult, verdict: Verdict) -> EvalResult:
    """The result the plots draw: every run, or the first :data:`PLOTTED_RUNS` by place and their comparisons."""
    if len(result.runs) <= PLOTTED_RUNS:
        return result
    kept = {place.run for place in verdict.places[:PLOTTED_RUNS]}
    runs = [run for run in result.runs if run.name in kept]
    comparisons = [c for c in result.comparisons if c.a in kept and c.b in kept]
    return result.model_copy(update={"runs": runs, "comparisons": comparisons})


def _context(
    result: EvalResult, per_query: Sequence[QueryResult] | None, questions: Sequence[QuestionView] | None
) -> dict[str, Any]:
    verdict = build_verdict(result)
    shown = summary_metrics(fmt.headline_metrics(result), verdict.metric)
    lazy: dict[str, str] = {}
    drawn = _drawn(result, verdict)
    return {
        "r": result,
        "verdict": verdict,
        "summary_metrics": shown,
        "folded": _folded(result, shown),
        "matrix": _matrix_cells(result, shown),
        "paired": _paired(result, per_query, verdict.metric),
        "reference": _reference(result),
        "judge": fmt.judge_label(result),
        "judge_card": fmt.judge_card_lines(result),
        "level": fmt.confidence_label(result),
        "colors": [plots.color(i) for i in range(len(result.runs))],
        "headline_rows": _metric_rows(result.runs, shown),
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
        "noise": noise_lines(result, primary_metric(result)),
        "conversations": conversation_lines(result),
        "trajectories": trajectory_lines(result),
        "forest": _svg(plots.forest_svg(drawn, shown)),
        "curves": _svg(plots.curves_svg(drawn)),
        "pr": _svg(plots.pr_svg(drawn)),
        "grades": _svg(plots.grades_svg(drawn)),
        "drawn": len(drawn.runs),
        "strata": _strata_view(result, shown, lazy),
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
        "queries": None if per_query is None else {"n": len(per_query), "data": packed(query_data(per_query))},
        "explorer": explorer_data(result, per_query, questions) if questions else None,
        "n_questions": len(questions or ()),
        "system": _system_view(result),
        "lazy": packed(lazy) if lazy else None,
    }


def _system_view(result: EvalResult) -> dict[str, Any]:
    plot, metric = _svg(sysr.quality_vs_latency_svg(result)), sysr.quality_metric(result)
    return {"header": sysr.system_header(result), "rows": sysr.system_rows(result), "metric": metric, "plot": plot}


def render_html(
    result: EvalResult,
    per_query: Sequence[QueryResult] | None = None,
    questions: Sequence[QuestionView] | None = None,
) -> str:
    """The whole report as one HTML string; ``per_query`` rows (when given) fill the sortable per-query table and
    the paired differences, ``questions`` (:attr:`Evaluated.questions`) the per-question explorer."""
    template = _environment().get_template("report.html.j2")
    return template.render(**_context(result, per_query, questions))


def write_html(
    result: EvalResult,
    path: str | Path,
    per_query: list[QueryResult] | None = None,
    questions: Sequence[QuestionView] | None = None,
) -> None:
    """Render :func:`render_html` and write it to ``path`` atomically (nothing half-written is ever left)."""
    atomic_write_text(path, render_html(result, per_query, questions))
