"""What tests (assay's and its users') need at the model boundary.

- :mod:`assay.testing.fake_server`: :class:`FakeOpenAIServer` (an OpenAI-compatible server on 127.0.0.1 with
  latency, scripted answers and injected faults) and :class:`FakeBackend` (in-process). ``python -m
  assay.testing.fake_server`` serves one from a separate process.
"""

from assay.testing.fake_server import FakeBackend, FakeGrade, FakeOpenAIServer, Fault, default_answer

__all__ = ["FakeBackend", "FakeGrade", "FakeOpenAIServer", "Fault", "default_answer"]
