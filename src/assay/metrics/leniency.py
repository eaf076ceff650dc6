"""How a judge's grades sit beside people's: leniency (mean grade difference) and grade histograms.

Same conventions as :mod:`assay.metrics.agreement` (grades from ``categories``, ``NaN`` for a missing grade, items
both raters graded; the others counted in ``Interval.n_unscored``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from assay.metrics.agreement import DEFAULT_CATEGORIES, _codes, _pair_codes
from assay.metrics.stats import Interval, Method, bootstrap_ci

__all__ = ["grade_histogram", "leniency", "leniency_ci"]


def leniency(judge: npt.ArrayLike, human: npt.ArrayLike, categories: Sequence[float] = DEFAULT_CATEGORIES) -> float:
    """Mean grade difference judge - human over jointly graded items (> 0: the judge grades higher); NaN if none."""
    diffs, _ = _differences(judge, human, categories)
    return float(np.mean(diffs)) if diffs.size else float("nan")


def leniency_ci(
    judge: npt.ArrayLike,
    human: npt.ArrayLike,
    categories: Sequence[float] = DEFAULT_CATEGORIES,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    method: Method = "percentile",
) -> Interval:
    """:func:`leniency` with a bootstrap interval over items (in grade units)."""
    diffs, dropped = _differences(judge, human, categories)
    interval = bootstrap_ci(diffs, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method)
    return replace(interval, n_unscored=dropped)


def _differences(
    judge: npt.ArrayLike, human: npt.ArrayLike, categories: Sequence[float]
) -> tuple[npt.NDArray[np.float64], int]:
    """Grade differences judge - human over the items both graded, and how many items were left out."""
    first, second, dropped = _pair_codes(judge, human, categories)
    grades = np.asarray(categories, dtype=np.float64)
    return grades[first] - grades[second], dropped


def grade_histogram(values: npt.ArrayLike, categories: Sequence[float] = DEFAULT_CATEGORIES) -> npt.NDArray[np.int64]:
    """Counts of each category in ``values`` (NaN left out), in the order of ``categories``."""
    codes = _codes(values, categories, "values").ravel()
    return np.bincount(codes[~np.isnan(codes)].astype(np.int64), minlength=len(categories)).astype(np.int64)
