"""``assay batches list|check|cancel``: the batches ``--batch`` submitted, as recorded beside the judge cache."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from assay.aio import run_sync
from assay.cli._app import main
from assay.cli.cache import CACHE_DIR, resolve_cache_dir
from assay.judge.batches import BatchAPI, BatchRecord, Ledger
from assay.judge.batches.manage import cancel_batches, check_batches, select

__all__ = ["batches"]

_API_KEY = click.option("--api-key", default=None, help="API key of the provider (default: $OPENAI_API_KEY).")


@main.group()
def batches() -> None:
    """The batches that --batch submitted (recorded in batches.json beside the judge cache).

    A batch stays open until the command that submitted it is run again and collects its answers into the cache;
    `check` asks the providers how far open batches are, `cancel` stops them (what they answered is kept: the next
    run of the command collects it).

    \b
    Examples:
      assay batches list
      assay batches check --cache-dir /data/assay-cache
      assay batches cancel batch_abc123
      assay batches cancel --all
    """


def _ledger(cache_dir: Path | None) -> Ledger:
    return Ledger.beside(resolve_cache_dir(cache_dir))


def _table(records: list[BatchRecord], title: str) -> None:
    """One line per batch: id, stage, status, counts, when submitted, whether collected."""
    click.echo(f"{title}:")
    for r in records:
        name = r.id or f"({r.ref}: not created)"
        counts = f"{r.done}/{len(r.keys)} done, {r.failed} failed"
        collected = "collected" if r.collected else "open"
        click.echo(f"  {name}  {r.stage}  {r.status}  {counts}  submitted {r.submitted_at}  {collected}")


@batches.command("list")
@CACHE_DIR
def list_command(cache_dir: Path | None) -> None:
    """List the recorded batches, oldest first, as last seen (`check` asks the providers again).

    \b
    Example:
      assay batches list
    """
    ledger = _ledger(cache_dir)
    records = ledger.load()
    if not records:
        click.echo(f"{ledger.path}: no batches recorded")
        return
    _table(records, f"batches in {ledger.path}")


def _api_for(api_key: str | None) -> Callable[[str], BatchAPI]:
    key = api_key or os.environ.get("OPENAI_API_KEY")
    return lambda base: BatchAPI(base, api_key=key)


@batches.command("check")
@CACHE_DIR
@_API_KEY
def check_command(cache_dir: Path | None, api_key: str | None) -> None:
    """Ask the providers for the status and counts of every open batch, and record them.

    \b
    Example:
      assay batches check
    """
    ledger = _ledger(cache_dir)
    records = select(ledger, [])
    if not records:
        click.echo(f"{ledger.path}: no open batches")
        return
    run_sync(lambda: check_batches(ledger, records, _api_for(api_key)))
    _table(records, "open batches")
    click.echo("rerun the command that submitted them to collect the answers of the ended ones")


@batches.command("cancel")
@click.argument("ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Cancel every open batch.")
@CACHE_DIR
@_API_KEY
def cancel_command(ids: tuple[str, ...], everything: bool, cache_dir: Path | None, api_key: str | None) -> None:
    """Cancel open batches by id (or --all); what they answered is kept for the next run to collect.

    \b
    Examples:
      assay batches cancel batch_abc123
      assay batches cancel --all
    """
    if not ids and not everything:
        raise click.UsageError("name the batches to cancel (ids from `assay batches list`) or give --all")
    ledger = _ledger(cache_dir)
    records = select(ledger, ids)
    run_sync(lambda: cancel_batches(ledger, records, _api_for(api_key)))
    _table(records, "cancelled batches")
