"""Randomization tests over a family of systems, the critical values that invert them, and paired effect sizes.

The data of one metric is a score matrix ``scores`` (queries x systems). Under the null hypothesis that the systems
do not differ, the scores of one query are exchangeable across the systems, so each query's row may be permuted.

* A *family* is a list of system pairs ``(i, j)`` compared on that one metric (all pairs, or each system against a
  baseline). The statistic of a pair is ``|mean_j - mean_i|`` over the queries.
* :func:`family_null` draws the null distribution of ``M = max over the family's pairs |mean_j - mean_i|`` with the
  rows permuted: every one of the ``(k!)^n`` rearrangements when there are at most ``EXACT_MAX`` of them (exact),
  else ``n_resamples`` random ones (Monte Carlo). With two systems and one pair it is the paired sign-flip test of
  the differences. The randomized Tukey HSD p-value of a pair is ``P(M >= observed)`` (Sakai 2018, ch. 4): one
  step, family-wise error controlled over every pair of the family.
* :class:`NullDistribution` turns the draws into p-values (exact: ``#{M >= t} / N``; Monte Carlo:
  ``(#{M >= t} + 1) / (B + 1)``, never 0) with their Monte Carlo standard error ``sqrt(p (1 - p) / B)``, and into
  the critical value ``c(level)``: the least value such that ``p(t) <= level`` exactly when ``t > c``. The interval
  ``delta +- c(level)`` therefore excludes 0 exactly when the test at that level rejects: the verdict and the
  interval printed beside it cannot disagree (it is the randomization distribution read as the sampling
  distribution of the delta, centred on the observed delta; slightly conservative when the effect is large).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import permutations

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError

__all__ = [
    "EXACT_MAX",
    "NullDistribution",
    "PairedEffect",
    "family_null",
    "paired_effect",
    "sign_flip_interval",
    "sign_flip_null",
]

FloatArray = npt.NDArray[np.float64]
EXACT_MAX = 2**16  # enumerate every rearrangement up to this many (2 systems: up to 16 queries)
_BLOCK_CELLS = 2_000_000


@dataclass(frozen=True)
class NullDistribution:
    """Draws of a non-negative statistic under the null, sorted in decreasing order.

    ``exact``: the draws are every rearrangement (each equally likely); else ``size`` random ones.
    ``tolerance``: an observed value within it of a draw counts as reaching that draw (float noise in sums).
    """

    values: FloatArray
    exact: bool
    tolerance: float

    @property
    def size(self) -> int:
        return int(self.values.size)

    def hits(self, observed: float) -> int:
        """#{draws >= observed - tolerance}."""
        return int(np.count_nonzero(self.values >= observed - self.tolerance))

    def p_of_hits(self, hits: int) -> float:
        """hits / N when exact, (hits + 1) / (B + 1) otherwise."""
        return hits / self.size if self.exact else (hits + 1) / (self.size + 1)

    def p_value(self, observed: float) -> float:
        """P(statistic >= observed) under the null."""
        return self.p_of_hits(self.hits(observed))

    def mc_error(self, p: float) -> float:
        """Monte Carlo standard error of a p-value from these draws, sqrt(p (1 - p) / B); 0 when exact."""
        return 0.0 if self.exact else math.sqrt(max(p * (1.0 - p), 0.0) / self.size)

    def max_hits(self, level: float) -> int:
        """The largest hit count h with ``p_of_hits(h) <= level``; -1 when no count reaches it."""
        h = math.floor(level * self.size) if self.exact else math.floor(level * (self.size + 1)) - 1
        h = min(max(h, -1), self.size)
        while h + 1 <= self.size and self.p_of_hits(h + 1) <= level:
            h += 1
        while h >= 0 and self.p_of_hits(h) > level:
            h -= 1
        return h

    def critical(self, level: float) -> float:
        """c such that ``p_value(t) <= level`` exactly when ``t > c`` (``inf``: no value is significant).

        With the draws sorted in decreasing order v_0 >= v_1 >= ..., and h = :meth:`max_hits`:
        hits(t) <= h  <=>  v_h < t - tolerance  <=>  t > v_h + tolerance.
        """
        h = self.max_hits(level)
        if h < 0:
            return math.inf
        if h >= self.size:
            return -math.inf
        return float(self.values[h]) + self.tolerance


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _tolerance(scores: FloatArray) -> float:
    return 1e-12 * max(1.0, float(np.abs(scores).max(initial=0.0)))


