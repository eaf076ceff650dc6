"""assay: golden sets for RAG, trec_eval-exact ranking metrics, and LLM judges whose every label can be audited."""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("assay")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

if TYPE_CHECKING:
    from assay.pipelines.evaluate import EvalSettings, evaluate

__all__ = ["EvalSettings", "__version__", "evaluate"]
_LAZY = {"evaluate": "assay.pipelines.evaluate", "EvalSettings": "assay.pipelines.evaluate"}


def __getattr__(name: str) -> Any:
    """The public API, imported on first use so that ``import assay`` (and the CLI) stays fast."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
