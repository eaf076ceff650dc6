"""The click group every command hangs on, and the mapping of assay's errors to a one-line message and exit 1."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click

from assay._version import __version__
from assay.errors import AssayError
from assay.metrics import MetricError

# Offline settings for litellm, set before anything can import it (it reads them at import time): the bundled
# price map instead of a download, no .env loading, no hub downloads.
_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_MODE": "PRODUCTION",
    "HF_HUB_OFFLINE": "1",
}


def warn(message: str) -> None:
    """Print one warning on stderr as ``warning: MESSAGE``; every message is a whole sentence, ended by a period
    (``tests/cli/test_warnings.py`` holds each producer to it)."""
    click.echo(f"warning: {message}", err=True)


def apply_offline_env() -> None:
    """Put litellm's offline settings into the environment unless the user set them."""
    for key, value in _OFFLINE_ENV.items():
        os.environ.setdefault(key, value)


INTERRUPTED = 130  # the exit status of a command stopped by Ctrl-C, as shells report SIGINT


def interrupted(message: str) -> NoReturn:
    """Stop after Ctrl-C: ``interrupted: MESSAGE`` (what was kept and how to resume) on stderr, exit status 130."""
    click.echo(f"interrupted: {message}", err=True)
    sys.exit(INTERRUPTED)


class AssayGroup(click.Group):
    """A group that turns AssayError (and metric-name errors) into ``Error: message`` and exit status 1, and a
    Ctrl-C that no command answered itself into one line and exit status 130 (click would print "Aborted!")."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (AssayError, MetricError) as exc:
            if os.environ.get("ASSAY_TRACEBACK"):
                raise
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            interrupted("stopped before finishing; rerun the same command to resume: the answers a model or a system "
                        "gave so far are cached and not asked for again.")  # fmt: skip


@click.group(cls=AssayGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="assay")
def main() -> None:
    """assay: build golden sets for RAG, evaluate RAG runs, and audit LLM-judge labels by hand.

    \b
    Examples:
      assay metrics qrels.txt run.txt -m ndcg@10 -m map     trec_eval-exact ranking metrics
      assay metrics qrels.txt run.jsonl --format trec       trec_eval's output lines

    Set ASSAY_TRACEBACK=1 to see the full traceback of an error.
    """
    apply_offline_env()
