"""Interval values against independent computations: every sign vector enumerated, and scipy's bootstrap.

The inverted sign-flip interval (unadjusted, and at the Holm step's level in ``assay eval``) is compared with an
exact enumeration written here: for a shift x the p-value is #{s : |sum s_i (d_i - x)| >= |sum (d_i - x)|} / 2^n,
which only changes where |sum s_i (d_i - x)| = |sum (d_i - x)| for some s, i.e. at x = (sum d - s.d) / (n - sum s)
or x = (sum d + s.d) / (n + sum s). The interval is the run of accepted points (p > level) around mean(d).

Bootstrap intervals are compared with ``scipy.stats.bootstrap`` on statistics written here from their textbook
formulas, within a Monte Carlo tolerance that the test checks is below half the gap between the 90% and 95% bounds,
so a wrong level cannot pass.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import krippendorff
import numpy as np
import pytest
import scipy.stats

from assay.metrics.agreement import (
    cohen_kappa_ci,
    fleiss_kappa_ci,
    krippendorff_alpha_ci,
    weighted_kappa_ci,
)
from assay.metrics.leniency import leniency_ci
from assay.metrics.randomization import sign_flip_interval, sign_flip_null
from assay.metrics.stats import Interval
from assay.pipelines.evaluate.statistics.compare import compare_runs
from assay.pipelines.evaluate.statistics.stats import StatSettings, summarize
from assay.results import QueryResult

ALPHA = 0.05


def all_signs(n: int) -> np.ndarray:
    return np.array(list(itertools.product((1.0, -1.0), repeat=n)))


def exact_p(d: np.ndarray, x: float) -> float:
    e = d - x
    observed = abs(e.sum())
    return float(np.mean(np.abs(all_signs(d.size) @ e) >= observed - 1e-9))


def exact_interval(d: np.ndarray, level: float) -> tuple[float, float]:
    """The accepted points around mean(d), from the p-value at every breakpoint and between them."""
    signs = all_signs(d.size)
    n, total, dots, sums = d.size, d.sum(), signs @ d, signs.sum(axis=1)
    points = [(total - sd) / (n - s) for sd, s in zip(dots, sums, strict=True) if s != n]
    points += [(total + sd) / (n + s) for sd, s in zip(dots, sums, strict=True) if s != -n]
    breaks = np.unique(np.round(points, 12))
    grid = np.sort(np.concatenate([breaks, (breaks[1:] + breaks[:-1]) / 2, [d.mean()]]))
    accepted = np.array([exact_p(d, x) > level for x in grid])
    inside = grid[accepted]
    # the accepted set is one run of grid points here (checked), so its ends are the interval's bounds
    first, last = np.flatnonzero(accepted)[[0, -1]]
    assert accepted[first : last + 1].all(), "the accepted shifts are not one interval for this data"
    assert not accepted[0] and not accepted[-1], "a side never reaches a rejected shift for this data"
    return float(inside[0]), float(inside[-1])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [0.05, 0.1, 0.05 / 3])
def test_unadjusted_sign_flip_interval_equals_exact_enumeration(seed: int, level: float) -> None:
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(0.3 * seed, 1.0, size=9), 3)
    significant = exact_p(d, 0.0) <= level
    low, high = sign_flip_interval(d, level, significant=significant)
    want = exact_interval(d, level)
    assert (low, high) == pytest.approx(want, abs=1e-9)


def per_run_rows(runs: dict[str, np.ndarray]) -> dict[str, dict[str, QueryResult]]:
    return {
        run: {f"q{i}": QueryResult(run=run, query_id=f"q{i}", metrics={"m": float(v)}) for i, v in enumerate(values)}
        for run, values in runs.items()
    }


def three_runs(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = np.round(rng.random(10), 2)
    return {"a": base, "b": np.round(base + rng.normal(0.3, 0.15, 10), 2),
            "c": np.round(base + rng.normal(0.15, 0.15, 10), 2)}  # fmt: skip


def holm_levels(ps: list[float], alpha: float) -> list[float]:
    """Each pair's level: alpha / (m - r + 1) when Holm rejects it at step r (1-based), else alpha / m."""
    m = len(ps)
    levels, going = [alpha / m] * m, True
    for step, i in enumerate(sorted(range(m), key=lambda i: ps[i])):
        going = going and ps[i] <= alpha / (m - step)
        if going:
            levels[i] = alpha / (m - step)
    return levels


