"""What each metric name of ``assay eval`` asks for (scoring/names.py), function by function: the gate's refusals,
the cut-offs, the catalogue the close names come from, which measures read passages, retrieval or golden chunks,
and the budget and span names with every refusal.

Every expected value is written out by hand from the names' grammar (COMMON_CUTS are 1, 3, 5, 10, 20 and 100; a token
is 4 characters).
"""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.pipelines.evaluate.scoring import names
from assay.pipelines.evaluate.scoring.names import BudgetName, SpanName

NUGGETS = ["nugget_recall_all_strict", "nugget_recall_all_lenient", "nugget_recall_vital_strict",
           "nugget_recall_vital_lenient"]  # fmt: skip


def _nothing(name: str) -> bool:
    """A keep that keeps no name."""
    return False


def _refused(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(ConfigError) as refused:
        call(*args, **kwargs)  # type: ignore[operator]
    return str(refused.value)


# -- the gate (--fail-under, --primary) --------------------------------------------------------------------------------


def test_a_family_is_refused_as_a_gate_with_its_metrics_that_exist_here() -> None:
    assert _refused(names.check_gate, "nugget_recall", judged=True) == (
        f"--fail-under nugget_recall: give one metric, not a family; e.g. {', '.join(NUGGETS)}"
    )
    vital = _refused(names.check_gate, "nugget_recall", judged=True, flag="--primary", keep=lambda m: "vital" in m)
    assert vital == (
        "--primary nugget_recall: give one metric, not a family; e.g. nugget_recall_vital_strict, "
        "nugget_recall_vital_lenient"
    )
    assert _refused(names.check_gate, "coverage_recall", judged=False, k_values=[5, 20]) == (
        "--fail-under coverage_recall: give one metric, not a family; e.g. coverage_recall@20"
    )
    assert _refused(names.check_gate, "ragas_context_precision", judged=True, keep=lambda m: False) == (
        "--fail-under ragas_context_precision: give one metric, not a family; none of its metrics exists for this "
        "golden set and these runs"
    )


def test_a_judged_metric_is_refused_as_a_gate_without_a_judge_and_its_cut_off_is_returned() -> None:
    assert _refused(names.check_gate, "faithfulness", judged=False, flag="--primary") == (
        "--primary faithfulness: an LLM-judged metric needs --judge MODEL (not --no-judge)"
    )
    assert _refused(names.check_gate, "ragas_context_precision@5", judged=False).startswith(
        "--fail-under ragas_context_precision@5: an LLM-judged metric needs --judge MODEL"
    )
    # coverage recall reads the labels only: no judge needed
    assert names.check_gate("coverage_recall@5", judged=False) == 5
    assert names.check_gate("ragas_context_precision@3", judged=True) == 3
    assert names.check_gate("nugget_recall_all_strict", judged=True) is None
    assert names.check_gate("context_recall", judged=True) is None
    assert names.check_gate("P@20", judged=False) == 20
    assert names.check_gate("ndcg@1000t", judged=False) is None


def test_family_members_at_the_headline_k() -> None:
    assert names.family_members("nugget_recall") == NUGGETS
    assert names.family_members("coverage_recall") == ["coverage_recall@10"]
    assert names.family_members("coverage_recall", [5, 10, 20]) == ["coverage_recall@10"]
    assert names.family_members("ragas_context_precision", [3, 7]) == ["ragas_context_precision@7"]
    assert names.family_members("faithfulness", [5]) == ["faithfulness"]


# -- cut-offs ----------------------------------------------------------------------------------------------------------


def test_the_cut_offs_named_join_the_k_values() -> None:
    given = ["P@20", "ndcg@10", "coverage_recall@7", "span_iou@3|g>=2", "map", "faithfulness", "ndcg@1000t",
             "rewrite_f1", "criterion:tone", "nugget_recall_all_strict", "coverage_recall"]  # fmt: skip
    assert names.check_names(given) == {20, 10, 7, 3}
    assert names.check_names([]) == set()
    assert names.joined_k((10, 5), {5, 20, 1}) == (1, 5, 10, 20)
    assert names.joined_k((), ()) == ()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("coverage_recall@5|g>=2", "metric 'coverage_recall@5|g>=2': write coverage_recall@K with K a whole number "
         ">= 1, e.g. coverage_recall@5"),
        ("ragas_context_precision@x", "metric 'ragas_context_precision@x': write ragas_context_precision@K with K a "
         "whole number >= 1, e.g. ragas_context_precision@5"),
        ("nugget_recall@5", "unknown metric 'nugget_recall@5'"),
        ("nugget_recall_all_strict@5", "unknown metric 'nugget_recall_all_strict@5'"),
        ("span_recall@5|g>=2|g>=3", "metric 'span_recall@5|g>=2|g>=3': the variant is |g>=G with G in 0..3"),
        # not written as a budget measure (an option other than one g>=G): read as a ranking name, which it is not
        ("recall@1000t|x", "unknown metric 'recall@1000t|x'"),
        ("recall@1000t|g>=1|g>=2", "unknown metric 'recall@1000t|g>=1|g>=2'"),
        ("P@1000t|g>=4", "metric 'P@1000t|g>=4': |g>=G (G in 0..3) goes with recall, P and map at a budget"),
    ],
)  # fmt: skip
def test_a_judged_span_or_budget_name_written_wrong_is_refused(name: str, message: str) -> None:
    assert _refused(names.check_names, [name], [5, 10]).startswith(message)


