"""The system side of a run: latency, failures, tokens and cost, read from a run written by ``assay run``.

Read from the run file itself, beside the evaluation of its contents: the header's ``target``, ``label``,
``started``, ``ended``; per line ``latency_ms``, ``usage`` (``prompt_tokens``, ``completion_tokens``,
``cost_usd``) and ``error`` (``kind``). A run with none of these (a TREC run, a JSONL run written by hand) has no
summary. Percentiles are numpy's linear interpolation over the answered questions (failures have no latency).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from assay.formats.jsonl import iter_json_lines, read_header
from assay.formats.runs import sniff_run_format
from assay.pipelines.evaluate.results import SystemSummary

__all__ = ["system_summary"]


def system_summary(path: str | Path) -> SystemSummary | None:
    """The :class:`SystemSummary` of the run at ``path``, or None when it recorded nothing about the system."""
    source = Path(path)
    if not source.is_file() or sniff_run_format(source) != "jsonl":
        return None
    head = read_header(source)
    lines = [obj for _, obj in iter_json_lines(source, kind="runs", header="optional")]
    latencies = [float(x["latency_ms"]) for x in lines if _number(x.get("latency_ms")) and "error" not in x]
    failures = Counter(str(x["error"].get("kind", "unknown")) for x in lines if isinstance(x.get("error"), dict))
    usages = [x["usage"] for x in lines if isinstance(x.get("usage"), dict)]
    if not (latencies or failures or usages or (head is not None and head.target)):
        return None
    return SystemSummary(
        target=head.target if head else None, label=head.label if head else None,
        started=head.started if head else None, ended=head.ended if head else None,
        lines=len(lines), failed=sum(failures.values()), failures=dict(failures.most_common()),
        latency_ms=_percentiles(latencies), prompt_tokens=_sum(usages, "prompt_tokens", int),
        completion_tokens=_sum(usages, "completion_tokens", int), cost_usd=_sum(usages, "cost_usd", float),
    )  # fmt: skip


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
