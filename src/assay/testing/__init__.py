"""What tests (assay's and its users') need at the model boundary.

- :mod:`assay.testing.fake_server`: :class:`FakeOpenAIServer` (an OpenAI-compatible server on 127.0.0.1 with
  latency, scripted answers and injected faults) and :class:`FakeBackend` (in-process). ``python -m
  assay.testing.fake_server`` serves one from a separate process.
- :mod:`assay.testing.fake_batches`: :class:`~assay.testing.fake_batches.FakeBatchServer`, the same server with the
  batch API (``/v1/files``, ``/v1/batches``: turnaround, per-request failures, expiry, cancellation).
- :mod:`assay.testing.pytest_plugin`: the pytest plugin (entry point ``pytest11``): fixtures ``assay_judge``,
  ``assay_golden``, ``assay_eval``; :mod:`assay.testing.evaluation`: the :class:`Evaluation` they return, with
  ``assert_metric`` and ``assert_not_worse``; :mod:`assay.testing.causes`: why each of a run's first passages
  counts what it counts, the cause of a 0 in a failing gate.
- :mod:`assay.testing.scripted_judges`: judges for the fake server with one known bias each (the judge card's
  probes are checked against them).
- :mod:`assay.testing.fake_target`: a fake RAG system over HTTP on 127.0.0.1 (tests and benchmark of ``assay run``).
- :mod:`assay.testing.local_model`: a real small model on 127.0.0.1 (llama.cpp's server, SmolLM2-135M-Instruct),
  for the real-model tier.

The names are imported on first use, so ``python -m assay.testing.<module>`` runs its module only once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.testing.fake_server import FakeBackend, FakeGrade, FakeOpenAIServer, Fault, default_answer

__all__ = ["FakeBackend", "FakeGrade", "FakeOpenAIServer", "Fault", "default_answer"]
_LAZY = dict.fromkeys(__all__, "assay.testing.fake_server")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'assay.testing' has no attribute {name!r}")
