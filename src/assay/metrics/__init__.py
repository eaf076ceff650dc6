"""Ranking, RAG, agreement and statistics metrics: pure numpy, per-query arrays in and out.

This package imports nothing else from assay, so it can be used (and tested) on its own.
"""

from __future__ import annotations


class MetricError(ValueError):
    """A metric name or metric input that cannot be evaluated; the message lists what would work."""


__all__ = ["MetricError"]
