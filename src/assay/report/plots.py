"""The report's plots as inline SVG strings, drawn with matplotlib (imported lazily: it takes about half a second).

Figures are built on :class:`matplotlib.figure.Figure` directly, never through pyplot, so no global backend or
figure registry is touched. Output is deterministic: ``svg.hashsalt`` is fixed, the metadata block (date, creator)
is dropped, and text stays text (``svg.fonttype = "none"``), which keeps each plot small. Element ids are prefixed
per plot, so several SVGs can live in one HTML page without id clashes. Text from the data (run names, strata) is
escaped by matplotlib's SVG writer; ``$`` is escaped so that a name is never read as mathtext.

Each function returns None when the result holds nothing to draw.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from assay.report import _format as fmt
from assay.results import AgreementSummary, Comparison, EvalResult, QueryResult

__all__ = [
    "PALETTE",
    "agreement_grades_svg",
    "curves_svg",
    "forest_svg",
    "grades_svg",
    "paired_svg",
    "pr_svg",
    "strata_svg",
]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")
_STYLE: Any = {  # Any: matplotlib types rcParams keys as a Literal union
    "svg.fonttype": "none",
    "svg.hashsalt": "assay-report",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#888888",
    "axes.grid": True,
    "grid.color": "#e6e6e6",
    "grid.linewidth": 0.6,
    "xtick.color": "#444444",
    "ytick.color": "#444444",
    "legend.frameon": False,
    "path.simplify": True,
}
_NO_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}
_ID = re.compile(r'\bid="([^"]+)"')
Triple = tuple[float | None, float | None, float | None]  # mean, low, high


def _label(text: str) -> str:
    """Data text safe for matplotlib: ``$`` escaped (no mathtext)."""
    return str(text).replace("$", r"\$")


def color(index: int) -> str:
    """The colour of the run at ``index`` (the same in every plot)."""
    return PALETTE[index % len(PALETTE)]


@contextmanager
def _figure(width: float, height: float) -> Iterator[Any]:
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(_STYLE):
        yield Figure(figsize=(width, height), layout="constrained")


def _to_svg(fig: Any, name: str, title: str) -> str:
    """Serialise ``fig`` as an inline ``<svg>`` element with ids prefixed by ``name``."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata=_NO_METADATA)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    ids = set(_ID.findall(svg))
    svg = re.sub(r'(id="|#)([^"#()\s]+)(?=["\)])', lambda m: _scoped(m, ids, name), svg)
    aria = title.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    return svg.replace("<svg ", f'<svg role="img" aria-label="{aria}" class="plot" ', 1)


def _scoped(match: re.Match[str], ids: set[str], name: str) -> str:
    prefix, ident = match.group(1), match.group(2)
    return f"{prefix}{name}-{ident}" if ident in ids else match.group(0)


def _legend(fig: Any, handles: Sequence[Any], labels: Sequence[str]) -> None:
    if handles:
        fig.legend(list(handles), [_label(x) for x in labels], loc="outside upper center", ncols=min(len(labels), 4))


def _grid(count: int, columns: int) -> tuple[int, int]:
    cols = max(1, min(count, columns))
    return math.ceil(count / cols), cols


def _k_sorted(curve: dict[str, float | None]) -> list[tuple[int, float]]:
    points = [(int(k), v) for k, v in curve.items() if k.isdigit()]
    return [(k, math.nan if v is None else v) for k, v in sorted(points)]


def curves_svg(result: EvalResult) -> str | None:
    """metric@k curves: one panel per metric family, one line per run."""
    families = list(dict.fromkeys(f for run in result.runs for f in run.curves))
    if not families:
        return None
    rows, cols = _grid(len(families), 4)
    with _figure(2.6 * cols + 0.4, 2.3 * rows + 0.5) as fig:
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        handles: list[Any] = []
        for ax, family in zip(axes, families, strict=False):
            ax.set_title(_label(f"{family}@k"))
            ax.set_xlabel("k")
            top = 1.0
            for i, run in enumerate(result.runs):
                points = _k_sorted(run.curves.get(family, {}))
                if points:
                    xs, ys = [k for k, _ in points], [v for _, v in points]
                    (line,) = ax.plot(xs, ys, marker="o", ms=3.5, color=color(i))
                    top = max(top, *(v for _, v in points if not math.isnan(v)), 0.0)
                    handles += [line] if ax is axes[0] else []
            ax.set_ylim(0, top * 1.05)
            ks = sorted({k for run in result.runs for k, _ in _k_sorted(run.curves.get(family, {}))})
            if len(ks) <= 12:
                ax.set_xticks(ks)
        for ax in axes[len(families) :]:
            ax.set_visible(False)
        _legend(fig, handles, [run.name for run in result.runs if run.curves.get(families[0])])
        return _to_svg(fig, "curves", "metric@k curves per run")


