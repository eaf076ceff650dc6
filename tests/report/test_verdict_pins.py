"""The verdict's less travelled branches, each sentence written out in full: the primary metric's fallbacks, the
verdict withheld without a judge, the places of runs with no mean, a tie of identical runs, paired differences that go
round in a circle with one significant step, a matrix too crossed for letters, and runs that scored different
questions in more than one pair.

Results are built by hand (nothing evaluated); every expected figure follows from the inputs written here.
"""

from __future__ import annotations

import itertools

from assay.report.verdict import better, build_verdict, primary_metric
from assay.results import BudgetFill, Comparison, EvalResult, MetricSummary, RunResult

METRIC = "ndcg@10"


def _summary(mean: float | None, n_scored: int = 50) -> MetricSummary:
    """``mean`` with an interval of +-0.1 around it (none without a mean)."""
    if mean is None:
        return MetricSummary(mean=None, n_scored=0, n_unscored=n_scored)
    return MetricSummary(mean=mean, low=mean - 0.1, high=mean + 0.1, n_scored=n_scored)


def _run(name: str, mean: float | None, n_scored: int = 50, metric: str = METRIC) -> RunResult:
    return RunResult(name=name, path=f"{name}.jsonl", metrics={metric: _summary(mean, n_scored)})


def _comparison(a: str, b: str, delta: float, significant: bool, **fields: object) -> Comparison:
    """b against a (``delta`` = b - a); the interval excludes 0 exactly when ``significant``."""
    low, high = (delta - 0.05, delta + 0.05) if significant else (delta - 0.1, delta + 0.1)
    given: dict[str, object] = {"n": 50, "metric": METRIC, "low": low, "high": high, **fields}
    return Comparison(a=a, b=b, delta=delta, p_value=0.01, p_adjusted=0.01 if significant else 1.0,
                      significant=significant, verdict="", **given)  # type: ignore[arg-type]  # fmt: skip


def _result(runs: list[RunResult], comparisons: list[Comparison] = (), **fields: object) -> EvalResult:  # type: ignore[assignment]
    settings: dict[str, object] = {"judge": None, "primary_metric": METRIC, **fields}
    return EvalResult(assay_version="test", golden="golden/", k_values=[10], runs=runs, comparisons=list(comparisons),
                      **settings)  # type: ignore[arg-type]  # fmt: skip


# -- the primary metric ----------------------------------------------------------------------------------------------


def _metrics_run() -> RunResult:
    """A run of four metrics whose first headline metric (at k = 10) is map, not ndcg@10."""
    metrics = {name: _summary(mean) for name, mean in (("map", 0.1), (METRIC, 0.2), ("mrr", 0.3), ("P@5", 0.4))}
    return RunResult(name="a", path="a.jsonl", metrics=metrics)


def test_the_primary_is_the_evaluators_else_the_asked_one_else_ndcg10_else_the_first_headline_metric() -> None:
    run = _metrics_run()
    assert primary_metric(_result([run], primary_metric="P@5", settings={"primary": "mrr"})) == "P@5"
    assert primary_metric(_result([run], primary_metric=None, settings={"primary": "mrr"})) == "mrr"
    # asked for a metric the runs do not carry, or for none: ndcg@10, although map is the first headline metric
    assert primary_metric(_result([run], primary_metric=None, settings={"primary": "recall@5"})) == METRIC
    assert primary_metric(_result([run], primary_metric=None)) == METRIC
    # a primary setting that is not a name (a results.json written by hand) is passed over, not looked up
    assert primary_metric(_result([run], primary_metric=None, settings={"primary": ["mrr"]})) == METRIC
    without = RunResult(name="a", path="a.jsonl", metrics={k: v for k, v in run.metrics.items() if k != METRIC})
    assert primary_metric(_result([without], primary_metric=None)) == "map"


def test_better_is_plus_or_minus_one() -> None:
    assert (better("hallucination"), better(METRIC), better(None)) == (-1.0, 1.0, 1.0)


# -- no verdict without a judge ----------------------------------------------------------------------------------------


