"""Run lines with ``steps`` (a system that searches several times): read and checked, counted in the system summary
and its report row; a bad step is one error naming the line; a run without steps evaluates as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import make_golden, qid

from assay.errors import FormatError
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.report import _system as sysr

SEARCH = {"kind": "retrieval", "query": "warranty", "retrieved": [{"id": "nothing-known", "text": "x"}]}
TOOL = {"kind": "tool", "name": "calculator", "arguments": {"expression": "2 * 45"}, "output": "90"}
LLM = {"kind": "llm", "model": "m", "prompt_tokens": 10, "completion_tokens": 2}


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_steps_are_counted_per_question_in_the_system_summary_and_its_row(tmp_path: Path) -> None:
    lines = [
        {"query_id": qid(0), "retrieved": [], "answer": "a", "steps": [SEARCH, SEARCH, TOOL, LLM]},
        {"query_id": qid(1), "retrieved": [], "answer": "b", "steps": [SEARCH, LLM]},
        {"query_id": qid(2), "retrieved": [], "answer": "c"},  # no steps: not in the means
    ]
    result, _ = evaluate(make_golden(n=3), [("agent", _write(tmp_path / "agent.jsonl", lines))],
                         settings=EvalSettings(n_boot=100))  # fmt: skip
    system = result.runs[0].system
    assert system is not None and system.with_steps == 2
    assert system.steps == {"retrieval": 1.5, "tool": 0.5, "llm": 1.0}
    assert sysr.system_header(result)[-1] == "steps per question"
    assert sysr.system_rows(result)[0][-1] == "1.5 searches, 0.5 tool calls, 1.0 model calls"


def test_a_run_without_steps_has_no_steps_column(tmp_path: Path) -> None:
    lines = [{"query_id": qid(0), "retrieved": [], "answer": "a", "latency_ms": 12.0}]
    result, _ = evaluate(make_golden(n=1), [("plain", _write(tmp_path / "plain.jsonl", lines))],
                         settings=EvalSettings(n_boot=100))  # fmt: skip
    assert result.runs[0].system is not None and result.runs[0].system.with_steps == 0
    assert sysr.system_header(result) == sysr.HEADER
    assert len(sysr.system_rows(result)[0]) == len(sysr.HEADER)


@pytest.mark.parametrize(
    ("step", "said"),
    [
        ({"kind": "search", "query": "x"}, "does not match any of the expected tags: 'retrieval', 'tool', 'llm'"),
        ({"kind": "tool", "name": "calc", "arguments": "2 +"}, "arguments '2 +' are not JSON"),
        ({"kind": "tool", "arguments": {}}, "steps.1.tool.name"),
    ],
)
def test_a_bad_step_is_an_error_at_its_line(tmp_path: Path, step: dict[str, Any], said: str) -> None:
    lines = [{"query_id": qid(0), "retrieved": []}, {"query_id": qid(1), "retrieved": [], "steps": [LLM, step]}]
    with pytest.raises(FormatError) as caught:
        evaluate(make_golden(n=2), [("bad", _write(tmp_path / "bad.jsonl", lines))], settings=EvalSettings(n_boot=100))
    assert caught.value.line == 2
    assert said in str(caught.value)
    assert "expected steps in order" in str(caught.value)


def test_a_run_line_with_messages_is_evaluated_on_the_context_they_give(tmp_path: Path) -> None:
    golden = make_golden(n=2)
    chunk = next(label.chunk_id for label in golden.qrels if label.query_id == qid(0) and label.grade >= 1)
    hit = [{"id": chunk}]
    messages = [
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "kb", "arguments": '{"query": "x"}'}}]},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps(hit)},
        {"role": "assistant", "content": "done"},
    ]
    lines = [{"query_id": qid(0), "messages": messages}, {"query_id": qid(1), "retrieved": []}]
    run = tmp_path / "agent.jsonl"
    run.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    settings = EvalSettings(k_values=(1,), metrics=("recall@1",), n_boot=100)
    result, rows = evaluate(golden, [("agent", run)], settings=settings)
    by_query = {row.query_id: row for row in rows}
    assert by_query[qid(0)].metrics["recall@1"] > 0  # the search's passage is the context that was scored
    assert (by_query[qid(0)].metrics["searches"], by_query[qid(0)].metrics["tool_calls"]) == (1.0, 0.0)
    assert result.runs[0].system is not None and result.runs[0].system.steps == {"retrieval": 1.0, "tool": 0.0,
                                                                                 "llm": 2.0}  # fmt: skip
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query_id": qid(0), "messages": [{"role": "tool", "content": "x"}]}) + "\n")
    with pytest.raises(FormatError) as caught:
        evaluate(golden, [("bad", bad)], settings=settings)
    assert caught.value.line == 1 and "messages: message 0 is a tool reply to no call" in str(caught.value)
