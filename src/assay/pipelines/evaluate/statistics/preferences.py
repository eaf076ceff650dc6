"""The runs' pairwise preferences summarised (``--pairwise``; the judging is :mod:`~..judging.pairwise`).

Per pair of runs: wins, ties and losses over the questions, the judge's position consistency and first-position
rate. Over all runs: a Bradley-Terry model with ties counted half a win each (:mod:`assay.metrics.preferences`),
strengths with intervals from resampling the same clusters of questions as the other comparisons (``--cluster-by``),
and per pair the model's probability that one run is preferred, with an interval Bonferroni-adjusted for the number
of pairs. A pair's verdict follows its interval: a run is ``better`` only when the interval excludes 0.5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.metrics.preferences import preference_intervals
from assay.results import PairJudgement, PairOutcome, Preferences, Strength, rounded

__all__ = ["TIES", "preferences_summary"]

TIES = "a tie counts half a win for each run (orders that disagree make a tie)"


def _score(judgement: PairJudgement) -> float:
    return 1.0 if judgement.winner == judgement.run_a else 0.0 if judgement.winner == judgement.run_b else 0.5


def _rate(hits: int, total: int) -> float | None:
    return rounded(hits / total) if total else None


def _consistency(judged: Sequence[PairJudgement]) -> float | None:
    """The share of the pairs of answers judged in both orders (both scored) whose two orders named the same
    outcome; None when none was."""
    called = [j for j in judged if j.winner is not None and len(j.orders) == 2]
    return _rate(sum(j.orders[0].winner == j.orders[1].winner for j in called), len(called))


def _outcome(run_a: str, run_b: str, mine: Sequence[PairJudgement], prob: tuple[float, float, float]) -> PairOutcome:
    scored = [j for j in mine if j.winner is not None]
    called = [j for j in scored if len(j.orders) == 2]
    decisive = [o for j in called for o in j.orders if o.winner not in (None, "tie")]
    p, low, high = prob
    better = run_a if low > 0.5 else run_b if high < 0.5 else None
    return PairOutcome(
        run_a=run_a, run_b=run_b, wins=sum(j.winner == run_a for j in scored),
        ties=sum(j.winner == "tie" for j in scored), losses=sum(j.winner == run_b for j in scored),
        unscored=len(mine) - len(scored),
        consistency=_consistency(mine), first_position=_rate(sum(o.preferred == "A" for o in decisive),
                                                             len(decisive)),
        prob=rounded(p), low=rounded(low), high=rounded(high), better=better,
    )  # fmt: skip


def preferences_summary(
    judged: Sequence[PairJudgement], pairs: Sequence[tuple[str, str]], clusters: Mapping[str, str | None], *,
    criterion: str, ref: str, confidence: float, n_resamples: int, seed: int,
) -> Preferences:  # fmt: skip
    """Preferences over the runs of ``pairs`` from the pair judgements (module doc)."""
    names = list(dict.fromkeys(run for pair in pairs for run in pair))
    index = {name: i for i, name in enumerate(names)}
    scored = [j for j in judged if j.winner is not None]
    pair_confidence = 1.0 - (1.0 - confidence) / len(pairs)
    fitted = preference_intervals(
        [index[j.run_a] for j in scored], [index[j.run_b] for j in scored], [_score(j) for j in scored],
        [clusters.get(j.query_id) or j.query_id for j in scored], len(names), confidence=confidence,
        pair_confidence=pair_confidence, n_resamples=n_resamples, seed=seed,
    )  # fmt: skip
    outcomes = []
    for run_a, run_b in pairs:
        i, k = index[run_a], index[run_b]
        mine = [j for j in judged if (j.run_a, j.run_b) == (run_a, run_b)]
        prob = (float(fitted.prob[i, k]), float(fitted.prob_low[i, k]), float(fitted.prob_high[i, k]))
        outcomes.append(_outcome(run_a, run_b, mine, prob))
    strengths = [Strength(run=name, strength=rounded(float(fitted.strength[i])), low=rounded(float(fitted.low[i])),
                          high=rounded(float(fitted.high[i]))) for name, i in index.items()]  # fmt: skip
    strengths.sort(key=lambda s: -s.strength)
    questions = len({j.query_id for j in judged})
    summary = Preferences(criterion=criterion, ref=ref, ties=TIES, confidence=confidence,
                          pair_confidence=rounded(pair_confidence), questions=questions, clusters=fitted.clusters,
                          strengths=strengths, pairs=outcomes, judgements=list(judged))  # fmt: skip
    return summary.model_copy(update={"sentence": preference_sentence(summary)})


def preference_sentence(found: Preferences) -> str:
    """The verdict block's line: each pair's verdict with its probability and interval, then the judge's position
    consistency over the pairs."""
    parts = []
    for pair in found.pairs:
        figures = f"P = {pair.prob:.2f} [{pair.low:.2f}, {pair.high:.2f}]"
        if pair.better is not None:
            worse = pair.run_b if pair.better == pair.run_a else pair.run_a
            parts.append(f"{pair.better} preferred to {worse} ({figures} that {pair.run_a} is)")
        else:
            parts.append(f"{pair.run_a} and {pair.run_b} not told apart ({figures})")
    consistency = _consistency(found.judgements)
    kept = f"; the judge gave the same outcome in both orders on {consistency:.0%} of pairs of answers" if (
        consistency is not None) else ""  # fmt: skip
    return (f"Pairwise ({found.criterion}, both orders, over {found.questions} questions): " + "; ".join(parts)
            + kept + ".")  # fmt: skip
