"""The pairwise summary from pair judgements built by hand: counts per pair and the verdict line's consistency,
which counts only the pairs of answers the judge was asked in both orders."""

from __future__ import annotations

import math

import pytest

from assay.pipelines.evaluate.statistics.preferences import TIES, preferences_summary
from assay.results import OrderVerdict, PairJudgement, Preferences


def _asked(qid: str, a: str, b: str, first: str, second: str) -> PairJudgement:
    """A pair judged in both orders: ``first`` won with a shown first, ``second`` with b shown first."""
    orders = [OrderVerdict(shown_first=a, preferred="A" if first == a else "B", winner=first),
              OrderVerdict(shown_first=b, preferred="A" if second == b else "B", winner=second)]  # fmt: skip
    return PairJudgement(query_id=qid, run_a=a, run_b=b, winner=first if first == second else "tie", orders=orders)


def test_consistency_counts_only_the_pairs_asked_in_both_orders() -> None:
    # x vs y: 2 asked, both consistent; 8 decided without a call (y gave no answer). x vs z: 2 asked, both flipped.
    judged = [_asked("q0", "x", "y", "x", "x"), _asked("q1", "x", "y", "y", "y")]
    judged += [PairJudgement(query_id=f"q{i}", run_a="x", run_b="y", winner="x") for i in range(2, 10)]
    judged += [_asked("q0", "x", "z", "x", "z"), _asked("q1", "x", "z", "z", "x")]
    found = preferences_summary(judged, [("x", "y"), ("x", "z")], {}, criterion="c", ref="c@1", confidence=0.95,
                                n_resamples=200, seed=0)  # fmt: skip
    xy, xz = found.pairs
    assert (xy.wins, xy.ties, xy.losses, xy.consistency) == (9, 0, 1, 1.0)
    assert (xz.wins, xz.ties, xz.losses, xz.consistency) == (0, 2, 0, 0.0)
    assert xz.first_position == 0.5  # two of its four decisive answers chose the first position
    # 2 of the 4 pairs of answers asked in both orders kept their outcome (not 10 of 12)
    assert found.sentence.endswith("the judge gave the same outcome in both orders on 50% of pairs of answers.")


def _decided(qid: str, a: str, b: str, winner: str | None) -> PairJudgement:
    """A pair decided without a call (one side answered), or unscored when ``winner`` is None."""
    return PairJudgement(query_id=qid, run_a=a, run_b=b, winner=winner, unscored=None if winner else "no answer")


def _summary(judged: list[PairJudgement], pairs: list[tuple[str, str]], clusters: dict[str, str | None],
             confidence: float = 0.9) -> Preferences:  # fmt: skip
    return preferences_summary(judged, pairs, clusters, criterion="c", ref="c@1", confidence=confidence,
                               n_resamples=300, seed=0)  # fmt: skip


def test_one_cluster_pins_the_counts_the_fit_and_the_verdict_of_a_pair() -> None:
    # Scored: 2 wins and 1 tie for x (q3 failed in one order: unscored). With the prior's tie, x has 2.5 + 0.5 = 3 wins
    # to y's 0.5 + 0.5 = 1: pi_x / pi_y = 3, strengths +-ln(3)/2, P(x preferred) = 3/4; one cluster: no spread.
    failed = PairJudgement(query_id="q3", run_a="x", run_b="y", unscored="timeout",
                           orders=[OrderVerdict(shown_first="x", preferred="A", winner="x"),
                                   OrderVerdict(shown_first="y", unscored="timeout")])  # fmt: skip
    judged = [_asked("q0", "x", "y", "x", "x"), _decided("q1", "x", "y", "x"), _asked("q2", "x", "y", "x", "y"), failed]
    found = _summary(judged, [("x", "y")], {"q0": "d", "q1": "d", "q2": "d", "q3": "e"})
    [pair] = found.pairs
    assert (pair.run_a, pair.run_b, pair.wins, pair.ties, pair.losses, pair.unscored) == ("x", "y", 2, 1, 0, 1)
    assert pair.consistency == 0.5  # q0 kept its outcome, q2 did not; q1 was not asked, q3 not scored
    assert pair.first_position == 0.75  # q0: A then B; q2: A and A (q3's one answer is not counted)
    assert (pair.prob, pair.low, pair.high, pair.better) == (0.75, 0.75, 0.75, "x")
    half = round(math.log(3) / 2, 6)
    assert [(s.run, s.strength, s.low, s.high) for s in found.strengths] == [("x", half, half, half),
                                                                             ("y", -half, -half, -half)]  # fmt: skip
    assert (found.criterion, found.ref, found.ties, found.confidence) == ("c", "c@1", TIES, 0.9)
    assert (found.pair_confidence, found.questions, found.clusters) == (0.9, 4, 1)
    assert found.judgements == judged
    assert found.sentence == (
        "Pairwise (c, both orders, over 4 questions): x preferred to y (P = 0.75 [0.75, 0.75] "
        "that x is); the judge gave the same outcome in both orders on 50% of pairs of answers."
    )


