"""Rule 9 of the trace reader: a system that searches several times imports with every step (each search's query
and passages, tool calls, model calls) in the order the spans started, and the run line carries them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from otlp_fixture import documents, span, write_lines

from assay.formats.traces import read_traces
from assay.pipelines.traces.imports import run_line
from assay.types import RunItem


def _agent() -> list[dict[str, Any]]:
    """A ReAct-shaped agent: model call, search, calculator, second search (its query built from the first
    passage), final model call; the spans arrive out of order."""
    return [
        span(1, 1, kind="AGENT", end_ms=500, attrs={"input.value": "How much older is A than B?"}),
        span(1, 6, 1, kind="RETRIEVER", start_ms=300, end_ms=340,
             attrs={"input.value": "B founded", **documents(["B was founded in 1950."], id=["c2"], score=[3.5])}),
        span(1, 2, 1, kind="LLM", start_ms=0, end_ms=50,
             attrs={"llm.model_name": "gpt-x", "llm.token_count.prompt": 100, "llm.token_count.completion": 12}),
        span(1, 3, 1, kind="RETRIEVER", start_ms=60, end_ms=90,
             attrs={"input.value": "A founded", **documents(["A was founded in 1900.", "B is in Oslo."],
                                                             id=["c1", "c9"], score=[7.0, 2.0])}),
        span(1, 4, 1, kind="TOOL", start_ms=100, end_ms=101,
             attrs={"tool.name": "calculator", "input.value": '{"expression": "1950 - 1900"}', "output.value": "50"}),
        span(1, 5, 1, kind="TOOL", start_ms=200, end_ms=201, error="division by zero",
             attrs={"tool.name": "calculator", "input.value": "1/0"}),
        span(1, 7, 1, kind="LLM", start_ms=400, end_ms=480,
             attrs={"gen_ai.request.model": "gpt-x", "gen_ai.usage.input_tokens": 300,
                    "gen_ai.usage.output_tokens": 20, "output.value": "50 years."}),
    ]  # fmt: skip


def test_every_step_in_start_order_with_its_facts(tmp_path: Path) -> None:
    read = read_traces(write_lines(tmp_path / "t.jsonl", _agent()))
    [trace] = read.traces
    assert [(s["kind"], s.get("query") or s.get("name") or s.get("model")) for s in trace.steps] == [
        ("llm", "gpt-x"), ("retrieval", "A founded"), ("tool", "calculator"), ("tool", "calculator"),
        ("retrieval", "B founded"), ("llm", "gpt-x"),
    ]  # fmt: skip
    first_search = trace.steps[1]
    assert first_search["retrieved"] == [{"id": "c1", "score": 7.0, "text": "A was founded in 1900."},
                                         {"id": "c9", "score": 2.0, "text": "B is in Oslo."}]  # fmt: skip
    assert first_search["latency_ms"] == 30.0
    good, bad = trace.steps[2], trace.steps[3]
    assert good["arguments"] == {"expression": "1950 - 1900"} and good["output"] == "50" and "error" not in good
    assert "arguments" not in bad and bad["error"] == "division by zero"
    assert trace.steps[0]["prompt_tokens"] == 100 and trace.steps[5]["completion_tokens"] == 20
    # the arguments that are not JSON are named in the warning, not dropped silently
    assert [key for (key, _), _ in read.problems.seen.items()] == ["tool arguments"]


def test_the_run_line_carries_the_steps_and_reads_back_as_a_run_item(tmp_path: Path) -> None:
    [trace] = read_traces(write_lines(tmp_path / "t.jsonl", _agent())).traces
    line = run_line("q1", trace)
    item = RunItem.model_validate(line)
    assert [s.kind for s in item.steps] == ["llm", "retrieval", "tool", "tool", "retrieval", "llm"]
    assert [r.id for r in item.steps[4].retrieved] == ["c2"]  # type: ignore[union-attr]


def test_a_one_search_pipeline_keeps_its_line_as_it_was(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="RETRIEVER", start_ms=5, attrs=documents(["A"], id=["c1"])),
        span(1, 3, 1, kind="RERANKER", start_ms=20, attrs={"reranker.query": "q?",
                                                           **documents(["A"], "reranker.output_documents")}),
        span(1, 4, 1, kind="LLM", start_ms=40, attrs={"output.value": "a"}),
    ]  # fmt: skip
    [trace] = read_traces(write_lines(tmp_path / "t.jsonl", spans)).traces
    assert [s["kind"] for s in trace.steps] == ["retrieval", "retrieval", "llm"]
    assert trace.steps[1]["rerank"] is True
    assert "steps" not in run_line("q1", trace)