def _withheld_result() -> EvalResult:
    """b significantly ahead of a on ndcg@1000t (+0.300, d_z 0.2); without a judge, a's text within the 1000t budget
    is half judged (its 500t budget fully): below 80%, so no verdict. The primary's budget is read, not the first."""

    def run(name: str, mean: float, judged: float) -> RunResult:
        fills = {size: BudgetFill(chars=chars, filled=1.0, judged=share, k=10, under=0.0, questions=50)
                 for size, chars, share in (("500t", 2000, 1.0), ("1000t", 4000, judged))}  # fmt: skip
        return RunResult(name=name, path=f"{name}.jsonl", metrics={"ndcg@1000t": _summary(mean)}, budget=fills)

    comparison = _comparison("a", "b", 0.3, True, metric="ndcg@1000t", d_z=0.2)
    return _result([run("a", 0.3, 0.5), run("b", 0.6, 1.0)], [comparison], primary_metric="ndcg@1000t")


def test_a_run_mostly_unjudged_withholds_the_lead_the_places_and_the_ranking() -> None:
    verdict = build_verdict(_withheld_result())
    lead = verdict.lead
    assert lead is not None and (lead.leader, lead.other, lead.delta, lead.supported) == ("b", "a", 0.3, False)
    # no place is earned by a comparison: both runs at place 1, one letter, no ties counted
    assert [(p.run, p.place, p.groups, p.ties) for p in verdict.places] == [("b", 1, "a", []), ("a", 1, "a", [])]
    assert verdict.headline == (
        "b has the highest ndcg@1000t (+0.300 over a), but no verdict: without a judge, less than 80% of the text a "
        "showed within the 1000t budget has a label, and unlabelled text counts as not relevant."
    )
    assert verdict.ranking == "Means on ndcg@1000t (no verdict): b 0.600, a 0.300."
    # the judged share is the only caveat: no "too few questions" (d_z 0.2 would need about 197 > 50) for a lead that is
    # withheld rather than unsupported
    assert verdict.caveats == [
        "Judged share of the text within the 1000t budget (median over questions): a 50%; below 80% no verdict is "
        "given. Judge the rest with `assay eval golden/ RUNS --judge MODEL` (or --judge offline, a lexical baseline)."
    ]


# -- places ----------------------------------------------------------------------------------------------------------


def test_runs_without_a_mean_share_the_first_place_when_no_run_has_one() -> None:
    verdict = build_verdict(_result([_run("a", None), _run("b", None)]))
    assert [(p.run, p.mean, p.place, p.groups) for p in verdict.places] == [("a", None, 1, ""), ("b", None, 1, "")]
    assert verdict.lead is None


def test_a_run_that_does_not_carry_the_metric_comes_last_with_no_figures() -> None:
    bare = RunResult(name="bare", path="bare.jsonl")
    verdict = build_verdict(_result([bare, _run("a", 0.5)]))
    assert [(p.run, p.mean, p.low, p.high, p.place) for p in verdict.places] == [
        ("a", 0.5, 0.4, 0.6, 1),
        ("bare", None, None, None, 2),
    ]


def test_no_run_at_all_has_nothing_to_compare() -> None:
    verdict = build_verdict(_result([]))
    assert (verdict.places, verdict.lead, verdict.headline) == (
        [],
        None,
        "No metric could be computed: nothing to compare.",
    )


# -- the lead ---------------------------------------------------------------------------------------------------------


def test_identical_runs_tie_at_zero_never_minus_zero() -> None:
    """Two runs with the same scores: the paired difference is 0, the first by mean leads with +0.000 (not -0.000,
    which reads as a leader behind the other), a tie."""
    tie = _comparison("a", "b", 0.0, False, d_z=0.0)
    verdict = build_verdict(_result([_run("a", 0.5), _run("b", 0.5)], [tie]))
    lead = verdict.lead
    assert lead is not None and (lead.leader, lead.other, lead.supported) == ("a", "b", False)
    assert str(lead.delta) == "0.0" and str(lead.d_z) == "0.0"
    assert verdict.headline == (
        "a leads on ndcg@10 with 0.500 [0.400, 0.600]: +0.000 [-0.100, 0.100] over b (p adj. 1.000, n = 50 "
        "questions); the evidence does not support the lead: no reliable difference, a tie."
    )


