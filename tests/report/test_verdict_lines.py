"""The verdict's sentences other than the places: the judge's trust, cost and latency, what the history is worth and
the headline of one run, of runs not compared and of no metric.

Results are built by hand (nothing evaluated) and each expected sentence is written out in full, so a changed word,
figure or branch shows.
"""

from __future__ import annotations

import pytest

from assay.report.verdict import build_verdict
from assay.results import (
    AgreementSummary,
    Comparison,
    EvalResult,
    HistoryGain,
    JudgeCardSummary,
    MetricSummary,
    RunResult,
    SystemCost,
)
from assay.results.agreement import AgreementBlock, AgreementStat
from assay.results.runs import SystemSummary

METRIC = "ndcg@10"


def _result(runs: list[RunResult], **fields: object) -> EvalResult:
    settings: dict[str, object] = {"judge": None, **fields}
    return EvalResult(assay_version="test", golden="g", k_values=[10], runs=runs, **settings)  # type: ignore[arg-type]


def _run(name: str, mean: float | None = 0.5, n_scored: int = 50, **fields: object) -> RunResult:
    """A run whose ``METRIC`` has ``mean`` with an interval of +-0.1 around it."""
    low, high = (None, None) if mean is None else (mean - 0.1, mean + 0.1)
    summary = MetricSummary(mean=mean, low=low, high=high, n_scored=n_scored, n_unscored=2)
    return RunResult(name=name, path=f"{name}.jsonl", metrics={METRIC: summary}, **fields)  # type: ignore[arg-type]


def _comparison(n: int, delta: float, significant: bool) -> Comparison:
    return Comparison(a="rw", b="tu", metric=METRIC, n=n, delta=delta, low=delta - 0.1, high=delta + 0.1,
                      p_value=0.01, p_adjusted=0.01 if significant else 0.25, significant=significant,
                      verdict="")  # fmt: skip


# -- the judge's trust ----------------------------------------------------------------------------------------------


def test_without_a_judge_the_trust_line_says_whose_labels_count() -> None:
    people = build_verdict(_result([_run("a")], label_origin="human"))
    assert (people.judge, people.judge_measured) == (
        "No judge: people's labels only; an unlabelled passage counts as not relevant (trec_eval), and judged@k says "
        "how complete the labels are.",
        False,
    )
    golden = build_verdict(_result([_run("a")], label_origin="judge"))
    assert golden.judge.startswith("No judge: the golden set's labels only; ")


def test_a_judge_with_a_card_shows_its_first_two_figures_and_its_note() -> None:
    card = JudgeCardSummary(found=True, where="cards/m", model="m-1", figures={"kappa": "0.71", "acc": "0.9", "x": "1"},
                            note="on 80 items")  # fmt: skip
    verdict = build_verdict(_result([_run("a")], judge="m", judge_card=card))
    assert (verdict.judge, verdict.judge_measured) == (
        "Judge m: judge card of m-1: kappa 0.71; acc 0.9 (on 80 items).",
        True,
    )
    bare = card.model_copy(update={"note": None})
    assert build_verdict(_result([_run("a")], judge="m", judge_card=bare)).judge == (
        "Judge m: judge card of m-1: kappa 0.71; acc 0.9."
    )


def test_a_judge_measured_on_audited_labels_shows_its_kappa_after_its_card() -> None:
    kappa = AgreementStat(value=0.6, low=0.5, high=0.7)
    agreement = AgreementSummary(n_items=40, overall=AgreementBlock(n=40, cohen_kappa=kappa))
    alone = build_verdict(_result([_run("a")], judge="m", agreement=agreement))
    assert (alone.judge, alone.judge_measured) == (
        "Judge m: Cohen's kappa with people 0.600 [0.500, 0.700] on 40 audited labels.", True)  # fmt: skip
    card = JudgeCardSummary(found=True, where="cards/m", model="m-1", figures={"kappa": "0.71"})
    both = build_verdict(_result([_run("a")], judge="m", agreement=agreement, judge_card=card))
    assert both.judge == (
        "Judge m: judge card of m-1: kappa 0.71; Cohen's kappa with people 0.600 [0.500, 0.700] on 40 audited labels."
    )


def test_a_card_not_found_or_without_figures_and_no_kappa_leave_the_judge_unmeasured() -> None:
    command = "`assay judge-check --judge m --labels g -o card/`"
    for card in (None, JudgeCardSummary(found=False, where="x", model="m", figures={"kappa": "0.7"}),
                 JudgeCardSummary(found=True, where="x", model="m")):  # fmt: skip
        no_value = AgreementSummary(n_items=3, overall=AgreementBlock(n=3, cohen_kappa=AgreementStat(value=None)))
        verdict = build_verdict(_result([_run("a")], judge="m", judge_card=card, agreement=no_value))
        assert (verdict.judge, verdict.judge_measured) == (
            "Judge m: no judge card for m and no audited labels, so its trust is unmeasured; measure it with "
            f"{command}.",
            False,
        )


