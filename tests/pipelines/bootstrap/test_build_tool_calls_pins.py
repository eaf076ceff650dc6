"""Pins of the build's tool-call stage (the mutation habit): counts add up over questions, the provenance names the
call that drafted it, the progress and usage stage, what each call is given, and arguments that are empty or not
an object."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from build_helpers import backend_script, chunk, fake_judge, question

from assay.corpus.pooling import Bm25Index
from assay.formats.tools import ToolSpec
from assay.judge.base import ChatRequest
from assay.pipelines.bootstrap.judging import BuildContext
from assay.pipelines.bootstrap.settings import BuildSettings
from assay.pipelines.bootstrap.tool_calls import draft_tool_calls
from assay.testing import FakeBackend

TENT = chunk("tent.md", 0, "The Skerry 2 tent weighs 2.1 kg packed.")
STOVE = chunk("stove.md", 0, "The Emberline stove weighs 88 g.")
CTX = BuildContext({c.id: c for c in (TENT, STOVE)}, Bm25Index.build([TENT, STOVE]))
CALC = {"properties": {"expression": {}}, "required": ["expression"]}
TOOLS = (ToolSpec("calculator", "Evaluate an expression.", CALC), ToolSpec("today", "The date."))
SETTINGS = BuildSettings(tools=TOOLS)


def _run(questions: list[Any], reply: Any, progress: Any = None) -> tuple[Any, FakeBackend, Any]:
    backend = FakeBackend(backend_script({"tool_calls": reply}))
    judge = fake_judge(backend)
    out = asyncio.run(draft_tool_calls(questions, judge, SETTINGS, CTX, progress))
    return out, backend, judge


def test_counts_add_up_and_the_provenance_names_the_drafting_call() -> None:
    def reply(request: ChatRequest) -> str:
        if request.variables["question"].startswith("broken"):
            return "{}"
        calls = [{"name": "calculator", "arguments": '{"expression": "2.1 - 1"}'},
                 {"name": "today", "arguments": ""},  # empty arguments: none
                 {"name": "today", "arguments": "[1]"}]  # fmt: skip
        return json.dumps({"reason": "r", "calls": calls})

    questions = [question("a1", "a1?", sources=[TENT.id]), question("a2", "a2?", sources=[STOVE.id]),
                 question("broken1", "broken1?", sources=[TENT.id]),
                 question("broken2", "broken2?", sources=[TENT.id])]  # fmt: skip
    seen: list[tuple[str, int, int]] = []
    out, _, judge = _run(questions, reply, lambda stage, done, total: seen.append((stage, done, total)))
    assert out.counts == {"tool_calls_drafted": 4, "questions_with_tool_calls": 2, "tool_calls_invalid": 2,
                          "tool_calls_unscored": 2}  # fmt: skip
    first = questions[0]
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("calculator", {"expression": "2.1 - 1"}),
                                                                ("today", {})]  # fmt: skip
    assert first.flags["tool_calls_invalid"] == ["today: arguments are not a JSON object"]
    made = first.tool_calls[0].provenance
    prompt = judge.prompt("tool_calls")
    assert made is not None and (made.source, made.model, made.prompt, made.prompt_hash) == (
        "generator",
        "fake/model",
        prompt.ref,
        prompt.content_hash,
    )
    reason = questions[2].flags["tool_calls_unscored"]
    assert isinstance(reason, str) and reason and reason != "no answer"  # the judge's own reason
    assert seen[0] == ("tool_calls", 0, 4) and seen[-1] == ("tool_calls", 4, 4)
    assert judge.usage["tool_calls"].calls >= 4


def test_each_call_is_given_the_question_its_answer_its_sources_without_headings_and_the_tools() -> None:
    asked: dict[str, dict[str, Any]] = {}

    def reply(request: ChatRequest) -> str:
        asked[request.variables["question"]] = request.variables
        return json.dumps({"reason": "r", "calls": []})

    sourced = question("s?", "s?", sources=[STOVE.id], reference_answer="88 g.")
    seeded = question("t?", "t?", sources=[])  # no source chunks: the seed's
    seeded.metadata["seed_chunk_ids"] = [TENT.id]
    _run([sourced, seeded], reply)
    assert asked["s?"]["answer"] == "88 g." and asked["t?"]["answer"] == ""
    assert [p["text"] for p in asked["s?"]["passages"]] == [STOVE.text]
    assert [p["text"] for p in asked["t?"]["passages"]] == [TENT.text]
    assert all(set(p) == {"id", "text"} for p in asked["s?"]["passages"])  # no heading
    assert [t["name"] for t in asked["s?"]["tools"]] == ["calculator", "today"]
