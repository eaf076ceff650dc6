"""The measures of a trajectory in an evaluation: every search's passages read against the same character grades as
the context's, in letters and digits, hand-counted on the passages fixture's text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from trajectory_fixture import AGENT, FRAGMENT, SINGLE, TENT, N, search, trajectory_golden

from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.pipelines.evaluate import EvalSettings, evaluate, evaluate_detailed
from assay.report._trajectory import trajectory_lines
from assay.results import QueryResult
from assay.types import ToolCall


def _evaluate(tmp_path: Path, runs: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str], QueryResult]:
    paths = []
    for name, lines in runs.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append((name, path))
    _, rows = evaluate(trajectory_golden(), paths, settings=EvalSettings(n_boot=200, k_values=(5,)))
    return {(row.run, row.query_id): row for row in rows}


def test_an_agent_that_found_both_hops_and_dropped_one_beside_a_single_search(tmp_path: Path) -> None:
    rows = _evaluate(tmp_path, {"agent": AGENT, "single": SINGLE})
    agent, single = rows["agent", "q4"].metrics, rows["single", "q4"].metrics
    assert agent["trajectory_recall"] == pytest.approx((TENT + FRAGMENT) / N)
    assert agent["first_search_recall"] == pytest.approx(TENT / N)
    assert agent["evidence_dropped"] == pytest.approx(TENT / N)  # the tent's text never reached the context
    assert agent["hop_coverage"] == 1.0  # 22 of the 42 express characters: at least half
    assert agent["redundant_searches"] == pytest.approx(1 / 3)  # the second search found nothing relevant
    assert agent["looped"] == 0.0
    assert (agent["searches"], agent["tool_calls"], agent["step_tokens"]) == (3.0, 1.0, 300.0)
    assert agent["step_latency_ms"] is None  # no step reported its time
    # a run without steps is one search, its context
    assert single["trajectory_recall"] == single["first_search_recall"] == pytest.approx(TENT / N)
    assert single["evidence_dropped"] == 0.0
    assert single["hop_coverage"] == 0.5
    assert (single["searches"], single["tool_calls"], single["redundant_searches"]) == (1.0, 0.0, 0.0)
    assert single["step_tokens"] is None and rows["single", "q4"].unscored["step_tokens"] == "no_token_counts"


def test_a_repeated_query_is_a_loop_and_a_question_without_hops_leaves_hop_coverage_unscored(tmp_path: Path) -> None:
    lines = [
        {"query_id": "q4", "retrieved": ["tent#1"],
         "steps": [search("tent weight", "tent#1"), search("Tent  WEIGHT", "tent#1")]},
        {"query_id": "q2", "retrieved": ["tent#1"], "steps": [search("tent weight", "tent#1")]},
    ]  # fmt: skip
    rows = _evaluate(tmp_path, {"agent": lines})
    looped, plain = rows["agent", "q4"], rows["agent", "q2"]
    assert looped.metrics["looped"] == 1.0 and plain.metrics["looped"] == 0.0
    assert looped.metrics["redundant_searches"] == 0.5
    assert looped.metrics["hop_coverage"] == 0.5
    assert plain.metrics["hop_coverage"] is None and plain.unscored["hop_coverage"] == "no_hops"
    # q2's relevant text is its tent#1 paragraph alone (tent#2 is graded 0): all of it found
    assert plain.metrics["trajectory_recall"] == 1.0


def test_runs_without_steps_get_no_trajectory_measure(tmp_path: Path) -> None:
    rows = _evaluate(tmp_path, {"single": SINGLE})
    assert "trajectory_recall" not in rows["single", "q4"].metrics


def test_a_search_passage_is_graded_by_the_same_pool_and_judged_once_and_one_found_nowhere_is_named(
    tmp_path: Path,
) -> None:
    """A search's passage the rule cannot grade goes to the judge like a context passage (one call, kept in the golden
    set's passages.jsonl, read back the next time); one found in no document is counted and its line named."""
    outside = "Our stores open at nine every morning and close at six in the evening."
    folder = tmp_path / "golden"
    trajectory_golden().save(folder)
    line = {"query_id": "q1", "retrieved": ["returns#1"],
            "steps": [search("opening hours", {"text": outside}), search("returns", "returns#1")]}  # fmt: skip
    run = tmp_path / "agent.jsonl"
    run.write_text(json.dumps(line) + "\n", encoding="utf-8")
    settings = EvalSettings(k_values=(1,), n_boot=200, metrics=("P@1",))
    first, _ = evaluate(folder, [("agent", run)], judge=make_judge("offline"), settings=settings)
    assert first.usage["relevance"].calls == 1
    saved = GoldenSet.load(folder)
    assert [p.text for p in saved.passages] == [outside] and saved.passages[0].labels[0].query_id == "q1"
    assert first.runs[0].counts.step_passages_unlocated == 1
    assert any("1 passage(s) of search steps were found in no golden document (lines 1;" in w for w in first.warnings)
    second, _ = evaluate(folder, [("agent", run)], judge=make_judge("offline"), settings=settings)
    assert "relevance" not in second.usage  # nothing asked again


