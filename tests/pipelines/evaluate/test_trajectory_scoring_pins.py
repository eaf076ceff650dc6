"""Pins of the measures of a trajectory found by the mutation habit (scripts/mutation.sh): hops read from a question's
source chunks, a hop whose chunk is not relevant, a single hop, repeated tool calls, blank queries, token counts given
in part, the step queries' BM25 quality, failed lines and lines without any search.

Letters and digits of the passages fixture's paragraphs, counted by hand (the fixture counts tent#1 = 47 and
shipping#2 = 42): shipping#1 "Standard shipping takes 3 to 5 business days." = 8+8+5+1+2+1+8+4 = 37; tent#3 "Pitch the
inner tent first in dry weather." = 5+3+5+4+5+2+3+7 = 34; returns#1 "Customers may return any unused item within 30
days of delivery for a full refund." = 9+3+6+3+6+4+6+2+4+2+8+3+1+4+6 = 67; returns#2 "Refunds are issued to the
original payment method within 5 business days." = 7+3+6+2+3+8+7+6+6+1+8+4 = 61.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from passages_fixture import TIME
from trajectory_fixture import EXPRESS, TENT, search, trajectory_golden

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate import EvalSettings, Evaluated, evaluate_detailed
from assay.pipelines.evaluate.scoring.trajectory import hops_of
from assay.results import QueryResult
from assay.types import Provenance, Question, RelevanceLabel

STANDARD, PITCH, RETURNS, REFUNDS = 37, 34, 67, 61


def _golden() -> GoldenSet:
    """The trajectory fixture's set with q5 (multi-hop, its hops only as source chunks: shipping#1 and shipping#2,
    both graded 3), q6 (hops tent#1, graded 3, and tent#3, unlabelled; tent#2, just before tent#3, graded 1), q7
    (returns#1 graded 0: no relevant text), q8 (one hop, tent#1, graded 3) and q9 (hops tent#1, graded 3, and
    shipping#2, graded 1 with the quote "Express shipping costs $12": its relevant text is those 22 characters) and q10
    (hops tent#1, graded 3, and returns#1, in a document with no label of q10)."""
    gold = trajectory_golden()
    questions = [
        Question(id="q5", text="How long does standard shipping take, and what does express cost?", type="multi-hop",
                 source_chunk_ids=["shipping#1", "shipping#2"]),
        Question(id="q6", text="How heavy is the tent, and how is it pitched?", type="comparison",
                 hops=["tent#1", "tent#3"]),
        Question(id="q7", text="When do the stores open?"),
        Question(id="q8", text="How heavy is the tent?", type="comparison", hops=["tent#1"]),
        Question(id="q9", text="How heavy is the tent, and what does express cost?", type="comparison",
                 hops=["tent#1", "shipping#2"]),
        Question(id="q10", text="How heavy is the tent, and how long are returns?", type="comparison",
                 hops=["tent#1", "returns#1"]),
    ]  # fmt: skip
    grades = {("q5", "shipping#1"): 3, ("q5", "shipping#2"): 3, ("q6", "tent#1"): 3, ("q6", "tent#2"): 1,
              ("q7", "returns#1"): 0, ("q8", "tent#1"): 3, ("q9", "tent#1"): 3,
              ("q10", "tent#1"): 3}  # fmt: skip
    labels = [
        RelevanceLabel(query_id=q, chunk_id=c, grade=g, provenance=Provenance(source="judge", time=TIME))
        for (q, c), g in grades.items()
    ]
    labels.append(RelevanceLabel(query_id="q9", chunk_id="shipping#2", grade=1, quotes=["Express shipping costs $12"],
                                 provenance=Provenance(source="judge", time=TIME)))  # fmt: skip
    return GoldenSet(gold.manifest, gold.documents, gold.chunks, [*gold.questions, *questions],
                     [*gold.qrels, *labels], [])  # fmt: skip


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"kind": "tool", "name": name, "arguments": arguments}


AGENT = [
    {"query_id": "q2", "error": {"kind": "timeout", "message": "no answer in 30 s"}},  # failed: first in the file
    {"query_id": "q1", "retrieved": ["returns#1"], "steps": [search("returns", "returns#1")]},
    # the same call with its arguments in another order
    {"query_id": "q3", "retrieved": ["shipping#2"], "steps": [tool("calc", a=1, b=2), tool("calc", b=2, a=1)]},
    {"query_id": "q5", "retrieved": ["shipping#1"], "steps": [search("standard shipping", "shipping#1")]},
    {"query_id": "q6", "retrieved": ["tent#3"], "steps": [search("pitching", "tent#3")]},
    {"query_id": "q7", "retrieved": ["returns#1"],
     "steps": [search("store hours", "returns#1"), search("  ", "returns#2"), search(" ", "returns#4")]},
    {"query_id": "q8", "retrieved": ["tent#1"],
     "steps": [tool("calc", x=1), search("tent", "tent#1"), tool("calc", x=2), tool("calc", x=1),
               {"kind": "llm", "prompt_tokens": 10}, {"kind": "llm", "completion_tokens": 5}, {"kind": "llm"}]},
    # "Express shipping" (7 + 8 = 15 letters): 15 of the 22 quoted characters of shipping#2, 15 of its 42
    {"query_id": "q9", "retrieved": ["tent#1"], "steps": [search("express", {"text": "Express shipping"})]},
    {"query_id": "q10", "retrieved": ["returns#1"], "steps": [search("returns", "returns#1")]},
]  # fmt: skip
QUERIES = [
    {"query_id": "q1", "retrieved": []},  # no search at all
    # "weighs" is a word of tent#1 alone (nDCG@10 1: the relevant chunk first, nothing else); "zzzz" of no chunk (0)
    {"query_id": "q2", "retrieved": ["tent#1"], "steps": [search("weighs", "tent#1"), search("zzzz", "tent#2")]},
    {"query_id": "q3", "retrieved": ["shipping#2"]},  # no steps: one search with no query
    {"query_id": "q8", "retrieved": ["tent#1"], "steps": [{"kind": "llm"}]},  # a model call with no count
    # the same query in other cases: case folded ("ß" folds to "ss", a final "ς" to "σ"), a loop
    {"query_id": "q5", "retrieved": ["shipping#1"], "steps": [search("Straße", "shipping#1"), search("STRASSE")]},
    {"query_id": "q6", "retrieved": ["tent#1"], "steps": [search("ΟΔΟΣ", "tent#1"), search("οδος")]},
]


def _evaluate(root: Path) -> Evaluated:
    runs = []
    for name, lines in {"agent": AGENT, "queries": QUERIES}.items():
        path = root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        runs.append((name, path))
    return evaluate_detailed(_golden(), runs, settings=EvalSettings(n_boot=200, k_values=(5,)))


def _row(done: Evaluated, run: str, qid: str) -> QueryResult:
    return next(row for row in done.per_query if row.run == run and row.query_id == qid)


def _path(done: Evaluated, run: str, qid: str) -> list[str]:
    view = next(q for q in done.questions if q.query_id == qid)
    return next(side for side in view.runs if side.run == run).path


def test_hops_are_recorded_ones_else_a_multi_hop_or_comparison_questions_source_chunks() -> None:
    recorded = Question(id="a", text="t", type="factoid", hops=["x", "y", "z"], source_chunk_ids=["p", "q"])
    assert hops_of(recorded) == ["x", "y", "z"]
    for kind in ("multi-hop", "comparison"):
        assert hops_of(Question(id="a", text="t", type=kind, source_chunk_ids=["p", "q"])) == ["p", "q"]
        assert hops_of(Question(id="a", text="t", type=kind, source_chunk_ids=["p"])) == []  # one chunk: no hops
    assert hops_of(Question(id="a", text="t", type="factoid", source_chunk_ids=["p", "q"])) == []


def _check_a_failed_line_is_skipped_and_the_lines_after_it_measured(done: Evaluated) -> None:
    failed = _row(done, "agent", "q2")
    assert failed.metrics["trajectory_recall"] is None and failed.unscored["trajectory_recall"] == "system_failed"
    assert _row(done, "agent", "q1").metrics["trajectory_recall"] == pytest.approx(RETURNS / (RETURNS + REFUNDS))


def _check_a_multi_hop_questions_source_chunks_are_its_hops(done: Evaluated) -> None:
    got = _row(done, "agent", "q5").metrics
    assert got["hop_coverage"] == 0.5  # shipping#1 found, shipping#2 never searched
    assert got["trajectory_recall"] == got["first_search_recall"] == pytest.approx(STANDARD / (STANDARD + EXPRESS))
    assert _path(done, "agent", "q5") == [
        "never searched for hop 2 of 2 (shipping#2): no search returned half of its evidence"
    ]


def _check_a_hop_whose_chunk_is_not_relevant_is_found_by_showing_the_chunk(done: Evaluated) -> None:
    got = _row(done, "agent", "q6").metrics
    assert got["hop_coverage"] == 0.5  # tent#3 (unlabelled: its whole 34 characters) shown, tent#1 not
    assert got["trajectory_recall"] == 0.0 and got["evidence_dropped"] == 0.0
    assert got["redundant_searches"] == 1.0  # its one search added no relevant character
    assert _path(done, "agent", "q6") == [
        "never searched for hop 1 of 2 (tent#1): no search returned half of its evidence"
    ]


def _check_a_question_without_relevant_text_leaves_the_recall_measures_unscored(done: Evaluated) -> None:
    row = _row(done, "agent", "q7")
    for name in ("trajectory_recall", "first_search_recall", "evidence_dropped", "redundant_searches"):
        assert row.metrics[name] is None and row.unscored[name] == "no_relevant_text"
    assert row.metrics["step_query_bm25_ndcg@10"] is None
    assert row.unscored["step_query_bm25_ndcg@10"] == "no_relevant_label"
    assert row.metrics["looped"] == 0.0  # two blank queries are no query: not a repeat
    assert row.metrics["searches"] == 3.0


def _check_a_repeated_tool_call_is_a_loop_and_partial_token_counts_add_up(done: Evaluated) -> None:
    row = _row(done, "agent", "q8")
    assert row.metrics["hop_coverage"] is None and row.unscored["hop_coverage"] == "no_hops"  # one hop only
    assert row.metrics["looped"] == 1.0
    assert (row.metrics["tool_calls"], row.metrics["searches"], row.metrics["step_tokens"]) == (3.0, 1.0, 15.0)
    assert _path(done, "agent", "q8") == ['looped: step 4 repeats the call calc({"x": 1}) of step 1']


def _check_step_queries_are_scored_by_bm25_and_lines_without_a_search_or_a_query_say_so(done: Evaluated) -> None:
    assert _row(done, "queries", "q2").metrics["step_query_bm25_ndcg@10"] == 0.5  # (1 + 0) / 2
    plain = _row(done, "queries", "q3")
    assert plain.metrics["step_query_bm25_ndcg@10"] is None
    assert plain.unscored["step_query_bm25_ndcg@10"] == "no_step_query"
    empty = _row(done, "queries", "q1")
    assert empty.metrics["searches"] == 0.0
    assert empty.metrics["trajectory_recall"] == empty.metrics["first_search_recall"] == 0.0
    assert empty.metrics["redundant_searches"] is None and empty.unscored["redundant_searches"] == "no_search"
    uncounted = _row(done, "queries", "q8")
    assert uncounted.metrics["step_tokens"] is None and uncounted.unscored["step_tokens"] == "no_token_counts"


def _check_the_runs_summary_counts_its_paths(done: Evaluated) -> None:
    agent = next(run for run in done.result.runs if run.name == "agent").trajectories
    # measured: q1, q3, q5, q6, q7, q8, q9, q10 (q2 failed: not a question answered in one search), all in steps; hops:
    # q5, q6, q9 and q10, each missing one; dropped: q9 (q7's evidence_dropped is unscored, not dropped); looped: q3, q8
    assert agent is not None
    assert (agent.questions, agent.with_steps, agent.hop_questions, agent.hops_missed, agent.dropped,
            agent.looped) == (8, 8, 4, 4, 1, 2)  # fmt: skip
    queries = next(run for run in done.result.runs if run.name == "queries").trajectories
    assert queries is not None and (queries.questions, queries.with_steps, queries.looped) == (6, 4, 2)


def _check_a_hops_evidence_is_its_relevant_text_not_the_whole_chunk(done: Evaluated) -> None:
    got = _row(done, "agent", "q9").metrics
    assert got["hop_coverage"] == 0.5  # shipping#2: 15 of its 22 relevant characters (of the whole 42: under half)
    assert got["trajectory_recall"] == pytest.approx(15 / (TENT + 22))
    assert got["evidence_dropped"] == pytest.approx(15 / (TENT + 22))  # the answer was written from tent#1 alone


def _check_a_hop_in_a_document_with_no_label_of_the_question_is_its_whole_chunk(done: Evaluated) -> None:
    assert _row(done, "agent", "q10").metrics["hop_coverage"] == 0.5  # returns#1 shown whole (67 of 67), tent#1 not


def _check_a_tool_call_repeated_with_its_arguments_reordered_is_a_loop(done: Evaluated) -> None:
    assert _row(done, "agent", "q3").metrics["looped"] == 1.0
    assert _path(done, "agent", "q3") == ['looped: step 2 repeats the call calc({"a": 1, "b": 2}) of step 1']


def _check_a_query_repeated_in_other_cases_is_a_loop(done: Evaluated) -> None:
    assert _row(done, "queries", "q5").metrics["looped"] == 1.0
    assert _row(done, "queries", "q6").metrics["looped"] == 1.0


def test_every_case_of_one_evaluation(tmp_path: Path) -> None:
    """One evaluation for every case above (each check names its case): one test, so that the mutation habit, which
    runs only the tests that call a mutated function, runs these checks for every function the evaluation calls."""
    done = _evaluate(tmp_path)
    _check_a_failed_line_is_skipped_and_the_lines_after_it_measured(done)
    _check_a_multi_hop_questions_source_chunks_are_its_hops(done)
    _check_a_hop_whose_chunk_is_not_relevant_is_found_by_showing_the_chunk(done)
    _check_a_question_without_relevant_text_leaves_the_recall_measures_unscored(done)
    _check_a_repeated_tool_call_is_a_loop_and_partial_token_counts_add_up(done)
    _check_step_queries_are_scored_by_bm25_and_lines_without_a_search_or_a_query_say_so(done)
    _check_the_runs_summary_counts_its_paths(done)
    _check_a_hops_evidence_is_its_relevant_text_not_the_whole_chunk(done)
    _check_a_hop_in_a_document_with_no_label_of_the_question_is_its_whole_chunk(done)
    _check_a_tool_call_repeated_with_its_arguments_reordered_is_a_loop(done)
    _check_a_query_repeated_in_other_cases_is_a_loop(done)
