"""Reference tool calls of a build (``assay build --tools FILE``): for each answerable question, one ``tool_calls``
call (judge stage ``tool_calls``) with the question, its reference answer, its source passages and the tools
(:mod:`assay.formats.tools`) writes the calls a system must make to reach the answer, in order (none when the
passages answer it without a tool).

Every call the judge writes is checked against the tools: a tool that is not listed, arguments that are not a JSON
object, a required argument missing or an argument the schema does not allow make the call invalid: it is left out,
counted (``tool_calls_invalid``) and named in the question's ``flags['tool_calls_invalid']``. A judge failure is
counted (``tool_calls_unscored``), the question kept without calls. The calls kept are the question's
``tool_calls``, each with the generator's provenance, and the question is marked ``flags['drafted_tool_calls']`` so
that people confirm it first in ``assay audit``, as they confirm a drafted reference answer.
"""

from __future__ import annotations

import json
from typing import Any

from assay.judge.client import Judge, Judgement
from assay.pipelines.bootstrap.judging import BuildContext, passages_of, tick_progress
from assay.pipelines.bootstrap.settings import BuildSettings, ProgressFn, StageOutput
from assay.types import Provenance, Question, ToolCall

__all__ = ["TOOL_CALLS", "draft_tool_calls", "tool_call_variables"]

TOOL_CALLS = "tool_calls"  # judge stage and prompt name


def tool_call_variables(questions: list[Question], settings: BuildSettings, ctx: BuildContext) -> list[dict[str, Any]]:
    """The ``tool_calls`` prompt's variables for each question (its source chunks as the passages)."""
    tools = [tool.as_dict() for tool in settings.tools]
    out = []
    for q in questions:
        sources = q.source_chunk_ids or q.metadata.get("seed_chunk_ids", [])
        passages = passages_of(sources, ctx.chunks, heading=False)
        out.append({"question": q.text, "answer": q.reference_answer or "", "passages": passages, "tools": tools})
    return out


async def draft_tool_calls(
    questions: list[Question], judge: Judge, settings: BuildSettings, ctx: BuildContext, progress: ProgressFn | None
) -> StageOutput[Question]:
    """The stage of the module docstring (every question passes on; nothing asked without tools)."""
    counts = {"tool_calls_drafted": 0, "questions_with_tool_calls": 0, "tool_calls_invalid": 0,
              "tool_calls_unscored": 0}  # fmt: skip
    out = StageOutput[Question](records=list(questions), counts=counts)
    asked = [q for q in questions if q.type != "unanswerable"] if settings.tools else []
    if not asked:
        return out
    tick = tick_progress(progress, TOOL_CALLS, len(asked))
    results = await judge.ajudge_many(TOOL_CALLS, tool_call_variables(asked, settings, ctx), stage=TOOL_CALLS,
                                      on_result=tick)  # fmt: skip
    for question, judgement in zip(asked, results, strict=True):
        _keep(question, judgement, settings, counts)
    return out


def _keep(question: Question, j: Judgement[Any], settings: BuildSettings, counts: dict[str, int]) -> None:
    if j.output is None:
        counts["tool_calls_unscored"] += 1
        question.flags["tool_calls_unscored"] = j.unscored.reason if j.unscored is not None else "no answer"
        return
    tools = {tool.name: tool for tool in settings.tools}
    provenance = Provenance(source="generator", model=j.model, prompt=j.prompt, prompt_hash=j.prompt_hash)
    kept, invalid = [], []
    for call in j.output.calls:
        arguments = _arguments(call.arguments)
        tool = tools.get(call.name)
        problem = (
            f"no tool {call.name!r}" if tool is None
            else "arguments are not a JSON object" if arguments is None
            else tool.problem(arguments)
        )  # fmt: skip
        if problem is not None or arguments is None:
            invalid.append(f"{call.name}: {problem}")
            continue
        kept.append(ToolCall(name=call.name, arguments=arguments, provenance=provenance))
    counts["tool_calls_invalid"] += len(invalid)
    if invalid:
        question.flags["tool_calls_invalid"] = invalid
    if kept:
        question.tool_calls = kept
        question.flags["drafted_tool_calls"] = True
        counts["tool_calls_drafted"] += len(kept)
        counts["questions_with_tool_calls"] += 1


def _arguments(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
