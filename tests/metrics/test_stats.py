"""Statistics: checked against scipy, hand-worked cases and simulations where the truth is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from assay.metrics import MetricError
from assay.metrics.ppi import ppi_mean, ppi_sample_size
from assay.metrics.stats import (
    Interval,
    benjamini_hochberg,
    bootstrap_ci,
    holm,
    norm_ppf,
    paired_bootstrap_ci,
    paired_randomization_test,
    stratified_means,
)


@pytest.mark.parametrize("p", [1e-12, 1e-4, 0.025, 0.3, 0.5, 0.8, 0.975, 1 - 1e-9])
def test_norm_ppf_matches_scipy(p: float) -> None:
    assert norm_ppf(p) == pytest.approx(scipy.stats.norm.ppf(p), abs=1e-9)


def test_bootstrap_percentile_and_bca_close_to_scipy() -> None:
    values = np.random.default_rng(1).exponential(size=40)
    for ours, theirs in (("percentile", "percentile"), ("bca", "BCa")):
        got = bootstrap_ci(values, method=ours, n_resamples=20_000)  # type: ignore[arg-type]
        ref = scipy.stats.bootstrap((values,), np.mean, n_resamples=20_000, method=theirs, random_state=0)
        assert got.mean == pytest.approx(values.mean())
        # Different random draws: agreement to Monte Carlo error only.
        assert got.low == pytest.approx(ref.confidence_interval.low, abs=0.03)
        assert got.high == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_bootstrap_excludes_and_counts_nan_and_is_seeded() -> None:
    values = [1.0, np.nan, 3.0, 2.0, np.nan, 4.0]
    got = bootstrap_ci(values, n_resamples=2_000, seed=7)
    assert (got.n, got.n_unscored, got.mean) == (4, 2, 2.5)
    assert got.low < 2.5 < got.high
    assert got == bootstrap_ci(values, n_resamples=2_000, seed=7)


def test_bootstrap_edge_cases() -> None:
    empty = bootstrap_ci([np.nan, np.nan])
    assert empty.n == 0 and empty.n_unscored == 2 and math.isnan(empty.mean)
    single = bootstrap_ci([0.7])
    assert single.mean == 0.7 and math.isnan(single.low) and math.isnan(single.high)
    constant = bootstrap_ci([0.5] * 10, method="bca")
    assert (constant.low, constant.high) == (0.5, 0.5)
    with pytest.raises(MetricError, match="confidence"):
        bootstrap_ci([1.0, 2.0], confidence=95)
    with pytest.raises(MetricError, match="1-d"):
        bootstrap_ci([[1.0, 2.0]])


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_coverage_near_95_percent(method: str) -> None:
    # 800 datasets of 50 draws from N(0.3, 1): the interval should hold 0.3 about 95% of the time.
    rng = np.random.default_rng(2024)
    hits = 0
    for _ in range(800):
        sample = rng.normal(0.3, 1.0, size=50)
        interval = bootstrap_ci(sample, n_resamples=1_000, seed=rng, method=method)  # type: ignore[arg-type]
        hits += interval.low <= 0.3 <= interval.high
    assert 0.92 <= hits / 800 <= 0.98


def test_paired_bootstrap_drops_pairs_with_a_missing_side() -> None:
    a = [0.5, 0.7, np.nan, 0.9, 0.4]
    b = [0.4, 0.5, 0.3, np.nan, 0.1]
    got = paired_bootstrap_ci(a, b, n_resamples=2_000)
    # Kept pairs: (0.5, 0.4), (0.7, 0.5), (0.4, 0.1): differences 0.1, 0.2, 0.3, mean 0.2.
    assert got.mean == pytest.approx(0.2) and got.n == 3 and got.n_unscored == 2
    assert 0.1 - 1e-12 <= got.low <= got.high <= 0.3 + 1e-12
    with pytest.raises(MetricError, match="same length"):
        paired_bootstrap_ci([1.0], [1.0, 2.0])


def test_exact_randomization_test_matches_scipy_and_hand_case() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=12), rng.normal(0.5, 1.0, size=12)
    ref = scipy.stats.permutation_test(
        (a, b), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=np.inf
    )
    assert paired_randomization_test(a, b) == pytest.approx(ref.pvalue)
    # Differences (1, 2, 3): of the 8 sign vectors only +++ and --- reach |mean| = 2, so p = 2/8.
    assert paired_randomization_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert paired_randomization_test([1.0, 2.0], [1.0, 2.0]) == 1.0
    assert math.isnan(paired_randomization_test([np.nan], [1.0]))


def test_monte_carlo_randomization_test_close_to_scipy() -> None:
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=40), rng.normal(0.3, 1.0, size=40)
    ref = scipy.stats.permutation_test(
        (a, b), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=20_000, random_state=0
    )
    assert paired_randomization_test(a, b, n_resamples=20_000) == pytest.approx(ref.pvalue, abs=0.015)


def test_randomization_test_size_and_power() -> None:
    rng = np.random.default_rng(11)
    sims, n = 800, 20
    null_p = [
        paired_randomization_test(rng.normal(size=n), rng.normal(size=n), n_resamples=400, seed=rng)
        for _ in range(sims)
    ]
    size = np.mean(np.array(null_p) <= 0.05)
    assert 0.03 <= size <= 0.07
    alt_p = [
        paired_randomization_test(rng.normal(0.6, 1, size=n), rng.normal(size=n), n_resamples=400, seed=rng)
        for _ in range(200)
    ]
    assert np.mean(np.array(alt_p) <= 0.05) > 0.3 > size


def test_exact_test_size_under_null() -> None:
    rng = np.random.default_rng(12)
    pvalues = [paired_randomization_test(rng.normal(size=10), rng.normal(size=10)) for _ in range(600)]
    assert 0.03 <= np.mean(np.array(pvalues) <= 0.05) <= 0.07


def test_holm_hand_example() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06.
    got = holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(got, [0.03, 0.06, 0.06, 0.02])
    # Capped at 1; NaN stays NaN and is not counted in m (m = 2 here: 0.6*2 = 1.2 -> 1).
    got = holm([0.6, np.nan, 0.7])
    np.testing.assert_allclose(got, [1.0, np.nan, 1.0])
    with pytest.raises(MetricError, match=r"\[0, 1\]"):
        holm([1.5])


def test_benjamini_hochberg_matches_scipy() -> None:
    pvalues = np.random.default_rng(3).uniform(0, 0.2, size=15)
    np.testing.assert_allclose(benjamini_hochberg(pvalues), scipy.stats.false_discovery_control(pvalues))


def test_stratified_means() -> None:
    values = [1.0, 0.0, np.nan, 0.5, 1.0, 0.25]
    strata = ["factoid", "multi-hop", "factoid", "factoid", "multi-hop", "numeric"]
    got = stratified_means(values, strata, n_resamples=500)
    assert list(got) == ["factoid", "multi-hop", "numeric"]
    assert (got["factoid"].mean, got["factoid"].n, got["factoid"].n_unscored) == (0.75, 2, 1)
    assert got["multi-hop"].mean == 0.5 and got["numeric"].n == 1
    assert isinstance(got["numeric"], Interval)
    with pytest.raises(MetricError, match="same length"):
        stratified_means([1.0], ["a", "b"])


def _biased_judge_sample(rng: np.random.Generator, n: int, big_n: int) -> tuple[np.ndarray, ...]:
    """Human truth Y ~ Bernoulli(0.6); the judge says 1 for 90% of true 1s and 25% of true 0s (biased upward)."""
    truth = rng.random(n + big_n) < 0.6
    judge = np.where(truth, rng.random(n + big_n) < 0.9, rng.random(n + big_n) < 0.25)
    return truth[:n].astype(float), judge[:n].astype(float), judge[n:].astype(float)


def test_ppi_coverage_and_width_against_classical() -> None:
    rng = np.random.default_rng(99)
    hits, ppi_widths, classical_widths = 0, [], []
    for _ in range(500):
        y, yhat, yhat_u = _biased_judge_sample(rng, 150, 3_000)
        result = ppi_mean(y, yhat, yhat_u)
        hits += result.low <= 0.6 <= result.high
        ppi_widths.append(result.high - result.low)
        classical_widths.append(result.classical_high - result.classical_low)
        assert ppi_widths[-1] <= classical_widths[-1] + 1e-12
    assert 0.92 <= hits / 500 <= 0.98
    assert np.mean(ppi_widths) < 0.85 * np.mean(classical_widths)
    # The judge alone is biased: its mean is 0.6*0.9 + 0.4*0.25 = 0.64, not 0.6.
    assert np.mean(yhat_u) == pytest.approx(0.64, abs=0.03)


def test_ppi_tuned_lambda_minimizes_width_and_zero_is_classical() -> None:
    y, yhat, yhat_u = _biased_judge_sample(np.random.default_rng(4), 80, 1_000)
    tuned = ppi_mean(y, yhat, yhat_u)
    assert 0.0 <= tuned.lambda_ <= 1.0
    for lam in np.linspace(0, 1, 21):
        fixed = ppi_mean(y, yhat, yhat_u, lambda_=lam)
        assert tuned.high - tuned.low <= fixed.high - fixed.low + 1e-12
    classical = ppi_mean(y, yhat, yhat_u, lambda_=0.0)
    half = scipy.stats.norm.ppf(0.975) * np.std(y, ddof=1) / math.sqrt(80)
    assert classical.estimate == pytest.approx(y.mean())
    assert (classical.low, classical.high) == pytest.approx((y.mean() - half, y.mean() + half))
    # lambda = 1 is plain PPI: mean(yhat_u) + mean(y - yhat).
    assert ppi_mean(y, yhat, yhat_u, lambda_=1.0).estimate == pytest.approx(yhat_u.mean() + np.mean(y - yhat))


def test_ppi_edge_cases() -> None:
    no_unlabeled = ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [])
    assert no_unlabeled.lambda_ == 0.0 and no_unlabeled.estimate == pytest.approx(2 / 3)
    constant_judge = ppi_mean([1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0])
    assert constant_judge.lambda_ == 0.0
    too_few = ppi_mean([1.0, np.nan], [1.0, 0.0], [0.0, 1.0])
    assert too_few.n_labeled == 1 and math.isnan(too_few.estimate)
    with pytest.raises(MetricError, match=r"lambda_=0\.0"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [], lambda_=0.5)


def test_ppi_sample_size_closed_forms_and_monotone() -> None:
    z = scipy.stats.norm.ppf(0.975)
    # Classical (rho = 0): n = ceil(z^2 sd^2 / h^2) = ceil(1.96^2 * 0.25 / 0.0025) = 385.
    assert ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.5, correlation=0.0, n_unlabeled=1_000) == 385
    # Unlimited unlabeled items: n = ceil(z^2 sd^2 (1 - rho^2) / h^2) = ceil(195.9) = 196.
    expected = math.ceil(z**2 * 0.25 * (1 - 0.49) / 0.05**2)
    assert ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.5, correlation=0.7, n_unlabeled=None) == expected
    finite = ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.5, correlation=0.7, n_unlabeled=1_000)
    assert expected < finite < 385
    with pytest.raises(MetricError, match="target_half_width"):
        ppi_sample_size(0.0, sd_human=0.5, sd_judge=0.5, correlation=0.7, n_unlabeled=None)


def test_ppi_sample_size_reaches_target_in_simulation() -> None:
    rng = np.random.default_rng(8)
    y, yhat, _ = _biased_judge_sample(rng, 5_000, 0)
    sd_y, sd_j, rho = np.std(y, ddof=1), np.std(yhat, ddof=1), np.corrcoef(y, yhat)[0, 1]
    n = ppi_sample_size(0.04, sd_human=sd_y, sd_judge=sd_j, correlation=rho, n_unlabeled=4_000)
    widths = []
    for _ in range(100):
        y, yhat, yhat_u = _biased_judge_sample(rng, n, 4_000)
        result = ppi_mean(y, yhat, yhat_u)
        widths.append((result.high - result.low) / 2)
    assert np.mean(widths) == pytest.approx(0.04, abs=0.003)


def test_ppi_by_hand_with_a_fixed_and_a_tuned_lambda() -> None:
    # n = 4 audited, N = 6 judge-only. Sample (co)variances by hand: s_yy = 1/4, s_hh = 1/3, s_yh = 1/6, s_u = 4/15.
    y, yhat, unlabeled = [1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    z = 1.959963984540054
    half = 0.5
    fixed = ppi_mean(y, yhat, unlabeled, lambda_=half)
    # theta = 0.5 * mean(u) + mean(y - 0.5 yhat) = 1/3 + 1/2
    # var = (1/4 - 2 * 0.5 / 6 + 0.25 / 3) / 4 + 0.25 * (4/15) / 6
    variance = (1 / 4 - 1 / 6 + 1 / 12) / 4 + (1 / 15) / 6
    assert fixed.estimate == pytest.approx(5 / 6, abs=1e-12)
    assert (fixed.low, fixed.high) == pytest.approx((5 / 6 - z * math.sqrt(variance), 5 / 6 + z * math.sqrt(variance)))
    assert (fixed.lambda_, fixed.n_labeled, fixed.n_unlabeled) == (0.5, 4, 6)
    # classical: mean(y) = 3/4 -+ z sqrt(s_yy / n) = z / 4
    assert fixed.classical_estimate == 0.75
    assert (fixed.classical_low, fixed.classical_high) == pytest.approx((0.75 - z / 4, 0.75 + z / 4))
    # tuned: (s_yh / n) / (s_hh / n + s_u / N) = (1/24) / (1/12 + 2/45) = 15/46
    tuned = ppi_mean(y, yhat, unlabeled)
    assert tuned.lambda_ == pytest.approx(15 / 46, abs=1e-12)
    lam = 15 / 46
    assert tuned.estimate == pytest.approx(lam * 2 / 3 + (3 - lam * 2) / 4, abs=1e-12)
    # another confidence: z(0.9) = 1.6448536269514722, on the classical half-width z sqrt(1/16)
    ninety = ppi_mean(y, yhat, unlabeled, lambda_=0.0, confidence=0.9)
    assert ninety.high - ninety.estimate == pytest.approx(1.6448536269514722 / 4)
    # NaN pairs and NaN judge-only predictions are dropped before anything is counted
    with_gaps = ppi_mean([*y, nan_value := float("nan"), 1.0], [*yhat, 1.0, nan_value], [*unlabeled, nan_value])
    assert (with_gaps.n_labeled, with_gaps.n_unlabeled, with_gaps.lambda_) == (4, 6, tuned.lambda_)


def test_ppi_tuned_lambda_is_clipped_to_zero_and_one() -> None:
    # Negatively related predictions: the unclipped lambda is below 0; a judge with one unlabeled item: no variance.
    assert ppi_mean([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0]).lambda_ == 0.0
    # y = 2 * yhat with many unlabeled items: s_yh / s_hh = 2, clipped to 1.
    assert ppi_mean([2.0, 0.0, 2.0, 0.0], [1.0, 0.0, 1.0, 0.0], [1.0, 0.0] * 50).lambda_ == 1.0
    # one judge-only item: s_u is taken as 0, lambda = s_yh / s_hh = 1 (y equals yhat)
    single = ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0])
    assert single.lambda_ == 1.0 and single.estimate == pytest.approx(1.0)
    assert single.high - single.low == pytest.approx(0.0, abs=1e-12)


def test_ppi_sample_size_edges() -> None:
    # A perfect judge with unlimited judge-only items needs the least n, 2.
    assert ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.5, correlation=1.0, n_unlabeled=None) == 2
    # With no judge-only items PPI is classical: 385 (see the closed forms); 0 items once divided by zero.
    assert ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.5, correlation=0.7, n_unlabeled=0) == 385
    assert ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.0, correlation=0.7, n_unlabeled=1_000) == 385
    # confidence 0.9: ceil(1.6449^2 * 0.25 / 0.0025) = ceil(270.6) = 271
    assert ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.5, correlation=0.0, n_unlabeled=None, confidence=0.9) == 271
    with pytest.raises(MetricError, match="max_n=100"):
        ppi_sample_size(0.001, sd_human=0.5, sd_judge=0.5, correlation=0.0, n_unlabeled=None, max_n=100)
    for bad in ({"sd_human": -1.0}, {"sd_judge": -1.0}, {"correlation": 1.5}, {"correlation": -1.5}):
        args = {"sd_human": 0.5, "sd_judge": 0.5, "correlation": 0.0, "n_unlabeled": None} | bad
        with pytest.raises(MetricError, match="standard deviations >= 0"):
            ppi_sample_size(0.05, **args)  # type: ignore[arg-type]
