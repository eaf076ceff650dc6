"""Agreement between raters (judge and humans): percent agreement, kappas, Krippendorff's alpha (leniency and grade
histograms: :mod:`assay.metrics.leniency`).

Conventions:

* Grades are numbers from a small ordered set of ``categories`` (for assay's relevance scale ``[0, 1, 2, 3]``).
  A missing grade is ``NaN`` (use float arrays); there is no integer sentinel, and a value outside ``categories``
  raises :class:`MetricError` naming it and its position.
* Two-rater statistics use the items both raters graded; the others are counted in ``Interval.n_unscored``.
* Weighted kappas use the category *positions* 0..K-1 (equally spaced ordinal scale): linear
  w_ij = |i - j| / (K - 1), quadratic w_ij = ((i - j) / (K - 1))^2; categories that nobody used still count in K.
* Degenerate case, decided here: when raters never disagree and chance disagreement is also 0 (every grade is
  the same single category), the chance-corrected formulas are 0/0. We return 1.0 (perfect observed agreement),
  for Cohen, weighted, Fleiss and Krippendorff alike; the confusion matrix beside it shows the single category.
  ``NaN`` is returned only when no item can be compared at all.
* Every statistic has a ``*_ci`` twin returning an :class:`~assay.metrics.stats.Interval` from a bootstrap over
  items (Krippendorff: units), computed from per-item sufficient statistics so resampling is vectorized.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Literal

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError
from assay.metrics.stats import FloatArray, Interval, Method, bootstrap_ci, bootstrap_statistic

__all__ = [
    "cohen_kappa",
    "cohen_kappa_ci",
    "confusion_matrix",
    "fleiss_kappa",
    "fleiss_kappa_ci",
    "krippendorff_alpha",
    "krippendorff_alpha_ci",
    "percent_agreement",
    "percent_agreement_ci",
    "weighted_kappa",
    "weighted_kappa_ci",
]

Weights = Literal["linear", "quadratic"]
Level = Literal["nominal", "ordinal", "interval", "ratio"]
Statistic = Callable[[FloatArray], FloatArray]
DEFAULT_CATEGORIES: tuple[int, ...] = (0, 1, 2, 3)


def _codes(values: npt.ArrayLike, categories: Sequence[float], name: str) -> FloatArray:
    """Category positions 0..K-1 of ``values`` as floats, NaN where missing; raises on unknown values."""
    array = np.asarray(values, dtype=np.float64)
    cats = np.asarray(categories, dtype=np.float64)
    if cats.ndim != 1 or cats.size == 0 or np.unique(cats).size != cats.size or np.isnan(cats).any():
        raise MetricError(f"categories must be distinct numbers such as [0, 1, 2, 3], got {list(categories)}")
    present = ~np.isnan(array)
    matches = array[..., None] == cats
    unknown = present & ~matches.any(axis=-1)
    if unknown.any():
        where = tuple(int(i) for i in np.argwhere(unknown)[0])
        raise MetricError(
            f"{name} holds grade {array[where]} at position {where}, not one of the categories {list(categories)}; "
            "mark a missing grade with NaN, or pass categories that include it"
        )
    codes = np.where(present, matches.argmax(axis=-1), np.nan)
    return codes.astype(np.float64)


def _pair_codes(
    a: npt.ArrayLike, b: npt.ArrayLike, categories: Sequence[float]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]:
    first, second = _codes(a, categories, "a"), _codes(b, categories, "b")
    if first.ndim != 1 or first.shape != second.shape:
        raise MetricError(f"a and b must be 1-d arrays of the same length, got shapes {first.shape}, {second.shape}")
    keep = ~(np.isnan(first) | np.isnan(second))
    return first[keep].astype(np.int64), second[keep].astype(np.int64), int(first.size - keep.sum())


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """1 - numerator / denominator, with 0/0 -> 1.0 (no disagreement observed nor expected: one category only)."""
    safe = np.where(denominator > 0, denominator, 1.0)
    result: FloatArray = np.where(denominator > 0, 1.0 - numerator / safe, np.where(numerator > 0, np.nan, 1.0))
    return result


def _check_weights(weights: Weights) -> None:
    if weights not in ("linear", "quadratic"):
        raise MetricError(f"unknown kappa weights {weights!r}; use 'linear' or 'quadratic'")


def _weight_matrix(k: int, weights: Weights | None) -> FloatArray:
    """Disagreement weights over category positions: None [i != j] (Cohen), linear or quadratic."""
    positions = np.arange(k, dtype=np.float64)
    diff = np.abs(positions[:, None] - positions[None, :]) / max(k - 1, 1)
    if weights is None:
        return (diff > 0).astype(np.float64)
    return diff if weights == "linear" else diff**2


def _kappa_from_cells(cells: FloatArray, weights: FloatArray) -> FloatArray:
    """kappa_w = 1 - sum(w O) / sum(w E) per row of flattened K x K confusion counts; E = outer(row, col) / n."""
    k = weights.shape[0]
    table = cells.reshape(-1, k, k)
    n = table.sum(axis=(1, 2))
    expected = table.sum(axis=2)[:, :, None] * table.sum(axis=1)[:, None, :] / np.where(n > 0, n, 1.0)[:, None, None]
    observed_dis = np.einsum("bij,ij->b", table, weights)
    expected_dis = np.einsum("bij,ij->b", expected, weights)
    return np.where(n > 0, _ratio(observed_dis, expected_dis), np.nan)


def _kappa_parts(
    a: npt.ArrayLike, b: npt.ArrayLike, categories: Sequence[float], weights: Weights | None
) -> tuple[FloatArray, Statistic, int]:
    first, second, dropped = _pair_codes(a, b, categories)
    k = len(categories)
    cells = np.zeros((first.size, k * k))
    cells[np.arange(first.size), first * k + second] = 1.0
    return cells, partial(_kappa_from_cells, weights=_weight_matrix(k, weights)), dropped


def confusion_matrix(
    a: npt.ArrayLike, b: npt.ArrayLike, categories: Sequence[float] = DEFAULT_CATEGORIES
) -> npt.NDArray[np.int64]:
    """K x K counts: row i = rater ``a`` gave ``categories[i]``, column j = rater ``b`` gave ``categories[j]``.

    Items where either grade is NaN are left out.
    """
    first, second, _ = _pair_codes(a, b, categories)
    k = len(categories)
    return np.bincount(first * k + second, minlength=k * k).reshape(k, k).astype(np.int64)


def percent_agreement(a: npt.ArrayLike, b: npt.ArrayLike, categories: Sequence[float] = DEFAULT_CATEGORIES) -> float:
    """Share of jointly graded items with identical grades, p_o = #{a_i = b_i} / n; NaN when n = 0."""
    first, second, _ = _pair_codes(a, b, categories)
    return float(np.mean(first == second)) if first.size else float("nan")


