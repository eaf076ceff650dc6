"""The comparisons pinned further (found by the mutation habit): every field of a comparison on a case small enough
to enumerate (the exact sign-flip p against a brute-force count over all sign vectors), Holm's step levels in p order,
the shared questions, the verdict sentence's every branch and label, the bounds kept on the side of the decision, the
Tukey interval's guards, the primary metric and the messages of bad settings."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from assay.errors import ConfigError
from assay.pipelines.evaluate.statistics.compare import (
    _bounds,
    _num,
    _p,
    _shifted,
    compare_runs,
    correction_label,
    family_pairs,
    primary_metric,
    resamples,
    shared_questions,
    verdict,
    with_primary,
)
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.results import QueryResult


def _rows(run: str, scores: list[float | None], metric: str = "ndcg@10") -> dict[str, QueryResult]:
    return {f"q{i}": QueryResult(run=run, query_id=f"q{i}", metrics={metric: s}) for i, s in enumerate(scores)}


def brute_p(d: list[float]) -> float:
    """The exact two-sided sign-flip p: the share of all 2^n sign vectors whose |mean| reaches the observed one."""
    observed = abs(sum(d)) / len(d)
    hits = sum(abs(sum(s * x for s, x in zip(signs, d, strict=True))) / len(d) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=len(d)))  # fmt: skip
    return hits / 2 ** len(d)


# dyadic scores: every mean and difference is exact in binary
A = [0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.5]
B = [0.25, 0.5, 0.5, 0.75, 0.75, 1.0, 0.625]  # b - a > 0 on all seven: p = 2/128


def test_every_field_of_one_exact_comparison() -> None:
    d = [y - x for x, y in zip(A, B, strict=True)]
    (c,) = compare_runs({"a": _rows("a", A), "b": _rows("b", B)}, ["ndcg@10"], StatSettings())
    assert (c.a, c.b, c.metric, c.n, c.n_a, c.n_b) == ("a", "b", "ndcg@10", 7, 7, 7)
    assert c.delta == pytest.approx(sum(d) / 7, abs=1e-6)
    assert (c.mean_a, c.mean_b) == (pytest.approx(sum(A) / 7, abs=1e-6), pytest.approx(sum(B) / 7, abs=1e-6))
    assert c.p_value == pytest.approx(brute_p(d), abs=1e-6) == pytest.approx(2 / 128, abs=1e-6)
    assert c.p_adjusted == c.p_value and c.significant  # one pair: Holm is the test itself
    assert (c.correction, c.family_size, c.primary, c.interval_confidence) == ("holm", 1, True, 0.95)
    assert c.d_z == pytest.approx(float(np.mean(d) / np.std(d, ddof=1)), abs=1e-6)
    assert (c.wins, c.ties, c.losses) == (7, 0, 0)
    assert (c.resamples, c.exact, c.p_mc_error) == (128, True, 0.0)
    assert c.clusters is None and c.design_effect is None  # every question its own cluster
    assert 0 < c.low <= c.delta <= c.high
    assert c.verdict == (
        f"b beats a on ndcg@10 by {c.delta:.3f} [{c.low:.3f}, {c.high:.3f}], p=0.016 adjusted, Holm over 1 pair."
    )


def test_a_question_one_run_did_not_score_is_left_out_of_the_pair_and_said() -> None:
    short = [*B[:6], None]
    (c,) = compare_runs({"a": _rows("a", A), "b": _rows("b", short)}, ["ndcg@10"], StatSettings())
    assert (c.n, c.n_a, c.n_b) == (6, 7, 6)
    assert c.p_value == pytest.approx(brute_p([y - x for x, y in zip(A[:6], B[:6], strict=True)]), abs=1e-6)
    assert " on the 6 questions both scored" in c.verdict


def test_a_pair_with_fewer_than_two_shared_questions_is_left_out_and_two_are_enough() -> None:
    one = {"a": _rows("a", [0.5, None, None]), "b": _rows("b", [0.75, 0.5, None])}
    assert compare_runs(one, ["ndcg@10"], StatSettings()) == []
    two = {"a": _rows("a", [0.5, 0.25]), "b": _rows("b", [0.75, 0.5])}
    (c,) = compare_runs(two, ["ndcg@10"], StatSettings())
    assert c.n == 2 and c.p_value == pytest.approx(brute_p([0.25, 0.25]), abs=1e-6)


def test_holm_tests_the_smallest_p_first_at_alpha_over_m_then_the_next_at_alpha() -> None:
    # b: 7 of 7 better (p = 2/128); c: 6 better and one a little worse (p = 4/128); alpha = 0.05, m = 2
    c_scores = [*B[:6], 0.4375]
    per_run = {"a": _rows("a", A), "c": _rows("c", c_scores), "b": _rows("b", B)}  # c's pair comes first
    ab = [y - x for x, y in zip(A, B, strict=True)]
    ac = [y - x for x, y in zip(A, c_scores, strict=True)]
    assert (brute_p(ab), brute_p(ac)) == (2 / 128, 4 / 128)
    by_pair = {(c.a, c.b): c for c in compare_runs(per_run, ["ndcg@10"], StatSettings(baseline="a"))}
    first, second = by_pair["a", "b"], by_pair["a", "c"]
    assert first.interval_confidence == 0.975 and first.significant  # step 1: 2/128 <= 0.05/2
    assert second.interval_confidence == 0.95 and second.significant  # step 2: 4/128 <= 0.05/1
    assert (first.p_adjusted, second.p_adjusted) == (pytest.approx(4 / 128), pytest.approx(4 / 128))
    assert "Holm over 2 pairs" in first.verdict


def test_no_correction_tests_each_pair_at_alpha_and_says_unadjusted() -> None:
    per_run = {"a": _rows("a", A), "b": _rows("b", B)}
    (c,) = compare_runs(per_run, ["ndcg@10"], StatSettings(correction="none"))
    assert c.interval_confidence == 0.95 and c.p_adjusted == c.p_value and c.verdict.endswith("p=0.016 unadjusted.")


def test_tukey_compares_only_the_questions_every_run_of_the_family_scored() -> None:
    per_run = {"a": _rows("a", A), "b": _rows("b", B), "c": _rows("c", [*A[:6], None])}
    comparisons = compare_runs(per_run, ["ndcg@10"], StatSettings(correction="tukey"))
    assert {c.n for c in comparisons} == {6}  # the seventh question, which c did not score, is left out of all
    ab = next(c for c in comparisons if (c.a, c.b) == ("a", "b"))
    assert (ab.n_a, ab.n_b) == (7, 7) and " on the 6 questions both scored" in ab.verdict
    assert "Tukey HSD over 3 pairs" in ab.verdict


def test_a_comparison_is_the_same_whatever_the_seed_when_exact_and_repeatable_when_not() -> None:
    n = 40  # more than 16 questions: random sign vectors
    rng = np.random.default_rng(3)
    xs = list(rng.uniform(0, 1, n))
    ys = [x + d for x, d in zip(xs, rng.normal(0.05, 0.2, n), strict=True)]
    per_run = {"a": _rows("a", xs), "b": _rows("b", ys)}
    first = compare_runs(per_run, ["ndcg@10"], StatSettings(n_perm=2000, seed=5))
    assert first == compare_runs(per_run, ["ndcg@10"], StatSettings(n_perm=2000, seed=5))
    (c,) = first
    assert not c.exact and c.resamples == 2000 and 0 < c.p_mc_error < 0.02
    assert c.p_mc_error == pytest.approx(math.sqrt(c.p_value * (1 - c.p_value) / 2000), abs=2e-6)


# ------------------------------------------------------------------------------------------------ settings


def test_bad_settings_name_the_fix() -> None:
    per_run = {"a": _rows("a", A), "b": _rows("b", B)}
    with pytest.raises(ConfigError) as caught:
        compare_runs(per_run, ["ndcg@10"], StatSettings(correction="bonferroni"))
    assert str(caught.value) == "--correction bonferroni: use one of holm, tukey, none"
    with pytest.raises(ConfigError) as caught:
        family_pairs(["a", "b"], "c")
    assert str(caught.value) == "--baseline c: no run of that name; runs: a, b"
    with pytest.raises(ConfigError) as caught:
        primary_metric(["map", "P@5"], "ndcg@10")
    assert str(caught.value) == (
        "--primary ndcg@10 (or the first --fail-under metric): not a compared metric of this evaluation; "
        "metrics: map, P@5"
    )


def test_the_primary_metric() -> None:
    assert primary_metric(["map", "ndcg@10"], None) == "ndcg@10"
    assert primary_metric(["map", "P@5"], None) == "map"
    assert primary_metric([], None) is None
    assert primary_metric(["map", "P@5"], "P@5") == "P@5"


def test_the_primary_leads_and_a_baseline_makes_the_pairs() -> None:
    per_run = {"a": _rows("a", A), "b": _rows("b", B)}
    for rows in per_run.values():
        for row in rows.values():
            row.metrics["map"] = row.metrics["ndcg@10"]
            row.metrics["faithfulness"] = row.metrics["ndcg@10"]
    found = compare_runs(per_run, ["map", "ndcg@10"], StatSettings(primary="faithfulness", baseline="b"))
    assert [(c.metric, c.primary, c.a) for c in found] == [
        ("faithfulness", True, "b"),  # a diagnosis measure named primary leads, compared in its own family
        ("map", False, "b"),
        ("ndcg@10", False, "b"),
    ]
    assert with_primary(per_run, ["map"], "recall@5") == ["map"]  # not in the rows: not added
    assert compare_runs({"a": per_run["a"]}, ["map"], StatSettings(primary="P@5")) == []  # one run: no pair to check


def test_resamples_keep_the_smallest_p_a_hundredth_of_the_smallest_threshold() -> None:
    assert resamples(3, StatSettings(n_perm=10)) == 6000  # ceil(100 * 3 / 0.05)
    assert resamples(0, StatSettings(n_perm=10)) == 2000  # an empty family counts as one
    assert resamples(3, StatSettings(n_perm=7000)) == 7000


# ------------------------------------------------------------------------------------------- the sentence


def test_the_correction_labels() -> None:
    assert correction_label("holm", 1) == "Holm over 1 pair"
    assert correction_label("holm", 3) == "Holm over 3 pairs"
    assert correction_label("tukey", 2) == "Tukey HSD over 2 pairs"
    assert correction_label("none", 3) == "unadjusted"


def test_numbers_and_p_values_in_the_sentence() -> None:
    assert (_num(0.0), _num(0.0005), _num(0.00049), _num(-0.00012), _num(0.1234)) == (
        "0.000", "0.001", "4.9e-04", "-1.2e-04", "0.123",
    )  # fmt: skip
    assert (_p(0.000999), _p(0.001), _p(0.0123)) == ("p<0.001", "p=0.001", "p=0.012")


def test_the_verdict_sentence_in_each_case() -> None:
    label = "Holm over 3 pairs"
    common = {"p_adj": 0.0123, "label": label}
    assert verdict("a", "b", "map", delta=0.05, interval=(0.01, 0.09), sig=True, **common) == (
        "b beats a on map by 0.050 [0.010, 0.090], p=0.012 adjusted, Holm over 3 pairs."
    )
    assert verdict("a", "b", "map", delta=-0.05, interval=(-0.09, -0.01), sig=True, **common) == (
        "a beats b on map by 0.050 [0.010, 0.090], p=0.012 adjusted, Holm over 3 pairs."
    )
    assert verdict("a", "b", "map", delta=0.0, interval=(-0.02, 0.02), sig=False, **common) == (
        "no significant difference between b and a on map: b − a = +0.000 [-0.020, 0.020], p=0.012 adjusted, "
        "Holm over 3 pairs."
    )
    unadjusted = verdict("a", "b", "map", delta=0.05, interval=(0.01, 0.09), p_adj=0.2, sig=True, label="unadjusted",
                         shared=" on the 4 questions both scored")  # fmt: skip
    assert unadjusted == "b beats a on map on the 4 questions both scored by 0.050 [0.010, 0.090], p=0.200 unadjusted."


def test_the_shared_questions_are_said_only_when_fewer_than_a_run_scored() -> None:
    assert shared_questions(10, (10, 10)) == ""
    assert shared_questions(9, (10, 9)) == " on the 9 questions both scored"
    assert shared_questions(9, (9, 10)) == " on the 9 questions both scored"


# ----------------------------------------------------------------------------------------- the interval


def test_bounds_are_rounded_to_six_decimals_and_contain_the_difference() -> None:
    assert _bounds(0.5, 0.1234564, 0.9876546, significant=True) == (0.123456, 0.987655)
    assert _bounds(0.5, 0.6, 0.7, significant=True) == (0.5, 0.7)  # the delta is always inside
    assert _bounds(0.5, 0.1, 0.4, significant=True) == (0.1, 0.5)


def test_a_significant_interval_that_rounding_brought_to_zero_keeps_one_stored_step_on_the_delta_side() -> None:
    assert _bounds(0.001, 0.0000001, 0.002, significant=True) == (1e-6, 0.002)
    assert _bounds(0.001, 0.0, 0.002, significant=True) == (1e-6, 0.002)
    assert _bounds(-0.001, -0.002, -0.0000001, significant=True) == (-0.002, -1e-6)
    assert _bounds(-0.001, -0.002, 0.0, significant=True) == (-0.002, -1e-6)
    assert _bounds(0.001, 0.0, 0.002, significant=False) == (0.0, 0.002)  # not significant: 0 may stay inside


def test_the_tukey_interval_is_the_delta_plus_or_minus_the_critical_value_on_the_side_of_the_decision() -> None:
    assert _shifted(0.25, 0.125, significant=True, spread=1.0) == (0.125, 0.375)
    low, high = _shifted(0.25, 0.25, significant=True, spread=1.0)  # exactly at the critical value: one step in
    assert low > 0 and low == 0.25 - float(np.nextafter(0.25, 0.0)) and high == 0.25 + float(np.nextafter(0.25, 0.0))
    assert _shifted(0.25, 0.5, significant=False, spread=1.0) == (-0.25, 0.75)
    assert _shifted(0.25, 0.125, significant=False, spread=1.0) == (0.0, 0.5)  # not significant: widened to 0
    assert _shifted(-0.25, math.inf, significant=False, spread=0.5) == (-1.0, 0.5)  # no critical value: |d| + spread


# ------------------------------------------------------------------------------------- more edges (round 2)


def brute_tukey_p(scores: dict[str, list[float]], clusters: list[str], pair: tuple[str, str]) -> float:
    """Randomized Tukey HSD's exact p by enumeration: every cluster's rows permuted alike across the runs, the
    statistic max over the run pairs of |mean_j - mean_i|, compared with the pair's observed |difference|."""
    runs = list(scores)
    keys = sorted(set(clusters))
    sums = {key: [sum(scores[r][i] for i, c in enumerate(clusters) if c == key) for r in runs] for key in keys}
    n = len(clusters)
    observed = abs(sum(scores[pair[1]]) - sum(scores[pair[0]])) / n
    hits = total = 0
    for perms in itertools.product(itertools.permutations(range(len(runs))), repeat=len(keys)):
        totals = [sum(sums[key][perm[j]] for key, perm in zip(keys, perms, strict=True)) for j in range(len(runs))]
        biggest = max(abs(totals[j] - totals[i]) for i, j in itertools.combinations(range(len(runs)), 2)) / n
        hits += biggest >= observed - 1e-12
        total += 1
    return hits / total