@pytest.mark.parametrize(("seed", "steps"), [(5, {ALPHA / 3, ALPHA / 2}), (22, {ALPHA / 3, ALPHA / 2, ALPHA})])
def test_holm_comparison_interval_is_the_exact_interval_at_its_step_level(seed: int, steps: set[float]) -> None:
    runs = three_runs(seed)
    got = compare_runs(per_run_rows(runs), ["m"], StatSettings(alpha=ALPHA, correction="holm"))
    diffs = [runs[c.b] - runs[c.a] for c in got]
    ps = [exact_p(d, 0.0) for d in diffs]
    levels = holm_levels(ps, ALPHA)
    assert set(levels) == steps  # the case reaches these Holm steps (computed here, not by the code under test)
    for comparison, d, p, level in zip(got, diffs, ps, levels, strict=True):
        assert comparison.exact and comparison.p_value == pytest.approx(p, abs=1e-6)
        assert comparison.interval_confidence == pytest.approx(1 - level, abs=1e-6)
        assert comparison.significant == (level > ALPHA / 3 or p <= ALPHA / 3)
        assert (comparison.low, comparison.high) == pytest.approx(exact_interval(d, level), abs=1e-6)


def test_unadjusted_comparison_interval_is_the_exact_interval_at_alpha() -> None:
    runs = three_runs(5)
    got = compare_runs(per_run_rows(runs), ["m"], StatSettings(alpha=ALPHA, correction="none"))
    for comparison in got:
        d = runs[comparison.b] - runs[comparison.a]
        assert comparison.interval_confidence == pytest.approx(1 - ALPHA)
        assert comparison.significant == (exact_p(d, 0.0) <= ALPHA)
        assert (comparison.low, comparison.high) == pytest.approx(exact_interval(d, ALPHA), abs=1e-6)


def test_sign_flip_interval_covers_the_true_mean_at_its_level_not_below() -> None:
    # 2000 samples of 10 normal differences, every sign vector: the interval of an exact test covers the true mean
    # in 1 - level of samples (a little more, the p-values being multiples of 1/1024). The standard error of the
    # coverage is sqrt(0.95 * 0.05 / 2000) = 0.0049: the band below is 3 of them each side of 0.95, while a 90%
    # interval would cover about 0.90, ten of them below.
    rng = np.random.default_rng(22)
    covered = 0
    for _ in range(2000):
        d = rng.normal(0.4, 1.0, size=10)
        significant = sign_flip_null(d).p_value(abs(float(d.mean()))) <= ALPHA
        low, high = sign_flip_interval(d, ALPHA, significant=significant)
        covered += low <= 0.4 <= high
    assert 0.935 <= covered / 2000 <= 0.965


B = 20_000


def mc_tolerance(ref: Any, confidence: float) -> float:
    """4 sqrt(2) Monte Carlo standard errors of a bootstrap quantile from B replicates (normal approximation)."""
    low, high = ref.confidence_interval
    z = scipy.stats.norm.ppf(1 - (1 - confidence) / 2)
    sd = (high - low) / (2 * z)
    q = (1 - confidence) / 2
    return 4 * math.sqrt(2) * math.sqrt(q * (1 - q) / B) / (scipy.stats.norm.pdf(z) / sd)


def check_against_scipy(ours: Callable[[float], Interval], data: tuple[np.ndarray, ...], stat: Callable[..., float],
                        method: str = "percentile") -> None:  # fmt: skip
    """Our interval at 95% and 90% against scipy's, each within Monte Carlo error; that error below half the gap."""
    refs = {
        level: scipy.stats.bootstrap(data, stat, paired=True, n_resamples=B, confidence_level=level, method=method,
                                     random_state=1)
        for level in (0.95, 0.90)
    }  # fmt: skip
    gap = min(abs(refs[0.95].confidence_interval.low - refs[0.90].confidence_interval.low),
              abs(refs[0.95].confidence_interval.high - refs[0.90].confidence_interval.high))  # fmt: skip
    for confidence, ref in refs.items():
        got = ours(confidence)
        tolerance = mc_tolerance(ref, confidence)
        assert tolerance < gap / 2, (tolerance, gap)
        assert got.mean == pytest.approx(stat(*data, axis=-1), abs=1e-9)
        assert got.low == pytest.approx(ref.confidence_interval.low, abs=tolerance)
        assert got.high == pytest.approx(ref.confidence_interval.high, abs=tolerance)


def mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def test_metric_summary_interval_matches_scipy_bootstrap_at_its_confidence() -> None:
    rng = np.random.default_rng(7)
    values = np.round(rng.beta(2, 3, size=80), 4)
    rows = [QueryResult(run="r", query_id=f"q{i}", metrics={"m": float(v)}) for i, v in enumerate(values)]
    rows.append(QueryResult(run="r", query_id="gone", metrics={"m": None}, unscored={"m": "invalid_output"}))

    def ours(confidence: float) -> Interval:
        summary = summarize(rows, "m", StatSettings(confidence=confidence, n_boot=B, seed=3))
        assert (summary.n_scored, summary.n_unscored) == (80, 1)
        assert summary.mean is not None and summary.low is not None and summary.high is not None
        return Interval(summary.mean, summary.low, summary.high, summary.n_scored)

    check_against_scipy(ours, (values,), lambda x, axis=-1: np.round(mean(x, axis), 6))