def _check(scores: npt.ArrayLike, pairs: Sequence[tuple[int, int]]) -> FloatArray:
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise MetricError(f"scores must be a (queries x systems) matrix with 2+ systems, got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise MetricError("scores must be scored on every query by every system (drop the NaN rows first)")
    if not pairs or any(not (0 <= i < matrix.shape[1] and 0 <= j < matrix.shape[1] and i != j) for i, j in pairs):
        raise MetricError(f"pairs must name two different systems among {matrix.shape[1]}, got {list(pairs)}")
    return matrix


def _max_range(means: FloatArray, pairs: Sequence[tuple[int, int]]) -> FloatArray:
    """max over pairs |means[:, j] - means[:, i]| for each row of ``means`` (draws x systems)."""
    first = np.array([i for i, _ in pairs])
    second = np.array([j for _, j in pairs])
    result: FloatArray = np.abs(means[:, second] - means[:, first]).max(axis=1)
    return result


def _exact_rearrangements(n: int, k: int) -> npt.NDArray[np.intp]:
    """Every choice of one permutation of k systems per query: (k!)^n x n x k column indices."""
    perms = np.array(list(permutations(range(k))), dtype=np.intp)
    codes = np.arange(len(perms) ** n)[:, None] // (len(perms) ** np.arange(n))[None, :] % len(perms)
    result: npt.NDArray[np.intp] = perms[codes]
    return result


def family_null(
    scores: npt.ArrayLike,
    pairs: Sequence[tuple[int, int]],
    *,
    n_items: int | None = None,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> NullDistribution:
    """Null distribution of max over ``pairs`` of |mean_j - mean_i| with each query's row permuted (module doc).

    Exact when (k!)^n <= :data:`EXACT_MAX` for n rows and k systems; otherwise ``n_resamples`` random
    rearrangements, each row's permutation drawn uniformly (an index into the k! permutations for k <= 6, else the
    argsort of uniform keys). With ``n_items`` the rows are the sums of clusters of queries (``n_items`` queries in
    all): one permutation per cluster, every query of a cluster permuted alike, and the means are sums / n_items.
    """
    matrix = _check(scores, pairs)
    n, k = matrix.shape
    if n == 0:
        raise MetricError("a randomization test needs at least one query scored by every system")
    divisor = float(n if n_items is None else n_items)
    if math.factorial(k) ** n <= EXACT_MAX:
        picked = np.take_along_axis(np.broadcast_to(matrix, (math.factorial(k) ** n, n, k)),
                                    _exact_rearrangements(n, k), axis=2)  # fmt: skip
        values = _max_range(picked.sum(axis=1) / divisor, pairs)
        return NullDistribution(np.sort(values)[::-1], True, _tolerance(matrix))
    rng = _rng(seed)
    table = np.array(list(permutations(range(k))), dtype=np.intp) if k <= 6 else None
    out = np.empty(n_resamples)
    block = max(1, _BLOCK_CELLS // (n * k))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        if table is not None:  # one of the k! permutations per query, uniformly
            order = table[rng.integers(0, len(table), size=(size, n))]
        else:
            order = np.argsort(rng.random((size, n, k)), axis=2)
        picked = np.take_along_axis(np.broadcast_to(matrix, (size, n, k)), order, axis=2)
        out[start : start + size] = _max_range(picked.sum(axis=1) / divisor, pairs)
    return NullDistribution(np.sort(out)[::-1], False, _tolerance(matrix))


def _flips(
    d: FloatArray, w: FloatArray, n_resamples: int, seed: int | np.random.Generator
) -> tuple[FloatArray, FloatArray, bool]:
    """For each sign vector (all 2^n when n <= 16, else ``n_resamples`` random ones, seeded): F @ d and F @ w, where
    F_bi = 1 when d_i is flipped; and whether the vectors are all of them."""
    n = d.size
    if 2**n <= EXACT_MAX:
        codes = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1).astype(np.float64)
        return codes @ d, codes @ w, True
    rng = _rng(seed)
    fd, fw = np.empty(n_resamples), np.empty(n_resamples)
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        flips = rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(np.float64)
        fd[start : start + size], fw[start : start + size] = flips @ d, flips @ w
    return fd, fw, False


def _diffs(diffs: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim != 1 or d.size == 0 or np.isnan(d).any():
        raise MetricError(f"differences must be a non-empty 1-d array without NaN, got shape {d.shape}")
    w = np.ones_like(d) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != d.shape or np.isnan(w).any() or (w <= 0).any():
        raise MetricError(f"weights must be positive cluster sizes, one per difference; got shape {w.shape}")
    return d, w


def sign_flip_null(
    diffs: npt.ArrayLike,
    *,
    weights: npt.ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> NullDistribution:
    """Null distribution of |sum(s_i d_i)| / sum(w) over sign vectors s: all 2^n when n <= 16, else ``n_resamples``
    random.

    Without ``weights`` the d_i are per-query differences and the statistic is |mean(s_i d_i)|: the same test as
    :func:`family_null` for two systems (swapping a query's two scores flips the sign of its difference). With
    ``weights`` the d_i are the sums of the differences within clusters of queries and w_i the clusters' sizes: one
    sign per cluster (the cluster randomization test; every query of a cluster moves with it), and the statistic is
    still the mean difference over the queries. Computed as |sum(d) - 2 F @ d| / sum(w).
    """
    d, w = _diffs(diffs, weights)
    fd, _, exact = _flips(d, w, n_resamples, seed)
    values = np.abs(float(d.sum()) - 2.0 * fd) / float(w.sum())
    return NullDistribution(np.sort(values)[::-1], exact, _tolerance(d))


def sign_flip_interval(
    diffs: npt.ArrayLike,
    level: float,
    *,
    significant: bool,
    weights: npt.ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> tuple[float, float]:
    """The interval of mean(d) that inverts the sign-flip test: {x : the test of mean(d - x) = 0 at ``level`` does
    not reject}, with the same sign vectors as :func:`sign_flip_null` for the same ``n_resamples`` and ``seed``.
    With ``weights`` (cluster sums d_i of w_i queries each), the mean is sum(d) / sum(w) and the test at x flips
    the signs of d_i - x w_i.

    Each bound is found by bisection (60 steps) between the estimate mean(d) (p = 1, never rejected) and a rejected
    point. ``significant`` is the decision of the test at x = 0 (the caller's): 0 is taken as rejected when it is
    True and as not rejected when False, so the interval excludes 0 exactly when the test said significant. A side
    where even a point beyond every d_i is not rejected (too few queries) ends at that point, just beyond the range
    of the differences (the cluster means, with weights).
    """
    d, w = _diffs(diffs, weights)
    fd, fw, exact = _flips(d, w, n_resamples, seed)
    n, total, tol = float(w.sum()), float(d.sum()), _tolerance(d)
    count = fd.size

    def rejects(x: float) -> bool:
        stats = np.abs(total - n * x - 2.0 * (fd - x * fw))
        hits = int(np.count_nonzero(stats >= abs(total - n * x) - n * tol))
        return (hits / count if exact else (hits + 1) / (count + 1)) <= level

    delta = total / n
    means = d / w
    margin = 1e-6 * (1.0 + float(np.ptp(means)))
    # the far points lie strictly beyond delta and every mean: past about 1e9 in size the margin is below half a
    # float step and vanishes in the sum, which would put a far point on delta (a side of zero width, and an
    # interval off 0 whatever the test said), so the next float out is the least step taken
    lowest, highest = min(float(means.min()), delta), max(float(means.max()), delta)
    low_far = min(lowest - margin, float(np.nextafter(lowest, -np.inf)))
    high_far = max(highest + margin, float(np.nextafter(highest, np.inf)))
    low = _bound(rejects, delta, low_far, significant=significant)
    high = _bound(rejects, delta, high_far, significant=significant)
    return low, high


def _bound(rejects: Callable[[float], bool], delta: float, far: float, *, significant: bool) -> float:
    """The non-rejected point nearest the rejected side, between ``delta`` and ``far`` (see sign_flip_interval)."""
    toward_zero = (far < delta and delta > 0) or (far > delta and delta < 0)
    if toward_zero and significant:
        out, accepted = 0.0, delta  # 0 is rejected: the bound lies strictly between 0 and delta
    else:
        out = (min(far, -abs(far) - 1e-6) if far < delta else max(far, abs(far) + 1e-6)) if toward_zero else far
        if not rejects(out):
            return out
        accepted = 0.0 if toward_zero else delta  # not significant: 0 is inside, the bound lies beyond it
    for _ in range(60):
        mid = 0.5 * (out + accepted)
        if rejects(mid):
            out = mid
        else:
            accepted = mid
    return accepted


@dataclass(frozen=True)
class PairedEffect:
    """Effect sizes of b against a over paired queries (d_i = b_i - a_i).

    ``delta`` = mean(d); ``d_z`` = mean(d) / sd(d) with sd over n - 1 (Cohen's d for paired samples; None when
    n < 2 or sd <= 1e-12 max(1, |mean|), i.e. the differences are equal up to float noise); ``wins`` / ``ties``
    / ``losses`` count queries with d_i > 0, |d_i| <= 1e-12, d_i < 0.
    """

    delta: float
    d_z: float | None
    wins: int
    ties: int
    losses: int


def paired_effect(a: npt.ArrayLike, b: npt.ArrayLike) -> PairedEffect:
    """:class:`PairedEffect` of ``b`` against ``a`` (equal-length arrays without NaN, at least one item)."""
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if d.ndim != 1 or d.size == 0 or np.isnan(d).any():
        raise MetricError(f"paired effect needs two equal non-empty 1-d arrays without NaN, got shape {d.shape}")
    sd = float(np.std(d, ddof=1)) if d.size > 1 else 0.0
    tie = np.abs(d) <= 1e-12
    return PairedEffect(
        delta=float(d.mean()),
        d_z=float(d.mean()) / sd if sd > 1e-12 * max(1.0, abs(float(d.mean()))) else None,
        wins=int(np.count_nonzero((d > 0) & ~tie)),
        ties=int(np.count_nonzero(tie)),
        losses=int(np.count_nonzero((d < 0) & ~tie)),
    )
