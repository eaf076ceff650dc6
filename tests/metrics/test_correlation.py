"""assay.metrics.correlation against scipy.stats and hand-computed cases; its interval by simulation."""

from __future__ import annotations

import math
import warnings
from decimal import Decimal

import numpy as np
import pytest
from scipy import stats

from assay.metrics._errors import MetricError
from assay.metrics.correlation import average_ranks, correlation, pearson, spearman


def test_average_ranks_by_hand() -> None:
    assert average_ranks([10, 20, 20, 30]).tolist() == [1, 2.5, 2.5, 4]
    assert average_ranks([3, 1, 2]).tolist() == [3, 1, 2]
    assert average_ranks([5, 5, 5]).tolist() == [2, 2, 2]
    assert average_ranks([2, 1, 2, 1, 3]).tolist() == [3.5, 1.5, 3.5, 1.5, 5]


def test_pearson_by_hand() -> None:
    # x = 1, 2, 3; y = 1, 3, 2: deviations (-1, 0, 1) and (-1, 1, 0): sum of products 1, sums of squares 2 and 2
    assert pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert pearson([1, 2, 3], [6, 4, 2]) == pytest.approx(-1.0)


def test_spearman_by_hand_with_ties() -> None:
    # ranks of x: 1, 2.5, 2.5, 4; of y: 1, 2, 3, 4. Deviations (-1.5, 0, 0, 1.5) and (-1.5, -0.5, 0.5, 1.5):
    # products 2.25 + 0 + 0 + 2.25 = 4.5; squares 4.5 and 5: rho = 4.5 / sqrt(22.5)
    assert spearman([1, 2, 2, 9], [1, 2, 3, 4]) == pytest.approx(4.5 / math.sqrt(22.5))


@pytest.mark.parametrize("seed", range(5))
def test_against_scipy_on_data_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 5, 60).astype(float)  # ratings 1-4: many ties
    y = x + rng.normal(0, 1.5, 60)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)


def test_a_constant_side_has_no_correlation() -> None:
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1, 2, 3], [4, 4, 4]))
    assert math.isnan(pearson([1], [2]))


def test_bad_input_is_refused() -> None:
    with pytest.raises(MetricError, match="equally long"):
        pearson([1, 2], [1, 2, 3])
    with pytest.raises(MetricError, match="finite"):
        spearman([1, float("nan")], [1, 2])
    with pytest.raises(MetricError, match="one cluster label per item"):
        correlation([1, 2, 3], [1, 2, 3], clusters=["a", "b"])
    with pytest.raises(MetricError, match="unknown correlation"):
        correlation([1, 2, 3], [1, 2, 3], "kendall")  # type: ignore[arg-type]


def test_interval_resamples_whole_clusters() -> None:
    # Two clusters that each hold a perfectly increasing pair of items: any resample of whole clusters is either
    # one cluster twice (r = 1) or both (r = 1): the interval is exactly [1, 1]. Resampling items would mix them.
    x, y = [1, 2, 10, 11], [1, 2, 10, 11]
    got = correlation(x, y, clusters=["q1", "q1", "q2", "q2"], n_resamples=200)
    assert (got.value, got.low, got.high, got.n, got.clusters) == (1.0, 1.0, 1.0, 4, 2)


def test_interval_is_reproducible_and_nan_with_one_cluster() -> None:
    x, y = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
    assert correlation(x, y, seed=3) == correlation(x, y, seed=3)
    one = correlation(x, y, clusters=["q"] * 6)
    assert math.isnan(one.low) and math.isnan(one.high) and one.clusters == 1


def test_interval_covers_the_true_correlation_about_95_percent_of_the_time() -> None:
    # Bivariate normal with rho = 0.5, 80 items: the percentile interval should cover 0.5 in about 95% of 200
    # samples (binomial sd about 1.5 points; the bootstrap percentile interval runs a little narrow at n = 80).
    rng = np.random.default_rng(7)
    rho, covered = 0.5, 0
    for trial in range(200):
        z = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=80)
        got = correlation(z[:, 0], z[:, 1], n_resamples=400, seed=trial)
        covered += got.low <= rho <= got.high
    assert 0.88 <= covered / 200 <= 0.99


def test_two_points_correlate_perfectly_and_columns_read_as_lists() -> None:
    assert pearson([1, 2], [3, 5]) == 1.0 and pearson([1, 2], [5, 3]) == -1.0
    column, flat = [[1.0], [2.0], [4.0]], [1.0, 2.0, 4.0]
    assert pearson(column, [[2.0], [1.0], [5.0]]) == pytest.approx(pearson(flat, [2.0, 1.0, 5.0]))
    assert spearman(column, flat) == 1.0 and average_ranks(column).tolist() == [1.0, 2.0, 3.0]


