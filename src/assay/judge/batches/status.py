"""What a person is told about batches: the provider's status copied onto a record, the progress line."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from assay.judge.batches.ledger import BatchRecord

__all__ = ["batches", "clock", "progress", "update_record"]


def update_record(record: BatchRecord, batch: dict[str, Any]) -> bool:
    """Copy the provider's status and request counts onto ``record``; whether they changed."""
    counts = batch.get("request_counts") or {}
    update = (str(batch.get("status")), int(counts.get("completed") or 0), int(counts.get("failed") or 0))
    changed = update != (record.status, record.done, record.failed)
    record.status, record.done, record.failed = update
    return changed


def batches(n: int) -> str:
    """``1 batch``, ``2 batches``."""
    return f"{n:,} batch" if n == 1 else f"{n:,} batches"


def progress(records: list[BatchRecord]) -> str:
    total = sum(len(r.keys) for r in records)
    statuses: defaultdict[str, int] = defaultdict(int)
    for record in records:
        statuses[record.status] += 1
    said = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    done, failed = sum(r.done for r in records), sum(r.failed for r in records)
    return f"batch: {done:,}/{total:,} done, {failed:,} failed, {batches(len(records))} ({said})"


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"
