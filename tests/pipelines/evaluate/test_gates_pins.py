"""The gate rule pinned further (found by the mutation habit): which budget measure a refused gate points to, each
step of the default metric, a value exactly at the threshold, a gate on a run with nothing scored, the comparison read
in the other order, a refusal only for the runs compared, the relevant chunks the half-a-unit rule measures against,
and the words of each message."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet, Manifest
from assay.pipelines.evaluate.statistics.gates import (
    Gate,
    budget_metric,
    check_gates,
    default_metric,
    gate_failure,
    regression,
    relevant_chunk_lengths,
    unit_refusal,
)
from assay.results import Comparison, EvalResult, MetricSummary, RunResult
from assay.types import Chunk, Provenance, RelevanceLabel

SCORED = MetricSummary(mean=0.5, low=0.4, high=0.6, n_scored=20)


def _result(names: list[str], budgets: list[str] | None, *, passages: dict[str, float] | None = None) -> EvalResult:
    """Runs named by ``passages`` (their median passage; one run "r" of 600 by default), each with ``names`` in
    that order, over golden chunks of median 600 characters."""
    runs = [RunResult(name=name, path=name, metrics=dict.fromkeys(names, SCORED), passage_lengths={"median": median})
            for name, median in (passages or {"r": 600.0}).items()]  # fmt: skip
    settings = {} if budgets is None else {"budgets": budgets}
    return EvalResult(assay_version="t", golden="g", judge=None, k_values=[10], runs=runs, settings=settings,
                      chunk_lengths={"median": 600.0})  # fmt: skip


# ------------------------------------------------------------------------------------------ the budget measure


def test_the_budget_measure_is_ndcg_at_the_first_budget_whatever_the_order_of_the_metrics() -> None:
    result = _result(["ndcg@10", "recall@1000t", "ndcg@1000t", "ndcg@500t"], ["500t", "1000t"])
    assert budget_metric(result) == "ndcg@500t"


def test_without_ndcg_at_the_first_budget_it_is_the_first_budget_measure_computed() -> None:
    names = ["ndcg@10", "map", "recall@1000t", "ndcg@1000t"]
    assert budget_metric(_result(names, ["2000t"])) == "recall@1000t"  # no ndcg@2000t among them
    assert budget_metric(_result(names, None)) == "recall@1000t"  # no budgets in the settings
    assert budget_metric(_result(names, [])) == "recall@1000t"


def test_without_any_budget_measure_there_is_none_and_the_refusal_says_how_to_get_one() -> None:
    result = _result(["ndcg@10", "map"], None, passages={"short": 100.0})
    assert budget_metric(result) is None
    why = unit_refusal(result, result.runs[0], "ndcg@10")
    assert why is not None
    assert why.endswith(
        "so ndcg@10 would count how it cut its text, not what it found. Evaluate a budget measure (--budget 1000t) "
        "and gate on ndcg@1000t instead: relevant characters within the same budget of text for every run."
    )


# ------------------------------------------------------------------------------------------ the default metric


@pytest.mark.parametrize(
    ("names", "asked", "expected"),
    [
        (["map", "ndcg@10"], None, "ndcg@10"),  # ndcg@10 wherever it stands
        (["map", "ndcg@10"], "P@5", "ndcg@10"),  # a --primary no run has is passed over
        (["map", "recall@10"], None, "map"),  # else the first metric of the first run
        ([], None, "ndcg@10"),  # no metric at all: ndcg@10 (the gate then says there is no such metric)
    ],
)
def test_the_default_metric_when_nothing_leads(names: list[str], asked: str | None, expected: str) -> None:
    result = _result(names, None)
    result.settings["primary"] = asked
    assert default_metric(result) == expected


# --------------------------------------------------------------------------------------------- one gate's rule


@pytest.mark.parametrize("at_most", [False, True])
def test_a_value_exactly_at_the_threshold_passes_either_side(at_most: bool) -> None:
    for statistic, value in (("mean", 0.5), ("low", 0.4), ("high", 0.6)):
        assert gate_failure("r", SCORED, Gate("ndcg@10", value, statistic=statistic, at_most=at_most)) is None


def test_a_run_without_the_metric_fails_with_no_query() -> None:
    assert gate_failure("r", None, Gate("ndcg@10", 0.5)) == "r: ndcg@10 has no scored query (no query; gate 0.5)"
    empty = MetricSummary(mean=None, n_scored=0)
    assert gate_failure("r", empty, Gate("ndcg@10", 0.5)) == "r: ndcg@10 has no scored query (no query; gate 0.5)"


def test_the_unscored_reasons_are_listed_with_their_counts() -> None:
    unscored = MetricSummary(mean=None, n_unscored=3, unscored_reasons={"loop": 2, "truncated": 1})
    assert gate_failure("r", unscored, Gate("faithfulness", 0.8)) == (
        "r: faithfulness has no scored query (loop 2, truncated 1; gate 0.8)"
    )


def test_a_gate_describes_its_side() -> None:
    assert Gate("ndcg@10", 0.6).describe() == "ndcg@10 mean >= 0.6"
    assert Gate("ndcg@10", 0.6, statistic="low").describe() == "ndcg@10 interval's lower bound >= 0.6"


def test_an_unknown_metric_without_an_origin_starts_with_the_metric() -> None:
    with pytest.raises(ConfigError) as caught:
        check_gates(_result(["map"], None), [Gate("ndcg@7", 0.5)])
    assert str(caught.value) == "ndcg@7: no such metric in this evaluation; metrics: map"


# ------------------------------------------------------------------------------------------------ regression


def _compared(delta: float, *, significant: bool = True, metric: str = "ndcg@10") -> EvalResult:
    result = _result([metric], None, passages={"a": 600.0, "b": 600.0})
    result.comparisons = [
        Comparison(a="a", b="b", metric=metric, n=30, delta=delta, low=delta - 0.05, high=delta + 0.03, p_value=0.001,
                   p_adjusted=0.004, significant=significant, verdict="")
    ]  # fmt: skip
    return result


def test_a_significant_difference_of_exactly_zero_is_no_regression() -> None:
    for metric in ("ndcg@10", "hallucination"):  # higher is better, lower is better
        result = _compared(0.0, metric=metric)
        assert regression(result, "b", "a", metric) is None and regression(result, "a", "b", metric) is None


def test_the_comparison_read_the_other_way_round_turns_the_difference_and_its_interval() -> None:
    result = _compared(0.06)  # b − a = +0.06 [+0.01, +0.09]: a is worse than b
    assert regression(result, "a", "b", "ndcg@10") == (
        "a is significantly worse than b on ndcg@10: a − b = -0.060 [-0.090, -0.010], p adjusted 0.004 over 30 "
        "paired queries"
    )
    assert regression(result, "b", "a", "ndcg@10") is None


def test_only_the_two_runs_compared_can_refuse_the_metric() -> None:
    result = _result(["ndcg@10"], None, passages={"a": 600.0, "b": 600.0, "short": 100.0})
    result.comparisons = _compared(-0.06).comparisons
    message = regression(result, "b", "a", "ndcg@10")  # "short" is refused, but it is not compared
    assert message is not None and message.startswith("b is significantly worse than a on ndcg@10: b − a = -0.060")
    both = _result(["ndcg@10"], None, passages={"a": 100.0, "b": 200.0})
    message = regression(both, "b", "a", "ndcg@10")
    each = [unit_refusal(both, run, "ndcg@10") for run in both.runs]
    assert message == f"{each[0]} {each[1]}" and str(each[0]).startswith("a: ndcg@10 refused")


# ---------------------------------------------------------------------------------- the relevant golden chunks


def _golden(grades: dict[str, int]) -> GoldenSet:
    """Chunks c1..c4 of 10, 20, 30 and 40 characters; ``grades`` labels some of them for one question."""
    chunks = [Chunk(id=f"c{i}", doc_id="d", ordinal=i, text="x" * (10 * i)) for i in range(1, 5)]
    made = Provenance(source="judge", model="fixture", time=datetime(2026, 1, 1, tzinfo=UTC))
    qrels = [RelevanceLabel(query_id="q", chunk_id=cid, grade=g, provenance=made) for cid, g in grades.items()]
    return GoldenSet(Manifest(assay_version="test"), chunks=chunks, qrels=qrels)


def test_the_relevant_chunks_are_those_graded_at_or_above_the_threshold() -> None:
    gold = _golden({"c1": 1, "c2": 2, "c3": 3, "c4": 0})
    assert relevant_chunk_lengths(gold, 2) == [20, 30]
    assert relevant_chunk_lengths(gold, 1) == [10, 20, 30]


def test_with_no_chunk_graded_so_every_chunk_counts() -> None:
    assert relevant_chunk_lengths(_golden({"c1": 1}), 2) == [10, 20, 30, 40]
    assert relevant_chunk_lengths(_golden({}), 1) == [10, 20, 30, 40]
