"""The metrics package's one error (its own module, so the package's modules import it without a cycle)."""

from __future__ import annotations


class MetricError(ValueError):
    """A metric name or metric input that cannot be evaluated; the message lists what would work."""