def test_the_explorer_shows_each_step_where_each_hop_was_found_and_the_path_diagnosis(tmp_path: Path) -> None:
    path = tmp_path / "agent.jsonl"
    looping = [*AGENT[0]["steps"], search("Brackenhow tent weight", "tent#1")]
    lines = [AGENT[0] | {"steps": looping}, {"query_id": "q2", "retrieved": ["tent#1"]}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = evaluate_detailed(trajectory_golden(), [("agent", path)], settings=EvalSettings(n_boot=200, k_values=(5,)))
    view = next(q for q in done.questions if q.query_id == "q4").runs[0]
    kinds = [(s.number, s.kind) for s in view.steps]
    assert kinds == [(1, "retrieval"), (2, "retrieval"), (3, "retrieval"), (4, "llm"), (5, "tool"), (6, "llm"),
                     (7, "retrieval")]  # fmt: skip
    first, second, third = view.steps[0], view.steps[1], view.steps[2]
    assert first.query == "Brackenhow tent weight"
    assert [(p.unit, p.grade, p.how) for p in first.passages] == [("tent#1", 3, "chunk"), ("tent#2", None, "chunk")]
    assert (first.recall, first.added, first.lost) == (pytest.approx(TENT / N), TENT, TENT)
    assert (second.added, second.lost) == (0, 0)
    assert (third.added, third.lost) == (FRAGMENT, 0)
    assert [p.how for p in third.passages] == ["unlabelled"]  # a fragment the rule cannot grade, and no judge
    assert (view.steps[3].tokens, view.steps[4].name, view.steps[4].arguments) == (
        120,
        "calculator",
        '{"expression": "3.2 * 2"}',
    )
    assert view.hops == [("tent#1", 1), ("shipping#2", 3)]  # found by steps 1 and 3
    assert view.path == [
        f"found but dropped: relevant text returned by search 1 ({TENT} characters), search 4 ({TENT} characters) "
        f"is not in the final context (evidence_dropped {TENT / N:.3f})",
        "looped: step 7 repeats the query 'Brackenhow tent weight' of step 1",
    ]
    plain = next(q for q in done.questions if q.query_id == "q2").runs[0]
    assert plain.steps == [] and plain.path == []  # a line without steps shows none


def test_tool_calls_against_the_questions_reference_calls(tmp_path: Path) -> None:
    """q4's references: search the catalogue for the tent, then add two numbers; the agent made the addition with
    other spacing and a multiplication; q2 has no reference call."""
    gold = trajectory_golden()
    q4 = next(q for q in gold.questions if q.id == "q4")
    q4.tool_calls = [ToolCall(name="catalogue", arguments={"item": "Brackenhow 4"}),
                     ToolCall(name="calculator", arguments={"expression": "3.2+12"})]  # fmt: skip
    lines = [
        {"query_id": "q4", "retrieved": ["tent#1"], "steps": [
            {"kind": "tool", "name": "calculator", "arguments": {"expression": "3.2 * 2"}, "latency_ms": 12.5},
            {"kind": "tool", "name": "calculator", "arguments": {"expression": "3.2+12"}, "latency_ms": 7.5}]},
        {"query_id": "q2", "retrieved": ["tent#1"], "steps": [search("tent", "tent#1")]},
    ]  # fmt: skip
    path = tmp_path / "agent.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = evaluate_detailed(gold, [("agent", path)], settings=EvalSettings(n_boot=200, k_values=(5,)))
    got = {row.query_id: row for row in done.per_query}
    four = got["q4"].metrics
    # names: calculator once of the reference's two, of the agent's two calls
    assert (four["tool_name_precision"], four["tool_name_recall"], four["tool_name_f1"]) == (0.5, 0.5, 0.5)
    assert four["tool_order_f1"] == 2 * 1 / 4  # the longest common subsequence: calculator
    assert four["tool_args_exact"] == 0.5  # the addition, as given
    assert four["tool_calls"] == 2.0 and four["step_latency_ms"] == 20.0
    two = got["q2"]
    assert two.metrics["tool_name_f1"] is None and two.unscored["tool_name_f1"] == "no_reference_tool_calls"
    assert two.metrics["tool_name_precision"] is None
    assert two.unscored["tool_name_precision"] == "no_reference_tool_calls"
    assert two.metrics["step_latency_ms"] is None and two.unscored["step_latency_ms"] == "no_step_latency"
    view = next(q for q in done.questions if q.query_id == "q4").runs[0]
    assert view.references == [('catalogue({"item": "Brackenhow 4"})', False),
                                ('calculator({"expression": "3.2+12"})', True)]  # fmt: skip
    line = trajectory_lines(done.result)[0]
    assert "tool calls against the references: name F1 0.500, in order 0.500, arguments exact 0.500" in line


def test_a_question_with_reference_calls_and_a_line_that_called_no_tool(tmp_path: Path) -> None:
    """q4 has one reference call and the line only searched: its name precision is unscored (no call to be precise
    about), every other tool measure 0."""
    gold = trajectory_golden()
    q4 = next(q for q in gold.questions if q.id == "q4")
    q4.tool_calls = [ToolCall(name="calculator", arguments={"expression": "3.2+12"})]
    path = tmp_path / "agent.jsonl"
    path.write_text(json.dumps({"query_id": "q4", "retrieved": ["tent#1"], "steps": [search("tent", "tent#1")]}) + "\n",
                    encoding="utf-8")  # fmt: skip
    row = evaluate_detailed(gold, [("agent", path)], settings=EvalSettings(n_boot=200, k_values=(5,))).per_query[0]
    assert row.metrics["tool_name_precision"] is None and row.unscored["tool_name_precision"] == "no_tool_calls"
    for name in ("tool_name_recall", "tool_name_f1", "tool_order_f1", "tool_args_exact"):
        assert row.metrics[name] == 0.0


def test_arguments_judged_equivalent_pair_a_call_written_another_way(tmp_path: Path) -> None:
    """q4's reference: calculator(3.2+12). One line wrote 12 + 3.2 (equivalent: one tool_arguments call, the offline
    rule pairs it), q2's line made the reference call as given (1 without asking), a third line of another run
    called nothing (0 without asking)."""
    gold = trajectory_golden()
    for question in gold.questions:
        if question.id in ("q4", "q2"):
            question.tool_calls = [ToolCall(name="calculator", arguments={"expression": "3.2+12"})]
    agent = [
        {"query_id": "q4", "retrieved": ["tent#1"], "steps": [
            {"kind": "tool", "name": "calculator", "arguments": {"expression": "3.2 * 12"}},
            {"kind": "tool", "name": "calculator", "arguments": {"expression": "12 + 3.2"}}]},
        {"query_id": "q2", "retrieved": ["tent#1"], "steps": [
            {"kind": "tool", "name": "calculator", "arguments": {"expression": "3.2+12"}}]},
    ]  # fmt: skip
    quiet = [{"query_id": "q4", "retrieved": ["tent#1"], "steps": [search("tent", "tent#1")]}]
    paths = []
    for name, lines in (("agent", agent), ("quiet", quiet)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        paths.append((name, path))
    settings = EvalSettings(n_boot=200, k_values=(5,), metrics=("P@5", "tool_args_judged", "tool_args_exact"))
    result, rows = evaluate(gold, paths, judge=make_judge("offline"), settings=settings)
    got = {(row.run, row.query_id): row.metrics for row in rows}
    assert got["agent", "q4"]["tool_args_exact"] == 0.0 and got["agent", "q4"]["tool_args_judged"] == 1.0
    assert got["agent", "q2"]["tool_args_judged"] == 1.0 and got["quiet", "q4"]["tool_args_judged"] == 0.0
    assert result.usage["tool_args_judged"].calls == 1  # only the line that needed a judge asked one
