"""The gate rule shared by ``assay eval --fail-under`` and the pytest plugin, the not-worse-than-baseline rule, the
half-a-unit refusal and the metric of a gate that names none."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.pipelines.evaluate.statistics.gates import (
    Gate,
    check_gates,
    default_metric,
    gate_failure,
    refusals,
    regression,
    unit_refusal,
)
from assay.results import Comparison, EvalResult, MetricSummary, RunResult


def _result() -> EvalResult:
    good = RunResult(name="good", path="g", metrics={
        "ndcg@10": MetricSummary(mean=0.70, low=0.62, high=0.78, n_scored=30),
        "hallucination": MetricSummary(mean=0.05, low=0.01, high=0.12, n_scored=30),
    })  # fmt: skip
    weak = RunResult(name="weak", path="w", metrics={
        "ndcg@10": MetricSummary(mean=0.61, low=0.52, high=0.70, n_scored=30),
        "hallucination": MetricSummary(mean=None, n_unscored=30),
    })  # fmt: skip
    comparisons = [
        Comparison(a="good", b="weak", metric="ndcg@10", n=30, delta=-0.09, low=-0.14, high=-0.04, p_value=0.001,
                   p_adjusted=0.002, significant=True, verdict="good better"),
        Comparison(a="good", b="weak", metric="hallucination", n=30, delta=-0.02, low=-0.05, high=0.01,
                   p_value=0.2, p_adjusted=0.4, significant=False, verdict="no reliable difference"),
    ]  # fmt: skip
    return EvalResult(assay_version="t", golden="g", judge=None, k_values=[10], runs=[good, weak],
                      comparisons=comparisons[:1], diagnosis_comparisons=comparisons[1:])  # fmt: skip


def test_mean_gate_is_fail_under() -> None:
    result = _result()
    assert check_gates(result, [Gate("ndcg@10", 0.6)]) == []
    assert check_gates(result, [Gate("ndcg@10", 0.65)]) == ["weak: ndcg@10 = 0.610 < 0.65"]


def test_interval_bounds_and_at_most() -> None:
    result = _result()
    assert check_gates(result, [Gate("ndcg@10", 0.6, statistic="low")]) == [
        "weak: ndcg@10 (interval low) = 0.520 < 0.6"
    ]
    gate = Gate("hallucination", 0.1, statistic="high", at_most=True)
    assert gate_failure("good", result.runs[0].metrics["hallucination"], gate) == (
        "good: hallucination (interval high) = 0.120 > 0.1"
    )
    assert gate_failure("weak", result.runs[1].metrics["hallucination"], gate) == (
        "weak: hallucination has no scored query (30 unscored; gate 0.1)"
    )
    assert check_gates(result, [Gate("ndcg@10", 0.6, statistic="low")], runs=["good"]) == []
    assert gate.describe() == "hallucination interval's upper bound <= 0.1"


def test_unknown_metric_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"--fail-under ndcg@7: no such metric.*hallucination, ndcg@10"):
        check_gates(_result(), [Gate("ndcg@7", 0.5)], origin="--fail-under")


def test_regression_reads_the_comparison_in_either_order_and_direction() -> None:
    result = _result()
    message = regression(result, "weak", "good", "ndcg@10")
    assert message == (
        "weak is significantly worse than good on ndcg@10: weak − good = -0.090 [-0.140, -0.040], "
        "p adjusted 0.002 over 30 paired queries"
    )
    assert regression(result, "good", "weak", "ndcg@10") is None  # good − weak = +0.09: better, not worse
    assert regression(result, "weak", "good", "hallucination") is None  # not significant
    result.diagnosis_comparisons[0].significant = True
    assert regression(result, "weak", "good", "hallucination") is None  # lower hallucination is better
    assert regression(result, "good", "weak", "hallucination") is not None  # good has more of it
    with pytest.raises(ConfigError, match="no comparison of 'good' with 'other' on ndcg@10"):
        regression(result, "good", "other", "ndcg@10")


def _cut(passage: float, primary: str | None = None, asked: str | None = None) -> EvalResult:
    """Two runs over golden chunks of median 600 characters: ``whole`` of median 600, ``short`` of ``passage``."""
    summary = MetricSummary(mean=0.5, low=0.4, high=0.6, n_scored=20)
    metrics = dict.fromkeys(("ndcg@10", "map", "coverage_recall@10", "ndcg@1000t", "recall@1000t"), summary)
    runs = [RunResult(name=name, path=name, metrics=metrics, passage_lengths={"median": median})
            for name, median in (("whole", 600.0), ("short", passage))]  # fmt: skip
    settings = {"budgets": ["1000t"], "primary": asked}
    return EvalResult(assay_version="t", golden="g", judge=None, k_values=[10], runs=runs, settings=settings,
                      primary_metric=primary, chunk_lengths={"median": 600.0})  # fmt: skip


def test_half_a_unit_rule_refuses_measures_counted_in_golden_chunks_below_half_a_chunk() -> None:
    refused = _cut(299.0)
    for metric in ("ndcg@10", "map", "coverage_recall@10"):
        assert [m.split(":")[0] for m in refusals(refused, metric)] == ["short"]
    assert refusals(refused, "ndcg@1000t") == [] and refusals(refused, "recall@1000t") == []  # budget measures
    assert refusals(_cut(300.0), "ndcg@10") == []  # exactly half a chunk reaches it (projection's share 0.5)
    why = check_gates(refused, [Gate("ndcg@10", 0.1)])
    assert why == [unit_refusal(refused, refused.runs[1], "ndcg@10")]  # refused although 0.5 >= 0.1
    assert "median passage is 299 characters, under half the median relevant golden chunk (600)" in why[0]
    assert "Gate on ndcg@1000t instead" in why[0]
    assert check_gates(refused, [Gate("ndcg@10", 0.1)], runs=["whole"]) == []
    again = EvalResult.model_validate_json(refused.model_dump_json())  # results.json carries what the rule reads
    assert refusals(again, "ndcg@10") == refusals(refused, "ndcg@10")
    older = refused.model_copy(update={"chunk_lengths": {}})  # results written before chunk lengths: no refusal
    assert refusals(older, "ndcg@10") == []


@pytest.mark.parametrize(
    ("passage", "primary", "asked", "runs", "expected"),
    [
        (600.0, "ndcg@1000t", None, None, "ndcg@1000t"),  # 1. the evaluation's primary
        (600.0, None, "map", None, "map"),  # 1. else the --primary asked for
        (600.0, None, None, None, "ndcg@10"),  # 1. else ndcg@10
        (299.0, None, None, None, "ndcg@1000t"),  # 2. a unit measure a run cannot reach gives way to the budget
        (299.0, None, None, ["whole"], "ndcg@10"),  # 2. ... only for the runs gated
        (299.0, None, "map", None, "map"),  # 2. ... unless --primary named it (then it is refused)
    ],
)
def test_default_metric_steps(
    passage: float, primary: str | None, asked: str | None, runs: list[str] | None, expected: str
) -> None:
    assert default_metric(_cut(passage, primary, asked), runs) == expected


def test_regression_on_a_refused_metric_gives_the_refusal() -> None:
    refused = _cut(200.0)
    message = regression(refused, "short", "whole", "ndcg@10")
    assert message is not None and message.startswith("short: ndcg@10 refused")