def _clustered(run: str, scores: list[float], clusters: list[str]) -> dict[str, QueryResult]:
    return {f"q{i}": QueryResult(run=run, query_id=f"q{i}", metrics={"ndcg@10": s}, cluster=c)
            for i, (s, c) in enumerate(zip(scores, clusters, strict=True))}  # fmt: skip


def test_tukey_with_clusters_matches_the_enumerated_p_and_shares_one_half_width() -> None:
    clusters = ["d1", "d1", "d2", "d2", "d3", "d3"]
    scores = {
        "a": [0.125, 0.25, 0.375, 0.5, 0.25, 0.5],
        "b": [0.25, 0.5, 0.5, 0.75, 0.5, 0.625],
        "c": [0.25, 0.25, 0.375, 0.625, 0.25, 0.5],
    }
    per_run = {r: _clustered(r, s, clusters) for r, s in scores.items()}
    found = compare_runs(per_run, ["ndcg@10"], StatSettings(correction="tukey"))
    for c in found:
        assert c.p_adjusted == pytest.approx(brute_tukey_p(scores, clusters, (c.a, c.b)), abs=1e-6), (c.a, c.b)
        assert c.clusters == 3 and c.correction == "tukey" and c.exact
        assert c.resamples == 6**3  # the family's draws decided (3! orders in each of 3 clusters), not the pair's 2^3
    halves = {round((c.high - c.low) / 2, 5) for c in found if not c.significant}
    assert len(halves) == 1  # delta +- the one critical value of the family's maximum