def test_an_unknown_name_gets_the_close_names_with_its_options_or_none() -> None:
    assert _refused(names.check_names, ["recal@5|g>=2"], [5]).startswith(
        "unknown metric 'recal@5|g>=2'; close names: recall@5|g>=2. Names: ranking names as in `assay metrics --help`"
    )
    assert _refused(names.check_names, ["zzzzzz"]).startswith("unknown metric 'zzzzzz'; no close name. Names: ")
    # the close names come from the names kept: with nothing kept, nothing is close
    assert _refused(names.check_names, ["ndgc@10"], keep=lambda m: False).startswith(
        "unknown metric 'ndgc@10'; no close name."
    )
    # and from the k values asked for: @7 exists only when asked
    assert "close names: span_iou@7" in _refused(names.check_names, ["span_iuo@7"], [7])


# -- the catalogue -----------------------------------------------------------------------------------------------------


def test_the_catalogue_holds_each_name_once_at_the_k_values_and_budgets_asked() -> None:
    kept = names.catalogue([7, 10], ["500t", "1000t"], keep=lambda m: m.startswith(("span_iou", "coverage")))
    cuts = [1, 3, 5, 7, 10, 20, 100]
    assert kept == [*(f"coverage_recall@{k}" for k in cuts), *(f"span_iou@{k}" for k in cuts), "span_iou@500t",
                    "span_iou@1000t"]  # fmt: skip
    every = names.catalogue()
    assert len(every) == len(set(every))
    present = ["ndcg@10", "P@100", "ragas_context_precision@1", "ndcg@1000t", "map@1000t", "faithfulness",
               "context_recall", "nugget_recall", "contradiction", "rewrite_f1", "claim_recall", *NUGGETS]  # fmt: skip
    for name in present:
        assert name in every, name
    for name in ("coverage_recall", "ragas_context_precision", "ndcg@7", "ndcg@500t"):
        assert name not in every, name


# -- what a name reads -------------------------------------------------------------------------------------------------


