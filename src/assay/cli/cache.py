"""``assay cache path|stats|clear``: where the judge cache lives, how big it is, and emptying it."""

from __future__ import annotations

import os
from pathlib import Path

import click
import platformdirs

from assay.cli._app import main
from assay.judge.cache import JudgeCache

__all__ = ["cache", "resolve_cache_dir"]


def resolve_cache_dir(option: str | Path | None) -> Path:
    """The judge cache directory: ``--cache-dir``, else ``ASSAY_CACHE_DIR``, else the user cache dir of assay."""
    if option:
        return Path(option)
    env = os.environ.get("ASSAY_CACHE_DIR")
    if env:
        return Path(env)
    return Path(platformdirs.user_cache_dir("assay")) / "judge"


CACHE_DIR = click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Judge cache directory (default: $ASSAY_CACHE_DIR, else the user cache dir).",
)


@main.group()
def cache() -> None:
    """Inspect or empty the judge cache (model answers keyed by model, prompt and inputs).

    \b
    Examples:
      assay cache path
      assay cache stats --cache-dir /data/assay-cache
      assay cache clear --yes
    """


@cache.command("path")
@CACHE_DIR
def path_command(cache_dir: Path | None) -> None:
    """Print the cache directory.

    \b
    Example:
      assay cache path
    """
    click.echo(str(resolve_cache_dir(cache_dir)))


@cache.command("stats")
@CACHE_DIR
def stats_command(cache_dir: Path | None) -> None:
    """Print the number of cached answers and their size on disk.

    \b
    Example:
      assay cache stats
    """
    directory = resolve_cache_dir(cache_dir)
    if not directory.exists():
        click.echo(f"{directory}: no cache yet (0 entries)")
        return
    with JudgeCache(directory) as store:
        stats = store.stats()
    click.echo(f"{stats['path']}: {stats['entries']} entries, {stats['bytes'] / 1e6:.1f} MB")


@cache.command("clear")
@CACHE_DIR
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def clear_command(cache_dir: Path | None, yes: bool) -> None:
    """Delete every cached answer (the next run pays for every call again).

    \b
    Example:
      assay cache clear --yes
    """
    directory = resolve_cache_dir(cache_dir)
    if not directory.exists():
        click.echo(f"{directory}: nothing to clear")
        return
    if not yes:
        click.confirm(f"Delete all cached judge answers in {directory}?", abort=True)
    with JudgeCache(directory) as store:
        removed = store.clear()
    click.echo(f"removed {removed} entries from {directory}")
