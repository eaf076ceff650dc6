"""Statistics for evaluation results: bootstrap intervals, paired tests, multiple comparisons (PPI++ is in
:mod:`assay.metrics.ppi`; randomization tests over a family of systems, Tukey HSD and inverted intervals in
:mod:`assay.metrics.randomization`).

Conventions shared by every function here:

* Inputs are 1-d arrays of per-item (per-query) values. ``NaN`` marks a value that could not be scored (a judge
  failure, an undefined metric); it is excluded from the computation and counted in the result (``n_unscored``),
  never read as 0 or 1.
* Randomness comes from ``np.random.default_rng(seed)``; the same seed gives the same interval.
* Resampling is vectorized: a block of resamples is one matrix of resample counts (resamples x items) multiplied
  by per-item sufficient statistics, so no Python loop runs per resample.
* Fewer than two scored values give an interval whose bounds are ``NaN`` (one value says nothing about spread).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError
from assay.metrics.randomization import sign_flip_null

__all__ = [
    "Interval",
    "benjamini_hochberg",
    "bootstrap_ci",
    "bootstrap_statistic",
    "holm",
    "norm_cdf",
    "norm_ppf",
    "paired_bootstrap_ci",
    "paired_randomization_test",
    "stratified_means",
]

FloatArray = npt.NDArray[np.float64]
Method = Literal["percentile", "bca"]
# Upper bound on the number of cells of one resample-count block (resamples x items), about 16 MB of int64.
_BLOCK_CELLS = 2_000_000


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval.

    ``mean`` is the point estimate on the scored items (the mean for :func:`bootstrap_ci`, the statistic itself for
    :func:`bootstrap_statistic`); ``n`` counts scored items and ``n_unscored`` the ``NaN`` items left out.
    """

    mean: float
    low: float
    high: float
    n: int
    n_unscored: int = 0
    confidence: float = 0.95


