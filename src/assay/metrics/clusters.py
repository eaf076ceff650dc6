"""Means of clustered items: per-cluster sums, the design effect, and intervals that resample clusters.

Questions generated from one document share its wording, its difficulty and the chunks that answer them, so their
scores move together: two questions of one document carry less than twice the evidence of one. The unit of
resampling is then the cluster (the document), not the question. Conventions:

* ``labels`` give each item's cluster (any strings); clusters are ordered by label, so the same items give the same
  sums whatever their order. ``NaN`` items are left out (and counted by the caller), as in :mod:`assay.metrics.stats`.
* The mean is the mean over items, sum(S_c) / sum(n_c) for cluster sums S_c of n_c items: a cluster of many questions
  weighs more, exactly as in the unclustered mean.
* :func:`design_effect` is the variance of that mean with clusters (the cluster-robust sandwich, with the K / (K - 1)
  small-sample factor) over its variance if the items were independent (s^2 / n). 1 when every cluster is one item;
  above 1 when the items of a cluster agree more than items of different clusters; n / deff is the effective number
  of independent items.
* :func:`mean_interval`: with at least ``BOOTSTRAP_CLUSTERS`` clusters, the percentile bootstrap over clusters (each
  resample draws K clusters with replacement and takes the ratio of the summed sums to the summed sizes; with one
  item per cluster it is :func:`assay.metrics.stats.bootstrap_ci` itself, draw for draw). With fewer, the
  bootstrap's intervals are too short (it sees only K distinct values: ``bench/stats.py`` measured 88% coverage
  at 6 clusters, 91-93% at 15 to 30); the interval then inverts the cluster sign-flip test of the mean
  (:func:`assay.metrics.randomization.sign_flip_interval` on S_c - x n_c), which kept 94-98% in the same
  simulation. Below about six clusters no test reaches 95% and that interval spans the cluster means' range.
  ``FEW_CLUSTERS`` is where the report says plainly that the clusters are few.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError
from assay.metrics.randomization import sign_flip_interval, sign_flip_null
from assay.metrics.stats import Interval, bootstrap_ci, bootstrap_statistic

__all__ = ["BOOTSTRAP_CLUSTERS", "FEW_CLUSTERS", "Grouped", "design_effect", "group", "mean_interval"]

FloatArray = npt.NDArray[np.float64]
FEW_CLUSTERS = 20  # below this many clusters the report says that intervals rest on few independent units
BOOTSTRAP_CLUSTERS = 50  # from this many clusters a run's mean takes the cluster bootstrap (bench/stats.py)


@dataclass(frozen=True)
class Grouped:
    """Per-cluster sums and sizes of the scored items, clusters ordered by label; ``n_unscored`` NaN items left out."""

    keys: tuple[str, ...]
    sums: FloatArray
    sizes: FloatArray
    n_unscored: int = 0

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    @property
    def k(self) -> int:
        return len(self.keys)

    @property
    def mean(self) -> float:
        return float(self.sums.sum() / self.sizes.sum()) if self.keys else math.nan


def group(values: npt.ArrayLike, labels: Sequence[str]) -> Grouped:
    """The sums and sizes of ``values`` within each cluster of ``labels`` (NaN values left out and counted)."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size != len(labels):
        raise MetricError(f"values and labels must be 1-d and of equal length, got {array.shape} and {len(labels)}")
    scored = ~np.isnan(array)
    keys = sorted({label for label, keep in zip(labels, scored, strict=True) if keep})
    index = {key: i for i, key in enumerate(keys)}
    codes = np.array([index[label] for label, keep in zip(labels, scored, strict=True) if keep], dtype=np.intp)
    sums = np.bincount(codes, weights=array[scored], minlength=len(keys)).astype(np.float64)
    sizes = np.bincount(codes, minlength=len(keys)).astype(np.float64)
    return Grouped(tuple(keys), sums, sizes, int(array.size - scored.sum()))


def design_effect(values: npt.ArrayLike, labels: Sequence[str]) -> float | None:
    """Var(mean) with clusters / Var(mean) of independent items (module doc); None with fewer than 2 clusters or no
    spread between the items."""
    grouped = group(values, labels)
    array = np.asarray(values, dtype=np.float64)
    scored = array[~np.isnan(array)]
    if grouped.k < 2 or scored.size < 2:
        return None
    independent = float(np.var(scored, ddof=1)) / scored.size
    if independent <= 1e-24:
        return None
    residuals = grouped.sums - grouped.sizes * grouped.mean
    clustered = grouped.k / (grouped.k - 1) * float(np.sum(residuals**2)) / grouped.n**2
    return clustered / independent


def mean_interval(
    values: npt.ArrayLike,
    labels: Sequence[str],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> Interval:
    """The mean of ``values`` over items with an interval that treats the clusters of ``labels`` as the sampling
    unit (module doc); ``NaN`` values are left out and counted in ``n_unscored``."""
    grouped = group(values, labels)
    if grouped.k == grouped.n:  # every cluster one item: the items themselves, in their order
        return bootstrap_ci(values, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if grouped.k >= BOOTSTRAP_CLUSTERS or grouped.k < 2:
        rows = np.column_stack([grouped.sums, grouped.sizes])
        interval = bootstrap_statistic(rows, _ratio, confidence=confidence, n_resamples=n_resamples, seed=seed,
                                       n_unscored=grouped.n_unscored)  # fmt: skip
        return Interval(interval.mean, interval.low, interval.high, grouped.n, grouped.n_unscored, confidence)
    level = 1.0 - confidence
    null = sign_flip_null(grouped.sums, weights=grouped.sizes, n_resamples=n_resamples, seed=seed)
    significant = null.p_value(abs(grouped.mean)) <= level
    low, high = sign_flip_interval(grouped.sums, level, significant=significant, weights=grouped.sizes,
                                   n_resamples=n_resamples, seed=seed)  # fmt: skip
    return Interval(grouped.mean, low, high, grouped.n, grouped.n_unscored, confidence)


def _ratio(sums: FloatArray) -> FloatArray:
    result: FloatArray = sums[:, 0] / sums[:, 1]
    return result