# name: (kind_of, counts_passages, needs_passages, measures_retrieval, counts_units)
READS = {
    "ndcg@10": ("ranking", False, True, True, True),
    "map": ("ranking", False, True, True, True),
    "ndcg@1000t": ("budget", False, True, True, False),
    "span_recall@1000t": ("budget", False, True, True, False),
    "span_recall@5": ("span", True, True, True, False),
    "coverage_recall@5": ("llm", False, True, True, True),
    "ragas_context_precision@5": ("llm", False, True, True, False),
    "context_recall": ("llm", True, True, True, False),
    "faithfulness": ("llm", True, True, False, False),
    "attribution_rate": ("llm", True, True, False, False),
    "answer_relevance": ("llm", False, False, False, False),
    "nugget_recall_vital_strict": ("llm", False, False, False, False),
    "claim_recall": ("llm", True, False, False, False),
    "claim_precision": ("llm", True, False, False, False),
    "contradiction": ("llm", False, False, False, False),
    "rewrite_f1": ("rewrite", False, False, False, False),
    "criterion:tone": ("criterion", False, False, False, False),
}


@pytest.mark.parametrize("name", list(READS))
def test_what_each_kind_of_name_reads(name: str) -> None:
    assert (
        names.kind_of(name),
        names.counts_passages(name),
        names.needs_passages(name),
        names.measures_retrieval(name),
        names.counts_units(name),
    ) == READS[name]


# -- budgets -----------------------------------------------------------------------------------------------------------


def test_a_budget_in_tokens_or_characters() -> None:
    assert (names.parse_budget("1000t"), names.parse_budget(" 4000c "), names.parse_budget("1c")) == (4000, 4000, 1)
    assert _refused(names.parse_budget, "0c") == (
        "budget '0c': a budget is at least 1 character (a whole number and a unit: t (tokens, 4 characters each) or "
        "c (characters), e.g. 1000t or 4000c)"
    )
    for bad in ("1000", "1000T", "t", "10.5t", "1000tt"):
        assert _refused(names.parse_budget, bad) == (
            f"budget {bad!r}: write a whole number and a unit: t (tokens, 4 characters each) or c (characters), e.g. "
            "1000t or 4000c"
        )


def test_budget_names_parse_with_their_grade() -> None:
    assert names.parse_budget_name("recall@4000c|g>=2") == BudgetName("recall@4000c|g>=2", "recall", 4000, 2, "4000c")
    assert names.parse_budget_name("P@10t|g>=0") == BudgetName("P@10t|g>=0", "P", 40, 0, "10t")
    assert names.parse_budget_name("map@1000t|g>=3") == BudgetName("map@1000t|g>=3", "map", 4000, 3, "1000t")
    assert names.parse_budget_name("span_iou@25t") == BudgetName("span_iou@25t", "span_iou", 100, None, "25t")
    known = "a budget measure is one of ndcg@1000t, recall@1000t, P@1000t, map@1000t, span_recall@1000t, "
    for bad in ("mrr@1000t", "ndcg@10", "recall@1000t|x", "recall@1000t|g>=1|g>=2", "nd-cg@1000t"):
        assert _refused(names.parse_budget_name, bad).startswith(f"metric {bad!r}: {known}"), bad
    for bad in ("span_recall@1000t|g>=1", "ndcg@1000t|g>=0", "recall@1000t|g>=4"):
        assert _refused(names.parse_budget_name, bad) == (
            f"metric {bad!r}: |g>=G (G in 0..3) goes with recall, P and map at a budget"
        )


def test_the_default_measures_in_their_order() -> None:
    assert names.budget_measures(["1000t", "500c"]) == ["ndcg@1000t", "recall@1000t", "P@1000t", "map@1000t",
                                                        "ndcg@500c", "recall@500c", "P@500c", "map@500c"]  # fmt: skip
    assert names.default_measures([5, 10]) == [
        "ndcg@5", "P@5", "recall@5", "hit@5", "map@5", "err@5", "ndcg@10", "P@10", "recall@10", "hit@10", "map@10",
        "err@10", "map", "mrr", "ndcg", "rprec", "bpref",
    ]  # fmt: skip


# -- spans -------------------------------------------------------------------------------------------------------------


