"""Release gates on an evaluation: the one rule behind ``assay eval --fail-under`` and the pytest plugin's assertions.

A :class:`Gate` names a metric, a threshold, the statistic of the run's :class:`MetricSummary` it applies to (the
mean, or the low or high end of its bootstrap interval) and a side: ``at_least`` (the default: the statistic must be
>= the threshold) or at most. A run whose metric has no scored query fails every gate on it (an evaluation that
scored nothing proves nothing). ``--fail-under ndcg@10=0.6`` is ``Gate("ndcg@10", 0.6)`` (the mean); "the lower bound
of ndcg@10's interval is at least 0.6" is ``Gate("ndcg@10", 0.6, statistic="low")``.

:func:`regression` is the comparison rule: run b is worse than baseline a on a metric when the evaluator's paired test
found the difference significant (after its multiple-comparison correction) and the difference goes the wrong way
(down for a higher-is-better metric, up for a lower-is-better one, :data:`LOWER_IS_BETTER`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assay.errors import ConfigError
from assay.metrics.diagnosis import LOWER_IS_BETTER
from assay.results import Comparison, EvalResult, MetricSummary

__all__ = ["LOWER_IS_BETTER", "Gate", "Statistic", "check_gates", "comparison_of", "gate_failure", "regression"]

Statistic = Literal["mean", "low", "high"]
_WORDS = {"mean": "mean", "low": "interval's lower bound", "high": "interval's upper bound"}


@dataclass(frozen=True)
class Gate:
    """``metric``'s ``statistic`` must be >= ``threshold`` (or <= with ``at_most``)."""

    metric: str
    threshold: float
    statistic: Statistic = "mean"
    at_most: bool = False

    def describe(self) -> str:
        side = "<=" if self.at_most else ">="
        return f"{self.metric} {_WORDS[self.statistic]} {side} {self.threshold:g}"


def gate_failure(run: str, summary: MetricSummary | None, gate: Gate) -> str | None:
    """Why ``run`` fails ``gate`` (one line), or None when it passes."""
    value = None if summary is None else getattr(summary, gate.statistic)
    if value is None:
        why = "no query"
        if summary is not None and (summary.unscored_reasons or summary.n_unscored):
            reasons = summary.unscored_reasons.items()
            why = ", ".join(f"{reason} {n}" for reason, n in reasons) or f"{summary.n_unscored} unscored"
        return f"{run}: {gate.metric} has no scored query ({why}; gate {gate.threshold:g})"
    if gate.at_most and value > gate.threshold:
        return f"{run}: {gate.metric}{_label(gate)} = {value:.3f} > {gate.threshold:g}"
    if not gate.at_most and value < gate.threshold:
        return f"{run}: {gate.metric}{_label(gate)} = {value:.3f} < {gate.threshold:g}"
    return None


def _label(gate: Gate) -> str:
    return "" if gate.statistic == "mean" else {"low": " (interval low)", "high": " (interval high)"}[gate.statistic]


def check_gates(
    result: EvalResult, gates: Sequence[Gate], *, runs: Sequence[str] | None = None, origin: str = ""
) -> list[str]:
    """One message per (run, gate) that fails, for ``runs`` (None: every run). A metric no run has is a
    :class:`ConfigError` (prefixed with ``origin``, e.g. ``--fail-under``) listing the metrics there are."""
    known = {name for run in result.runs for name in run.metrics}
    chosen = [run for run in result.runs if runs is None or run.name in runs]
    failures = []
    for gate in gates:
        if gate.metric not in known:
            prefix = f"{origin} " if origin else ""
            raise ConfigError(
                f"{prefix}{gate.metric}: no such metric in this evaluation; metrics: {', '.join(sorted(known))}"
            )
        for run in chosen:
            failure = gate_failure(run.name, run.metrics.get(gate.metric), gate)
            if failure is not None:
                failures.append(failure)
    return failures


def comparison_of(result: EvalResult, run: str, baseline: str, metric: str) -> tuple[Comparison, float]:
    """The comparison of ``run`` with ``baseline`` on ``metric`` and the sign that turns its delta into run − baseline.

    Raises :class:`ConfigError` when the evaluation holds no such comparison (evaluate both runs together)."""
    for comparison in [*result.comparisons, *result.diagnosis_comparisons]:
        if comparison.metric != metric:
            continue
        if (comparison.a, comparison.b) == (baseline, run):
            return comparison, 1.0
        if (comparison.a, comparison.b) == (run, baseline):
            return comparison, -1.0
    raise ConfigError(
        f"no comparison of {run!r} with {baseline!r} on {metric}: evaluate both runs in one evaluation, and check "
        f"that {metric} is a compared metric (those without a cut-off, and those at the headline k)"
    )


def regression(result: EvalResult, run: str, baseline: str, metric: str) -> str | None:
    """Why ``run`` is significantly worse than ``baseline`` on ``metric`` (one line), or None when it is not."""
    comparison, sign = comparison_of(result, run, baseline, metric)
    delta = sign * comparison.delta
    low, high = sorted((sign * comparison.low, sign * comparison.high))
    worse = delta > 0 if metric in LOWER_IS_BETTER else delta < 0
    if not (comparison.significant and worse):
        return None
    return (
        f"{run} is significantly worse than {baseline} on {metric}: {run} − {baseline} = {delta:+.3f} "
        f"[{low:.3f}, {high:.3f}], p adjusted {comparison.p_adjusted:.3g} over {comparison.n} paired queries"
    )
