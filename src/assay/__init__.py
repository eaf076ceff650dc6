"""assay: golden sets for RAG, trec_eval-exact ranking metrics, and LLM judges whose every label can be audited.

The public Python API is exactly ``__all__`` (README "Python API" shows it at work):

- :func:`build` (``BuildSettings``): a corpus in, a :class:`GoldenSet` out (and its folder, written atomically);
- :meth:`GoldenSet.load`: read a golden-set folder;
- :func:`evaluate` (``EvalSettings``): a golden set and runs (files, or Python functions and targets asked first)
  in, an ``EvalResult`` and per-query rows out;
- :func:`run` (``TargetSettings``, ``TargetSpec``): ask the system under test every golden question, write its run;
- :func:`make_judge`: a :class:`Judge` from a model string (``offline``, ``openai/gpt-4o-mini``, ...);
  :class:`Panel`: several judges whose relevance grades combine by a named rule (``judge=`` of build and evaluate).

Every name is imported on first use (PEP 562), so ``import assay`` loads no model client, cache library or pipeline.

Modules and subpackages, one line each:

- ``__main__``: the ``assay`` program (``python -m assay``), answering Ctrl-C at once even while it loads.
- ``_version``: the installed version, the ground floor every layer reads it from.
- ``aio``: running a coroutine from synchronous code, promptly interruptible.
- ``audit``: the local audit page, its SQLite label store and judge-versus-people agreement.
- ``cli``: the command line, the only place that reads argv, the environment and config files.
- ``corpus``: reading a corpus, chunking it, BM25 pooling and locating passages in documents.
- ``errors``: the one exception tree of assay.
- ``formats``: the files assay reads and writes (the golden folder, runs, BEIR, TREC, RAGAS, OTLP, ...).
- ``judge``: the only place that talks to a model (cache, retries, structured outputs, offline judge, panels).
- ``metrics``: ranking, RAG, agreement and statistics metrics on arrays (numpy only).
- ``metric_names``: the one grammar of a metric name (``word[@cut][|option...]``), parsed once for every reader.
- ``pipelines``: the jobs of assay (build, evaluate, traces, transfer, judge cards), one subpackage each.
- ``report``: the terminal summary, ``report.md`` and ``report.html`` of an evaluation.
- ``results``: the typed result of ``assay eval``, what every report renders.
- ``targets``: calling the system under test to write a run.
- ``testing``: fakes, scripted judges and the pytest plugin, for assay's tests and its users'.
- ``text``: deterministic plain-text helpers (tokens, sentences, hashing).
- ``types``: the on-disk contract, pydantic records for everything assay reads and writes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay._version import __version__
    from assay.formats.golden import GoldenSet
    from assay.judge.client import Judge
    from assay.judge.factory import make_judge
    from assay.judge.panel import Panel
    from assay.pipelines.bootstrap import BuildSettings
    from assay.pipelines.bootstrap import build_golden as build
    from assay.pipelines.evaluate import EvalSettings
    from assay.pipelines.evaluate.called import evaluate
    from assay.targets import TargetSettings, TargetSpec
    from assay.targets import run_target as run

__all__ = [
    "BuildSettings",
    "EvalSettings",
    "GoldenSet",
    "Judge",
    "Panel",
    "TargetSettings",
    "TargetSpec",
    "__version__",
    "build",
    "evaluate",
    "make_judge",
    "run",
]
# public name -> (module, name there)
_LAZY = {
    "BuildSettings": ("assay.pipelines.bootstrap", "BuildSettings"),
    "EvalSettings": ("assay.pipelines.evaluate", "EvalSettings"),
    "GoldenSet": ("assay.formats.golden", "GoldenSet"),
    "Judge": ("assay.judge.client", "Judge"),
    "build": ("assay.pipelines.bootstrap", "build_golden"),
    "evaluate": ("assay.pipelines.evaluate.called", "evaluate"),
    "make_judge": ("assay.judge.factory", "make_judge"),
    "Panel": ("assay.judge.panel", "Panel"),
    "run": ("assay.targets", "run_target"),
    "TargetSettings": ("assay.targets", "TargetSettings"),
    "TargetSpec": ("assay.targets", "TargetSpec"),
    # lazy too: reading the installed version loads importlib.metadata (0.1 s, seconds on a loaded machine), and the
    # ``assay`` program imports this package before it can answer a Ctrl-C (assay.__main__)
    "__version__": ("assay._version", "__version__"),
}


def __getattr__(name: str) -> Any:
    """The public API, imported on first use so that ``import assay`` (and the CLI) stays fast."""
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'assay' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names (``__all__``), not the helpers of the lazy import."""
    return list(__all__)