def norm_cdf(x: float) -> float:
    """Standard normal distribution function, Phi(x) = erfc(-x / sqrt(2)) / 2."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def norm_ppf(p: float) -> float:
    """Standard normal quantile Phi^-1(p) for 0 < p < 1, by bisection on :func:`norm_cdf` (error below 1e-12)."""
    if not 0.0 < p < 1.0:
        raise MetricError(f"normal quantile needs 0 < p < 1, got {p}")
    if p > 0.5:
        return -norm_ppf(1.0 - p)  # the lower tail keeps full precision
    low, high = -40.0, 40.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if norm_cdf(mid) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-13:
            break
    return 0.5 * (low + high)


def _as_1d(values: npt.ArrayLike, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise MetricError(f"{name} must be a 1-d array of per-item values, got shape {array.shape}")
    return array


def _check_confidence(confidence: float, n_resamples: int) -> None:
    if not 0.0 < confidence < 1.0:
        raise MetricError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence}")
    if n_resamples < 1:
        raise MetricError(f"n_resamples must be at least 1 (e.g. 10000), got {n_resamples}")


def _resampled_totals(item_stats: FloatArray, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """Column sums of ``item_stats`` over ``n_resamples`` bootstrap resamples of its rows: (resamples, columns)."""
    n = item_stats.shape[0]
    block = max(1, _BLOCK_CELLS // n)
    out = np.empty((n_resamples, item_stats.shape[1]))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        picks = rng.integers(0, n, size=(size, n)) + n * np.arange(size)[:, None]
        counts = np.bincount(picks.ravel(), minlength=size * n).reshape(size, n)
        out[start : start + size] = counts @ item_stats
    return out


def _bca_levels(point: float, replicates: FloatArray, jackknife: FloatArray, alpha: float) -> tuple[float, float]:
    """Percentile levels of the BCa interval (Efron 1987).

    z0 = Phi^-1(share of replicates below the estimate, ties counted half), clipped to [1/(B+1), B/(B+1)];
    a = sum (jbar - j_i)^3 / (6 (sum (jbar - j_i)^2)^1.5) over jackknife values j_i (a = 0 when they are all equal);
    level(z) = Phi(z0 + (z0 + z) / (1 - a (z0 + z))) for z = Phi^-1(alpha/2) and Phi^-1(1 - alpha/2).
    """
    b = replicates.size
    share = (np.sum(replicates < point) + 0.5 * np.sum(replicates == point)) / b
    z0 = norm_ppf(min(max(float(share), 1.0 / (b + 1)), b / (b + 1.0)))
    dev = jackknife.mean() - jackknife
    denom = 6.0 * float(np.sum(dev**2)) ** 1.5
    accel = float(np.sum(dev**3)) / denom if denom > 0 else 0.0
    levels = []
    for z in (norm_ppf(alpha / 2), norm_ppf(1 - alpha / 2)):
        shifted = z0 + z
        levels.append(norm_cdf(z0 + shifted / (1.0 - accel * shifted)))
    return levels[0], levels[1]


def bootstrap_statistic(
    item_stats: npt.ArrayLike,
    statistic: Callable[[FloatArray], FloatArray],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
    method: Method = "percentile",
    n_unscored: int = 0,
) -> Interval:
    """Bootstrap interval of any statistic that is a function of column sums of per-item statistics.

    ``item_stats`` has one row per item (the resampling unit); ``statistic`` maps a (B, columns) array of column
    sums to B values (it must be vectorized over rows). A mean is ``item_stats = [x_i, 1]`` with
    ``statistic = lambda s: s[:, 0] / s[:, 1]``; a kappa uses per-item one-hot confusion cells. Replicates that are
    ``NaN`` (undefined on that resample) are dropped from the quantiles.

    percentile: [q(alpha/2), q(1 - alpha/2)] of the replicates, alpha = 1 - confidence.
    bca: the same replicates at the BCa-adjusted levels (see ``_bca_levels``); the acceleration comes from the
    leave-one-item-out jackknife, computed from the totals minus each row.
    """
    _check_confidence(confidence, n_resamples)
    if method not in ("percentile", "bca"):
        raise MetricError(f"unknown bootstrap method {method!r}; use 'percentile' or 'bca'")
    stats = np.asarray(item_stats, dtype=np.float64)
    if stats.ndim != 2:
        raise MetricError(f"item_stats must be a 2-d array (items x statistics), got shape {stats.shape}")
    n = stats.shape[0]
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, n_unscored, confidence)
    total = stats.sum(axis=0)
    point = float(statistic(total[None, :])[0])
    if n < 2:
        return Interval(point, math.nan, math.nan, n, n_unscored, confidence)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    replicates = statistic(_resampled_totals(stats, n_resamples, rng))
    replicates = replicates[~np.isnan(replicates)]
    if replicates.size == 0 or math.isnan(point):
        return Interval(point, math.nan, math.nan, n, n_unscored, confidence)
    alpha = 1.0 - confidence
    levels = (alpha / 2, 1 - alpha / 2)
    if method == "bca":
        jackknife = statistic(total[None, :] - stats)
        levels = _bca_levels(point, replicates, jackknife[~np.isnan(jackknife)], alpha)
    low, high = np.quantile(replicates, levels)
    return Interval(point, float(low), float(high), n, n_unscored, confidence)


def _mean_of_sums(sums: FloatArray) -> FloatArray:
    result: FloatArray = sums[:, 0] / sums[:, 1]
    return result


def bootstrap_ci(
    values: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
    method: Method = "percentile",
) -> Interval:
    """Bootstrap confidence interval of the mean of ``values``; ``NaN`` values are left out and counted.

    Resamples the scored values with replacement ``n_resamples`` times; the percentile interval is the
    alpha/2 and 1 - alpha/2 quantiles of the resampled means, BCa corrects those levels for bias and skew.
    Edge cases: no scored value gives NaN everywhere; one value gives its mean with NaN bounds.
    """
    array = _as_1d(values, "values")
    scored = array[~np.isnan(array)]
    stats = np.column_stack([scored, np.ones_like(scored)])
    unscored = int(array.size - scored.size)
    return bootstrap_statistic(
        stats,
        _mean_of_sums,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
        n_unscored=unscored,
    )


def _paired_differences(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[FloatArray, int]:
    """Differences a - b over pairs where both are scored, and the number of pairs dropped."""
    first, second = _as_1d(a, "a"), _as_1d(b, "b")
    if first.shape != second.shape:
        raise MetricError(f"paired arrays must have the same length, got {first.size} and {second.size}")
    keep = ~(np.isnan(first) | np.isnan(second))
    return first[keep] - second[keep], int(first.size - keep.sum())


def paired_bootstrap_ci(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
    method: Method = "percentile",
) -> Interval:
    """Bootstrap interval of mean(a - b) over paired items (the same queries scored by two systems).

    A pair where either side is ``NaN`` is dropped and counted in ``n_unscored``; pairs are resampled together,
    which keeps the per-query correlation between the systems.
    """
    diffs, dropped = _paired_differences(a, b)
    interval = bootstrap_ci(diffs, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method)
    return replace(interval, n_unscored=dropped)


def paired_randomization_test(
    a: npt.ArrayLike, b: npt.ArrayLike, *, n_resamples: int = 10_000, seed: int | np.random.Generator = 0
) -> float:
    """Two-sided paired randomization (sign-flip) test of mean(a - b) = 0; returns the p-value.

    Under the null each difference d_i is as likely to be +d_i as -d_i. The statistic is T = |mean(s_i d_i)|.
    With n <= 16 scored pairs all 2^n sign vectors are enumerated and p = #{T_s >= T_obs} / 2^n exactly;
    otherwise p = (#{T_s >= T_obs} + 1) / (n_resamples + 1) over random sign vectors, which never returns 0
    (:func:`assay.metrics.randomization.sign_flip_null`; its Monte Carlo error is sqrt(p (1 - p) / n_resamples)).
    Pairs with a ``NaN`` side are dropped. No scored pair gives ``NaN``; all differences zero gives 1.0.
    """
    diffs, _ = _paired_differences(a, b)
    if diffs.size == 0:
        return math.nan
    null = sign_flip_null(diffs, n_resamples=n_resamples, seed=seed)
    return null.p_value(abs(float(diffs.mean())))


def _scored_pvalues(pvalues: npt.ArrayLike) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    array = _as_1d(pvalues, "pvalues")
    keep = ~np.isnan(array)
    if np.any((array[keep] < 0) | (array[keep] > 1)):
        raise MetricError(f"p-values must lie in [0, 1], got {array[keep].tolist()}")
    return array, keep


def holm(pvalues: npt.ArrayLike) -> FloatArray:
    """Holm-Bonferroni step-down adjusted p-values, in the input order.

    With the m scored p-values sorted ascending p_(1) <= ... <= p_(m):
    adj_(i) = min(1, max_{j <= i} (m - j + 1) p_(j)). The max makes them monotone in the sorted order.
    Reject the hypotheses with adj <= alpha: this controls the family-wise error rate at alpha.
    ``NaN`` p-values (tests that could not run) stay ``NaN`` and do not count in m.
    """
    array, keep = _scored_pvalues(pvalues)
    scored = array[keep]
    order = np.argsort(scored, kind="stable")
    m = scored.size
    stepped = np.maximum.accumulate((m - np.arange(m)) * scored[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    out = np.full(array.shape, np.nan)
    out[keep] = adjusted
    return out


def benjamini_hochberg(pvalues: npt.ArrayLike) -> FloatArray:
    """Benjamini-Hochberg step-up adjusted p-values (false discovery rate), in the input order.

    With the m scored p-values sorted ascending: adj_(i) = min(1, min_{j >= i} m p_(j) / j).
    ``NaN`` p-values stay ``NaN`` and do not count in m.
    """
    array, keep = _scored_pvalues(pvalues)
    scored = array[keep]
    order = np.argsort(scored, kind="stable")
    m = scored.size
    scaled = m * scored[order] / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    out = np.full(array.shape, np.nan)
    out[keep] = adjusted
    return out


def stratified_means(
    values: npt.ArrayLike,
    strata: Sequence[Hashable],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    method: Method = "percentile",
) -> dict[Hashable, Interval]:
    """Mean and bootstrap interval of ``values`` within each stratum label, in first-seen order of the labels.

    ``strata[i]`` is the stratum of ``values[i]`` (question type, difficulty, any metadata value). Each stratum is
    bootstrapped on its own with the same seed; ``NaN`` values are counted per stratum as unscored.
    """
    array = _as_1d(values, "values")
    if len(strata) != array.size:
        raise MetricError(f"values and strata must have the same length, got {array.size} and {len(strata)}")
    labels = np.empty(len(strata), dtype=object)
    labels[:] = list(strata)
    result: dict[Hashable, Interval] = {}
    for label in dict.fromkeys(strata):
        member = np.fromiter((item == label for item in labels), dtype=bool, count=labels.size)
        result[label] = bootstrap_ci(
            array[member], confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
        )
    return result
