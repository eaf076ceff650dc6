"""The system side of each run (``assay run``'s latency, failures, tokens and cost) for the three reports, and the
quality-versus-latency plot when several runs recorded their latency."""

from __future__ import annotations

from assay.report import plots
from assay.report._format import headline_metrics
from assay.results import EvalResult, RunResult, SystemSummary

__all__ = ["HEADER", "STEPS", "quality_metric", "quality_vs_latency_svg", "system_header", "system_rows"]

HEADER = ("run", "target", "label", "questions", "failed", "p50 latency", "p95 latency", "tokens", "cost (USD)")
STEPS = "steps per question"  # a last column, when some run reported the steps of a system that searches several times


def _ms(summary: SystemSummary, key: str) -> str:
    value = summary.latency_ms.get(key)
    return "—" if value is None else f"{value:,.0f} ms"


def _failed(summary: SystemSummary) -> str:
    if not summary.failed:
        return "0"
    kinds = ", ".join(f"{n} {kind}" for kind, n in summary.failures.items())
    return f"{summary.failed} ({kinds})"


def _tokens(summary: SystemSummary) -> str:
    if summary.prompt_tokens is None and summary.completion_tokens is None:
        return "—"
    return f"{summary.prompt_tokens or 0:,} + {summary.completion_tokens or 0:,}"


def _steps(summary: SystemSummary) -> str:
    """``2.0 searches, 0.5 tool calls, 3.0 model calls`` (means over the lines that reported steps), or ``—``."""
    if not summary.with_steps:
        return "—"
    words = {"retrieval": "searches", "tool": "tool calls", "llm": "model calls"}
    return ", ".join(f"{mean:.1f} {words.get(kind, kind)}" for kind, mean in summary.steps.items())


def _with_steps(result: EvalResult) -> bool:
    return any(run.system is not None and run.system.with_steps for run in result.runs)


def system_header(result: EvalResult) -> tuple[str, ...]:
    """:data:`HEADER`, and :data:`STEPS` when some run reported its steps."""
    return (*HEADER, STEPS) if _with_steps(result) else HEADER


def system_rows(result: EvalResult) -> list[list[str]]:
    """One row per run that recorded its system (columns of :func:`system_header`); empty when none did."""
    rows, steps = [], _with_steps(result)
    for run in result.runs:
        s = run.system
        if s is None:
            continue
        cost = "—" if s.cost_usd is None else f"{s.cost_usd:.4f}"
        rows.append([run.name, s.target or "—", s.label or "—", f"{s.lines:,}", _failed(s), _ms(s, "p50"),
                     _ms(s, "p95"), _tokens(s), cost, *([_steps(s)] if steps else [])])  # fmt: skip
    return rows


def quality_metric(result: EvalResult) -> str | None:
    """The metric on the plot's y axis: the primary metric when computed, else the first headline metric."""
    names = {name for run in result.runs for name in run.metrics}
    if result.primary_metric in names:
        return result.primary_metric
    return next(iter(headline_metrics(result)), None)


def _timed(result: EvalResult, metric: str) -> list[tuple[int, RunResult, float, float]]:
    points = []
    for index, run in enumerate(result.runs):
        summary = run.metrics.get(metric)
        if run.system is not None and "p50" in run.system.latency_ms and summary and summary.mean is not None:
            points.append((index, run, run.system.latency_ms["p50"], summary.mean))
    return points


def quality_vs_latency_svg(result: EvalResult) -> str | None:
    """Each run's quality metric (mean and interval) against its median latency (a bar to p95); None unless two or
    more runs recorded latency."""
    metric = quality_metric(result)
    points = _timed(result, metric) if metric else []
    if metric is None or len(points) < 2:
        return None
    with plots._figure(6.0, 3.6) as fig:
        ax = fig.subplots()
        for index, run, p50, mean in points:
            m = run.metrics[metric]
            p95 = run.system.latency_ms.get("p95", p50) if run.system else p50
            low, high = (mean if m.low is None else m.low), (mean if m.high is None else m.high)
            ax.errorbar([p50], [mean], xerr=[[0.0], [max(p95 - p50, 0.0)]], yerr=[[mean - low], [high - mean]],
                        fmt="o", color=plots.color(index), capsize=3, label=plots._label(run.name))  # fmt: skip
        ax.set_xlabel("median latency (ms); bar to p95")
        ax.set_ylabel(plots._label(metric))
        ax.grid(True)
        ax.legend(loc="best")
        return plots._to_svg(fig, "latency", f"{metric} against median latency per run")
