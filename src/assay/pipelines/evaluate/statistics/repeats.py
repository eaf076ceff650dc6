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
from assay.results import EvalResult, QueryResult, RepeatSummary, RunCounts, VarianceSplit, rounded

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


@dataclass
class Merged:
    """The runs of an evaluation with each repeated run's repeats joined into one: its rows merged per question
    (:func:`merged_rows`), its :class:`LoadedRun` the first repeat's lines under the run's own name with the
    counts and the system trace of every repeat, and its projection the first repeat's. ``members`` lists each
    repeated run's repeats."""

    runs: list[LoadedRun]
    projected: list[LoadedRun]
    per_run: dict[str, dict[str, QueryResult]]
    members: dict[str, list[tuple[LoadedRun, LoadedRun]]] = field(default_factory=dict)
    rows: dict[str, list[Rows]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        loaded: Sequence[LoadedRun],
        projected: Sequence[LoadedRun],
        per_run: Mapping[str, Mapping[str, QueryResult]],
        passages: list[dict[str, Any]],
    ) -> Merged:
        """Join the repeats of ``loaded`` (and relabel their ``passages`` rows: the run's name, and ``repeat``)."""
        out = cls([], [], {})
        groups: dict[str, list[tuple[LoadedRun, LoadedRun]]] = {}
        for run, unit_run in zip(loaded, projected, strict=True):
            groups.setdefault(run.repeat_of or run.name, []).append((run, unit_run))
        repeat_of = {run.name: (run.repeat_of, run.repeat) for run in loaded if run.repeat_of is not None}
        for row in passages:
            if row["run"] in repeat_of:
                row["run"], row["repeat"] = repeat_of[row["run"]]
        for name, pairs in groups.items():
            first, unit_first = pairs[0]
            if first.repeat_of is None:
                out.runs.append(first)
                out.projected.append(unit_first)
                out.per_run[name] = dict(per_run[name])
                continue
            counts = RunCounts.model_validate(_summed([run.counts.model_dump() for run, _ in pairs]))
            trace = SystemTrace()
            for run, _ in pairs:
                trace.latencies += run.trace.latencies
                trace.failures.update(run.trace.failures)
                trace.usages += run.trace.usages
            out.runs.append(replace(first, name=name, counts=counts, trace=trace, repeat_of=None, repeat=None))
            out.projected.append(replace(unit_first, name=name, repeat_of=None, repeat=None))
            out.rows[name] = [per_run[run.name] for run, _ in pairs]
            out.per_run[name] = merged_rows(name, out.rows[name])
            out.members[name] = pairs
        return out

    def repeated(self) -> dict[str, list[tuple[LoadedRun, Rows]]]:
        """Each repeated run's repeats, each with its own rows (not merged)."""
        return {name: [(run, rows) for (run, _), rows in zip(pairs, self.rows[name], strict=True)]
                for name, pairs in self.members.items()}  # fmt: skip

    def describe(
        self, result: EvalResult, labels: er.Labels, names: Sequence[str], *, threshold: int, depth: int
    ) -> None:
        """Add each repeated run's :class:`RepeatSummary` (over the headline metrics ``names``) and its dense
        ranking curves averaged over the repeats."""
        for run in result.runs:
            if run.name not in self.rows:
                continue
            run.repeats = repeat_summary(self.rows[run.name], [name for name in names if name in run.metrics])
            curves = [er.rank_curves(unit, labels, threshold, depth) for _, unit in self.members[run.name]]
            for family in curves[0]:
                keys = curves[0][family]
                run.curves[family] = {
                    k: _mean([c[family].get(k) for c in curves if family in c]) for k in keys
                }  # fmt: skip


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