def test_the_second_run_of_a_pair_can_be_the_better_one_and_leads_the_strengths() -> None:
    # y wins twice and ties once: P(x preferred) = 1 / (1 + 3) = 1/4; no pair asked in both orders: no consistency.
    judged = [_decided("q0", "x", "y", "y"), _decided("q1", "x", "y", "tie"), _decided("q2", "x", "y", "y")]
    found = _summary(judged, [("x", "y")], {"q0": "d", "q1": "d", "q2": "d"})
    [pair] = found.pairs
    assert (pair.wins, pair.ties, pair.losses, pair.unscored) == (0, 1, 2, 0)
    assert (pair.consistency, pair.first_position) == (None, None)
    assert (pair.prob, pair.low, pair.high, pair.better) == (0.25, 0.25, 0.25, "y")
    assert [s.run for s in found.strengths] == ["y", "x"]
    assert found.sentence == (
        "Pairwise (c, both orders, over 3 questions): y preferred to x (P = 0.25 [0.25, 0.25] that x is)."
    )


def test_an_interval_that_touches_a_half_tells_no_run_apart() -> None:
    # Every pair a tie (the orders disagree): the strengths stay exactly equal and P = 0.5 exactly, ends included.
    judged = [_asked("q0", "x", "y", "x", "y"), _asked("q1", "x", "y", "y", "x")]
    found = _summary(judged, [("x", "y")], {"q0": "d", "q1": "d"})
    [pair] = found.pairs
    assert (pair.wins, pair.ties, pair.losses, pair.consistency, pair.first_position) == (0, 2, 0, 0.0, 0.5)
    assert (pair.prob, pair.low, pair.high, pair.better) == (0.5, 0.5, 0.5, None)
    assert found.sentence == (
        "Pairwise (c, both orders, over 2 questions): x and y not told apart (P = 0.50 "
        "[0.50, 0.50]); the judge gave the same outcome in both orders on 0% of pairs of answers."
    )


def test_a_question_with_no_cluster_is_its_own_cluster() -> None:
    judged = [_decided("q0", "x", "y", "x"), _decided("q1", "x", "y", "x"), _decided("q2", "x", "y", "y")]
    assert _summary(judged, [("x", "y")], {"q0": "d", "q1": None, "q2": "d"}).clusters == 2
    assert _summary(judged, [("x", "y")], {}).clusters == 3


def test_the_pairs_intervals_are_bonferroni_adjusted_and_each_pair_counts_its_own_judgements() -> None:
    # Cluster a: x beats y twice; cluster b: y beats x twice; z never compared. Resampling both clusters once
    # ("ab", half the draws) balances everything: strengths exactly 0. At confidence 0.2 the strengths' interval is
    # the 40%..60% quantiles, inside the "ab" draws: [0, 0]. The pairs' confidence is 1 - 0.8 / 2 = 0.6: the
    # 20%..80% quantiles reach the "bb" and "aa" draws (a quarter each), mirror images of each other.
    judged = [_decided("q0", "x", "y", "x"), _decided("q1", "x", "y", "x")]
    judged += [_decided("q2", "x", "y", "y"), _decided("q3", "x", "y", "y")]
    found = _summary(judged, [("x", "y"), ("x", "z")], {"q0": "a", "q1": "a", "q2": "b", "q3": "b"}, confidence=0.2)
    assert (found.confidence, found.pair_confidence, found.questions, found.clusters) == (0.2, 0.6, 4, 2)
    assert [(s.run, s.strength, s.low, s.high) for s in found.strengths] == [(r, 0.0, 0.0, 0.0) for r in "xyz"]
    xy, xz = found.pairs
    assert (xy.wins, xy.ties, xy.losses, xy.prob, xy.better) == (2, 0, 2, 0.5, None)
    assert xy.low < 0.45 and xy.high > 0.55 and xy.low + xy.high == pytest.approx(1.0, abs=2e-6)
    assert (xz.wins, xz.ties, xz.losses, xz.unscored, xz.consistency, xz.first_position) == (0, 0, 0, 0, None, None)
    assert (xz.prob, xz.better) == (0.5, None) and xz.low < 0.5 < xz.high
