"""The system side of a run: latency, failures, tokens and cost, as a run written by ``assay run`` records them.

Read by the run reader with the rest of each line (:class:`~assay.pipelines.evaluate.runs.loaded.SystemTrace`): the
JSONL header's ``target``, ``label``, ``started``, ``ended``; per line ``latency_ms``, ``usage`` (``prompt_tokens``,
``completion_tokens``, ``cost_usd``), ``error`` (``kind``) and ``steps`` (a system that searches several times: its
searches, tool and model calls, counted by kind), over every line of the file. A run with none of these
(a TREC run, a JSONL run written by hand) has no summary. Percentiles are numpy's linear interpolation over the
answered questions (failures have no latency).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.results import SystemSummary
from assay.types import STEP_KINDS

__all__ = ["system_summary"]


def system_summary(run: LoadedRun) -> SystemSummary | None:
    """The :class:`SystemSummary` of a JSONL run, or None when it recorded nothing about the system."""
    if run.kind != "jsonl":
        return None
    head, trace = run.header, run.trace
    if not (trace.latencies or trace.failures or trace.usages or trace.steps or (head is not None and head.target)):
        return None
    return SystemSummary(
        target=head.target if head else None, label=head.label if head else None,
        started=head.started if head else None, ended=head.ended if head else None,
        lines=run.counts.lines, failed=sum(trace.failures.values()), failures=dict(trace.failures.most_common()),
        latency_ms=_percentiles(trace.latencies), prompt_tokens=_sum(trace.usages, "prompt_tokens", int),
        completion_tokens=_sum(trace.usages, "completion_tokens", int), cost_usd=_sum(trace.usages, "cost_usd", float),
        with_steps=len(trace.steps), steps=_mean_steps(trace.steps),
    )  # fmt: skip


def _mean_steps(lines: list[Counter[str]]) -> dict[str, float]:
    """Each step kind's mean number per line that reported steps, in the order of :data:`STEP_KINDS`."""
    return {kind: sum(c[kind] for c in lines) / len(lines) for kind in STEP_KINDS} if lines else {}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    array = np.asarray(values, dtype=float)
    p50, p95 = np.percentile(array, [50, 95])
    return {"p50": float(p50), "p95": float(p95), "mean": float(array.mean()), "max": float(array.max())}


def _sum(usages: list[dict[str, Any]], key: str, kind: type[int] | type[float]) -> Any:
    values = [u[key] for u in usages if _number(u.get(key))]
    return kind(sum(values)) if values else None
