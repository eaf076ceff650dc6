"""Check and cancel the batches of a ledger at their providers (what ``assay batches check|cancel`` runs)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assay.errors import ConfigError
from assay.judge.batches.api import BatchAPI
from assay.judge.batches.ledger import BatchRecord, Ledger
from assay.judge.batches.status import update_record

__all__ = ["cancel_batches", "check_batches", "select"]


def select(ledger: Ledger, ids: Sequence[str]) -> list[BatchRecord]:
    """The open (not collected) batches named by ``ids`` (batch ids or ledger refs), or every open one for none."""
    records = [r for r in ledger.load() if not r.collected]
    if not ids:
        return records
    known = {name: r for r in records for name in (r.id, r.ref) if name}
    missing = [i for i in ids if i not in known]
    if missing:
        raise ConfigError(
            f"{ledger.path}: no open batch {', '.join(missing)}; `assay batches list` shows the batches and their ids"
        )
    return list({id(known[i]): known[i] for i in ids}.values())


async def check_batches(ledger: Ledger, records: list[BatchRecord], api_for: Callable[[str], BatchAPI]) -> None:
    """Ask each batch's provider for its status and counts; record them in the ledger."""
    await _each(ledger, records, api_for, cancel=False)


async def cancel_batches(ledger: Ledger, records: list[BatchRecord], api_for: Callable[[str], BatchAPI]) -> None:
    """Cancel each batch at its provider; what it answered is collected by the next run of the command."""
    await _each(ledger, records, api_for, cancel=True)


async def _each(
    ledger: Ledger, records: list[BatchRecord], api_for: Callable[[str], BatchAPI], *, cancel: bool
) -> None:
    apis: dict[str, BatchAPI] = {}
    try:
        for record in records:
            if record.id is None:
                continue  # never created: nothing to ask or cancel (a rerun creates it or leaves it)
            if record.api_base not in apis:  # one API (one HTTP session) a provider, each closed below
                apis[record.api_base] = api_for(record.api_base)
            api = apis[record.api_base]
            batch = await (api.cancel(record.id) if cancel and not record.ended else api.retrieve(record.id))
            update_record(record, batch)
            ledger.put(record)
    finally:
        for api in apis.values():
            await api.aclose()