def pr_svg(result: EvalResult) -> str | None:
    """11-point interpolated precision-recall curves, one line per run."""
    runs = [(i, run) for i, run in enumerate(result.runs) if run.pr_curve]
    if not runs:
        return None
    with _figure(4.6, 3.4) as fig:
        ax = fig.subplots()
        handles = []
        for i, run in runs:
            n = len(run.pr_curve)
            xs = [j / (n - 1) if n > 1 else 0.0 for j in range(n)]
            (line,) = ax.plot(xs, run.pr_curve, marker="o", ms=3, color=color(i), drawstyle="default")
            handles.append(line)
        ax.set(xlabel="recall", ylabel="interpolated precision", xlim=(0, 1), ylim=(0, 1.05))
        ax.set_title("Precision-recall (11-point interpolated)")
        _legend(fig, handles, [run.name for _, run in runs])
        return _to_svg(fig, "pr", "precision-recall curves")


def _bars(ax: Any, groups: Sequence[str], series: Sequence[tuple[int, Sequence[Triple]]]) -> list[Any]:
    """Grouped bars: ``series`` holds (run index, [(mean, low, high) per group]); whiskers where low/high exist."""
    width = 0.8 / max(len(series), 1)
    handles = []
    for j, (run_index, values) in enumerate(series):
        xs = [g + (j - (len(series) - 1) / 2) * width for g in range(len(groups))]
        means = [math.nan if v[0] is None else v[0] for v in values]
        bars = ax.bar(xs, means, width * 0.92, color=color(run_index))
        whiskers = [(x, v[1], v[2]) for x, v in zip(xs, values, strict=True) if v[1] is not None and v[2] is not None]
        if whiskers:  # one line collection per series: far fewer artists (and faster) than errorbar()
            ax.vlines(
                [w[0] for w in whiskers], [w[1] for w in whiskers], [w[2] for w in whiskers], color="#333333", lw=0.9
            )
        handles.append(bars)
    ax.set_xticks(range(len(groups)), [_label(g) for g in groups])
    return handles


def strata_svg(result: EvalResult, field: str, wanted: Sequence[str] | None = None, most: int = 12) -> str | None:
    """Per-stratum bars for one stratum field: one panel per metric of ``wanted`` (default: the headline metrics),
    bars per run (the first ``most`` runs) with interval whiskers."""
    runs = [(i, run) for i, run in enumerate(result.runs) if field in run.strata][:most]
    if not runs:
        return None
    values = list(dict.fromkeys(v for _, run in runs for v in run.strata[field]))
    chosen = list(wanted) if wanted is not None else fmt.headline_metrics(result)
    metrics = list(dict.fromkeys(m for _, run in runs for m in fmt.strata_metrics(run, chosen)))
    rows, cols = _grid(len(metrics), 3)
    with _figure(3.3 * cols + 0.3, 2.4 * rows + 0.5) as fig:
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        handles: list[Any] = []
        for ax, metric in zip(axes, metrics, strict=False):
            series = [(i, [_triple(run.strata[field].get(v, {}).get(metric)) for v in values]) for i, run in runs]
            bars = _bars(ax, values, series)
            handles = handles or bars
            ax.set_title(_label(metric))
            ax.set_ylim(bottom=0)
            ax.tick_params(axis="x", labelrotation=20 if len(values) > 3 else 0)
        for ax in axes[len(metrics) :]:
            ax.set_visible(False)
        _legend(fig, handles, [run.name for _, run in runs])
        return _to_svg(fig, f"strata-{_slug(field)}", f"metrics by {field}")


def _triple(summary: Any) -> Triple:
    return (None, None, None) if summary is None else (summary.mean, summary.low, summary.high)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "field"


def _grade_order(key: str) -> tuple[int, float, str]:
    try:
        return (0, float(key), key)
    except ValueError:
        return (1, 0.0, key)


def grades_svg(result: EvalResult) -> str | None:
    """Histogram of the relevance grades of retrieved chunks, bars per run (unscored/unjudged kept as their own bar)."""
    runs = [(i, run) for i, run in enumerate(result.runs) if run.grade_histogram]
    if not runs:
        return None
    grades = sorted({g for _, run in runs for g in run.grade_histogram}, key=_grade_order)
    with _figure(4.6, 3.4) as fig:
        ax = fig.subplots()
        series: list[tuple[int, list[Triple]]] = [
            (i, [(float(run.grade_histogram.get(g, 0)), None, None) for g in grades]) for i, run in runs
        ]
        handles = _bars(ax, [f"grade {g}" if _grade_order(g)[0] == 0 else g for g in grades], series)
        ax.set_ylabel("retrieved chunks")
        ax.set_title("Grades of retrieved chunks")
        _legend(fig, handles, [run.name for _, run in runs])
        return _to_svg(fig, "grades", "grade histogram of retrieved chunks")