def cohen_kappa(a: npt.ArrayLike, b: npt.ArrayLike, categories: Sequence[float] = DEFAULT_CATEGORIES) -> float:
    """Cohen's (unweighted) kappa, (p_o - p_e) / (1 - p_e), p_e = sum_k p_a(k) p_b(k) from each rater's marginals.

    Edge cases: NaN when no item has both grades; 1.0 when p_o = p_e = 1 (see the module docstring).
    """
    stats, statistic, _ = _kappa_parts(a, b, categories, None)
    return _point(stats, statistic)


def weighted_kappa(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    categories: Sequence[float] = DEFAULT_CATEGORIES,
    weights: Weights = "quadratic",
) -> float:
    """Weighted kappa (Cohen 1968): 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij.

    O = observed confusion counts, E_ij = (row total_i)(column total_j) / n, w linear |i-j|/(K-1) or quadratic
    ((i-j)/(K-1))^2 over category positions. With w_ij = [i != j] it is Cohen's kappa.
    """
    _check_weights(weights)
    stats, statistic, _ = _kappa_parts(a, b, categories, weights)
    return _point(stats, statistic)


def percent_agreement_ci(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    categories: Sequence[float] = DEFAULT_CATEGORIES,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    method: Method = "percentile",
) -> Interval:
    """:func:`percent_agreement` with a bootstrap interval over items."""
    first, second, dropped = _pair_codes(a, b, categories)
    interval = bootstrap_ci(first == second, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method)
    return replace(interval, n_unscored=dropped)


def cohen_kappa_ci(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    categories: Sequence[float] = DEFAULT_CATEGORIES,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    method: Method = "percentile",
) -> Interval:
    """:func:`cohen_kappa` with a bootstrap interval over items."""
    stats, statistic, dropped = _kappa_parts(a, b, categories, None)
    return bootstrap_statistic(
        stats, statistic, n_unscored=dropped, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )


def weighted_kappa_ci(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    categories: Sequence[float] = DEFAULT_CATEGORIES,
    weights: Weights = "quadratic",
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    method: Method = "percentile",
) -> Interval:
    """:func:`weighted_kappa` with a bootstrap interval over items."""
    _check_weights(weights)
    stats, statistic, dropped = _kappa_parts(a, b, categories, weights)
    return bootstrap_statistic(
        stats, statistic, n_unscored=dropped, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )


def _fleiss_from_totals(totals: FloatArray) -> FloatArray:
    """kappa = (Pbar - P_e) / (1 - P_e) from summed [n_i1..n_iK, P_i, 1] rows; P_e = sum_j p_j^2."""
    counts, agreement, items = totals[:, :-2], totals[:, -2], totals[:, -1]
    shares = counts / counts.sum(axis=1, keepdims=True)
    chance = np.sum(shares**2, axis=1)
    return _ratio(1.0 - agreement / items, 1.0 - chance)


def _fleiss_parts(ratings: npt.ArrayLike, categories: Sequence[float]) -> tuple[FloatArray, Statistic]:
    codes = _codes(ratings, categories, "ratings")
    if codes.ndim != 2:
        raise MetricError(f"ratings must be an items x raters matrix, got shape {codes.shape}")
    graded = (~np.isnan(codes)).sum(axis=1)
    raters = int(graded[0]) if graded.size else 0
    uneven = np.flatnonzero(graded != raters)
    if raters < 2 or uneven.size:
        item = int(uneven[0]) if uneven.size else 0
        raise MetricError(
            f"Fleiss' kappa needs the same number (>= 2) of grades on every item; item {item} has "
            f"{int(graded[item]) if graded.size else 0}, item 0 has {raters}. Use krippendorff_alpha, which allows "
            "missing grades, or keep only items graded by every rater"
        )
    k = len(categories)
    counts = np.stack([np.sum(codes == j, axis=1) for j in range(k)], axis=1).astype(np.float64)
    per_item = (np.sum(counts**2, axis=1) - raters) / (raters * (raters - 1))
    return np.column_stack([counts, per_item, np.ones(codes.shape[0])]), _fleiss_from_totals


def fleiss_kappa(ratings: npt.ArrayLike, categories: Sequence[float] = DEFAULT_CATEGORIES) -> float:
    """Fleiss' kappa (Fleiss 1971) for m >= 2 raters per item, ``ratings`` = items x raters grades.

    With n_ij = raters putting item i in category j: P_i = (sum_j n_ij^2 - m) / (m (m - 1)), Pbar = mean_i P_i,
    p_j = sum_i n_ij / (N m), P_e = sum_j p_j^2, kappa = (Pbar - P_e) / (1 - P_e). Every item must carry the same
    number m of grades (NaN = missing; the raters may differ between items); otherwise :class:`MetricError`
    points to :func:`krippendorff_alpha`. With two raters it equals Scott's pi, not Cohen's kappa.
    """
    stats, statistic = _fleiss_parts(ratings, categories)
    return _point(stats, statistic)


def fleiss_kappa_ci(
    ratings: npt.ArrayLike,
    categories: Sequence[float] = DEFAULT_CATEGORIES,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    method: Method = "percentile",
) -> Interval:
    """:func:`fleiss_kappa` with a bootstrap interval over items."""
    stats, statistic = _fleiss_parts(ratings, categories)
    return bootstrap_statistic(
        stats, statistic, n_unscored=0, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )


def _point(stats: FloatArray, statistic: Statistic) -> float:
    if stats.shape[0] == 0:
        return float("nan")
    return float(statistic(stats.sum(axis=0)[None, :])[0])


def _distance(level: Level, values: FloatArray, marginals: FloatArray) -> FloatArray:
    """Squared difference delta^2_ck per row of ``marginals`` (B, V) for Krippendorff's metrics (Krippendorff 2011).

    nominal [c != k]; interval (v_c - v_k)^2; ratio ((v_c - v_k) / (v_c + v_k))^2 (0 when both are 0);
    ordinal (sum_{g between c and k} n_g - (n_c + n_k) / 2)^2 with n_g the value frequencies.
    """
    v = values.size
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(v), (marginals.shape[0], v, v))
    diff = values[:, None] - values[None, :]
    if level == "interval":
        return np.broadcast_to(diff**2, (marginals.shape[0], v, v))
    if level == "ratio":
        total = values[:, None] + values[None, :]
        ratio = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0)
        return np.broadcast_to(ratio**2, (marginals.shape[0], v, v))
    if level == "ordinal":
        index = np.arange(v)
        lo, hi = np.minimum.outer(index, index), np.maximum.outer(index, index)
        cum = np.cumsum(marginals, axis=1)
        between = cum[:, hi] - cum[:, lo] + marginals[:, lo]
        half = (marginals[:, :, None] + marginals[:, None, :]) / 2.0
        return (between - half) ** 2
    raise MetricError(f"unknown level of measurement {level!r}; use 'nominal', 'ordinal', 'interval' or 'ratio'")