def test_a_p_value_exactly_at_alpha_is_significant() -> None:
    per_run = {"a": _rows("a", A), "b": _rows("b", B)}  # p = 2/128 exactly
    (c,) = compare_runs(per_run, ["ndcg@10"], StatSettings(alpha=2 / 128))
    assert c.significant and c.p_adjusted == pytest.approx(2 / 128)


def test_holm_steps_at_their_boundaries() -> None:
    c_scores = [*B[:6], 0.4375]  # p = 4/128
    per_run = {"a": _rows("a", A), "c": _rows("c", c_scores), "b": _rows("b", B)}
    # alpha = 4/128: b (2/128) at exactly alpha/2, then c (4/128) at exactly alpha: both go on
    by_pair = {c.b: c for c in compare_runs(per_run, ["ndcg@10"], StatSettings(baseline="a", alpha=4 / 128))}
    assert by_pair["b"].interval_confidence == round(1 - 2 / 128, 6) and by_pair["b"].significant
    assert by_pair["c"].interval_confidence == round(1 - 4 / 128, 6) and by_pair["c"].significant
    assert (by_pair["c"].wins, by_pair["c"].ties, by_pair["c"].losses) == (6, 0, 1)
    # two pairs of p = 4/128 at alpha = 0.05: the first is over 0.05/2, so Holm stops; both stay at alpha/2
    twice = {"a": _rows("a", A), "c": _rows("c", c_scores), "d": _rows("d", c_scores)}
    for c in compare_runs(twice, ["ndcg@10"], StatSettings(baseline="a")):
        assert c.interval_confidence == 0.975 and not c.significant


