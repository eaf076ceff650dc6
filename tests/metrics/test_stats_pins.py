"""Pins of the bootstrap and multiple-comparison statistics found by the mutation habit.

The resampled totals a statistic sees are captured (``bootstrap_statistic`` hands them to the statistic), so the
resampling is checked against its known distribution and the interval against the textbook percentile and BCa
rules recomputed here from the same replicates; the p-value adjustments against hand-worked cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import scipy.stats

from assay.metrics import MetricError
from assay.metrics.stats import (
    benjamini_hochberg,
    bootstrap_ci,
    bootstrap_statistic,
    holm,
    norm_cdf,
    norm_ppf,
    paired_bootstrap_ci,
    paired_randomization_test,
    stratified_means,
)


class Recorder:
    """A vectorized statistic that keeps every block of sums it is given (point, resamples, jackknife)."""

    def __init__(self, statistic: Callable[[np.ndarray], np.ndarray]) -> None:
        self.statistic = statistic
        self.calls: list[np.ndarray] = []

    def __call__(self, sums: np.ndarray) -> np.ndarray:
        self.calls.append(np.array(sums, copy=True))
        result: np.ndarray = self.statistic(sums)
        return result


def mean_of(sums: np.ndarray) -> np.ndarray:
    result: np.ndarray = sums[:, 0] / sums[:, 1]
    return result


def item_rows(values: list[float]) -> np.ndarray:
    return np.column_stack([values, np.ones(len(values))])


def reference_bca(point: float, reps: np.ndarray, jack: np.ndarray, confidence: float) -> tuple[float, float]:
    """Efron's BCa, written from the textbook: z0 from the share below (ties half, kept off 0 and 1 by 1/(B+1)),
    the jackknife acceleration, and the adjusted percentile levels."""
    b = reps.size
    share = (np.count_nonzero(reps < point) + np.count_nonzero(reps == point) / 2) / b
    share = float(np.clip(share, 1 / (b + 1), b / (b + 1)))
    z0 = scipy.stats.norm.ppf(share)
    d = jack.mean() - jack
    denom = 6 * np.sum(d * d) ** 1.5
    a = np.sum(d * d * d) / denom if denom > 0 else 0.0
    alpha = 1 - confidence
    levels = []
    for z in (scipy.stats.norm.ppf(alpha / 2), scipy.stats.norm.ppf(1 - alpha / 2)):
        levels.append(scipy.stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
    low, high = np.quantile(reps, levels)
    return float(low), float(high)


# ----------------------------------------------------------------------------------------------- normal quantiles


def test_norm_cdf_at_known_points() -> None:
    assert norm_cdf(0.0) == 0.5
    assert norm_cdf(1.959963984540054) == pytest.approx(0.975, abs=1e-12)
    assert norm_cdf(-1.0) == pytest.approx(0.15865525393145707, abs=1e-12)  # Phi(-1), any normal table


@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, 1.5])
def test_norm_ppf_refuses_p_outside_the_open_unit_interval(p: float) -> None:
    with pytest.raises(MetricError, match=f"normal quantile needs 0 < p < 1, got {p}$"):
        norm_ppf(p)


@pytest.mark.parametrize("p", [1e-300, 1e-20, 0.5 - 1e-12, 0.5 + 1e-12, 1 - 1e-15])
def test_norm_ppf_in_the_far_tails_and_beside_the_median(p: float) -> None:
    assert norm_ppf(p) == pytest.approx(scipy.stats.norm.ppf(p), abs=1e-10)
    assert norm_ppf(0.5) == 0.0 or abs(norm_ppf(0.5)) < 1e-13


# ----------------------------------------------------------------------------------------------- the resampling


def test_resamples_draw_items_uniformly_with_replacement() -> None:
    # Two items, 0 and 1: a resample of two holds k ones with k ~ Binomial(2, 1/2), i.e. 1/4, 1/2, 1/4.
    recorder = Recorder(mean_of)
    bootstrap_statistic(item_rows([0.0, 1.0]), recorder, n_resamples=40_000, seed=3)
    point, resamples = recorder.calls[0], recorder.calls[1]
    np.testing.assert_array_equal(point, [[1.0, 2.0]])
    assert resamples.shape == (40_000, 2)
    assert np.all(resamples[:, 1] == 2.0)  # every resample has as many items as the sample
    shares = [np.mean(resamples[:, 0] == k) for k in (0, 1, 2)]
    np.testing.assert_allclose(shares, [0.25, 0.5, 0.25], atol=0.01)


def test_each_item_is_drawn_equally_often_in_many_items() -> None:
    # Item i carries the indicator of itself: its resampled count has mean 1 (n draws, each 1/n) for every item.
    n = 7
    recorder = Recorder(lambda sums: sums[:, 0])
    bootstrap_statistic(np.eye(n), recorder, n_resamples=20_000, seed=5)
    counts = recorder.calls[1]
    assert np.all(counts.sum(axis=1) == n)
    np.testing.assert_allclose(counts.mean(axis=0), np.ones(n), atol=0.03)
    # Binomial(7, 1/7) variance 6/7 per item.
    np.testing.assert_allclose(counts.var(axis=0), np.full(n, 6 / 7), atol=0.04)


def test_resampling_does_not_depend_on_how_the_resamples_are_blocked() -> None:
    # 300 items: at 2_000_000 cells a block holds 6666 resamples, so 20_000 resamples take four blocks; the last
    # block's rows must be fresh resamples, not copies or zeros.
    values = list(np.random.default_rng(0).normal(size=300))
    recorder = Recorder(mean_of)
    bootstrap_statistic(item_rows(values), recorder, n_resamples=20_000, seed=1)
    resamples = recorder.calls[1]
    assert np.all(resamples[:, 1] == 300)
    means = resamples[:, 0] / 300
    assert np.unique(means).size > 19_000
    for block in np.array_split(means, 4):  # each quarter has the bootstrap spread sd / sqrt(n)
        assert block.std() == pytest.approx(np.std(values) / math.sqrt(300), rel=0.05)


# ---------------------------------------------------------------------------------------------- the intervals


def test_percentile_interval_is_the_quantiles_of_the_replicates() -> None:
    values = [0.1, 0.4, 0.35, 0.8, 0.05, 0.9, 0.6]
    for confidence in (0.95, 0.8):
        recorder = Recorder(mean_of)
        got = bootstrap_statistic(item_rows(values), recorder, n_resamples=3_000, seed=2, confidence=confidence)
        replicates = mean_of(recorder.calls[1])
        alpha = 1 - confidence
        low, high = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
        assert (got.low, got.high) == pytest.approx((low, high), abs=1e-12)
        assert got.mean == pytest.approx(np.mean(values))
        assert (got.n, got.n_unscored, got.confidence) == (7, 0, confidence)


def test_bca_interval_follows_efrons_rule_on_the_same_replicates() -> None:
    values = list(np.random.default_rng(4).exponential(size=25))  # skewed: bias and acceleration both matter
    recorder = Recorder(mean_of)
    got = bootstrap_statistic(item_rows(values), recorder, n_resamples=4_000, seed=9, method="bca", confidence=0.9)
    replicates = mean_of(recorder.calls[1])
    jackknife = np.array([np.mean(np.delete(values, i)) for i in range(len(values))])
    assert (got.low, got.high) == pytest.approx(reference_bca(np.mean(values), replicates, jackknife, 0.9), abs=1e-9)
    assert got.confidence == 0.9
    # and it is not the percentile interval
    assert got.low != pytest.approx(np.quantile(replicates, 0.05), abs=1e-6)


def test_bca_keeps_the_bias_correction_inside_its_clip_when_every_replicate_is_below_the_estimate() -> None:
    # The statistic peaks at the sample itself, -(s - S)^2, so every resample with another sum lies below it:
    # the share below is (almost) 1 and z0 is clipped to Phi^-1(B / (B + 1)).
    x = [2.0**k for k in range(12)]  # distinct subset sums: a tie needs the sample's own multiset
    total = sum(x)
    recorder = Recorder(lambda sums: -((sums[:, 0] - total) ** 2))
    got = bootstrap_statistic(np.array(x)[:, None], recorder, n_resamples=9, seed=0, method="bca")
    replicates = -((recorder.calls[1][:, 0] - total) ** 2)
    assert np.all(replicates < 0.0)
    jackknife = -(np.array(x) ** 2)
    assert (got.low, got.high) == pytest.approx(reference_bca(0.0, replicates, jackknife, 0.95), rel=1e-9)


def test_bca_keeps_the_bias_correction_inside_its_clip_when_every_replicate_is_above_the_estimate() -> None:
    # The mirror image: +(s - S)^2 is least at the sample, so the share below is 0 and z0 = Phi^-1(1 / (B + 1)).
    x = [2.0**k for k in range(12)]
    total = sum(x)
    recorder = Recorder(lambda sums: (sums[:, 0] - total) ** 2)
    got = bootstrap_statistic(np.array(x)[:, None], recorder, n_resamples=9, seed=0, method="bca")
    replicates = (recorder.calls[1][:, 0] - total) ** 2
    assert np.all(replicates > 0.0)
    jackknife = np.array(x) ** 2
    assert (got.low, got.high) == pytest.approx(reference_bca(0.0, replicates, jackknife, 0.95), rel=1e-9)


def test_bca_without_acceleration_when_every_jackknife_value_is_equal() -> None:
    # Items -1, 1, -1, 1 and the statistic -(sum)^2: leaving any item out gives -1, so the acceleration is 0,
    # while the resamples spread over 0, -4 and -16.
    recorder = Recorder(lambda sums: -(sums[:, 0] ** 2))
    got = bootstrap_statistic(
        np.array([[-1.0], [1.0], [-1.0], [1.0]]), recorder, n_resamples=500, seed=2, method="bca", confidence=0.6
    )
    replicates = -(recorder.calls[1][:, 0] ** 2)
    assert set(np.unique(replicates)) == {0.0, -4.0, -16.0}
    expected = reference_bca(0.0, replicates, np.full(4, -1.0), 0.6)
    assert (got.low, got.high) == pytest.approx(expected, abs=1e-12)


def test_bca_with_half_the_replicates_tied_to_the_estimate() -> None:
    # Statistic 1 when the first item is drawn at least once, else 0: the point (1) ties every resample that holds
    # it; ties count half in z0. Jackknife values are 0 (first left out) and 1, so the acceleration is not zero.
    rows = np.eye(4)[:, :1]
    recorder = Recorder(lambda sums: (sums[:, 0] > 0).astype(float))
    got = bootstrap_statistic(rows, recorder, n_resamples=2_000, seed=6, method="bca", confidence=0.5)
    replicates = (recorder.calls[1][:, 0] > 0).astype(float)
    jackknife = np.array([0.0, 1.0, 1.0, 1.0])
    assert (got.low, got.high) == pytest.approx(reference_bca(1.0, replicates, jackknife, 0.5), abs=1e-12)


def test_bca_counts_ties_with_the_estimate_half_below() -> None:
    # The sum flattened to the sample's S within 1 of it: about a fifth of the resamples tie with the estimate,
    # the others spread on both sides, so counting a tie as below, or as more than half, moves z0.
    x = np.random.default_rng(23).exponential(size=20)
    total = float(x.sum())

    def flattened(sums: np.ndarray) -> np.ndarray:
        result: np.ndarray = np.where(np.abs(sums[:, 0] - total) <= 1.0, total, sums[:, 0])
        return result

    recorder = Recorder(flattened)
    got = bootstrap_statistic(x[:, None], recorder, n_resamples=2_000, seed=4, method="bca", confidence=0.8)
    replicates = flattened(recorder.calls[1])
    assert 0.1 < np.mean(replicates == total) < 0.3
    jackknife = flattened((total - x)[:, None])
    expected = reference_bca(total, replicates, jackknife, 0.8)
    assert (got.low, got.high) == pytest.approx(expected, rel=1e-12)


def test_replicates_that_are_undefined_are_left_out_of_the_quantiles() -> None:
    # Weighted mean sum(w x) / sum(w) with one item of weight 1 among three of weight 0: a resample without it is
    # 0 / 0 (NaN). The defined replicates all equal that item's value, 5.
    rows = np.array([[5.0, 1.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    with np.errstate(invalid="ignore"):
        got = bootstrap_statistic(rows, mean_of, n_resamples=500, seed=0)
        bca = bootstrap_statistic(rows, mean_of, n_resamples=500, seed=0, method="bca")
    assert (got.mean, got.low, got.high) == (5.0, 5.0, 5.0)
    assert (bca.low, bca.high) == (5.0, 5.0)


def test_no_defined_replicate_or_an_undefined_estimate_gives_no_bounds() -> None:
    rows = np.array([[1.0, 0.0], [2.0, 0.0]])  # every sum of weights is 0
    with np.errstate(invalid="ignore", divide="ignore"):
        got = bootstrap_statistic(rows, lambda s: np.where(s[:, 1] > 0, s[:, 0], np.nan), n_resamples=50)
    assert math.isnan(got.mean) and math.isnan(got.low) and math.isnan(got.high) and got.n == 2
    with np.errstate(invalid="ignore", divide="ignore"):
        kept = bootstrap_statistic(
            rows, lambda s: np.where(s[:, 1] > 0, s[:, 0], np.nan), n_unscored=4, confidence=0.9, n_resamples=50
        )
    assert (kept.n, kept.n_unscored, kept.confidence) == (2, 4, 0.9)
    # the estimate undefined but some resamples defined: still no interval around an undefined estimate
    marks = np.array([[1.0], [0.0], [0.0]])
    got = bootstrap_statistic(marks, lambda s: np.where(s[:, 0] == 1, np.nan, s[:, 0]), n_resamples=200)
    assert math.isnan(got.mean) and math.isnan(got.low) and math.isnan(got.high)


def test_two_items_are_enough_for_an_interval() -> None:
    # Resampled means of {0, 1}: 0, 1/2, 1 with chances 1/4, 1/2, 1/4; the 2.5% and 97.5% quantiles are 0 and 1.
    got = bootstrap_ci([0.0, 1.0], n_resamples=4_000, seed=1)
    assert (got.mean, got.low, got.high, got.n) == (0.5, 0.0, 1.0, 2)


def test_statistic_argument_checks() -> None:
    rows = item_rows([1.0, 2.0])
    for confidence in (0.0, 1.0):
        with pytest.raises(MetricError, match="confidence must be between 0 and 1"):
            bootstrap_statistic(rows, mean_of, confidence=confidence)
    with pytest.raises(MetricError, match="n_resamples must be at least 1"):
        bootstrap_statistic(rows, mean_of, n_resamples=0)
    with pytest.raises(MetricError, match="unknown bootstrap method 'normal'"):
        bootstrap_statistic(rows, mean_of, method="normal")  # type: ignore[arg-type]
    with pytest.raises(MetricError, match=r"2-d array \(items x statistics\), got shape \(2,\)"):
        bootstrap_statistic([1.0, 2.0], mean_of)
    with pytest.raises(MetricError, match=r"values must be a 1-d array of per-item values, got shape \(1, 2\)"):
        bootstrap_ci([[1.0, 2.0]])
    one = bootstrap_ci([1.0, 3.0], n_resamples=1, seed=0)  # one resample: both bounds are that resample's mean
    assert one.low == one.high and one.low in (1.0, 2.0, 3.0)


def test_no_items_and_one_item_keep_the_counts() -> None:
    empty = bootstrap_statistic(np.empty((0, 2)), mean_of, n_unscored=3, confidence=0.8)
    assert (empty.n, empty.n_unscored, empty.confidence) == (0, 3, 0.8)
    assert math.isnan(empty.mean) and math.isnan(empty.low) and math.isnan(empty.high)
    one = bootstrap_statistic(item_rows([4.0]), mean_of, n_unscored=2, confidence=0.8)
    assert (one.mean, one.n, one.n_unscored, one.confidence) == (4.0, 1, 2, 0.8) and math.isnan(one.high)


def test_values_read_from_text_or_json_are_numbers_and_null_is_unscored() -> None:
    got = bootstrap_ci(["0.25", None, "0.75"], n_resamples=200)
    assert (got.mean, got.n, got.n_unscored) == (0.5, 2, 1)
    rows = bootstrap_statistic([["1", "1"], ["3", "1"]], mean_of, n_resamples=200)
    assert (rows.mean, rows.n) == (2.0, 2)
    np.testing.assert_allclose(holm(["0.01", None, "0.04"]), [0.02, np.nan, 0.04])


def test_bootstrap_ci_defaults_are_the_documented_ones() -> None:
    values = list(np.random.default_rng(21).exponential(size=30))  # resampled means nearly all distinct
    explicit = bootstrap_ci(values, confidence=0.95, n_resamples=10_000, seed=0, method="percentile")
    assert bootstrap_ci(values) == explicit
    recorder = Recorder(mean_of)
    defaulted = bootstrap_statistic(item_rows(values), recorder)
    assert recorder.calls[1].shape == (10_000, 2) and defaulted == explicit


def test_bootstrap_ci_passes_its_settings_to_the_bootstrap() -> None:
    values = [*np.random.default_rng(8).exponential(size=15), math.nan]
    got = bootstrap_ci(values, confidence=0.8, n_resamples=700, seed=4, method="bca")
    recorder = Recorder(mean_of)
    ref = bootstrap_statistic(item_rows(values[:-1]), recorder, confidence=0.8, n_resamples=700, seed=4, method="bca")
    assert recorder.calls[1].shape == (700, 2)
    assert (got.low, got.high, got.confidence, got.n, got.n_unscored) == (ref.low, ref.high, 0.8, 15, 1)
    assert got != bootstrap_ci(values, confidence=0.8, n_resamples=700, seed=4)  # bca is not percentile


# ------------------------------------------------------------------------------------------- paired comparisons


def test_paired_interval_is_the_interval_of_the_differences_with_the_settings_given() -> None:
    rng = np.random.default_rng(10)
    a, b = rng.exponential(size=12), rng.exponential(size=12)
    a[3] = np.nan
    got = paired_bootstrap_ci(a, b, confidence=0.8, n_resamples=600, seed=2, method="bca")
    keep = ~np.isnan(a)
    ref = bootstrap_ci(a[keep] - b[keep], confidence=0.8, n_resamples=600, seed=2, method="bca")
    assert (got.mean, got.low, got.high, got.n, got.n_unscored, got.confidence) == (
        ref.mean,
        ref.low,
        ref.high,
        11,
        1,
        0.8,
    )
    assert paired_bootstrap_ci(a, b) == paired_bootstrap_ci(a, b, n_resamples=10_000, seed=0, confidence=0.95)
    with pytest.raises(MetricError, match="paired arrays must have the same length, got 1 and 2"):
        paired_bootstrap_ci([1.0], [1.0, 2.0])
    with pytest.raises(MetricError, match="a must be a 1-d array"):
        paired_bootstrap_ci([[1.0]], [1.0])
    with pytest.raises(MetricError, match="b must be a 1-d array"):
        paired_bootstrap_ci([1.0], [[1.0]])


def test_randomization_test_is_two_sided_and_needs_one_pair() -> None:
    # Differences (-1, -2, -3): as extreme as (1, 2, 3) the other way, so p = 2/8 too.
    assert paired_randomization_test([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]) == pytest.approx(0.25)
    # One pair: both signs give |mean| = 1, p = 1.
    assert paired_randomization_test([1.0], [0.0]) == 1.0
    with pytest.raises(MetricError, match="same length"):
        paired_randomization_test([1.0], [1.0, 2.0])


def test_monte_carlo_randomization_test_uses_the_resamples_and_seed_given() -> None:
    # 20 pairs (Monte Carlo): p = (hits + 1) / (B + 1) is a multiple of 1/(B + 1).
    rng = np.random.default_rng(13)
    a, b = rng.normal(0.2, 1, size=20), rng.normal(size=20)
    for resamples in (9, 99):
        p = paired_randomization_test(a, b, n_resamples=resamples, seed=1)
        assert p * (resamples + 1) == pytest.approx(round(p * (resamples + 1)))
    ps = {paired_randomization_test(a, b, n_resamples=99, seed=seed) for seed in range(6)}
    assert len(ps) > 1
    assert paired_randomization_test(a, b) == paired_randomization_test(a, b, n_resamples=10_000, seed=0)
    assert paired_randomization_test(a, b, n_resamples=99, seed=3) == paired_randomization_test(
        a, b, n_resamples=99, seed=3
    )


# -------------------------------------------------------------------------------------- multiple comparisons


def test_p_values_at_the_ends_of_the_unit_interval_are_accepted_and_outside_refused() -> None:
    np.testing.assert_allclose(holm([0.0, 1.0]), [0.0, 1.0])
    np.testing.assert_allclose(benjamini_hochberg([0.0, 1.0]), [0.0, 1.0])
    for bad in ([-0.1], [0.5, 1.01]):
        with pytest.raises(MetricError, match=r"p-values must lie in \[0, 1\]"):
            holm(bad)
        with pytest.raises(MetricError, match=r"p-values must lie in \[0, 1\]"):
            benjamini_hochberg(bad)
    with pytest.raises(MetricError, match="pvalues must be a 1-d array"):
        holm([[0.1]])


def test_holm_keeps_ties_in_input_order_and_steps_down() -> None:
    # Sorted 0.01, 0.02, 0.02, 0.04 (m = 4): 0.04, 0.06, 0.04 -> 0.06 (running max), 0.04 -> 0.06.
    np.testing.assert_allclose(holm([0.02, 0.04, 0.01, 0.02]), [0.06, 0.06, 0.04, 0.06])


def test_benjamini_hochberg_by_hand_with_nan_and_a_step_up() -> None:
    # m = 3 scored: sorted 0.01, 0.03, 0.04 -> 3*0.01/1 = 0.03, 3*0.03/2 = 0.045, 3*0.04/3 = 0.04;
    # step-up (min from the right): 0.03, 0.04, 0.04.
    np.testing.assert_allclose(benjamini_hochberg([0.04, np.nan, 0.01, 0.03]), [0.04, np.nan, 0.03, 0.04])
    assert benjamini_hochberg([]).size == 0 and holm([]).size == 0


# ------------------------------------------------------------------------------------------------------ strata


def test_each_stratum_is_bootstrapped_on_its_own_with_the_settings_given() -> None:
    values = [0.1, 0.9, 0.4, 0.3, 0.8, 0.2, 0.6, np.nan]
    strata = [1, 2, 1, 1, 2, 2, 1, 2]
    got = stratified_means(values, strata, confidence=0.8, n_resamples=300, seed=5, method="bca")
    first = bootstrap_ci([0.1, 0.4, 0.3, 0.6], confidence=0.8, n_resamples=300, seed=5, method="bca")
    second = bootstrap_ci([0.9, 0.8, 0.2, np.nan], confidence=0.8, n_resamples=300, seed=5, method="bca")
    assert got == {1: first, 2: second}
    assert second.n_unscored == 1
    many = list(np.random.default_rng(22).exponential(size=40))  # resampled means nearly all distinct
    labels = ["x", "y"] * 20
    assert stratified_means(many, labels) == stratified_means(
        many, labels, confidence=0.95, n_resamples=10_000, seed=0, method="percentile"
    )
    with pytest.raises(MetricError, match=r"values must be a 1-d array of per-item values, got shape \(1, 1\)"):
        stratified_means([[1.0]], ["a"])
    with pytest.raises(MetricError, match="values and strata must have the same length, got 1 and 2"):
        stratified_means([1.0], ["a", "b"])
