"""``assay build --tools FILE``: the tools file, the offline judge's rule, and the stage that drafts each answerable
question's reference tool calls, checked against the tools' schemas (the only fake is the model)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from build_helpers import backend_script, chunk, fake_judge, question

from assay.corpus.pooling import Bm25Index
from assay.errors import FormatError
from assay.formats.tools import read_tools
from assay.judge.base import ChatRequest
from assay.judge.offline_drafts import draft_tool_calls as offline_calls
from assay.pipelines.bootstrap.judging import BuildContext
from assay.pipelines.bootstrap.settings import BuildSettings
from assay.pipelines.bootstrap.tool_calls import draft_tool_calls
from assay.testing import FakeBackend

CALCULATOR = {"type": "function", "function": {
    "name": "calculator", "description": "Evaluate an arithmetic expression.",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"],
                   "additionalProperties": False}}}  # fmt: skip
STATUS = {
    "name": "order_status",
    "description": "Look up an order.",
    "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]},
}
TENT = chunk("tent.md", 0, "The Skerry 2 tent weighs 2.1 kg packed. Its trail weight is 1.86 kg.")
STOVE = chunk("stove.md", 0, "The Emberline 2 stove weighs 88 g and boils a litre in 3.5 minutes.")
CTX = BuildContext({c.id: c for c in (TENT, STOVE)}, Bm25Index.build([TENT, STOVE]))


def _tools(tmp_path: Path, items: Any) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def test_a_tools_file_in_openai_and_bare_shapes(tmp_path: Path) -> None:
    tools = read_tools(_tools(tmp_path, {"tools": [CALCULATOR, STATUS]}))
    assert [t.name for t in tools] == ["calculator", "order_status"]
    calc, status = tools
    assert calc.problem({"expression": "1 + 1"}) is None
    assert calc.problem({}) == "calculator needs 'expression'"
    assert calc.problem({"expression": "1", "mode": "x"}) == "calculator has no parameter 'mode'"
    assert status.problem({"order": "A1", "extra": 1}) is None  # the schema allows other arguments


@pytest.mark.parametrize(
    ("items", "line", "said"),
    [
        ([CALCULATOR, {"description": "x"}], 2, "tool 2 has no name"),
        ([CALCULATOR, CALCULATOR], 2, "tool 2: the name 'calculator' again"),
        ([{"name": "t", "parameters": {"type": "string"}}], 1, "tool 1 (t): parameters are not the JSON schema"),
        ([{"name": "t", "parameters": {"required": "x"}}], 1, "tool 1 (t): 'required' is not a list of names"),
        ([], None, "no list of tools"),
        ([3], 1, "tool 1 is a int"),
    ],
)
def test_a_bad_tools_file_names_the_tool(tmp_path: Path, items: Any, line: int | None, said: str) -> None:
    with pytest.raises(FormatError) as caught:
        read_tools(_tools(tmp_path, items))
    assert caught.value.line == line and said in str(caught.value)


def test_a_tools_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(FormatError, match="not JSON"):
        read_tools(path)


@pytest.mark.parametrize(
    ("asked", "calls"),
    [
        ("How much heavier is the Skerry 2 packed than on the trail?", [("calculator", {"expression": "2.1 - 1.86"})]),
        ("What do the two weights come to in total?", [("calculator", {"expression": "2.1 + 1.86"})]),
        ("How heavy is the Skerry 2 tent?", []),
        ("What is the difference between the two weights?", []),  # what sets them apart, not arithmetic
        ("What is the difference in weight?", [("calculator", {"expression": "2.1 - 1.86"})]),
    ],
)
def test_the_offline_rule(asked: str, calls: list[tuple[str, dict[str, str]]]) -> None:
    tools = [CALCULATOR["function"], STATUS]
    got = offline_calls(asked, [TENT.text], tools)
    assert [(c.name, json.loads(c.arguments)) for c in got.calls] == calls
    assert offline_calls(asked, [TENT.text], [STATUS]).calls == []  # no arithmetic tool, no call


def test_the_stage_keeps_valid_calls_counts_invalid_and_unscored_and_flags_for_audit(tmp_path: Path) -> None:
    answers = {
        "q1": {"reason": "r", "calls": [{"name": "calculator", "arguments": '{"expression": "2.1 - 1.86"}'},
                                        {"name": "weather", "arguments": "{}"},
                                        {"name": "calculator", "arguments": "{}"},
                                        {"name": "order_status", "arguments": "not json"}]},
        "q2": {"reason": "r", "calls": []},
    }  # fmt: skip

    def reply(request: ChatRequest) -> str:
        qid = next(q for q in ("q1", "q2", "q3") if request.variables["question"].startswith(q))
        assert [t["name"] for t in request.variables["tools"]] == ["calculator", "order_status"]
        return json.dumps(answers[qid]) if qid in answers else "{}"

    questions = [question("q1 how much lighter?", "q1 how much lighter?", sources=[TENT.id]),
                 question("q2 weight?", "q2 weight?", sources=[TENT.id]),
                 question("q3 broken?", "q3 broken?", sources=[STOVE.id]),
                 question("q4 none?", "q4 none?", qtype="unanswerable", sources=[], cited=[])]  # fmt: skip
    settings = BuildSettings(tools=read_tools(_tools(tmp_path, [CALCULATOR, STATUS])))
    backend = FakeBackend(backend_script({"tool_calls": reply}))
    out = asyncio.run(draft_tool_calls(questions, fake_judge(backend), settings, CTX, None))
    assert [q.id for q in out.records] == [q.id for q in questions]  # nobody is dropped
    assert out.counts == {"tool_calls_drafted": 1, "questions_with_tool_calls": 1, "tool_calls_invalid": 3,
                          "tool_calls_unscored": 1}  # fmt: skip
    first = questions[0]
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("calculator", {"expression": "2.1 - 1.86"})]
    assert first.tool_calls[0].provenance is not None and first.tool_calls[0].provenance.source == "generator"
    assert first.flags["drafted_tool_calls"] is True
    assert first.flags["tool_calls_invalid"] == [
        "weather: no tool 'weather'",
        "calculator: calculator needs 'expression'",
        "order_status: arguments are not a JSON object",
    ]
    assert questions[1].tool_calls == [] and "drafted_tool_calls" not in questions[1].flags
    assert "tool_calls_unscored" in questions[2].flags
    asked = {request.variables["question"] for request in backend.requests}
    assert asked == {"q1 how much lighter?", "q2 weight?", "q3 broken?"}  # the unanswerable question is not asked


def test_without_tools_nothing_is_asked() -> None:
    backend = FakeBackend(backend_script())
    out = asyncio.run(draft_tool_calls([question("q1", "q1?", sources=[TENT.id])], fake_judge(backend),
                                       BuildSettings(), CTX, None))  # fmt: skip
    assert backend.requests == [] and out.counts["tool_calls_drafted"] == 0
