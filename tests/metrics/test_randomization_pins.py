"""Pins of the randomization module found by the mutation habit: input checks, exact/Monte Carlo switches, cluster
weights, the far ends of the inverted interval and the paired effect's edge cases, each on hand-computed cases."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

from assay.metrics import MetricError
from assay.metrics.randomization import (
    EXACT_MAX,
    NullDistribution,
    family_null,
    paired_effect,
    sign_flip_interval,
    sign_flip_null,
)


def test_pairs_must_name_systems_inside_the_matrix() -> None:
    scores = [[0.0, 1.0, 2.0]]
    for pairs in ([(3, 0)], [(0, 3)], [(1, 1)], []):
        with pytest.raises(MetricError, match="pairs must name two different systems"):
            family_null(scores, pairs)


def test_a_pair_may_name_system_zero_second() -> None:
    # (1, 0) is the same absolute gap as (0, 1): one query, both orders of (0, 1) give |1 - 0| = 1
    null = family_null([[0.0, 1.0]], [(1, 0)])
    assert null.exact and null.size == 2
    assert list(null.values) == [1.0, 1.0]
    assert null.p_value(1.0) == 1.0


def test_nan_and_empty_scores_are_named() -> None:
    nan_message = r"^scores must be scored on every query by every system \(drop the NaN rows first\)$"
    with pytest.raises(MetricError, match=nan_message):
        family_null([[0.0, math.nan]], [(0, 1)])
    with pytest.raises(MetricError, match=r"^a randomization test needs at least one query scored by every system$"):
        family_null(np.zeros((0, 2)), [(0, 1)])


def test_exact_fractions_are_read_as_numbers() -> None:
    # scores and pairs of exact fractions (hand values) behave as the same floats
    frac = family_null([[Fraction(1, 2), Fraction(0)], [Fraction(0), Fraction(1, 4)]], [(0, 1)])
    flt = family_null([[0.5, 0.0], [0.0, 0.25]], [(0, 1)])
    assert list(frac.values) == list(flt.values)
    effect = paired_effect([Fraction(0), Fraction(0)], [Fraction(1), Fraction(3)])
    assert effect.delta == 2.0


def test_cluster_rows_are_divided_by_the_number_of_queries() -> None:
    # one cluster of 4 queries whose sums are 3 and 1: the gap of the means is |3 - 1| / 4 = 0.5 either way round
    null = family_null([[3.0, 1.0]], [(0, 1)], n_items=4)
    assert list(null.values) == [0.5, 0.5]


def test_exact_up_to_exact_max_rearrangements() -> None:
    # two systems, 16 queries: 2^16 = EXACT_MAX rearrangements, still enumerated; 17 queries are Monte Carlo
    rows = [[0.0, 1.0]] * 16
    null = family_null(rows, [(0, 1)])
    assert null.exact and null.size == EXACT_MAX
    assert null.p_value(1.0) == pytest.approx(2 / 2**16)  # all sixteen 1s in one system
    assert not family_null([*rows, [0.0, 1.0]], [(0, 1)], n_resamples=500).exact


def test_monte_carlo_defaults_and_seed() -> None:
    rows = np.tile([[0.0, 0.3, 1.0]], (8, 1))
    default = family_null(rows, [(0, 1), (0, 2), (1, 2)])
    assert not default.exact and default.size == 10_000
    again = family_null(rows, [(0, 1), (0, 2), (1, 2)], n_resamples=10_000, seed=0)
    assert np.array_equal(default.values, again.values)  # the default seed is 0, and a seed gives the same draws
    other = family_null(rows, [(0, 1), (0, 2), (1, 2)], seed=1)
    assert not np.array_equal(default.values, other.values)


def test_weighted_interval_ends_just_beyond_the_cluster_means() -> None:
    # Cluster sums (3, 2) of (3, 1) queries: cluster means 1 and 2, delta = 5/4. With two clusters every p-value is
    # at least 2/4 (a sign vector and its opposite tie), so nothing is rejected at 0.05 and each side ends at its far
    # point: the means' range widened by 1e-6 (1 + ptp) = 2e-6; the low side, towards zero and not significant, is
    # taken past zero to -|far| - 1e-6.
    low, high = sign_flip_interval([3.0, 2.0], 0.05, significant=False, weights=[3.0, 1.0])
    assert low == pytest.approx(-(1.0 - 2e-6) - 1e-6, abs=1e-12)
    assert high == pytest.approx(2.0 + 2e-6, abs=1e-12)
    # the mirror image: a negative delta, so the high side is the one towards zero
    low, high = sign_flip_interval([-3.0, -2.0], 0.05, significant=False, weights=[3.0, 1.0])
    assert low == pytest.approx(-2.0 - 2e-6, abs=1e-12)
    assert high == pytest.approx((1.0 - 2e-6) + 1e-6, abs=1e-12)


def test_interval_at_zero_delta_ends_at_the_far_points() -> None:
    # d = (1, -1): delta = 0, no side lies towards zero; the far points are -1 - 3e-6 and 1 + 3e-6 (ptp 2)
    low, high = sign_flip_interval([1.0, -1.0], 0.05, significant=False)
    assert low == pytest.approx(-1.0 - 3e-6, abs=1e-12)
    assert high == pytest.approx(1.0 + 3e-6, abs=1e-12)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_equal_differences_collapse_the_interval_onto_them(sign: float) -> None:
    # Ten equal differences: at any x but the common value every sign vector but the two constant ones has a smaller
    # |sum|, p = 2/1024 < 0.05, so every other x is rejected and the interval is the point itself.
    low, high = sign_flip_interval([sign] * 10, 0.05, significant=True)
    assert low == pytest.approx(sign, abs=1e-9)
    assert high == pytest.approx(sign, abs=1e-9)


def _p(diffs: np.ndarray, x: float, n_resamples: int, seed: int) -> float:
    shifted = diffs - x
    return sign_flip_null(shifted, n_resamples=n_resamples, seed=seed).p_value(abs(float(shifted.mean())))


# levels: 2/32 and 200/4001.5 sit exactly on / between the p-values a 5-difference exact test and a 4000-draw Monte
# Carlo test can take ((hits + 1) / 4001), so a bound computed with < for <=, or / 4002, lands elsewhere
@pytest.mark.parametrize(("n", "level"), [(6, 0.1), (20, 0.05), (5, 2 / 32), (20, 200 / 4001.5)])
def test_interval_bounds_are_where_the_test_turns(n: int, level: float) -> None:
    # Definition: x is inside exactly when the test of mean(d - x) = 0 does not reject. Just inside each bound the
    # p-value exceeds the level, just outside it does not: exact (6 differences) and Monte Carlo (20, same draws).
    diffs = np.random.default_rng(7).normal(0.4, 1.0, n)
    b, seed = 4_000, 3
    significant = _p(diffs, 0.0, b, seed) <= level
    low, high = sign_flip_interval(diffs, level, significant=significant, n_resamples=b, seed=seed)
    assert low < float(diffs.mean()) < high
    eps = 1e-7
    assert _p(diffs, low + eps, b, seed) > level and _p(diffs, low - eps, b, seed) <= level
    assert _p(diffs, high - eps, b, seed) > level and _p(diffs, high + eps, b, seed) <= level
    again = sign_flip_interval(diffs, level, significant=significant, n_resamples=b, seed=seed)
    assert again == (low, high)


def test_interval_defaults_are_ten_thousand_draws_seed_zero() -> None:
    diffs = np.random.default_rng(11).normal(0.3, 1.0, 20)
    given = sign_flip_interval(diffs, 0.05, significant=True, n_resamples=10_000, seed=0)
    assert sign_flip_interval(diffs, 0.05, significant=True) == given


def test_paired_effect_of_one_query() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no degrees-of-freedom warning: one difference has no spread to measure
        effect = paired_effect([0.2], [0.5])
    assert effect.delta == pytest.approx(0.3)
    assert effect.d_z is None
    assert (effect.wins, effect.ties, effect.losses) == (1, 0, 0)


def test_paired_effect_of_two_queries() -> None:
    # d = (1, 3): mean 2, sd (n - 1) = sqrt(2), d_z = sqrt(2)
    effect = paired_effect([0.0, 0.0], [1.0, 3.0])
    assert effect.d_z == pytest.approx(math.sqrt(2))


def test_paired_effect_noise_thresholds() -> None:
    # a difference of exactly 1e-12 is a tie
    assert paired_effect([0.0], [1e-12]).ties == 1
    # spread at float-noise scale of a large mean gives no d_z (sd ~ 7e-8 <= 1e-12 * 1e6)
    assert paired_effect([0.0, 0.0], [1e6, 1e6 + 1e-7]).d_z is None
    # a small mean: the floor is 1e-12; sd = sqrt(2) 1e-12 is above it, d_z = 1e-12 / (sqrt(2) 1e-12)
    assert paired_effect([0.0, 0.0], [0.0, 2e-12]).d_z == pytest.approx(1 / math.sqrt(2))


def test_paired_effect_bad_inputs_are_named() -> None:
    for a, b in (([1.0, math.nan], [1.0, 2.0]), ([[1.0, 2.0]], [[1.0, 3.0]]), ([], [])):
        with pytest.raises(MetricError, match="paired effect needs"):
            paired_effect(a, b)


def test_seven_systems_draw_by_sorting_uniform_keys() -> None:
    # Seven systems (beyond the table of permutations), two queries each scoring 1 in one system only: the largest
    # gap between means is 1 when both 1s land in the same system (probability 1/7), else 1/2.
    rows = [[0.0] * 6 + [1.0], [1.0] + [0.0] * 6]
    pairs = [(i, j) for i in range(7) for j in range(i + 1, 7)]
    null = family_null(rows, pairs, n_resamples=20_000, seed=5)
    assert null.exact is False and null.size == 20_000
    assert set(np.round(null.values, 12).tolist()) == {0.5, 1.0}
    assert null.values[0] == 1.0 and null.values[-1] == 0.5  # sorted in decreasing order
    p = null.p_value(1.0)
    assert p == pytest.approx(1 / 7, abs=4 * null.mc_error(1 / 7))


def _null(values: list[float], exact: bool) -> NullDistribution:
    return NullDistribution(np.asarray(values, dtype=np.float64), exact, 0.0)


def test_critical_values_by_hand() -> None:
    exact = _null([3.0, 2.0, 1.0, 0.0], True)  # p = hits / 4
    assert exact.max_hits(0.5) == 2 and exact.critical(0.5) == 1.0  # p(1) = 3/4, p(1.5) = 2/4
    assert exact.max_hits(0.0) == 0 and exact.critical(0.0) == 3.0  # only beyond every draw is p = 0
    assert exact.max_hits(1.0) == 4 and exact.critical(1.0) == -math.inf  # everything is significant at level 1
    monte_carlo = _null([3.0, 2.0, 1.0, 0.0], False)  # p = (hits + 1) / 5, never below 1/5
    assert monte_carlo.max_hits(0.1) == -1 and monte_carlo.critical(0.1) == math.inf
    assert monte_carlo.max_hits(0.4) == 1 and monte_carlo.critical(0.4) == 2.0
    assert monte_carlo.max_hits(1.0) == 4 and monte_carlo.critical(1.0) == -math.inf
    assert exact.mc_error(0.2) == 0.0
    assert monte_carlo.mc_error(0.2) == pytest.approx(math.sqrt(0.2 * 0.8 / 4))


@pytest.mark.parametrize("exact", [True, False])
def test_max_hits_is_the_largest_count_within_the_level(exact: bool) -> None:
    # the definition checked by trying every count, for every size up to 7 and levels 0, 0.01, ..., 1
    for size in range(1, 8):
        null = _null([float(size - i) for i in range(size)], exact)
        for level in np.linspace(0.0, 1.0, 101):
            within = [h for h in range(-1, size + 1) if h < 0 or null.p_of_hits(h) <= level]
            assert null.max_hits(float(level)) == max(within), (size, level)
            c = null.critical(float(level))
            for t in [*null.values.tolist(), *(null.values + 0.5).tolist(), -0.5]:
                assert (null.p_value(t) <= level) == (t > c), (size, level, t)


def test_sign_flip_defaults_are_ten_thousand_draws_seed_zero() -> None:
    diffs = np.random.default_rng(13).normal(0.2, 1.0, 20)  # 2^20 sign vectors: Monte Carlo
    default = sign_flip_null(diffs)
    assert not default.exact and default.size == 10_000
    assert np.array_equal(default.values, sign_flip_null(diffs, n_resamples=10_000, seed=0).values)


@pytest.mark.parametrize("exact", [True, False])
def test_max_hits_at_levels_on_the_p_value_grid(exact: bool) -> None:
    # Levels equal to a p-value h / N (or (h + 1) / (B + 1)) and one float step either side, where level * N rounds
    # to the wrong side of a whole number: the count must still be the largest one whose p-value is within the level.
    for size in range(1, 151):
        null = _null([float(size - i) for i in range(size)], exact)
        counts = np.arange(-1, size + 1)
        p = counts / size if exact else (counts + 1) / (size + 1)
        for grid in p[1:]:
            for level in (np.nextafter(grid, 0.0), grid, np.nextafter(grid, 1.0)):
                want = int(counts[(counts < 0) | (p <= level)].max())
                assert null.max_hits(float(level)) == want, (size, level)


def test_sign_flip_null_divides_by_the_number_of_queries() -> None:
    # one cluster of 3 queries whose differences sum to 3: the mean difference is 1 under either sign
    assert sign_flip_null([3.0], weights=[3.0]).values.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("value", [1e12, -1e12, 1e15, -1e15])
def test_huge_equal_differences_keep_zero_inside_when_the_test_does_not_reject(value: float) -> None:
    # Four equal differences: the sign-flip p-value of their mean is 2/16 = 0.125 (only the two constant sign vectors
    # reach |sum| = 4 |value|), not significant at 0.05, so the interval must hold 0. At these sizes the far points'
    # margin 1e-6 is below half a float step and vanished: the side towards zero then ended on delta itself, and the
    # interval [delta, delta] excluded 0 beside a verdict of "not significant".
    diffs = [value] * 4
    assert sign_flip_null(diffs).p_value(abs(value)) == pytest.approx(0.125)
    low, high = sign_flip_interval(diffs, 0.05, significant=False)
    assert low < 0.0 < high
    assert low < value < high


def test_the_interval_default_draw_count_is_ten_thousand_where_one_more_draw_moves_a_bound() -> None:
    # data on which 10,001 draws move the upper bound: the default must be the 10,000 of the docstring
    diffs = np.random.default_rng(0).normal(0.3, 1.0, 20)
    ten_thousand = sign_flip_interval(diffs, 0.05, significant=True, n_resamples=10_000)
    assert sign_flip_interval(diffs, 0.05, significant=True, n_resamples=10_001) != ten_thousand
    assert sign_flip_interval(diffs, 0.05, significant=True) == ten_thousand


def test_not_significant_keeps_zero_inside_even_where_the_test_would_reject_it() -> None:
    # Ten differences of 1: the test at 0 rejects (p = 2/1024), but the caller said "not significant" (its own test,
    # e.g. on other draws): the caller's decision wins, so the side towards zero is searched from 0, not from delta.
    low, high = sign_flip_interval([1.0] * 10, 0.05, significant=False)
    assert low <= 0.0 < 1.0 <= high


@pytest.mark.parametrize("weights", [[1.0, 0.0], [1.0, -2.0], [1.0, math.nan], [1.0]])
def test_weights_must_be_positive_sizes_one_per_difference(weights: list[float]) -> None:
    with pytest.raises(MetricError, match="weights must be positive cluster sizes, one per difference"):
        sign_flip_null([1.0, 2.0], weights=weights)
    with pytest.raises(MetricError, match="weights must be positive cluster sizes, one per difference"):
        sign_flip_interval([1.0, 2.0], 0.05, significant=False, weights=weights)


def test_fractions_are_read_as_numbers_by_the_sign_flip_test() -> None:
    # d = (1/2, 1/4) in clusters of sizes 1 and 1: |±1/2 ± 1/4| / 2 = 3/8 twice and 1/8 twice
    null = sign_flip_null([Fraction(1, 2), Fraction(1, 4)], weights=[Fraction(1), Fraction(1)])
    assert null.values.tolist() == [0.375, 0.375, 0.125, 0.125]


def test_sign_flips_are_exact_up_to_sixteen_differences() -> None:
    assert EXACT_MAX == 2**16
    for n in (12, 16):
        null = sign_flip_null([1.0] * n, n_resamples=100)
        assert null.exact is True and null.size == 2**n
    null = sign_flip_null([1.0] * 17, n_resamples=100)
    assert null.exact is False and null.size == 100


def test_tolerance_is_a_million_millionth_of_the_largest_difference_and_at_least_that() -> None:
    # d = (1, 1/2): draws |1 ± 1/2| / 2 = 0.75, 0.75, 0.25, 0.25; tolerance 1e-12 (the largest |d| is 1)
    small = sign_flip_null([1.0, 0.5])
    assert small.p_value(0.75 + 0.5e-12) == 0.5  # within the tolerance of the two 0.75s
    assert small.p_value(0.75 + 1.5e-12) == 0.0  # beyond it
    # d = (4, 2): draws 3, 3, 1, 1; tolerance 4e-12
    large = sign_flip_null([4.0, 2.0])
    assert large.p_value(3.0 + 3e-12) == 0.5
    assert large.p_value(3.0 + 5e-12) == 0.0


def test_a_level_above_one_counts_no_more_hits_than_draws() -> None:
    for exact in (True, False):
        assert _null([3.0, 2.0, 1.0, 0.0], exact).max_hits(2.0) == 4


def test_a_spread_exactly_at_the_noise_floor_gives_no_d_z() -> None:
    # d = (0, x) with x the float whose sd over n - 1, |x| / sqrt(2), is exactly 1e-12: not above the floor
    x = 1.414213562373095e-12
    assert float(np.std([0.0, x], ddof=1)) == 1e-12
    assert paired_effect([0.0, 0.0], [0.0, x]).d_z is None


def _permuted_means(rows: list[list[float]], orders: list[list[tuple[int, ...]]]) -> list[float]:
    """max |mean_j - mean_i| over all pairs, for each draw's one permutation per row (an independent loop)."""
    out = []
    for draw in orders:
        k = len(rows[0])
        means = [sum(row[perm[j]] for row, perm in zip(rows, draw, strict=True)) / len(rows) for j in range(k)]
        out.append(max(abs(means[j] - means[i]) for i in range(k) for j in range(k)))
    return sorted(out, reverse=True)


