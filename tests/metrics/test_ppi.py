"""assay.metrics.ppi pinned by hand-computed cases: the edges of ppi_mean and ppi_sample_size, its errors by name.

(tests/metrics/test_stats.py holds the simulations with known truth; these pin what they leave loose.)
"""

from __future__ import annotations

import math

import pytest

from assay.metrics._errors import MetricError
from assay.metrics.ppi import ppi_mean, ppi_sample_size
from assay.metrics.stats import norm_ppf

Z95 = 1.959963984540054  # Phi^-1(0.975)


def test_bad_shapes_name_the_argument() -> None:
    with pytest.raises(MetricError, match=r"^y must be a 1-d array of per-item values, got shape \(1, 2\)$"):
        ppi_mean([[1.0, 0.0]], [1.0, 0.0], [1.0])
    with pytest.raises(MetricError, match=r"^yhat must be a 1-d array"):
        ppi_mean([1.0, 0.0], [[1.0, 0.0]], [1.0])
    with pytest.raises(MetricError, match=r"^yhat_unlabeled must be a 1-d array"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [[1.0]])
    with pytest.raises(MetricError, match=r"^y and yhat must be paired \(same length\), got 3 and 2$"):
        ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0], [1.0])
    with pytest.raises(MetricError, match=r"^ppi_mean needs judge predictions on unlabeled items for lambda != 0; "):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [], lambda_=0.5)
    with pytest.raises(MetricError, match=r"^ppi_sample_size needs target_half_width > 0, standard deviations >= 0"):
        ppi_sample_size(-0.1, sd_human=0.5, sd_judge=0.5, correlation=0.0, n_unlabeled=None)


def test_too_few_pairs_give_nan_everywhere_but_the_counts() -> None:
    got = ppi_mean([1.0], [1.0], [0.0, 1.0, 1.0])
    values = (got.estimate, got.low, got.high, got.lambda_, got.classical_low, got.classical_high)
    assert all(math.isnan(v) for v in (*values, got.classical_estimate))
    assert (got.n_labeled, got.n_unlabeled) == (1, 3)


def test_without_unlabeled_items_the_interval_is_the_classical_one() -> None:
    # y = 1, 0, 1: mean 2/3, s_yy = 1/3, half-width z sqrt(1/9) = z / 3
    got = ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [])
    assert (got.low, got.high) == pytest.approx((2 / 3 - Z95 / 3, 2 / 3 + Z95 / 3))
    assert (got.classical_low, got.classical_high) == pytest.approx((got.low, got.high))


def test_two_unlabeled_items_have_a_variance() -> None:
    # lambda = 1 (plain PPI): y - yhat = 0, 0, 1 (mean 1/3, variance 1/3); u = 1, 0 (mean 1/2, variance 1/2).
    # estimate 1/2 + 1/3 = 5/6, variance (1/3) / 3 + (1/2) / 2 = 13/36
    got = ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0], lambda_=1.0)
    half = Z95 * math.sqrt(13) / 6
    assert (got.estimate, got.low, got.high) == pytest.approx((5 / 6, 5 / 6 - half, 5 / 6 + half))


def _least_n(target: float, sd: float, rho: float, big_n: int) -> int:
    # Equal standard deviations s: lambda = rho / (1 + n/N) and the variance simplifies (by hand) to
    # V(n) = s^2 / n * (1 - rho^2 / (1 + n/N)); the least n >= 2 with z sqrt(V(n)) <= target.
    n = 2
    while Z95 * math.sqrt(sd**2 / n * (1 - rho**2 / (1 + n / big_n))) > target:
        n += 1
    return n


def test_sample_size_with_finitely_many_unlabeled_items() -> None:
    for big_n in (300, 1_000):
        expected = _least_n(0.05, 0.5, 0.7, big_n)
        assert ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.5, correlation=0.7, n_unlabeled=big_n) == expected


def test_sample_size_clips_lambda_at_one() -> None:
    # sd_h = 1, sd_j = 0.5, rho = 0.9, N unlimited: the unclipped lambda is 1.8; at lambda = 1 the variance is
    # (1 - 2 * 0.9 * 0.5 + 0.25) / n = 0.35 / n, so n = ceil(z^2 * 0.35 / 0.05^2) = ceil(537.8) = 538.
    assert ppi_sample_size(0.05, sd_human=1.0, sd_judge=0.5, correlation=0.9, n_unlabeled=None) == 538


def test_sample_size_edges_of_the_pilot() -> None:
    # People who never disagree (sd 0): the least n, 2. A judge that contradicts people (rho = -1) is not used:
    # the classical 385.
    assert ppi_sample_size(0.05, sd_human=0.0, sd_judge=0.5, correlation=0.7, n_unlabeled=None) == 2
    assert ppi_sample_size(0.05, sd_human=0.5, sd_judge=0.5, correlation=-1.0, n_unlabeled=None) == 385


def test_a_half_width_exactly_at_the_target_reaches_it() -> None:
    # sd 1, no judge: half-width z / sqrt(n), exactly z / 8 at n = 64 (binary-exact), above it at n = 63.
    z = norm_ppf(0.975)
    assert ppi_sample_size(z / 8, sd_human=1.0, sd_judge=0.0, correlation=0.0, n_unlabeled=None) == 64


def test_sample_size_never_answers_above_max_n() -> None:
    # half-width z / sqrt(n) <= z / 1.6 first at n = 3 (sqrt 2 < 1.6 <= sqrt 3)
    target = Z95 / 1.6
    assert ppi_sample_size(target, sd_human=1.0, sd_judge=0.0, correlation=0.0, n_unlabeled=None) == 3
    with pytest.raises(MetricError, match="max_n=2"):
        ppi_sample_size(target, sd_human=1.0, sd_judge=0.0, correlation=0.0, n_unlabeled=None, max_n=2)
