"""Randomization tests over a family of systems: hand-worked Tukey HSD cases, scipy, and the critical values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from assay.metrics import MetricError
from assay.metrics.randomization import family_null, paired_effect, sign_flip_interval, sign_flip_null
from assay.metrics.stats import paired_bootstrap_ci
from assay.pipelines.evaluate.statistics.compare import resamples
from assay.pipelines.evaluate.statistics.stats import StatSettings

ALL_PAIRS = [(0, 1), (0, 2), (1, 2)]


def test_tukey_hsd_exact_hand_case() -> None:
    # Two queries, three systems, scores (0, 0, 1) on both: means (0, 0, 1). Permuting each row, the largest gap
    # between means is 1 when both 1s land in the same system (probability 3 / 9 = 1/3), else 0.5.
    null = family_null([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]], ALL_PAIRS)
    assert null.exact and null.size == 36
    assert null.p_value(1.0) == pytest.approx(1 / 3)  # systems 0 and 2, and 1 and 2
    assert null.p_value(0.0) == 1.0  # systems 0 and 1
    assert sorted(set(np.round(null.values, 12))) == [0.5, 1.0]


def test_tukey_hsd_monte_carlo_hand_case() -> None:
    # Seven queries scored (0, 0, 1): the gap 1 is reached only when all seven 1s land in one system,
    # probability 3 / 3^7 = 1/729. 6^7 rearrangements are too many to enumerate, so this is Monte Carlo.
    null = family_null([[0.0, 0.0, 1.0]] * 7, ALL_PAIRS, n_resamples=200_000, seed=1)
    assert not null.exact and null.size == 200_000
    p = null.p_value(1.0)
    assert p == pytest.approx(1 / 729, abs=4 * null.mc_error(1 / 729) + 1 / 200_001)


def test_baseline_family_takes_the_maximum_over_its_pairs_only() -> None:
    # Against system 0 only the pair (1, 2) does not count: the null is the largest gap to system 0, checked
    # against a plain enumeration of the 36 rearrangements.
    scores = np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    null = family_null(scores, [(0, 1), (0, 2)])
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    want = []
    for p in perms:
        for q in perms:
            means = (scores[0, list(p)] + scores[1, list(q)]) / 2
            want.append(max(abs(means[1] - means[0]), abs(means[2] - means[0])))
    np.testing.assert_allclose(null.values, sorted(want, reverse=True))


def test_two_systems_is_the_sign_flip_test() -> None:
    rng = np.random.default_rng(3)
    scores = rng.random((10, 2))
    pair = family_null(scores, [(0, 1)])
    flip = sign_flip_null(scores[:, 1] - scores[:, 0])
    assert pair.exact and flip.exact
    np.testing.assert_allclose(pair.values, flip.values, atol=1e-12)


def test_sign_flip_monte_carlo_within_its_error_of_scipy() -> None:
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=60), rng.normal(0.25, 1.0, size=60)
    null = sign_flip_null(b - a, n_resamples=40_000, seed=2)
    ref = scipy.stats.permutation_test(
        (b, a), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=40_000, random_state=0
    )
    p = null.p_value(abs(float(np.mean(b - a))))
    assert abs(p - ref.pvalue) <= 4 * math.sqrt(2) * null.mc_error(ref.pvalue)


@pytest.mark.parametrize("n", [8, 40])
def test_critical_value_inverts_the_test(n: int) -> None:
    rng = np.random.default_rng(n)
    null = sign_flip_null(rng.normal(size=n), n_resamples=3000, seed=0)
    for level in (0.05, 0.025, 0.05 / 6, 0.01):
        c = null.critical(level)
        for t in np.concatenate([null.values, null.values + 1e-9, null.values - 1e-9, [c, c + 1e-12]]):
            assert (null.p_value(float(t)) <= level) == (t > c)


def test_resamples_put_the_smallest_p_far_below_the_family_threshold() -> None:
    settings = StatSettings()
    for m in (1, 3, 6, 21, 45):
        b = resamples(m, settings)
        assert b >= settings.n_perm and 1 / (b + 1) <= settings.alpha / m / 100


def test_paired_effect_hand_case() -> None:
    # d = (1, 0, -1, 1): mean 0.25, sd (n - 1) = sqrt(2.75 / 3), one tie, two wins, one loss.
    effect = paired_effect([0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0])
    assert effect.delta == 0.25
    assert effect.d_z == pytest.approx(0.25 / math.sqrt(2.75 / 3))
    assert (effect.wins, effect.ties, effect.losses) == (2, 1, 1)
    assert paired_effect([0.1, 0.2], [0.3, 0.4]).d_z is None  # constant differences: no spread to scale by


def test_bad_inputs_raise() -> None:
    with pytest.raises(MetricError, match="2\\+ systems"):
        family_null([[1.0], [2.0]], [(0, 1)])
    with pytest.raises(MetricError, match="NaN"):
        family_null([[1.0, math.nan]], [(0, 1)])
    with pytest.raises(MetricError, match="pairs must name"):
        family_null([[1.0, 2.0]], [(0, 0)])
    with pytest.raises(MetricError, match="without NaN"):
        sign_flip_null([])


def test_inverted_interval_agrees_with_the_test_and_with_the_t_interval() -> None:
    rng = np.random.default_rng(21)
    for n, shift in ((12, 0.0), (12, 0.9), (40, 0.1), (40, 0.5), (40, 2.0)):
        d = rng.normal(shift, 1.0, size=n)
        null = sign_flip_null(d, n_resamples=4000, seed=5)
        significant = null.p_value(abs(float(d.mean()))) <= 0.05
        low, high = sign_flip_interval(d, 0.05, significant=significant, n_resamples=4000, seed=5)
        assert low <= d.mean() <= high and significant == (low > 0 or high < 0)
        # the t interval (scipy) is the textbook reference for a mean; the randomization one is close to it
        ref = scipy.stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
        assert low == pytest.approx(ref.low, abs=0.15 * d.std()) and high == pytest.approx(ref.high, abs=0.15 * d.std())


def test_inverted_interval_takes_the_decision_at_zero_as_given() -> None:
    d = np.array([0.2, 0.1, 0.3, -0.05, 0.25, 0.15])  # 6 queries: exact, 64 sign vectors
    assert sign_flip_interval(d, 0.05, significant=True)[0] > 0
    low, high = sign_flip_interval(d, 0.05, significant=False)
    assert low <= 0 <= high


def test_paired_bootstrap_within_monte_carlo_error_of_scipy() -> None:
    rng = np.random.default_rng(23)
    a = rng.beta(2, 3, size=60)
    b = np.clip(a + rng.normal(0.05, 0.1, size=60), 0, 1)
    got = paired_bootstrap_ci(b, a, n_resamples=20_000, seed=4)
    ref = scipy.stats.bootstrap(
        (b, a), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True, n_resamples=20_000,
        method="percentile", random_state=0,
    ).confidence_interval  # fmt: skip
    # Monte Carlo se of a 2.5% quantile of B resampled means: sqrt(q (1 - q) / B) / density there (normal approx.)
    sd = (ref.high - ref.low) / (2 * 1.959964)
    se = math.sqrt(0.025 * 0.975 / 20_000) / (math.exp(-(1.959964**2) / 2) / math.sqrt(2 * math.pi) / sd)
    assert got.low == pytest.approx(ref.low, abs=4 * math.sqrt(2) * se)
    assert got.high == pytest.approx(ref.high, abs=4 * math.sqrt(2) * se)