def test_labels_of_people_or_imported_say_the_judge_made_only_the_answer_metrics() -> None:
    for origin in ("human", "imported"):
        verdict = build_verdict(_result([_run("a")], judge="m", label_origin=origin))
        assert verdict.judge == (
            f"Relevance labels are the golden set's own ({origin}); the judge m made the answer metrics and is "
            "unmeasured: `assay judge-check --judge m --answers JUDGEMENTS -o card/` measures them against people's "
            "judgements of answers, `assay judge-check --judge m --labels g -o card/` its relevance grades."
        )
        assert not verdict.judge_measured


# -- cost and latency -----------------------------------------------------------------------------------------------


def test_cost_and_latency_name_each_system_that_recorded_either() -> None:
    runs = [
        _run("a", system=SystemSummary(cost_usd=1234.5, latency_ms={"p50": 1234.4, "p95": 2500.0, "mean": 9.0})),
        _run("b", system=SystemSummary(lines=3)),  # nothing recorded: not shown
        _run("c", system=SystemSummary(latency_ms={"p50": 10.0})),
        _run("d", system=SystemSummary(cost_usd=0.0, latency_ms={"p95": 7.0})),
        _run("e"),
    ]
    verdict = build_verdict(_result(runs))
    assert verdict.systems == [
        SystemCost(run="a", cost_usd=1234.5, p50_ms=1234.4, p95_ms=2500.0),
        SystemCost(run="c", cost_usd=None, p50_ms=10.0, p95_ms=None),
        SystemCost(run="d", cost_usd=0.0, p50_ms=None, p95_ms=7.0),
    ]
    assert verdict.cost == (
        "Cost and latency: a $1,234.5000, p50 1,234 ms, p95 2,500 ms; c cost unknown, p50 10 ms; d $0.0000, p95 7 ms."
    )
    assert build_verdict(_result([_run("a", system=SystemSummary(lines=3))])).cost is None


# -- what the history is worth ----------------------------------------------------------------------------------------


def _history(gain: HistoryGain) -> str:
    return build_verdict(_result([_run("rw"), _run("tu")], history_gain=[gain])).history[0]


def test_a_history_that_costs_the_dependent_turns_and_not_the_standalone_ones() -> None:
    gain = HistoryGain(rewrites="rw", turns="tu", metric=METRIC, history="reference",
                       dependent=_comparison(6, -0.25, True), standalone=_comparison(4, 0.02, False))  # fmt: skip
    assert _history(gain) == (
        "History: asked the raw turns with the reference history rather than the standalone rewrites, tu scores "
        "-0.250 [-0.350, -0.150] ndcg@10 on the 6 turns that depend on the history (p adj. 0.010: it loses to "
        "coreference and ellipsis), +0.020 on the 4 standalone ones (no reliable difference, as expected)."
    )


def test_a_history_that_helps_or_makes_no_reliable_difference() -> None:
    helps = HistoryGain(rewrites="rw", turns="tu", metric=METRIC, dependent=_comparison(5, 0.3, True),
                        standalone=_comparison(3, -0.1, True))  # fmt: skip
    assert _history(helps) == (
        "History: asked the raw turns rather than the standalone rewrites, tu scores +0.300 [0.200, 0.400] ndcg@10 "
        "on the 5 turns that depend on the history (p adj. 0.010: the history helps it), -0.100 on the 3 standalone "
        "ones (a difference there too)."
    )
    level = HistoryGain(rewrites="rw", turns="tu", metric=METRIC, dependent=_comparison(5, 0.3, False))
    assert _history(level).endswith("(p adj. 0.250: no reliable difference).")
    behind = HistoryGain(rewrites="rw", turns="tu", metric=METRIC, dependent=_comparison(5, -0.3, False))
    assert _history(behind).endswith("(p adj. 0.250: no reliable difference).")


def test_too_few_dependent_turns_say_nothing_of_them() -> None:
    gain = HistoryGain(rewrites="rw", turns="tu", metric=METRIC, history="own")
    assert _history(gain) == (
        "History: asked the raw turns with the own history rather than the standalone rewrites, tu scores fewer than "
        "two turns that depend on the history were scored in both runs, so nothing is said."
    )


# -- the headline ----------------------------------------------------------------------------------------------------


def test_one_run_has_its_figure_and_no_comparison() -> None:
    verdict = build_verdict(_result([_run("a")]))
    assert verdict.headline == (
        "a: ndcg@10 0.500 [0.400, 0.600] over 50 questions (2 unscored); one run, so no comparison."
    )
    assert verdict.lead is None and verdict.ranking is None
    scored = _run("a").model_copy(update={"metrics": {METRIC: MetricSummary(mean=0.5, n_scored=7)}})
    assert build_verdict(_result([scored])).headline == "a: ndcg@10 0.500 over 7 questions; one run, so no comparison."