def test_a_top_run_compared_with_no_one_is_named_by_its_mean_even_when_others_were_compared() -> None:
    """x has the highest mean; only b and y were compared (y ahead): x is named, the runs not compared on it."""
    comps = [_comparison("b", "y", 0.1, False)]
    verdict = build_verdict(_result([_run("x", 0.7), _run("b", 0.5), _run("y", 0.6)], comps))
    assert verdict.lead is None
    assert [p.run for p in verdict.places] == ["x", "y", "b"]
    assert verdict.headline == "x has the highest ndcg@10, 0.700 [0.600, 0.800]; the runs were not compared on it."


def test_a_circle_with_one_significant_step_starts_with_the_run_nothing_is_significantly_ahead_of() -> None:
    """p is significantly ahead of q, q ahead of r, r ahead of p (the last two not significant), q with the highest
    mean: every run is behind another, so the first is the best by mean of those no run is significantly ahead of
    (p, r: p), then q (ahead of r), then r. No run leads."""
    comps = [_comparison("q", "p", 0.1, True), _comparison("r", "q", 0.1, False), _comparison("p", "r", 0.1, False)]
    verdict = build_verdict(_result([_run("p", 0.7), _run("q", 0.9), _run("r", 0.5)], comps))
    assert [(p.run, p.place, p.groups) for p in verdict.places] == [("p", 1, "a"), ("q", 2, "b"), ("r", 2, "ab")]
    assert verdict.lead is None
    assert verdict.headline == (
        "No run leads on ndcg@10: each is behind another on the questions the two both scored (paired differences "
        "that go round in a circle, as runs scored on different questions can be); the ranking orders them as far as "
        "the paired differences allow."
    )


# -- the ranking sentence ---------------------------------------------------------------------------------------------


def test_a_matrix_too_crossed_to_letter_ranks_by_places_in_full() -> None:
    """Twenty runs in ten significantly different pairs (r00-r01, r02-r03, ...), nothing else significant: too many
    groups to letter. Walking down the means, each pair's second run starts a new place: 1, 2, 2, 3, 3, 4, 4, 5 for
    the eight runs named, then the count of the rest."""
    names = [f"r{i:02d}" for i in range(20)]
    pairs = {(names[2 * k], names[2 * k + 1]) for k in range(10)}
    comps = [_comparison(a, b, 0.0, (a, b) in pairs) for a, b in itertools.combinations(names, 2)]
    verdict = build_verdict(_result([_run(name, 1.0 - i / 100) for i, name in enumerate(names)], comps))
    assert verdict.ranking == (
        "Ranking on ndcg@10: r00 1.000 (place 1), r01 0.990 (place 2), r02 0.980 (place 2), r03 0.970 (place 3), "
        "r04 0.960 (place 3), r05 0.950 (place 4), r06 0.940 (place 4), r07 0.930 (place 5) … and 12 more; the "
        "significant differences cross too often for letters: runs at one place are not reliably different from each "
        "other."
    )


def test_runs_apart_in_two_pairs_are_all_counted() -> None:
    """X scored 40 questions, Y 12, Z 30; X-Y share 10 and X-Z 20 (Y-Z not compared): each run's own count is given,
    from whichever pair names it."""
    comps = [
        _comparison("X", "Y", -0.1, False, n=10, n_a=40, n_b=12),
        _comparison("X", "Z", -0.2, False, n=20, n_a=40, n_b=30),
    ]
    verdict = build_verdict(_result([_run("X", 0.9, 40), _run("Y", 0.8, 12), _run("Z", 0.7, 30)], comps))
    assert verdict.ranking == (
        "Ranking on ndcg@10: X 0.900 (a), Y 0.800 (a), Z 0.700 (a); runs that share a letter are not reliably "
        "different, runs that share no letter are; 1 pair not compared (--baseline, or too few questions both scored) "
        "count as not distinguished; the runs scored different questions (X 40, Y 12, Z 30): the order and the "
        "letters come from the paired differences on the questions each pair both scored, each mean from the run's "
        "own questions."
    )
