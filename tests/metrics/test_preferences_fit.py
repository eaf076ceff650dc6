"""The Bradley-Terry fit with ties and its cluster-bootstrap intervals, pinned on cases worked by hand."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

from assay.metrics._errors import MetricError
from assay.metrics.preferences import PRIOR, bradley_terry, preference_intervals, win_matrix


def test_win_matrix_counts_a_tie_half_each_way_and_weights_each_comparison() -> None:
    wins = win_matrix([0, 0, 2], [1, 2, 1], [1.0, 0.5, 0.0], 3, weights=[2.0, 1.0, 3.0])
    expected = np.array([[0.0, 2.0, 0.5], [0.0, 0.0, 3.0], [0.5, 0.0, 0.0]])
    assert np.array_equal(wins, expected)


def test_win_matrix_without_weights_counts_each_comparison_once() -> None:
    assert np.array_equal(win_matrix([1], [0], [0.25], 2), np.array([[0.0, 0.75], [0.25, 0.0]]))


@pytest.mark.parametrize(
    ("first", "second", "score", "m"),
    [
        ([0], [1], [1.5], 2),  # score above 1
        ([0], [1], [-0.1], 2),  # score below 0
        ([1], [1], [1.0], 2),  # a system against itself
        ([-1], [1], [1.0], 2),  # negative first
        ([0], [-1], [1.0], 2),  # negative second
        ([2], [0], [1.0], 2),  # first out of range
        ([0], [2], [1.0], 2),  # second out of range
        ([0, 1], [1], [1.0], 2),  # lengths differ
        ([0], [1, 0], [1.0], 2),
        ([0], [1], [1.0, 0.0], 2),
    ],
)
def test_win_matrix_refuses_a_malformed_comparison(
    first: list[int], second: list[int], score: list[float], m: int
) -> None:
    with pytest.raises(MetricError):
        win_matrix(first, second, score, m)


def test_win_matrix_accepts_the_edges_of_the_ranges() -> None:
    wins = win_matrix([0, 1], [1, 0], [0.0, 1.0], 2)
    assert np.array_equal(wins, np.array([[0.0, 0.0], [2.0, 0.0]]))


def test_two_systems_strengths_are_half_the_log_odds_of_their_wins_with_the_prior() -> None:
    # 0 beats 1 three times: with the prior's tie, 3.5 wins against 0.5, so pi0 / pi1 = 7, centred to +-ln(7)/2.
    strength = bradley_terry([0, 0, 1], [1, 1, 0], [1.0, 1.0, 0.0], 2)
    assert PRIOR == 0.5
    assert strength == pytest.approx([math.log(7) / 2, -math.log(7) / 2], abs=1e-9)


def test_all_ties_give_equal_strengths() -> None:
    assert bradley_terry([0, 1, 2], [1, 2, 0], [0.5, 0.5, 0.5], 3) == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)


def test_three_systems_fit_satisfies_the_likelihood_equations() -> None:
    # At the maximum each system's wins (prior included) equal its expected wins under the model.
    first, second, score = [0, 0, 1, 0, 2], [1, 2, 2, 1, 1], [1.0, 1.0, 1.0, 0.5, 0.0]
    strength = bradley_terry(first, second, score, 3)
    wins = win_matrix(first, second, score, 3) + PRIOR * (1 - np.eye(3))
    n = wins + wins.T
    p = 1 / (1 + np.exp(-(strength[:, None] - strength[None, :])))
    np.fill_diagonal(p, 0.0)
    assert wins.sum(axis=1) == pytest.approx((n * p).sum(axis=1), abs=1e-8)
    assert strength.sum() == pytest.approx(0.0, abs=1e-12)
    assert strength[0] > strength[1] > strength[2]


def test_bradley_terry_needs_two_systems() -> None:
    with pytest.raises(MetricError):
        bradley_terry([], [], [], 1)


def test_one_cluster_gives_intervals_that_collapse_on_the_fit() -> None:
    fitted = preference_intervals([0, 0, 1], [1, 1, 0], [1.0, 1.0, 0.0], ["d", "d", "d"], 2, n_resamples=5)
    half = math.log(7) / 2
    assert fitted.clusters == 1
    assert fitted.strength == pytest.approx([half, -half], abs=1e-9)
    assert fitted.low == pytest.approx([half, -half], abs=1e-9)
    assert fitted.high == pytest.approx([half, -half], abs=1e-9)
    assert fitted.prob == pytest.approx(np.array([[0.5, 7 / 8], [1 / 8, 0.5]]), abs=1e-9)
    assert fitted.prob_low == pytest.approx(fitted.prob, abs=1e-9)
    assert fitted.prob_high == pytest.approx(fitted.prob, abs=1e-9)


def test_interval_quantiles_follow_the_confidence_asked_for() -> None:
    # Two clusters pulling opposite ways: the resamples spread, and a wider confidence gives a wider interval.
    args = ([0, 0, 1, 1], [1, 1, 0, 0], [1.0, 1.0, 1.0, 1.0], ["a", "a", "b", "b"], 2)
    wide = preference_intervals(*args, confidence=0.95, n_resamples=400, seed=3)
    narrow = preference_intervals(*args, confidence=0.2, n_resamples=400, seed=3)
    assert wide.clusters == 2
    assert wide.low[0] < 0 < wide.high[0]
    assert wide.low[0] <= narrow.low[0] <= narrow.high[0] <= wide.high[0]
    pair_narrow = preference_intervals(*args, confidence=0.95, pair_confidence=0.2, n_resamples=400, seed=3)
    assert np.array_equal(pair_narrow.low, wide.low)
    assert np.array_equal(pair_narrow.prob_low, narrow.prob_low)
    assert np.array_equal(pair_narrow.prob_high, narrow.prob_high)
    assert np.array_equal(wide.prob_low.diagonal(), [0.5, 0.5])
    # All four resampled clusters' draws: only "a" twice gives 0 beating 1 (4 wins to 0 with the prior: 4.5 / 0.5).
    assert wide.high[0] == pytest.approx(math.log(9) / 2, abs=1e-9)
    assert wide.low[0] == pytest.approx(-math.log(9) / 2, abs=1e-9)


@pytest.mark.parametrize(("confidence", "n_resamples"), [(0.0, 10), (1.0, 10), (0.9, 0)])
def test_preference_intervals_refuse_a_bad_confidence_or_no_resamples(confidence: float, n_resamples: int) -> None:
    with pytest.raises(MetricError):
        preference_intervals([0], [1], [1.0], ["a"], 2, confidence=confidence, n_resamples=n_resamples)


def test_preference_intervals_need_one_cluster_label_per_comparison() -> None:
    with pytest.raises(MetricError):
        preference_intervals([0, 1], [1, 0], [1.0, 1.0], ["a"], 2)


def test_no_comparisons_give_equal_strengths_and_no_clusters() -> None:
    fitted = preference_intervals([], [], [], [], 2, n_resamples=3)
    assert fitted.clusters == 0
    assert fitted.strength == pytest.approx([0.0, 0.0], abs=1e-12)
    assert fitted.low == pytest.approx([0.0, 0.0], abs=1e-12)


def test_the_middle_quantiles_stay_inside_the_balanced_resamples() -> None:
    # The two opposed clusters again: drawing each once balances the wins (strengths exactly 0, P exactly 1/2) in
    # about half the resamples, each cluster twice in about a quarter each (97, 206 and 97 of these 400). At 40%
    # confidence the interval is the 30%..70% quantiles: inside the balanced draws, so it is [0, 0] (and [1/2, 1/2]).
    args = ([0, 0, 1, 1], [1, 1, 0, 0], [1.0, 1.0, 1.0, 1.0], ["a", "a", "b", "b"], 2)
    fitted = preference_intervals(*args, confidence=0.4, n_resamples=400, seed=3)
    assert np.array_equal(fitted.low, [0.0, 0.0]) and np.array_equal(fitted.high, [0.0, 0.0])
    assert np.array_equal(fitted.prob_low, np.full((2, 2), 0.5))
    assert np.array_equal(fitted.prob_high, np.full((2, 2), 0.5))
    # At 60% the 20%..80% quantiles reach the one-sided draws: 0 wins 4.5 to 0.5 (or loses so), +-ln(9)/2, P 0.9.
    wider = preference_intervals(*args, confidence=0.6, n_resamples=400, seed=3)
    assert wider.low == pytest.approx([-math.log(9) / 2] * 2, abs=1e-9)
    assert wider.prob_high[0, 1] == pytest.approx(0.9, abs=1e-9)


def test_one_resample_is_enough_and_gives_its_own_fit_as_both_ends() -> None:
    fitted = preference_intervals([0, 0, 1], [1, 1, 0], [1.0, 1.0, 0.0], ["d", "d", "d"], 2, n_resamples=1)
    half = math.log(7) / 2
    assert fitted.low == pytest.approx([half, -half], abs=1e-9)
    assert fitted.high == pytest.approx([half, -half], abs=1e-9)


def test_the_defaults_are_95_percent_2000_resamples_and_seed_0_so_a_run_repeats() -> None:
    first, second, score, clusters = [], [], [], []
    outcomes = [1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0]  # varied per question, so the resamples spread
    for q in range(24):
        for k, (a, b) in enumerate(((0, 1), (0, 2), (1, 2))):
            first.append(a)
            second.append(b)
            score.append(outcomes[(q + k) % len(outcomes)])
            clusters.append(f"doc{q % 10}")
    default = preference_intervals(first, second, score, clusters, 3)
    again = preference_intervals(first, second, score, clusters, 3, confidence=0.95, n_resamples=2000, seed=0)
    for name in ("low", "high", "prob_low", "prob_high"):
        assert np.array_equal(getattr(default, name), getattr(again, name)), name
    other = preference_intervals(first, second, score, clusters, 3, seed=1)
    assert not np.array_equal(default.low, other.low)  # the seed matters: the comparison above is not vacuous


def test_the_errors_say_what_is_wrong() -> None:
    cases = [
        (lambda: win_matrix([0, 1], [1], [1.0], 2), "first, second and score must have one entry per comparison"),
        (lambda: win_matrix([0], [0], [1.0], 2),
         "a comparison needs two different systems in 0..m-1 and a score in [0, 1]"),
        (lambda: bradley_terry([], [], [], 1), "Bradley-Terry needs at least two systems"),
        (lambda: preference_intervals([0], [1], [1.0], [], 2), "clusters must give one label per comparison"),
        (lambda: preference_intervals([0], [1], [1.0], ["a"], 2, n_resamples=0),
         "confidence must be in (0, 1) and n_resamples at least 1"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(MetricError) as raised:
            call()
        assert str(raised.value) == message


def test_win_matrix_reads_any_real_numbers_as_floats() -> None:
    # Scores and weights given as Decimal (as a JSON reader with exact decimals gives them) count as their floats.
    # 0 ties 1 with weight 2: one win each way; 1 beats 0 with weight 1/2.
    wins = win_matrix([0, 1], [1, 0], [Decimal("0.5"), Decimal("1")], 2, weights=[Decimal("2"), Decimal("0.5")])
    assert np.array_equal(wins, np.array([[0.0, 1.0], [1.5, 0.0]]))