def test_holm_only_uses_each_pairs_own_shared_questions() -> None:
    per_run = {"a": _rows("a", A), "b": _rows("b", B), "c": _rows("c", [*A[:6], None])}
    ab = next(c for c in compare_runs(per_run, ["ndcg@10"], StatSettings()) if (c.a, c.b) == ("a", "b"))
    assert ab.n == 7


def _random_runs(seed: int, n: int = 40, runs: int = 2) -> dict[str, dict[str, QueryResult]]:
    rng = np.random.default_rng(seed)
    xs = rng.uniform(0, 1, n)
    return {f"r{j}": _rows(f"r{j}", list(xs + rng.normal(0.04 * j, 0.2, n))) for j in range(runs)}


def test_random_sign_vectors_follow_the_seed_and_every_figure_is_rounded_to_six_decimals() -> None:
    per_run = _random_runs(3)
    (five,) = compare_runs(per_run, ["ndcg@10"], StatSettings(n_perm=2000, seed=5))
    (six,) = compare_runs(per_run, ["ndcg@10"], StatSettings(n_perm=2000, seed=6))
    assert five.p_value != six.p_value and (five.low, five.high) != (six.low, six.high)
    assert 0.05 < five.p_value < 0.95  # a p in the middle, where other draws give another count
    xs = np.array([row.metrics["ndcg@10"] for row in per_run["r0"].values()])
    ys = np.array([row.metrics["ndcg@10"] for row in per_run["r1"].values()])
    d = ys - xs
    assert five.delta == round(float(d.mean()), 6)
    assert (five.mean_a, five.mean_b) == (round(float(xs.mean()), 6), round(float(ys.mean()), 6))
    assert five.d_z == round(float(d.mean() / d.std(ddof=1)), 6)
    for seed in range(5, 10):  # several draws: a figure whose seventh decimal is 0 cannot show the rounding
        (c,) = compare_runs(per_run, ["ndcg@10"], StatSettings(n_perm=2000, seed=seed))
        for value in (c.p_value, c.p_adjusted, c.p_mc_error, c.low, c.high):
            assert value == round(value, 6)
    assert five.p_value * 2001 == pytest.approx(round(five.p_value * 2001), abs=0.002)  # (hits + 1) / (B + 1)


