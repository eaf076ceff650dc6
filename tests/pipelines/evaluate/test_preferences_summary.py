"""The pairwise summary from pair judgements built by hand: counts per pair and the verdict line's consistency,
which counts only the pairs of answers the judge was asked in both orders."""

from __future__ import annotations

from assay.pipelines.evaluate.statistics.preferences import preferences_summary
from assay.results import OrderVerdict, PairJudgement


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