def _alpha_from_coincidences(cells: FloatArray, values: FloatArray, level: Level) -> FloatArray:
    """alpha = 1 - (n - 1) sum_ck o_ck delta^2_ck / sum_ck n_c n_k delta^2_ck, per row of flattened o (B, V*V)."""
    v = values.size
    coincidence = cells.reshape(-1, v, v)
    marginals = coincidence.sum(axis=2)
    n = marginals.sum(axis=1)
    delta = _distance(level, values, marginals)
    observed = (n - 1.0) * np.einsum("bck,bck->b", coincidence, delta)
    expected = np.einsum("bc,bk,bck->b", marginals, marginals, delta)
    return np.where(n >= 2, _ratio(observed, expected), np.nan)


def _unit_counts(reliability_data: npt.ArrayLike, categories: Sequence[float] | None) -> tuple[FloatArray, FloatArray]:
    """Per pairable unit the value counts n_uc (units x V), and the value domain."""
    data = np.asarray(reliability_data, dtype=np.float64)
    if data.ndim != 2:
        raise MetricError(f"reliability_data must be a raters x items matrix, got shape {data.shape}")
    domain = np.unique(data[~np.isnan(data)]) if categories is None else np.asarray(categories, dtype=np.float64)
    codes = _codes(data, domain.tolist(), "reliability_data")
    counts = np.stack([np.sum(codes == j, axis=0) for j in range(domain.size)], axis=1).astype(np.float64)
    return counts[counts.sum(axis=1) >= 2], domain


def krippendorff_alpha(
    reliability_data: npt.ArrayLike, level: Level = "ordinal", categories: Sequence[float] | None = None
) -> float:
    """Krippendorff's alpha (Krippendorff 2011) for any number of raters with missing grades.

    ``reliability_data`` is raters x items (the ``krippendorff`` package's layout), NaN = missing. Units with fewer
    than two grades are not pairable and are left out. Coincidences o_ck = sum_u sum_{pairs in u} [c, k] /
    (m_u - 1), n_c = sum_k o_ck, n = sum_c n_c, and alpha = 1 - D_o / D_e with
    D_o = sum o_ck delta^2_ck / n, D_e = sum n_c n_k delta^2_ck / (n (n - 1)). ``categories`` fixes the value
    domain (default: the values present; for ordinal and nominal data absent values do not change alpha).
    NaN when fewer than two pairable values; 1.0 when only one value occurs (see the module docstring).
    """
    counts, domain = _unit_counts(reliability_data, categories)
    if counts.shape[0] == 0:
        return float("nan")
    scale = 1.0 / (counts.sum(axis=1) - 1.0)
    coincidence = np.einsum("uc,uk,u->ck", counts, counts, scale) - np.diag(counts.T @ scale)
    return float(_alpha_from_coincidences(coincidence.reshape(1, -1), domain, level)[0])


def krippendorff_alpha_ci(
    reliability_data: npt.ArrayLike,
    level: Level = "ordinal",
    categories: Sequence[float] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    method: Method = "percentile",
) -> Interval:
    """:func:`krippendorff_alpha` with a bootstrap interval over units (pairable items); at most 64 distinct values."""
    counts, domain = _unit_counts(reliability_data, categories)
    if domain.size > 64:
        raise MetricError(f"the alpha interval supports at most 64 distinct values, got {domain.size}; bin the grades")
    v = domain.size
    scale = 1.0 / (counts.sum(axis=1) - 1.0)
    per_unit = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(v)) * scale[:, None, None]
    statistic = partial(_alpha_from_coincidences, values=domain, level=level)
    stats = per_unit.reshape(counts.shape[0], v * v)
    return bootstrap_statistic(
        stats, statistic, n_unscored=0, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )
