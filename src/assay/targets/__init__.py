"""Calling the system under test to write a run: a Python function, an HTTP endpoint or a command.

:func:`run_target` asks every golden question (concurrency, per-call timeout, retries with backoff on transient
failures, a rate limit, an answers cache that makes an interrupted run resumable) and writes the run file with its
header (target with secrets removed, label, start and end) and per-query latency, usage and failures.
:mod:`.spec` parses targets and keeps secrets out of everything written; :mod:`.callers` calls the system;
:mod:`.outputs` turns its replies into run lines; :mod:`.runner` drives the calls; :mod:`.journal` is the cache;
:mod:`.conversations` says what each turn of a conversation sends (its history, reference or the system's own).
"""

from assay.targets.callers import Ask
from assay.targets.conversations import Conversing
from assay.targets.outputs import TargetFailure
from assay.targets.run import TargetRun, asks_of, run_target
from assay.targets.runner import RunStats, TargetSettings
from assay.targets.spec import TargetSpec

__all__ = [
    "Ask",
    "Conversing",
    "RunStats",
    "TargetFailure",
    "TargetRun",
    "TargetSettings",
    "TargetSpec",
    "asks_of",
    "run_target",
]