def kappa(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e), over the last axis, grades 0..3."""
    p_o = np.mean(a == b, axis=axis)
    p_e = sum(np.mean(a == k, axis=axis) * np.mean(b == k, axis=axis) for k in range(4))
    return (p_o - p_e) / (1 - p_e)


def quadratic_kappa(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Quadratic-weighted kappa = 1 - mean (a - b)^2 / (var a + var b + (mean a - mean b)^2), population moments."""
    spread = np.var(a, axis=axis) + np.var(b, axis=axis) + (np.mean(a, axis=axis) - np.mean(b, axis=axis)) ** 2
    return 1 - np.mean((a - b) ** 2, axis=axis) / spread


def fleiss(*raters: np.ndarray, axis: int = -1) -> np.ndarray:
    """Fleiss' kappa from per-item category counts n_ik: P_i = (sum_k n_ik^2 - m) / (m (m - 1))."""
    m = len(raters)
    counts = [sum((r == k).astype(float) for r in raters) for k in range(4)]
    p_i = (sum(c**2 for c in counts) - m) / (m * (m - 1))
    shares = [np.mean(c, axis=axis) / m for c in counts]
    p_e = sum(s**2 for s in shares)
    return (np.mean(p_i, axis=axis) - p_e) / (1 - p_e)


def interval_alpha(*raters: np.ndarray, axis: int = -1) -> np.ndarray:
    """Krippendorff's alpha, interval level, complete data: 1 - D_o / D_e with
    D_o = 2 m / (N (m - 1)) sum_u var_u and D_e = 2 n var / (n - 1) over all n = N m values."""
    m = len(raters)
    stacked = np.stack(raters, axis=0)
    n_units = stacked.shape[-1]
    d_o = 2 * m / (n_units * (m - 1)) * np.sum(np.var(stacked, axis=0), axis=axis)
    values = np.moveaxis(stacked, 0, -2).reshape(*stacked.shape[1:-1], m * n_units)
    n = m * n_units
    d_e = 2 * n * np.var(values, axis=axis) / (n - 1)
    return 1 - d_o / d_e


def graded_pairs(seed: int, n: int = 120) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=n).astype(float)
    b = np.where(rng.random(n) < 0.65, a, rng.integers(0, 4, size=n)).astype(float)
    c = np.where(rng.random(n) < 0.55, a, rng.integers(0, 4, size=n)).astype(float)
    return a, b, c


def test_cohen_kappa_interval_matches_scipy_bootstrap_at_its_level() -> None:
    a, b, _ = graded_pairs(31)
    check_against_scipy(lambda conf: cohen_kappa_ci(a, b, confidence=conf, n_resamples=B, seed=2), (a, b), kappa)


def test_weighted_kappa_bca_interval_matches_scipy_bca_at_its_level() -> None:
    a, b, _ = graded_pairs(32)
    ours = lambda conf: weighted_kappa_ci(  # noqa: E731
        a, b, weights="quadratic", confidence=conf, n_resamples=B, seed=2, method="bca"
    )
    check_against_scipy(ours, (a, b), quadratic_kappa, method="BCa")


def test_fleiss_kappa_interval_matches_scipy_bootstrap_at_its_level() -> None:
    a, b, c = graded_pairs(33)
    ratings = np.column_stack([a, b, c])
    check_against_scipy(lambda conf: fleiss_kappa_ci(ratings, confidence=conf, n_resamples=B, seed=2), (a, b, c),
                        fleiss)  # fmt: skip


def test_krippendorff_interval_matches_scipy_bootstrap_at_its_level() -> None:
    a, b, c = graded_pairs(34, n=90)
    data = np.vstack([a, b, c])
    assert interval_alpha(a, b, c) == pytest.approx(krippendorff.alpha(data, level_of_measurement="interval"))
    ours = lambda conf: krippendorff_alpha_ci(data, "interval", confidence=conf, n_resamples=B, seed=2)  # noqa: E731
    check_against_scipy(ours, (a, b, c), interval_alpha)


def test_leniency_interval_matches_scipy_bootstrap_at_its_level() -> None:
    judge, human, _ = graded_pairs(35, n=400)
    judge = np.minimum(judge + (np.random.default_rng(0).random(judge.size) < 0.3), 3)
    ours = lambda conf: leniency_ci(judge, human, confidence=conf, n_resamples=B, seed=2)  # noqa: E731
    check_against_scipy(ours, (judge, human), lambda j, h, axis=-1: np.mean(j - h, axis=axis))
