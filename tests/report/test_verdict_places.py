"""The verdict's places, letters and ranking sentence never merge a real difference.

Results are built by hand (means and comparisons, nothing evaluated), so each case states its significance matrix;
the property test draws hundreds of them (2..9 runs, significance from none to all, some pairs not compared) and
checks the verdict against the matrix alone.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from assay.report.verdict import build_verdict
from assay.results import Comparison, EvalResult, MetricSummary, RunResult, VerdictPlace

METRIC = "ndcg@1000t"


def _comparison(a: str, b: str, significant: bool, delta: float = 0.0) -> Comparison:
    """b against a; the interval excludes 0 exactly when significant (on delta's side)."""
    step = abs(delta) if significant and delta else 0.1
    low, high = (delta - step / 2, delta + step / 2) if significant else (delta - 0.1, delta + 0.1)
    return Comparison(a=a, b=b, metric=METRIC, n=50, delta=delta, low=low, high=high, p_value=0.01,
                      p_adjusted=0.01 if significant else 0.5, significant=significant, verdict="")  # fmt: skip


def _result(means: dict[str, float | None], comparisons: list[Comparison]) -> EvalResult:
    runs = [RunResult(name=name, path=f"{name}.jsonl", metrics={METRIC: MetricSummary(mean=mean, n_scored=50)})
            for name, mean in means.items()]  # fmt: skip
    return EvalResult(assay_version="test", golden="g", judge=None, k_values=[10], runs=runs,
                      comparisons=comparisons, primary_metric=METRIC)  # fmt: skip


def _places(result: EvalResult) -> dict[str, VerdictPlace]:
    return {place.run: place for place in build_verdict(result).places}


def _random_result(rng: np.random.Generator) -> tuple[EvalResult, dict[frozenset[str], bool]]:
    """2..9 runs with distinct means in a shuffled order; each pair compared or not, significant or not."""
    names = [f"r{i}" for i in range(int(rng.integers(2, 10)))]
    means = dict(zip(names, rng.permutation(len(names)) / 10, strict=True))
    share, compared = float(rng.random()), float(rng.random()) ** 0.3
    matrix = {frozenset(pair): bool(rng.random() < share)
              for pair in itertools.combinations(names, 2) if rng.random() < compared}  # fmt: skip
    comps = [_comparison(*sorted(pair), significant) for pair, significant in matrix.items()]
    return _result(dict(means), comps), matrix


def test_random_matrices_never_merge_a_significant_pair() -> None:
    rng = np.random.default_rng(43)
    for _ in range(400):
        result, matrix = _random_result(rng)
        verdict = build_verdict(result)
        order = [p.run for p in verdict.places]
        assert order == sorted(order, key=lambda run: -(result.runs[int(run[1:])].metrics[METRIC].mean or 0))
        assert [p.place for p in verdict.places] == sorted(p.place for p in verdict.places)
        assert verdict.places[0].place == 1 and all(p.groups for p in verdict.places)
        for one, other in itertools.combinations(verdict.places, 2):
            significant = matrix.get(frozenset((one.run, other.run)), False)  # not compared: not distinguished
            assert bool(set(one.groups) & set(other.groups)) != significant
            assert not (significant and one.place == other.place)
        missing = len(verdict.places) * (len(verdict.places) - 1) // 2 - len(matrix)
        assert (f"; {missing} pair" in (verdict.ranking or "")) == (missing > 0)
        assert build_verdict(result) == verdict  # the same result, the same verdict


def test_the_issues_chain_of_ties_is_two_places_not_one() -> None:
    """Neighbours all ties, golden against md and against shuffled significant: the old neighbour walk put every
    run at place 1 and wrote golden ≈ ... ≈ shuffled."""
    means = {"golden": 0.632, "golden_halves": 0.622, "w1000": 0.569, "w600": 0.557, "md": 0.510, "w300": 0.386,
             "shuffled": 0.113}  # fmt: skip
    names = list(means)
    significant = {("golden", "md"), ("golden", "shuffled")}
    comps = [_comparison(a, b, (a, b) in significant, means[b] - means[a]) for a, b in itertools.combinations(names, 2)]
    verdict = build_verdict(_result(means, comps))
    assert [(p.run, p.groups, p.place) for p in verdict.places] == [
        ("golden", "a", 1), ("golden_halves", "ab", 1), ("w1000", "ab", 1), ("w600", "ab", 1), ("md", "b", 2),
        ("w300", "ab", 2), ("shuffled", "b", 2),
    ]  # fmt: skip
    assert verdict.ranking == (
        "Ranking on ndcg@1000t: golden 0.632 (a), golden_halves 0.622 (ab), w1000 0.569 (ab), w600 0.557 (ab), md "
        "0.510 (b), w300 0.386 (ab), shuffled 0.113 (b); runs that share a letter are not reliably different, runs "
        "that share no letter are."
    )
    assert "≈" not in verdict.ranking
    assert verdict.places[0].ties == ["golden_halves", "w1000", "w600", "w300"]


def test_all_ties_share_a_place_and_all_differences_take_their_own() -> None:
    means = {"a1": 0.9, "a2": 0.8, "a3": 0.7}
    tied = _places(_result(means, [_comparison(a, b, False) for a, b in itertools.combinations(means, 2)]))
    assert [(p.groups, p.place) for p in tied.values()] == [("a", 1)] * 3
    apart = _places(_result(means, [_comparison(a, b, True, -0.1) for a, b in itertools.combinations(means, 2)]))
    assert [(p.groups, p.place) for p in apart.values()] == [("a", 1), ("b", 2), ("c", 3)]


def test_baseline_pairs_not_compared_count_as_not_distinguished_and_are_counted() -> None:
    """--baseline: only base against each run; x beats it, y and z tie with it; x-y, x-z, y-z were not compared."""
    means = {"base": 0.5, "x": 0.7, "y": 0.45, "z": 0.4}
    comps = [_comparison("base", "x", True, 0.2), _comparison("base", "y", False), _comparison("base", "z", False)]
    verdict = build_verdict(_result(means, comps))
    assert [(p.run, p.groups, p.place) for p in verdict.places] == [
        ("x", "a", 1), ("base", "b", 2), ("y", "ab", 2), ("z", "ab", 2)]  # fmt: skip
    assert (verdict.ranking or "").endswith(
        "; 3 pairs not compared (--baseline, or too few questions both scored) count as not distinguished."
    )


def test_a_run_with_no_mean_has_no_letter_and_comes_last() -> None:
    means: dict[str, float | None] = {"empty": None, "one": 0.6, "two": 0.3}
    places = _places(_result(means, [_comparison("one", "two", True, -0.3)]))
    assert [(p.run, p.groups, p.place) for p in places.values()] == [("one", "a", 1), ("two", "b", 2), ("empty", "", 3)]
    ranking = build_verdict(_result(means, [_comparison("one", "two", True, -0.3)])).ranking or ""
    assert "empty — (not ranked)" in ranking and "pairs not compared" not in ranking


def test_a_run_reliably_better_on_the_shared_questions_leads_whatever_the_means_say() -> None:
    """A has the higher mean over its own questions, but B is reliably better on the questions both scored: B leads
    and comes first (the old verdict had A lead with -0.100, "B is reliably better")."""
    comparison = _comparison("A", "B", True, 0.1).model_copy(update={"d_z": 0.4})
    verdict = build_verdict(_result({"A": 0.6, "B": 0.55}, [comparison]))
    assert verdict.lead is not None and verdict.lead.leader == "B" and verdict.lead.supported
    assert (verdict.lead.delta, verdict.lead.low, verdict.lead.high) == (0.1, 0.05, 0.15000000000000002)
    assert verdict.headline.endswith("the evidence supports the lead.")
    assert not any(c.startswith("Too few questions") for c in verdict.caveats)  # the difference is reliable
    assert [(p.run, p.groups, p.place) for p in verdict.places] == [("B", "a", 1), ("A", "b", 2)]
    tie = build_verdict(_result({"A": 0.6, "B": 0.55}, [_comparison("A", "B", False, 0.1).model_copy(
        update={"d_z": 0.1})]))  # fmt: skip
    assert tie.lead is not None and (tie.lead.leader, tie.lead.delta) == ("B", 0.1)  # ahead on the shared questions
    assert tie.headline.endswith("no reliable difference, a tie.") and tie.caveats[0].startswith("Too few questions")


def _shared(a: str, b: str, xs: list[float], ys: list[float], own: tuple[int, int], significant: bool) -> Comparison:
    """b against a over the paired scores xs (a) and ys (b), each run having scored ``own`` questions in all."""
    delta = sum(ys) / len(ys) - sum(xs) / len(xs)
    paired = {"n": len(xs), "mean_a": sum(xs) / len(xs), "mean_b": sum(ys) / len(ys), "n_a": own[0], "n_b": own[1]}
    return _comparison(a, b, significant, delta).model_copy(update=paired)


def test_the_issues_leader_with_a_negative_paired_difference_is_the_other_run() -> None:
    """The issue's case: X 0.928 over its 40 questions, Y 0.950 over 12; on the 10 both scored X averages 0.750 and
    Y 0.850 (delta Y - X = +0.100). Y leads, on those 10 questions, with the paired means; the ranking says so."""
    comparison = _shared("X", "Y", [0.75] * 10, [0.85] * 10, (40, 12), significant=False)
    runs = [RunResult(name=name, path=f"{name}.jsonl", metrics={METRIC: MetricSummary(mean=mean, n_scored=n)})
            for name, mean, n in (("X", 0.928, 40), ("Y", 0.95, 12))]  # fmt: skip
    result = EvalResult(assay_version="test", golden="g", judge=None, k_values=[10], runs=runs,
                        comparisons=[comparison], primary_metric=METRIC)  # fmt: skip
    verdict = build_verdict(result)
    assert verdict.lead is not None and (verdict.lead.leader, verdict.lead.other, verdict.lead.n) == ("Y", "X", 10)
    assert verdict.lead.delta == pytest.approx(0.1) and verdict.lead.shared
    assert verdict.headline.startswith(
        f"Y leads on {METRIC} on the 10 questions both scored (of 12 and 40): 0.850 against 0.750 for X, +0.100 "
    )
    assert verdict.headline.endswith("no reliable difference, a tie.")
    assert verdict.ranking is not None and verdict.ranking.startswith(f"Ranking on {METRIC}: Y 0.950 (a), X 0.928 (a)")
    assert verdict.ranking.endswith("; the runs scored different questions (Y 12, X 40): the order and the letters "
                                    "come from the paired differences on the questions each pair both scored, each "
                                    "mean from the run's own questions.")  # fmt: skip


def test_the_same_questions_keep_the_plain_sentence() -> None:
    comparison = _shared("X", "Y", [0.5] * 10, [0.7] * 10, (10, 10), significant=True)
    verdict = build_verdict(_result({"X": 0.5, "Y": 0.7}, [comparison]))
    assert verdict.headline.startswith(f"Y leads on {METRIC} with 0.700:")
    assert "both scored" not in verdict.headline and "different questions" not in (verdict.ranking or "")


def test_a_run_significantly_worse_than_another_is_never_first() -> None:
    """Three runs on different questions: c has the highest own mean but b is significantly ahead of it on the
    questions both scored; a, with the lowest mean, is ahead of nobody. b comes first, then c, then a (at c's place:
    c and a are not reliably different)."""
    comps = [_comparison("a", "b", True, 0.2), _comparison("a", "c", False, 0.05), _comparison("b", "c", True, -0.1)]
    verdict = build_verdict(_result({"a": 0.3, "b": 0.5, "c": 0.9}, comps))
    assert [(p.run, p.place) for p in verdict.places] == [("b", 1), ("c", 2), ("a", 2)]
    assert verdict.lead is not None and (verdict.lead.leader, verdict.lead.other, verdict.lead.delta) == ("b", "c", 0.1)


def test_paired_differences_that_go_round_in_a_circle_name_no_leader() -> None:
    """p ahead of q, q ahead of r, r ahead of p (none significant): no run is ahead of every other, so none leads."""
    comps = [_comparison("q", "p", False, 0.1), _comparison("r", "q", False, 0.1), _comparison("p", "r", False, 0.1)]
    verdict = build_verdict(_result({"p": 0.7, "q": 0.6, "r": 0.5}, comps))
    assert verdict.lead is None
    assert verdict.headline.startswith(f"No run leads on {METRIC}: each is behind another on the questions the two "
                                       "both scored")  # fmt: skip
    assert [p.run for p in verdict.places] == ["p", "q", "r"]  # no run free of a run ahead: by mean


def test_a_lower_is_better_metric_leads_with_the_lowest() -> None:
    """hallucination: less is better; the run with less leads, its paired difference negative and supported."""
    comparison = _comparison("more", "less", True, -0.3).model_copy(update={"metric": "hallucination"})
    runs = [RunResult(name=name, path=f"{name}.jsonl", metrics={"hallucination": MetricSummary(mean=m, n_scored=50)})
            for name, m in (("more", 0.5), ("less", 0.2))]  # fmt: skip
    verdict = build_verdict(EvalResult(assay_version="test", golden="g", judge=None, k_values=[10], runs=runs,
                                       comparisons=[comparison], primary_metric="hallucination"))  # fmt: skip
    assert verdict.lead is not None and (verdict.lead.leader, verdict.lead.delta) == ("less", -0.3)
    assert verdict.lead.supported and verdict.headline.startswith("less leads on hallucination (lower is better)")
    assert [p.run for p in verdict.places] == ["less", "more"]


def test_a_matrix_too_crossed_to_letter_still_never_merges_a_significant_pair() -> None:
    """Twenty runs in ten pairs, each pair significantly different and nothing else: 2^10 groups of runs not
    distinguished, past the letters' bound. The verdict prints places, not letters, and no place holds a pair."""
    names = [f"r{i:02d}" for i in range(20)]
    means = {name: 1.0 - i / 100 for i, name in enumerate(names)}
    pairs = [(names[2 * k], names[2 * k + 1]) for k in range(10)]
    comps = [_comparison(a, b, significant=(a, b) in pairs) for a, b in itertools.combinations(names, 2)]
    verdict = build_verdict(_result(means, comps))  # the letters refuse past their bound (test_letters.py)
    places = {p.run: p for p in verdict.places}
    assert all(not p.groups for p in verdict.places)
    assert all(places[a].place != places[b].place for a, b in pairs)
    assert verdict.ranking is not None and "cross too often for letters" in verdict.ranking
