"""The one-screen summary of ``assay eval`` in the terminal, below the verdict (:mod:`assay.report.terminal` prints
the header and the verdict above it).

The summary (at most 60 lines for four runs at 80 columns, every table row on one line): a run x metric matrix of the
summary metrics (the primary, then one per group, :func:`assay.results.summary_metrics`), a metric x pair matrix of
the comparisons (the sign of b − a, ``*`` where significant), one line on what the intervals count beyond
independent questions, the evaluator's warnings, and where the rest is.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from assay.report import _format as fmt
from assay.report.verdict import build_verdict
from assay.results import OFFLINE_WARNING, EvalResult, RunResult, summary_metrics

__all__ = ["SUMMARY_PAIRS", "print_summary"]


SUMMARY_PAIRS = 6  # pair columns of the summary's comparison matrix at most; the leader's pairs first


def print_summary(console: Console, result: EvalResult) -> None:
    """The summary after the verdict: the metric matrix, the comparison matrix, the warnings, where the rest is."""
    headline = fmt.headline_metrics(result)
    shown = summary_metrics(headline, build_verdict(result).metric)
    runs = _summary_runs(result, console.width)
    console.print()
    console.print(
        Text(
            f"Means over the scored questions, {shown[0] if shown else 'the primary'} first "
            f"({fmt.confidence_label(result)} intervals in report.html)",
            style="bold",
        ),
        overflow="fold",
    )
    console.print(_metric_matrix(shown, runs, console.width))
    compared = _pair_matrix(result, shown, console.width)
    if compared is not None:
        number = ", ".join(f"{i} {run.name}" for i, run in enumerate(result.runs, 1))
        pairs = len({(c.a, c.b) for c in result.comparisons})
        left = pairs - _pair_room(console.width)
        more = f"; {left} more pairs in report.html" if left > 0 else ""
        console.print()
        console.print(Text(f"Comparisons: b − a, * significant (adjusted in its family); runs {number}{more}",
                           style="bold"), overflow="fold")  # fmt: skip
        console.print(compared)
    brief = _noise_brief(result)
    if brief:
        console.print(Text(brief, style="dim"), overflow="fold")
    for warning in result.warnings:
        if warning != OFFLINE_WARNING:  # the verdict's first caveat says it
            console.print(Text(f"warning: {warning}", style="yellow"))
    console.print()
    more = " (and the runs left out)" if len(runs) < len(result.runs) else ""
    console.print(Text(f"Every metric, stratum and question{more}: report.html; --verbose prints them here.",
                       style="dim"))  # fmt: skip


def _summary_runs(result: EvalResult, width: int) -> list[RunResult]:
    """The runs that fit as columns (8 characters each beside a 27-character metric column): the first ones by the
    primary metric's place when they do not all fit."""
    room = max(1, (width - 27) // 9)
    if len(result.runs) <= room:
        return list(result.runs)
    order = [place.run for place in build_verdict(result).places]
    by_name = {run.name: run for run in result.runs}
    return [by_name[name] for name in order[:room]]


def _matrix() -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("metric", no_wrap=True, overflow="ellipsis", max_width=26)
    return table


def _metric_matrix(names: list[str], runs: list[RunResult], width: int) -> Table:
    """Run x metric: the mean of each summary metric per run (the best in bold), the primary first."""
    table = _matrix()
    room = max(8, min(16, (width - 28) // max(len(runs), 1) - 1))  # a run's name gets what the columns leave
    for run in runs:
        table.add_column(Text(run.name), justify="right", no_wrap=True, overflow="ellipsis", max_width=room)
    for name in names:
        values = [run.metrics.get(name) for run in runs]
        best = max((s.mean for s in values if s is not None and s.mean is not None), default=None)
        cells = [Text("—" if s is None else fmt.fmt_mean(s).replace("unscored", "n/a"),
                      style="bold" if s is not None and s.mean is not None and s.mean == best and len(runs) > 1 else "")
                 for s in values]  # fmt: skip
        table.add_row(Text(name), *cells)
    return table


def _pair_matrix(result: EvalResult, names: list[str], width: int) -> Table | None:
    """Metric x pair: b − a per pair of runs (runs numbered in a caption), ``*`` where significant in its family."""
    comps = [c for c in result.comparisons if c.metric in names]
    if not comps:
        return None
    number = {run.name: i for i, run in enumerate(result.runs, 1)}
    leader = build_verdict(result).places[0].run
    pairs = sorted(
        dict.fromkeys((c.a, c.b) for c in comps), key=lambda p: (leader not in p, number[p[0]], number[p[1]])
    )
    room = _pair_room(width)
    table = _matrix()
    for a, b in pairs[:room]:
        table.add_column(f"{number[b]}−{number[a]}", justify="right", no_wrap=True)
    found = {(c.metric, c.a, c.b): c for c in comps}
    for name in [n for n in names if any(c.metric == n for c in comps)]:
        cells = []
        for a, b in pairs[:room]:
            c = found.get((name, a, b))
            text = "—" if c is None else f"{c.delta:+.3f}{'*' if c.significant else ' '}"
            cells.append(Text(text, style="green" if c is not None and c.significant else ""))
        table.add_row(Text(name), *cells)
    return table


def _pair_room(width: int) -> int:
    """Pair columns that fit beside the metric column (9 characters each)."""
    return max(1, min(SUMMARY_PAIRS, (width - 27) // 9))


def _noise_brief(result: EvalResult) -> str | None:
    """One line for the summary: what the intervals count beyond independent questions (the sentences: --verbose)."""
    parts = []
    clustering = result.clustering
    if clustering is not None and clustering.clusters < clustering.questions:
        deff = f", design effect {clustering.design_effect:.2f}" if clustering.design_effect is not None else ""
        parts.append(f"{clustering.clusters} clusters of questions{deff}")
    repeated = [run.name for run in result.runs if run.repeats is not None]
    if repeated:
        parts.append(f"{len(repeated)} run(s) asked repeatedly")
    if result.judge_noise is not None and result.judge_noise.changed is not None:
        parts.append(f"judge re-asked: {100 * result.judge_noise.changed:.0f}% of grades changed")
    return f"Intervals count {'; '.join(parts)} (--verbose says more)." if parts else None
