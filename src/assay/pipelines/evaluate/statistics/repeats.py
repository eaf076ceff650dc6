"""Runs of a system asked every question several times (``assay run --repeats N``): merged per question, with the
variance split into what differs between questions and what the system changes when merely asked again.

An LLM application answers differently when asked again; one asking per question hides that noise inside the
question-to-question spread and makes a comparison of two runs depend on the luck of one draw. With N repeats:

* each repeat is scored like a run of its own (``NAME#r``), then a question's value is the mean over the repeats
  that scored it (a question no repeat scored is unscored, with the first repeat's reason);
* intervals and tests run on those per-question means, resampling questions (or their clusters). That is the
  usual treatment of a two-level design: the variance of a question mean is between + within / N, so the
  within-question part enters every interval and test through the means themselves, shrinking as N grows;
* :func:`repeat_summary` reports the split (between, within, and within's share) for the headline metrics, and the
  standard deviation of the run's mean over the repeats taken alone (what a single asking could have reported).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from assay.pipelines.evaluate.runs.loaded import LoadedRun, SystemTrace
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.scored import ScoredRun
from assay.results import QueryResult, RepeatSummary, RunCounts, VarianceSplit, rounded

__all__ = ["Merged", "merged_rows", "repeat_summary"]

Rows = Mapping[str, QueryResult]


def merged_rows(name: str, members: Sequence[Rows]) -> dict[str, QueryResult]:
    """One row per question of the run ``name``: each metric's mean over the repeats that scored it (how full each
    budget is: the first repeat's)."""
    out: dict[str, QueryResult] = {}
    for qid in members[0]:
        rows = [member[qid] for member in members if qid in member]
        first = rows[0]
        merged = QueryResult(
            run=name, query_id=qid, strata=dict(first.strata), cluster=first.cluster, budget=dict(first.budget)
        )  # how full: the first repeat's, as its passages are shown
        for metric in dict.fromkeys(m for row in rows for m in row.metrics):
            values = [v for row in rows if (v := row.metrics.get(metric)) is not None]
            merged.metrics[metric] = float(np.mean(values)) if values else None
            if not values:
                merged.unscored[metric] = next((r.unscored[metric] for r in rows if metric in r.unscored), "unscored")
        out[qid] = merged
    return out


def repeat_summary(members: Sequence[Rows], names: Sequence[str]) -> RepeatSummary:
    """The variance split of each of ``names`` over the questions every repeat scored, and the spread of the
    run's mean over the repeats taken alone."""
    splits: dict[str, VarianceSplit] = {}
    spread: dict[str, float | None] = {}
    for name in names:
        table = _table(members, name)
        if table.shape[0] >= 2 and table.shape[1] >= 2:
            within = float(np.mean(np.var(table, axis=1, ddof=1)))
            between = max(float(np.var(table.mean(axis=1), ddof=1)) - within / table.shape[1], 0.0)
            total = between + within
            splits[name] = VarianceSplit(
                between=round(between, 6), within=round(within, 6),
                within_share=round(within / total, 6) if total > 0 else None, questions=int(table.shape[0]),
            )  # fmt: skip
        means = [np.mean(values) for member in members if (values := _scored(member, name))]
        spread[name] = rounded(float(np.std(means, ddof=1))) if len(means) >= 2 else None
    return RepeatSummary(repeats=len(members), metrics=splits, spread=spread)


def _scored(rows: Rows, name: str) -> list[float]:
    return [v for row in rows.values() if (v := row.metrics.get(name)) is not None and not math.isnan(v)]


def _table(members: Sequence[Rows], name: str) -> np.ndarray:
    """Questions x repeats of ``name``, for the questions every repeat scored."""
    kept = []
    for qid in members[0]:
        values = [member[qid].metrics.get(name) if qid in member else None for member in members]
        if all(v is not None for v in values):
            kept.append(values)
    return np.array(kept, dtype=np.float64).reshape(len(kept), len(members))


@dataclass(frozen=True)
class Merged:
    """The runs of an evaluation with each repeated run's askings joined into one :class:`ScoredRun`: its rows merged
    per question (:func:`merged_rows`), its run the first asking's lines under the run's own name with the counts and
    the system trace of every asking, its projection the first asking's, its passages every asking's. ``members``
    lists each repeated run's askings, each scored on its own."""

    runs: list[ScoredRun]
    members: dict[str, list[ScoredRun]] = field(default_factory=dict)

    @classmethod
    def of(cls, scored: Sequence[ScoredRun]) -> Merged:
        """Join the askings of the repeated runs among ``scored``; the others are kept as they are."""
        groups: dict[str, list[ScoredRun]] = {}
        for one in scored:
            groups.setdefault(one.run.repeat_of or one.name, []).append(one)
        out = cls([])
        for name, askings in groups.items():
            first = askings[0]
            if first.run.repeat_of is None:
                out.runs.append(first)
                continue
            counts = RunCounts.model_validate(_summed([one.run.counts.model_dump() for one in askings]))
            trace = SystemTrace()
            for one in askings:
                trace.latencies += one.run.trace.latencies
                trace.failures.update(one.run.trace.failures)
                trace.usages += one.run.trace.usages
            run = replace(first.run, name=name, counts=counts, trace=trace, repeat_of=None, repeat=None)
            projected = replace(first.projected, name=name, repeat_of=None, repeat=None)
            rows = merged_rows(name, [one.rows for one in askings])
            out.runs.append(ScoredRun(run, projected, rows, tuple(p for one in askings for p in one.passages)))
            out.members[name] = askings
        return out

    @property
    def per_run(self) -> dict[str, Rows]:
        """Each run's rows (a repeated run's merged), by name."""
        return {one.name: one.rows for one in self.runs}

    def askings(self, name: str) -> list[tuple[LoadedRun, Rows]]:
        """The run ``name`` as asked: each asking of a repeated run with its own rows (not merged), else the run."""
        members = self.members.get(name)
        if members is None:
            one = next(one for one in self.runs if one.name == name)
            return [(one.run, one.rows)]
        return [(one.run, one.rows) for one in members]

    def projections(self) -> dict[str, list[LoadedRun]]:
        """Each run's projections: one per asking of a repeated run, else its own."""
        return {one.name: [m.projected for m in self.members.get(one.name, [])] or [one.projected] for one in self.runs}

    def repeats(self, name: str, names: Sequence[str]) -> RepeatSummary | None:
        """The repeated run ``name``'s :class:`RepeatSummary` over ``names`` (None: asked once)."""
        members = self.members.get(name)
        return None if members is None else repeat_summary([one.rows for one in members], names)

    def mean_curves(
        self, name: str, labels: er.Labels, *, threshold: int, depth: int
    ) -> dict[str, dict[str, float | None]]:
        """The repeated run ``name``'s dense ranking curves averaged over its askings (empty: asked once)."""
        curves = [er.rank_curves(one.projected, labels, threshold, depth) for one in self.members.get(name, [])]
        if not curves:
            return {}
        return {
            family: {k: _mean([c[family].get(k) for c in curves if family in c]) for k in keys}
            for family, keys in curves[0].items()
        }


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def _summed(dumps: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts of every repeat added up (``matched_by`` per kind)."""
    out: dict[str, Any] = {}
    for dump in dumps:
        for key, value in dump.items():
            if isinstance(value, dict):
                inner = out.setdefault(key, {})
                for k, v in value.items():
                    inner[k] = inner.get(k, 0) + v
            else:
                out[key] = out.get(key, 0) + value
    return out