def test_holm_scales_each_monte_carlo_error_by_its_step_and_three_pairs_round_their_confidence() -> None:
    per_run = _random_runs(4, runs=3)
    found = compare_runs(per_run, ["ndcg@10"], StatSettings(n_perm=3000, baseline="r0", alpha=0.05))
    assert all(c.resamples == 4000 for c in found)  # ceil(100 * 2 / 0.05)
    ordered = sorted(found, key=lambda c: c.p_value)
    for step, c in enumerate(ordered):
        se = math.sqrt(c.p_value * (1 - c.p_value) / 4000)
        assert c.p_mc_error == pytest.approx(min(1.0, (2 - step) * se), abs=2e-6)
    none = compare_runs(per_run, ["ndcg@10"], StatSettings(n_perm=3000, baseline="r0", correction="none"))
    for c in none:
        assert c.correction == "none"
        assert c.p_mc_error == pytest.approx(math.sqrt(c.p_value * (1 - c.p_value) / 4000), abs=2e-6)
    three = compare_runs(_random_runs(5, n=8, runs=4), ["ndcg@10"], StatSettings(baseline="r0"))
    assert {c.interval_confidence for c in three if not c.significant} <= {round(1 - 0.05 / 3, 6)}
    assert all(c.interval_confidence in {round(1 - 0.05 / k, 6) for k in (1, 2, 3)} for c in three)


def test_a_question_both_runs_scored_alike_is_a_tie() -> None:
    tied = [*B[:6], A[6]]
    (c,) = compare_runs({"a": _rows("a", A), "b": _rows("b", tied)}, ["ndcg@10"], StatSettings())
    assert (c.wins, c.ties, c.losses) == (6, 1, 0)


def test_tukey_by_random_rearrangements_follows_the_seed_and_the_family_size() -> None:
    per_run = _random_runs(6, runs=3)
    five = compare_runs(per_run, ["ndcg@10"], StatSettings(correction="tukey", n_perm=1000, seed=5))
    six = compare_runs(per_run, ["ndcg@10"], StatSettings(correction="tukey", n_perm=1000, seed=6))
    assert all(c.resamples == 6000 and not c.exact for c in five)  # ceil(100 * 3 / 0.05) draws of the family
    assert [c.p_adjusted for c in five] != [c.p_adjusted for c in six]
    assert five == compare_runs(per_run, ["ndcg@10"], StatSettings(correction="tukey", n_perm=1000, seed=5))