@pytest.mark.parametrize("k", [3, 6])
def test_up_to_six_systems_draw_an_index_into_the_table_of_permutations(k: int) -> None:
    # The documented draw, so a seed names the same test in every release: per query, an index drawn uniformly from
    # the k! permutations in itertools order (k <= 6). Seven queries of k systems scoring 0, 1, ..., k - 1 (shifted).
    from itertools import permutations

    rows = [[float((j + q) % k) for j in range(k)] for q in range(7)]  # (k!)^7 rearrangements: Monte Carlo
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    null = family_null(rows, pairs, n_resamples=50, seed=9)
    table = list(permutations(range(k)))
    picks = np.random.default_rng(9).integers(0, len(table), size=(50, 7))
    want = _permuted_means(rows, [[table[int(c)] for c in draw] for draw in picks])
    assert null.exact is False
    assert null.values.tolist() == pytest.approx(want, abs=1e-12)


def test_seven_systems_draw_the_argsort_of_uniform_keys() -> None:
    # beyond six systems, each query's permutation is the order of k uniform keys (the table of 5040 is not built);
    # three queries: 5040^3 rearrangements, Monte Carlo
    rows = [[float((j * (q + 1)) % 7) for j in range(7)] for q in range(3)]
    pairs = [(i, j) for i in range(7) for j in range(i + 1, 7)]
    null = family_null(rows, pairs, n_resamples=50, seed=4)
    keys = np.random.default_rng(4).random((50, 3, 7))
    orders = [[tuple(sorted(range(7), key=lambda j, key=key: float(key[j]))) for key in draw] for draw in keys]
    assert null.values.tolist() == pytest.approx(_permuted_means(rows, orders), abs=1e-12)


def test_monte_carlo_sign_vectors_are_the_seeded_bits_of_int8_draws() -> None:
    # The documented draw, so a seed names the same test in every release: 17 differences (2^17 vectors: Monte Carlo),
    # each draw's flips the 0/1 int8 integers of default_rng(seed), one row of 17 per draw.
    diffs = [float(2**i) for i in range(17)]  # every sign vector gives a different |sum|
    null = sign_flip_null(diffs, n_resamples=40, seed=6)
    flips = np.random.default_rng(6).integers(0, 2, size=(40, 17), dtype=np.int8)
    sums = [abs(sum(-d if f else d for d, f in zip(diffs, row, strict=True))) for row in flips]
    want = sorted((s / 17 for s in sums), reverse=True)
    assert null.values.tolist() == pytest.approx(want, rel=1e-15)
