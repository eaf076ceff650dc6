"""Command-line interface: the only place that reads argv, the environment and config files.

Each command lives in its own module and registers itself on :data:`main`; importing them here builds the CLI.

Modules, one line each:

- ``_app``: the click group every command hangs on, and assay's errors as a one-line message and exit 1.
- ``_build_report``: what ``assay build`` shows (stage progress, dry-run table, summary, next steps).
- ``_batch_options``: what ``--batch`` and ``--batch-retry`` do in ``build``, ``grade`` and ``eval``.
- ``_eval_options``: the options of ``assay eval``, read once into one frozen record.
- ``_eval_report``: what ``assay eval`` shows and writes once done (card, report folder, ``--fail-under``).
- ``_eval_run``: the work of ``assay eval`` once its options are read (audit labels, evaluation, dry run).
- ``_judge_options``: the judge options shared by the judging commands, and the judges made from them.
- ``_target_options``: the options of a target, shared by ``assay run`` and ``assay eval --target``.
- ``_trace_options``: ``--max-line``, shared by ``import traces`` and ``traces watch``.
- ``audit``: ``assay audit``, ``assay agreement``, ``assay labels export|import``.
- ``batches``: ``assay batches list|check|cancel``.
- ``build``: ``assay build``.
- ``cache``: ``assay cache path|stats|clear``.
- ``demo``: ``assay demo``.
- ``eval``: ``assay eval``.
- ``grade``: ``assay grade``.
- ``judge_check``: ``assay judge-check``.
- ``metrics``: ``assay metrics QRELS RUN``.
- ``run``: ``assay run``.
- ``traces``: ``assay traces watch``.
- ``transfer``: ``assay export`` and ``assay import beir|trec|ragas|traces``.
"""

from __future__ import annotations

from assay.cli import audit as _audit  # noqa: F401
from assay.cli import batches as _batches  # noqa: F401
from assay.cli import build as _build  # noqa: F401
from assay.cli import cache as _cache  # noqa: F401
from assay.cli import demo as _demo  # noqa: F401
from assay.cli import eval as _eval  # noqa: F401
from assay.cli import grade as _grade  # noqa: F401
from assay.cli import judge_check as _judge_check  # noqa: F401
from assay.cli import metrics as _metrics  # noqa: F401
from assay.cli import run as _run  # noqa: F401
from assay.cli import traces as _traces  # noqa: F401
from assay.cli import transfer as _transfer  # noqa: F401
from assay.cli._app import main

__all__ = ["main"]