def test_span_names_parse_with_their_grade_and_are_refused_with_the_fix() -> None:
    assert names.parse_span_name("span_iou@10|g>=2") == SpanName("span_iou@10|g>=2", "span_iou", 10, 2)
    assert names.parse_span_name("span_recall@1|g>=0") == SpanName("span_recall@1|g>=0", "span_recall", 1, 0)
    assert names.parse_span_name("span_precision@5") == SpanName("span_precision@5", "span_precision", 5, None)
    fix = "(e.g. span_recall@5, span_iou@10 or span_recall@5|g>=2)"
    assert _refused(names.parse_span_name, "span_recall@0") == (
        f"metric 'span_recall@0': write span_recall@K with K a whole number >= 1 {fix}"
    )
    assert _refused(names.parse_span_name, "span_iou") == (
        f"metric 'span_iou': write span_iou@K with K a whole number >= 1 {fix}"
    )
    assert (
        _refused(names.parse_span_name, "ndcg@5") == f"metric 'ndcg@5': write ndcg@K with K a whole number >= 1 {fix}"
    )
    # no word: the fix names span_recall
    assert _refused(names.parse_span_name, "@5") == f"metric '@5': write span_recall@K with K a whole number >= 1 {fix}"
    for bad in ("span_recall@5|g>=4", "span_recall@5|g>=x", "span_recall@5|x>=2", "span_recall@5|g>="):
        assert _refused(names.parse_span_name, bad) == f"metric {bad!r}: the variant is |g>=G with G in 0..3 {fix}"


def test_a_slip_in_a_gate_or_a_judged_or_span_name_gets_close_names_from_the_k_values_budgets_and_names_kept() -> None:
    # the k values asked for: span_iou@7 exists only with 7 among them; without, the three nearest at one edit
    assert _refused(names.check_gate, "span_iuo@7", judged=True, k_values=[7]).startswith(
        "unknown metric 'span_iuo@7'; close names: span_iou@7. Names: "
    )
    assert _refused(names.check_gate, "span_iuo@7", judged=True).startswith(
        "unknown metric 'span_iuo@7'; close names: span_iou@1, span_iou@3, span_iou@5. Names: "
    )
    # the budgets asked for: ndcg@500t exists only with 500t among them; without, 1000t (always there) is nearest
    assert _refused(names.check_gate, "ndcg@500tt", judged=True, budgets=["500t"]).startswith(
        "unknown metric 'ndcg@500tt'; close names: ndcg@500t. Names: "
    )
    assert _refused(names.check_gate, "ndcg@500tt", judged=True).startswith(
        "unknown metric 'ndcg@500tt'; close names: ndcg@1000t. Names: "
    )
    # the names kept: none kept, none close, whichever way the slip is read (ranking, span, judged at a cut)
    for slip in ("ndgc@10", "span_recall@1O", "coverage_recall@1O"):
        assert _refused(names.check_gate, slip, judged=True, keep=_nothing).startswith(
            f"unknown metric {slip!r}; no close name. Names: "
        ), slip
        assert _refused(names.check_names, [slip], [10], keep=_nothing).startswith(
            f"unknown metric {slip!r}; no close name. Names: "
        ), slip


def test_the_smallest_and_largest_cuts_and_grades_pass() -> None:
    assert names.check_names(["coverage_recall@1", "ragas_context_precision@1"]) == {1}
    assert names.parse_span_name("span_iou@5|g>=3") == SpanName("span_iou@5|g>=3", "span_iou", 5, 3)
    assert names.check_names(["span_recall@1|g>=3", "span_precision@2|g>=0"]) == {1, 2}


def test_a_ranking_name_the_registry_refuses_is_refused_with_its_reason_in_full() -> None:
    assert _refused(names.check_names, ["map|gmax=4"]) == (
        "metric 'map|gmax=4': measure 'map|gmax=4': unknown option 'gmax=4'; options: g>=N, gmax=N (err), beta=X (f)"
    )
