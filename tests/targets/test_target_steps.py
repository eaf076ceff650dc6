"""A system that returns ``steps`` (its searches, tool calls and model calls): the run line keeps them, checked, and
the evaluation counts them; steps of the wrong shape are the call's ``invalid_output`` failure, named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from targets_fixture import make_golden

import assay
from assay.targets.outputs import TargetFailure, normalize


def agent(question: str, query_id: str) -> dict[str, Any]:
    """Searches twice (the second time with a query built from the first hit), computes, answers."""
    n = query_id[1:]
    return {
        "retrieved": [f"c{n}"],
        "answer": f"fact {n}",
        "steps": [
            {"kind": "retrieval", "query": question, "retrieved": [f"c{n}"]},
            {"kind": "retrieval", "query": f"fact {n} value", "retrieved": [{"id": f"c{n}", "score": 2.5}]},
            {"kind": "tool", "name": "calculator", "arguments": '{"expression": "7 * 1"}', "output": 7},
            {"kind": "llm", "prompt_tokens": 30, "completion_tokens": 4},
        ],
    }


def test_a_function_target_s_steps_reach_the_run_line_and_the_system_summary(tmp_path: Path) -> None:
    done = assay.run(make_golden(2), agent, tmp_path / "agent.jsonl")
    steps = done.lines[0]["steps"]
    assert [s["kind"] for s in steps] == ["retrieval", "retrieval", "tool", "llm"]
    assert steps[1]["retrieved"] == [{"id": "c1", "score": 2.5}]
    assert steps[2]["arguments"] == {"expression": "7 * 1"} and steps[2]["output"] == "7"
    settings = assay.EvalSettings(k_values=(1,), metrics=("P@1",), n_boot=100)
    result, rows = assay.evaluate(make_golden(2), [("agent", tmp_path / "agent.jsonl")], settings=settings)
    system = result.runs[0].system
    assert system is not None and system.with_steps == 2
    assert system.steps == {"retrieval": 2.0, "tool": 1.0, "llm": 1.0}
    # the trajectory measures of a target's steps: two searches, one tool call, the model call's 34 tokens
    assert [(r.metrics["searches"], r.metrics["tool_calls"], r.metrics["step_tokens"]) for r in rows] == [
        (2.0, 1.0, 34.0)
    ] * 2
    assert all("trajectory_recall" in r.metrics for r in rows)


@pytest.mark.parametrize(
    ("steps", "said"),
    [
        ({"kind": "tool"}, "'steps' is a dict, not a list"),
        ([{"kind": "tool", "name": "calc", "arguments": "x ="}], "arguments 'x =' are not JSON"),
        ([{"kind": "retrieval"}, {"kind": "plan"}], "field '1'"),
    ],
)
def test_steps_of_the_wrong_shape_are_an_invalid_output(steps: Any, said: str) -> None:
    with pytest.raises(TargetFailure) as caught:
        normalize({"answer": "a", "steps": steps})
    assert caught.value.kind == "invalid_output" and said in caught.value.message


def test_a_reply_of_chat_messages_gives_steps_answer_and_passages() -> None:
    messages = [
        {"role": "user", "content": "what is fact 1?"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "a", "function": {"name": "kb", "arguments": '{"query": "fact 1"}'}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": '[{"id": "c1", "text": "Fact 1 is 7."}]'},
        {"role": "assistant", "content": "7"},
    ]
    line = normalize({"messages": messages})
    assert line["answer"] == "7" and line["retrieved"] == [{"id": "c1", "text": "Fact 1 is 7."}]
    assert [s["kind"] for s in line["steps"]] == ["llm", "retrieval", "llm"]
    kept = normalize({"messages": messages, "answer": "own", "contexts": ["mine"]})
    assert kept["answer"] == "own" and kept["retrieved"] == [{"text": "mine"}]  # the system's own fields win
    with pytest.raises(TargetFailure, match="'messages': message 0 is a tool reply to no call"):
        normalize({"messages": [{"role": "tool", "content": "x"}]})
