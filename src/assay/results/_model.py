"""The base of every result record and the rounding of the figures they store."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

__all__ = ["rounded"]


def rounded(value: float) -> float | None:
    """A figure as results store it: 6 decimals, NaN (no value) as None."""
    return None if math.isnan(value) else round(float(value), 6)


class _Model(BaseModel):
    """A result record: a field it does not declare is refused (``extra="forbid"``)."""

    model_config = ConfigDict(extra="forbid")
