"""Ranking, RAG, agreement and statistics metrics: pure numpy, per-query arrays in and out.

This package imports nothing else from assay, so it can be used (and tested) on its own.
"""

from __future__ import annotations


class MetricError(ValueError):
    """A metric name or metric input that cannot be evaluated; the message lists what would work."""


# Imported after MetricError, which these modules import from here.
from assay.metrics.curves import Curves, curves  # noqa: E402
from assay.metrics.judged import Judged, Qrels, Run  # noqa: E402
from assay.metrics.registry import DEFAULT_MEASURES, Evaluation, Measure, evaluate, parse_measure  # noqa: E402

__all__ = [
    "DEFAULT_MEASURES",
    "Curves",
    "Evaluation",
    "Judged",
    "Measure",
    "MetricError",
    "Qrels",
    "Run",
    "curves",
    "evaluate",
    "parse_measure",
]
