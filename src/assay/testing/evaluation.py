"""An evaluation with assertions for tests: the pytest plugin's fixtures return an :class:`Evaluation`.

``assert_metric`` applies a :class:`~assay.pipelines.evaluate.statistics.gates.Gate` (the rule of ``assay eval
--fail-under``) to one run or all; ``assert_not_worse`` applies
:func:`~assay.pipelines.evaluate.statistics.gates.regression` against a baseline run evaluated together with it. Both
gate on the metric named, else on the evaluation's own primary
(:func:`~assay.pipelines.evaluate.statistics.gates.default_metric`), and refuse a measure counted in golden chunks
for a run whose passages are too short to reach them (the half-a-unit rule), naming the budget measure to use. A
failing or refused assertion raises :class:`AssayAssertionError` (an ``AssertionError``) whose message gives the
metric, its mean and interval, how many queries were scored, the worst queries with their values and the judge's
reasons (the claims it found unsupported, the diagnosis examples, and why each of the passages the run retrieved
first counts what it counts: :mod:`assay.testing.causes`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate import Evaluated
from assay.pipelines.evaluate.runs.given import NamedRun
from assay.pipelines.evaluate.statistics.gates import (
    LOWER_IS_BETTER,
    Gate,
    Statistic,
    check_gates,
    default_metric,
    refusals,
    regression,
)
from assay.results import EvalResult, MetricSummary, QueryResult
from assay.testing.causes import Causes

__all__ = ["AssayAssertionError", "Evaluation"]

WORST = 5
REASONS_PER_QUERY = 3


class AssayAssertionError(AssertionError):
    """A gate or a comparison failed; the message explains it with the worst queries and the judge's reasons."""


@dataclass
class Evaluation:
    """What ``assay_eval`` returns: the result, per-query rows and support rows, and where the data came from."""

    evaluated: Evaluated
    golden: GoldenSet  # as evaluated: with the labels the judge added (in memory, not written back)
    runs: list[NamedRun]  # the runs as read: each function's or target's run is the file it was asked into

    @property
    def result(self) -> EvalResult:
        return self.evaluated.result

    def run_names(self) -> list[str]:
        return [run.name for run in self.result.runs]

    def summary(self, metric: str, run: str | None = None) -> MetricSummary | None:
        """The run's summary of ``metric`` (``run`` None: the only run; more than one is an error)."""
        return self.result.runs[self._index(run)].metrics.get(metric)

    def _index(self, run: str | None) -> int:
        names = self.run_names()
        if run is None and len(names) == 1:
            return 0
        if run in names:
            return names.index(run)
        raise ValueError(f"name the run: one of {', '.join(names)} (got {run!r})")

    def assert_metric(
        self,
        metric: str | None = None,
        *,
        at_least: float | None = None,
        at_most: float | None = None,
        statistic: Statistic | None = None,
        run: str | None = None,
    ) -> None:
        """Fail unless ``metric`` reaches the bound: ``at_least`` checks the interval's lower bound and ``at_most``
        its upper bound unless ``statistic`` ("mean", "low", "high") says otherwise. ``run`` None: every run.
        ``metric`` None: the evaluation's primary (``default_metric``); a metric refused for a run fails with why."""
        if (at_least is None) == (at_most is None):
            raise ValueError("give exactly one of at_least= or at_most=")
        threshold = at_least if at_least is not None else at_most
        chosen: Statistic = statistic or ("low" if at_least is not None else "high")
        if chosen not in ("mean", "low", "high"):
            raise ValueError(f"statistic must be 'mean', 'low' or 'high', got {chosen!r}")
        runs = None if run is None else [self.run_names()[self._index(run)]]
        name = metric or default_metric(self.result, runs)
        gate = Gate(name, float(threshold or 0.0), chosen, at_most=at_most is not None)
        self._refuse(name, runs)
        failures = check_gates(self.result, [gate], runs=runs)
        if failures:
            names = [f.split(":", 1)[0] for f in failures]
            explained = [self._explain(one, name, why) for one, why in zip(names, failures, strict=True)]
            raise AssayAssertionError("\n\n".join(explained))

    def assert_not_worse(self, run: str, baseline: str, metric: str | None = None) -> None:
        """Fail when ``run`` is significantly worse than ``baseline`` on ``metric`` (None: the evaluation's primary,
        ``default_metric``), by the evaluator's paired test and its correction; a metric refused for either run fails
        with why."""
        chosen = metric or default_metric(self.result, [run, baseline])
        self._refuse(chosen, [run, baseline])
        why = regression(self.result, run, baseline, chosen)
        if why is not None:
            raise AssayAssertionError(self._explain(run, chosen, why, baseline=baseline))

    def _refuse(self, metric: str, runs: list[str] | None) -> None:
        refused = refusals(self.result, metric, runs)
        if refused:
            raise AssayAssertionError("\n".join(refused))

    def _explain(self, run: str, metric: str, why: str, baseline: str | None = None) -> str:
        level = f"{round(float(self.result.settings.get('confidence', 0.95)) * 100):g}%"
        lines = [why]
        for name in [run] if baseline is None else [run, baseline]:
            s = self.summary(metric, name)
            if s is not None:
                lines.append(f"  {name} {metric}: {_describe(s, level)}")
        lines.append(f"  worst queries of {run} on {metric}:")
        lines += self._worst(run, metric)
        return "\n".join(lines)

    def _worst(self, run: str, metric: str) -> list[str]:
        rows = [r for r in self.evaluated.per_query if r.run == run and r.metrics.get(metric) is not None]
        rows.sort(key=lambda r: _value(r, metric), reverse=metric in LOWER_IS_BETTER)
        out = []
        for row in rows[:WORST]:
            out.append(f"    {row.query_id}: {metric} = {_value(row, metric):.3f}")
            out += [f"      - {reason}" for reason in self._reasons(run, row.query_id, metric)]
        return out or ["    (no query was scored)"]

    def _reasons(self, run: str, query_id: str, metric: str) -> list[str]:
        """The judge's reasons about one query: unsupported claims and diagnosis examples (the first
        :data:`REASONS_PER_QUERY`), then why each of the run's first passages counts what it counts on ``metric``."""
        rows = [r for r in self.evaluated.support_rows if r.run == run and r.query_id == query_id]
        rows.sort(key=lambda r: r.kind != "answer")  # the answer's claims first
        out = [
            f"{row.kind} claim {row.claim!r}: {row.verdict} ({row.reason})"
            for row in rows
            if row.verdict not in ("supported", "support")
        ]
        out += [
            f"{e.category.replace('_', ' ')}: {e.claim!r} ({e.reason})"
            for e in self.result.diagnosis_examples
            if e.run == run and e.query_id == query_id
        ]
        return out[:REASONS_PER_QUERY] + self._causes.reasons(run, query_id, metric, REASONS_PER_QUERY)

    @functools.cached_property
    def _causes(self) -> Causes:
        return Causes(self.golden, self.evaluated.passage_rows, judged=self.result.judge is not None)


def _describe(s: MetricSummary, level: str) -> str:
    interval = "none" if s.low is None or s.high is None else f"[{s.low:.3f}, {s.high:.3f}]"
    mean = "unscored" if s.mean is None else f"{s.mean:.3f}"
    why = f" {s.unscored_reasons}" if s.unscored_reasons else ""
    return f"mean {mean}, {level} interval {interval}, {s.n_scored} scored, {s.n_unscored} unscored{why}"


def _value(row: QueryResult, metric: str) -> float:
    value = row.metrics.get(metric)
    return math.nan if value is None else float(value)
