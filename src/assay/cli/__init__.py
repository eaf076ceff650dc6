"""Command-line interface: the only place that reads argv, the environment and config files.

Each command lives in its own module and registers itself on :data:`main`; importing them here builds the CLI.
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