def test_settings_are_checked_with_their_bounds() -> None:
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(MetricError, match=r"^confidence must be in \(0, 1\), got "):
            correlation([1, 2, 3], [1, 2, 3], confidence=bad)
    with pytest.raises(MetricError, match=r"^n_resamples must be at least 1, got 0$"):
        correlation([1, 2, 3], [1, 2, 3], n_resamples=0)
    assert correlation([1, 2, 3], [1, 3, 2], n_resamples=1).n == 3  # one resample is allowed
    with pytest.raises(MetricError, match=r"^correlation needs finite values: leave unscored items out first$"):
        pearson([1, float("inf")], [1, 2])


def test_defaults_are_1000_resamples_seed_0_and_the_kind_is_kept() -> None:
    x, y = [1, 2, 3, 4, 5, 6, 7], [2, 1, 4, 3, 7, 5, 6]
    assert correlation(x, y) == correlation(x, y, "pearson", n_resamples=1000, seed=0)
    assert correlation(x, y, "spearman").kind == "spearman" and correlation(x, y).kind == "pearson"


def test_every_cluster_can_be_drawn() -> None:
    # cluster a alone correlates -1, cluster b alone +1: resamples of {a, a} give -1, so the interval reaches below 0
    x, y = [1, 2, 10, 11], [2, 1, 10, 11]
    got = correlation(x, y, clusters=["a", "a", "b", "b"], n_resamples=200)
    assert got.low == pytest.approx(-1.0) and got.high == pytest.approx(1.0)


def test_numbers_of_any_type_are_read_as_floats() -> None:
    # Decimal values (as a CSV reader or a database may hand over) and numbers written as text count by their value:
    # "10" ranks above "2", not below it as text would.
    halves = [Decimal("0.5"), Decimal("1.5"), Decimal("1.0")]
    assert pearson(halves, [1, 3, 2]) == pytest.approx(1.0)
    assert pearson([1, 3, 2], halves) == pytest.approx(1.0)
    assert average_ranks(["2", "10", "1"]).tolist() == [2.0, 3.0, 1.0]


def test_a_constant_side_is_nan_without_a_numpy_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
        assert math.isnan(spearman([4, 4], [1, 2]))


def test_the_interval_is_the_middle_share_of_the_resamples() -> None:
    # Clusters a (r = -1 alone) and b (r = +1 alone): a quarter of the resamples are {a, a} (-1), a quarter {b, b}
    # (+1), half hold both, which is the whole data: dx = (-5, -4, 4, 5), dy = (-4, -5, 4, 5), r = 81 / 82.
    # A 40% interval spans the 30th to the 70th percentile of the resamples: both inside the middle half, so it is
    # [81/82, 81/82] (a 60% interval, 20th to 80th, would reach -1 and +1).
    x, y = [1, 2, 10, 11], [2, 1, 10, 11]
    got = correlation(x, y, clusters=["a", "a", "b", "b"], confidence=0.4, n_resamples=2000)
    assert got.value == pytest.approx(81 / 82)
    assert got.low == pytest.approx(81 / 82) and got.high == pytest.approx(81 / 82)
    wider = correlation(x, y, clusters=["a", "a", "b", "b"], confidence=0.6, n_resamples=2000)
    assert wider.low == pytest.approx(-1.0) and wider.high == pytest.approx(1.0)


def test_the_interval_needs_at_least_half_the_resamples_usable() -> None:
    # Three one-item clusters A (1, 1), B (1, 2), C (2, 2): a resample of three has both sides varying only when it
    # holds A and C, with probability 1 - 2 (2/3)^3 + (1/3)^3 = 12/27 = 0.44 < 1/2: no interval from 2000 resamples
    # (the usable share is 0.444 +- 0.011), though a third of them would have been enough for one.
    got = correlation([1, 1, 2], [1, 2, 2], n_resamples=2000)
    assert math.isnan(got.low) and math.isnan(got.high) and got.value == pytest.approx(0.5)
    # Two one-item clusters: each resample is usable (both items drawn) with probability 1/2. With 2 resamples an
    # interval needs 1 usable (exactly half is enough): chance 1 - 1/4 = 3/4, so about 150 of 200 seeds give one
    # (binomial sd 6); were 2 of 2 required, only about 50 would.
    given = sum(not math.isnan(correlation([1, 2], [1, 2], n_resamples=2, seed=s).low) for s in range(200))
    assert 120 <= given <= 180
