"""Ranking, RAG, agreement and statistics metrics: pure numpy, per-query arrays in and out.

This package imports nothing else from assay but :mod:`assay.metric_names` (the grammar of a metric name, which
imports nothing), so it can be used (and tested) on its own.
"""

from __future__ import annotations

from assay.metrics._errors import MetricError
from assay.metrics.curves import Curves, curves
from assay.metrics.judged import Judged, Qrels, Run
from assay.metrics.registry import DEFAULT_MEASURES, Evaluation, Measure, evaluate, parse_measure

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
