"""Release gates on an evaluation: the one rule behind ``assay eval --fail-under`` and the pytest plugin's assertions.

A :class:`Gate` names a metric, a threshold, the statistic of the run's :class:`MetricSummary` it applies to (the
mean, or the low or high end of its bootstrap interval) and a side: ``at_least`` (the default: the statistic must be
>= the threshold) or at most. A run whose metric has no scored query fails every gate on it (an evaluation that
scored nothing proves nothing). ``--fail-under ndcg@10=0.6`` is ``Gate("ndcg@10", 0.6)`` (the mean); "the lower bound
of ndcg@10's interval is at least 0.6" is ``Gate("ndcg@10", 0.6, statistic="low")``.

The metric of a gate that names none (``--fail-under 0.6``, ``assert_metric(at_least=0.6)``) is
:func:`default_metric`:

1. the evaluation's primary, the one its verdict leads with (nDCG at the first budget when the runs cut their text
   differently), else the ``--primary`` asked for, else ``ndcg@10``, else the first metric of the first run;
2. a measure counted in golden chunks that a gated run cannot reach (the rule below) gives way to the first budget
   measure, unless ``--primary`` named it.

A gate **refuses** a metric it cannot judge (:func:`unit_refusal`): a measure counted in golden chunks
(:func:`~assay.pipelines.evaluate.scoring.names.counts_units`: ``ndcg@10``, ``P@5``, ``map``) for a run whose median
passage is shorter than half the median relevant golden chunk (the chunks graded at or above the threshold for some
question: the units a run must reach to score, often longer than the corpus's median chunk; every chunk when none is
graded so). A passage reaches a golden chunk only once the run has shown at least half of the chunk's characters (the
half-a-unit rule of :mod:`assay.metrics.projection`), so such a run's short passages rarely reach a chunk and the
measure counts how it cut its text, not what it found. The refusal is a failure that says so and names the budget
measure to gate on instead.

:func:`regression` is the comparison rule: run b is worse than baseline a on a metric when the evaluator's paired test
found the difference significant (after its multiple-comparison correction) and the difference goes the wrong way
(down for a higher-is-better metric, up for a lower-is-better one, :data:`LOWER_IS_BETTER`); a metric refused for
either run is refused for the comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.metrics.diagnosis import LOWER_IS_BETTER
from assay.metrics.projection import SHARE
from assay.pipelines.evaluate.scoring.names import counts_units
from assay.results import Comparison, EvalResult, MetricSummary, RunResult, metric_group

__all__ = [
    "LOWER_IS_BETTER",
    "Gate",
    "Statistic",
    "budget_metric",
    "check_gates",
    "comparison_of",
    "default_metric",
    "gate_failure",
    "refusals",
    "regression",
    "relevant_chunk_lengths",
    "unit_refusal",
]

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


def budget_metric(result: EvalResult) -> str | None:
    """The budget measure a refused gate is pointed to: nDCG at the evaluation's first budget when it was computed,
    else the first budget measure computed, else None."""
    known = [name for run in result.runs for name in run.metrics]
    budgets = result.settings.get("budgets") or ()
    first = f"ndcg@{budgets[0]}" if budgets else None
    return first if first in known else next((name for name in known if metric_group(name) == "budget"), None)


def relevant_chunk_lengths(gold: GoldenSet, threshold: int) -> list[int]:
    """The lengths of the golden chunks graded ``threshold`` or more for some question (every chunk when none is):
    the units the half-a-unit rule measures a run's passages against."""
    relevant = {cid for grades in gold.qrels_map().values() for cid, g in grades.items() if g >= threshold}
    chosen = [chunk for chunk in gold.chunks if chunk.id in relevant] or gold.chunks
    return [len(chunk.text) for chunk in chosen]


def unit_refusal(result: EvalResult, run: RunResult, metric: str) -> str | None:
    """Why ``metric`` cannot judge ``run`` (one line: the half-a-unit rule of the module docstring), or None."""
    passage, chunk = run.passage_lengths.get("median"), result.chunk_lengths.get("median")
    if not counts_units(metric) or passage is None or not chunk or passage >= SHARE * chunk:
        return None
    instead = budget_metric(result)
    fix = f"Gate on {instead}" if instead else "Evaluate a budget measure (--budget 1000t) and gate on ndcg@1000t"
    return (
        f"{run.name}: {metric} refused: it counts golden chunks, and a passage reaches a chunk only once the run has "
        f"shown at least half of the chunk's characters (the half-a-unit rule); this run's median passage is "
        f"{passage:.0f} characters, under half the median relevant golden chunk ({chunk:.0f}), so {metric} would "
        f"count how it cut its text, not what it found. {fix} instead: relevant characters within the same budget of "
        "text for every run."
    )


def refusals(result: EvalResult, metric: str, runs: Sequence[str] | None = None) -> list[str]:
    """:func:`unit_refusal` of ``metric`` for each of ``runs`` (None: every run), the refused ones only."""
    chosen = [run for run in result.runs if runs is None or run.name in runs]
    return [why for run in chosen if (why := unit_refusal(result, run, metric)) is not None]


def default_metric(result: EvalResult, runs: Sequence[str] | None = None) -> str:
    """The metric of a gate that names none, for ``runs`` (None: every run): the steps of the module docstring."""
    known = [name for run in result.runs for name in run.metrics]
    asked = result.settings.get("primary")
    chosen = result.primary_metric or next(
        (name for name in (asked, "ndcg@10") if isinstance(name, str) and name in known), None
    )
    chosen = chosen or (known[0] if known else "ndcg@10")
    instead = budget_metric(result)
    if chosen != asked and instead is not None and refusals(result, chosen, runs):
        return instead
    return chosen


def check_gates(
    result: EvalResult, gates: Sequence[Gate], *, runs: Sequence[str] | None = None, origin: str = ""
) -> list[str]:
    """One message per (run, gate) that fails or is refused (:func:`unit_refusal`), for ``runs`` (None: every run).
    A metric no run has is a :class:`ConfigError` (prefixed with ``origin``, e.g. ``--fail-under``) listing the
    metrics there are."""
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
            failure = unit_refusal(result, run, gate.metric) or gate_failure(
                run.name, run.metrics.get(gate.metric), gate
            )
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
    """Why ``run`` is significantly worse than ``baseline`` on ``metric`` (one line), or None when it is not; a
    metric refused for either run (:func:`unit_refusal`) gives the refusal."""
    refused = refusals(result, metric, [run, baseline])
    if refused:
        return " ".join(refused)
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