def test_runs_not_compared_name_the_best_by_its_mean_the_lowest_when_lower_is_better() -> None:
    assert build_verdict(_result([_run("a", 0.5), _run("b", 0.7)], primary_metric=METRIC)).headline == (
        "b has the highest ndcg@10, 0.700 [0.600, 0.800]; the runs were not compared on it."
    )
    low = [RunResult(name=n, path=f"{n}.jsonl", metrics={"hallucination": MetricSummary(mean=m, n_scored=9)})
           for n, m in (("a", 0.3), ("b", 0.1))]  # fmt: skip
    verdict = build_verdict(_result(low, primary_metric="hallucination"))
    assert verdict.headline == "b has the lowest hallucination, 0.100; the runs were not compared on it."
    assert [p.run for p in verdict.places] == ["b", "a"]


def test_no_metric_computed_is_said() -> None:
    verdict = build_verdict(_result([RunResult(name="a", path="a.jsonl"), RunResult(name="b", path="b.jsonl")]))
    assert (verdict.metric, verdict.places, verdict.lead) == (None, [], None)
    assert verdict.headline == "No metric could be computed: nothing to compare."
    assert verdict.ranking is None


# -- the lead against the runner-up -----------------------------------------------------------------------------------


def _pair(a: str, b: str, delta: float, **fields: object) -> Comparison:
    sure = {"low": delta - 0.1, "high": delta + 0.1, "p_value": 0.01, "p_adjusted": 0.01, "significant": True}
    return Comparison(a=a, b=b, metric=METRIC, delta=delta, verdict="", **{"n": 50, **sure, **fields})  # type: ignore[arg-type]


def test_the_leader_as_run_a_has_the_comparison_turned_its_way() -> None:
    """x (run a) is ahead of y: the delta b - a is -0.2, so the lead is +0.2 with the interval and d_z flipped; the
    pair shares 40 questions of the 50 y scored."""
    comp = _pair("x", "y", -0.2, d_z=-0.8, mean_a=0.7, mean_b=0.5, n=40, n_a=40, n_b=50)
    runs = [_run("x", 0.7, n_scored=40), _run("y", 0.5)]
    verdict = build_verdict(_result(runs, comparisons=[comp], primary_metric=METRIC))
    lead = verdict.lead
    assert lead is not None
    assert (lead.leader, lead.other, lead.n, lead.p_adjusted, lead.supported, lead.shared) == (
        "x",
        "y",
        40,
        0.01,
        True,
        True,
    )
    assert (lead.delta, lead.low, lead.high, lead.d_z) == pytest.approx((0.2, 0.1, 0.3, 0.8))
    assert (lead.leader_mean, lead.other_mean) == (0.7, 0.5)
    assert verdict.headline == (
        "x leads on ndcg@10 on the 40 questions both scored (of 40 and 50): 0.700 against 0.500 for y, +0.200 "
        "[0.100, 0.300] (p adj. 0.010); the evidence supports the lead."
    )


def test_the_leader_as_run_b_keeps_the_comparison_as_it_is() -> None:
    comp = _pair("y", "x", 0.2, d_z=0.8, mean_a=0.5, mean_b=0.7, n_a=50, n_b=50, significant=False, p_adjusted=0.3)
    verdict = build_verdict(_result([_run("x", 0.7), _run("y", 0.5)], comparisons=[comp], primary_metric=METRIC))
    lead = verdict.lead
    assert lead is not None
    assert (lead.leader, lead.other, lead.delta, lead.d_z, lead.supported, lead.shared) == (
        "x",
        "y",
        0.2,
        0.8,
        False,
        False,
    )
    assert (lead.leader_mean, lead.other_mean) == (0.7, 0.5)
    assert verdict.headline == (
        "x leads on ndcg@10 with 0.700 [0.600, 0.800]: +0.200 [0.100, 0.300] over y (p adj. 0.300, n = 50 "
        "questions); the evidence does not support the lead: no reliable difference, a tie."
    )


def test_a_comparison_without_d_z_leads_without_one_and_one_pair_not_compared_is_singular() -> None:
    comps = [_pair("b", "x", 0.2), _pair("b", "y", 0.1, significant=False, p_adjusted=0.4)]
    verdict = build_verdict(_result([_run("b", 0.5), _run("x", 0.7), _run("y", 0.6)], comparisons=comps,
                                    primary_metric=METRIC))  # fmt: skip
    # y is the runner-up but was not compared with x: the lead is against b, the closest run compared with x
    assert verdict.lead is not None and verdict.lead.d_z is None and verdict.lead.other == "b"
    assert (verdict.ranking or "").endswith(
        "letter are; 1 pair not compared (--baseline, or too few questions both scored) count as not distinguished."
    )