def agreement_grades_svg(summary: AgreementSummary | None) -> str | None:
    """Grade histograms of the audited items side by side: the judge's grades and the human grades (0-3)."""
    if summary is None or not summary.overall.human_histogram:
        return None
    block = summary.overall
    with _figure(4.6, 3.2) as fig:
        ax = fig.subplots()
        series: list[tuple[int, list[Triple]]] = [
            (5, [(float(v), None, None) for v in block.judge_histogram]),
            (4, [(float(v), None, None) for v in block.human_histogram]),
        ]
        handles = _bars(ax, [f"grade {g}" for g in summary.grades], series)
        ax.set_ylabel("audited items")
        ax.set_title("Grades of the audited items")
        _legend(fig, handles, ["judge", "human"])
        return _to_svg(fig, "agreement-grades", "judge and human grade histograms of the audited items")


def forest_svg(result: EvalResult, metrics: Sequence[str] | None = None) -> str | None:
    """Comparison deltas with their family-adjusted intervals (a forest plot): one panel per metric (its family of
    run pairs, the primary metric first), one row per pair of runs.

    Filled markers are significant within the metric's family, hollow ones are not; an interval excludes 0 exactly
    when its marker is filled (the evaluator builds them so).
    """
    groups = fmt.by_metric(c for c in result.comparisons if metrics is None or c.metric in metrics)
    if not groups:
        return None
    heights = [len(g) + 1.2 for g in groups]
    with _figure(6.4, 0.26 * sum(heights) + 0.5 * len(groups) + 0.4) as fig:
        axes = fig.subplots(len(groups), 1, squeeze=False, sharex=True, height_ratios=heights).ravel()
        for ax, comps in zip(axes, groups, strict=True):
            _forest_panel(ax, comps)
        axes[-1].set_xlabel("delta (b − a) with family-adjusted interval")
        return _to_svg(fig, "forest", "comparison deltas with family-adjusted intervals")


def _forest_panel(ax: Any, comps: list[Comparison]) -> None:
    ys = list(range(len(comps)))[::-1]
    for y, c in zip(ys, comps, strict=True):
        face = "#0072B2" if c.significant else "white"
        ax.plot([c.low, c.high], [y, y], color="#0072B2", lw=1.4)
        ax.plot([c.delta], [y], marker="o", ms=5, mfc=face, mec="#0072B2", mew=1.2, ls="none")
    ax.axvline(0, color="#999999", lw=0.8, ls="--")
    ax.set_yticks(ys, [_label(f"{c.b} vs {c.a}") for c in comps])
    ax.set_ylim(-0.8, len(comps) - 0.2)
    ax.grid(axis="y", visible=False)
    role = "primary" if comps[0].primary else "secondary"
    ax.set_title(_label(f"{comps[0].metric} ({role}; {fmt.correction_label(comps[0])})"), loc="left")


PAIRED_PANELS = 6  # runs drawn against the reference run at most (the first ones by place)


def paired_svg(result: EvalResult, per_query: Sequence[QueryResult], metric: str, others: Sequence[str],
               reference: str) -> str | None:  # fmt: skip
    """Per-question paired differences on ``metric``: one panel per run of ``others`` against ``reference``, the
    questions sorted by b − a, bars above 0 where b wins and below where it loses (questions either left unscored are
    left out). None when no pair has a question both scored."""
    values = {(row.run, row.query_id): row.metrics.get(metric) for row in per_query}
    questions = list(dict.fromkeys(row.query_id for row in per_query))
    panels = []
    for other in list(others)[:PAIRED_PANELS]:
        both = [(values.get((reference, q)), values.get((other, q))) for q in questions]
        diffs = [b - a for a, b in both if a is not None and b is not None]
        if diffs:
            panels.append((other, sorted(diffs)))
    if not panels:
        return None
    rows, cols = _grid(len(panels), 2)
    with _figure(5.2 * cols, 2.2 * rows + 0.3) as fig:
        axes = fig.subplots(rows, cols, squeeze=False).ravel()
        for ax, (other, diffs) in zip(axes, panels, strict=False):
            _paired_panel(ax, diffs)
            wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
            ties = len(diffs) - wins - losses
            ax.set_title(_label(f"{other} − {reference}: wins {wins}, losses {losses}, ties {ties}"), loc="left")
        for ax in axes[len(panels) :]:
            ax.set_visible(False)
        return _to_svg(fig, "paired", f"per-question differences on {metric} against {reference}")


def _paired_panel(ax: Any, diffs: list[float]) -> None:
    xs = list(range(1, len(diffs) + 1))
    colors = ["#009E73" if d > 0 else "#D55E00" if d < 0 else "#999999" for d in diffs]
    if len(diffs) <= 300:
        ax.bar(xs, diffs, width=0.85, color=colors)
    else:  # one filled path instead of one rectangle per question
        ax.fill_between(xs, diffs, 0, step="mid", color="#0072B2", lw=0)
    ax.axhline(0, color="#666666", lw=0.8)
    ax.set_xlim(0.3, len(diffs) + 0.7)
    ax.set_xlabel("questions, sorted by the difference")
    ax.grid(axis="x", visible=False)
