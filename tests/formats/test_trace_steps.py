"""Rule 9 of the trace reader: a system that searches several times imports with every step (each search's query
and passages, tool calls, model calls) in the order the spans started, and the run line carries them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from otlp_fixture import documents, span, write_lines

from assay.formats.traces import read_traces
from assay.pipelines.traces.imports import import_traces, run_line
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
    # an input that is no JSON object is a one-argument tool's input, as LangChain's tools are traced
    assert bad["arguments"] == {"input": "1/0"} and bad["error"] == "division by zero"
    assert trace.steps[0]["prompt_tokens"] == 100 and trace.steps[5]["completion_tokens"] == 20
    assert read.problems.warning() is None


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


def _one(tmp_path: Path, spans: list[dict[str, Any]]) -> Any:
    read = read_traces(write_lines(tmp_path / "t.jsonl", spans))
    [trace] = read.traces
    return trace, read.problems


def test_a_reranker_step_keeps_its_query_documents_and_scores(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": '{"question": "q?"}'}),
        span(1, 2, 1, kind="RETRIEVER", start_ms=5, attrs={"input.value": '{"query": "rewritten q"}',
                                                          **documents(["A"], id=["c1"])}),
        span(1, 3, 1, kind="RERANKER", start_ms=20, end_ms=30, attrs={"reranker.query": "q?", **documents(
            ["B", "A"], "reranker.output_documents", id=["c2", "c1"], score=[0.9, 0.4])}),
    ]  # fmt: skip
    trace, _ = _one(tmp_path, spans)
    search, rerank = trace.steps
    assert search == {"kind": "retrieval", "query": "rewritten q", "retrieved": [{"id": "c1", "text": "A"}],
                      "latency_ms": 5.0}  # fmt: skip
    assert rerank == {
        "kind": "retrieval",
        "query": "q?",
        "rerank": True,
        "latency_ms": 10.0,
        "retrieved": [{"id": "c2", "score": 0.9, "text": "B"}, {"id": "c1", "score": 0.4, "text": "A"}],
    }


def test_a_step_without_both_times_has_no_latency_and_a_zero_length_one_has_0(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="LLM", start_ms=7, end_ms=7, attrs={"llm.token_count.prompt": 0}),
        span(1, 3, 1, kind="LLM", start_ms=9, end_ms=8, attrs={"llm.token_count.prompt": -4}),
    ]
    trace, _ = _one(tmp_path, spans)
    assert trace.steps == [{"kind": "llm", "prompt_tokens": 0, "latency_ms": 0.0}, {"kind": "llm"}]


def test_genai_model_and_tool_attributes(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="LLM", start_ms=1, end_ms=2, attrs={"gen_ai.response.model": "m-2024",
                                                              "gen_ai.request.model": "m"}),
        span(1, 3, 1, name="execute_tool weather", start_ms=3, end_ms=4,
             attrs={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather",
                    "gen_ai.tool.call.arguments": '{"city": "Oslo"}', "gen_ai.tool.call.result": 12}),
        span(1, 4, 1, name="lookup", kind="TOOL", start_ms=5, end_ms=6, error="",
             attrs={"output.value": 42}),
    ]  # fmt: skip
    trace, problems = _one(tmp_path, spans)
    llm, weather, lookup = trace.steps
    assert llm["model"] == "m-2024"  # the model that answered, before the one asked for
    assert weather == {"kind": "tool", "name": "weather", "arguments": {"city": "Oslo"}, "output": "12",
                       "latency_ms": 1.0}  # fmt: skip
    # no tool.name: the span's name; no arguments at all is no problem; an ERROR status without a message still says
    assert lookup == {"kind": "tool", "name": "lookup", "output": "42", "error": "the tool span's status is ERROR",
                      "latency_ms": 1.0}  # fmt: skip
    assert problems.warning() is None


def test_tool_arguments_that_are_no_json_object_are_named_with_their_line(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="TOOL", start_ms=1, attrs={"gen_ai.tool.name": "calc",
                                                     "gen_ai.tool.call.arguments": "[1, 2]"}),
        span(1, 3, 1, kind="TOOL", start_ms=2, attrs={"tool.name": "calc", "input.value": "[1, 2]"}),
    ]  # fmt: skip
    trace, problems = _one(tmp_path, spans)
    assert "arguments" not in trace.steps[0]
    assert trace.steps[1]["arguments"] == {"input": "[1, 2]"}  # a one-argument tool's input, as given
    assert problems.warning() == ("1 attribute value(s) of the wrong type, left out (the rest of each trace kept): "
                                  "tool arguments: 1 x a string '[1, 2]' where a JSON object belongs (first at line "
                                  "1).")  # fmt: skip


@pytest.mark.parametrize(
    ("kinds", "several"),
    [
        (["RETRIEVER"], False),
        (["RETRIEVER", "RERANKER"], False),  # a search and its reranking: one search
        (["RETRIEVER", "RETRIEVER"], True),
        (["TOOL"], True),
        (["RETRIEVER", "LLM", "LLM"], False),
    ],
)
def test_which_systems_search_several_times(tmp_path: Path, kinds: list[str], several: bool) -> None:
    spans = [span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"})]
    for i, kind in enumerate(kinds):
        attrs = documents(["A"], "reranker.output_documents" if kind == "RERANKER" else "retrieval.documents")
        spans.append(span(1, i + 2, 1, kind=kind, start_ms=i + 1, attrs=attrs if kind != "LLM" else {}))
    trace, _ = _one(tmp_path, spans)
    assert trace.searches_several_times() is several


def test_documents_read_for_the_passages_and_the_steps_are_counted_once(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="RETRIEVER", start_ms=1, attrs=documents(["A"], id=["a"], score=["high"])),
        span(1, 3, 1, kind="RETRIEVER", start_ms=2, attrs=documents(["B"], id=["b"], score=[0.5])),
    ]
    trace, problems = _one(tmp_path, spans)
    assert [(s["retrieved"]) for s in trace.steps] == [[{"id": "a", "text": "A"}], [{"id": "b", "score": 0.5,
                                                                                      "text": "B"}]]  # fmt: skip
    assert problems.total() == 1  # the text score, once, though both rules read the documents


def test_of_several_searches_the_passages_are_those_the_answering_model_was_given(tmp_path: Path) -> None:
    """Rule 3: the last model call's prompt holds the second search's passage (spaces folded) and not the first's:
    the first was found, then dropped; with no prompt recorded every search's passages stand."""

    def spans(prompt: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            span(1, 1, kind="AGENT", end_ms=500, attrs={"input.value": "How much older is A than B?"}),
            span(1, 2, 1, kind="RETRIEVER", start_ms=10, attrs={"input.value": "A founded",
                 **documents(["A was founded in 1900."], id=["c1"])}),
            span(1, 3, 1, kind="RETRIEVER", start_ms=20, attrs={"input.value": "B founded",
                 **documents(["B was founded in 1950.", "B is in Oslo."], id=["c2", "c3"])}),
            span(1, 4, 1, kind="LLM", start_ms=30, end_ms=40, attrs={"output.value": "early"}),
            span(1, 5, 1, kind="LLM", start_ms=50, end_ms=60, attrs={"output.value": "50 years.", **prompt}),
        ]  # fmt: skip

    told = {
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Be brief.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "Context:\nB  was founded\nin 1950.\n\nQuestion: How much older?",
    }
    trace, _ = _one(tmp_path, spans(told))
    assert [p.id for p in trace.passages] == ["c2"]
    assert [len(s["retrieved"]) for s in trace.steps if s["kind"] == "retrieval"] == [1, 2]  # the steps keep all
    plain, _ = _one(tmp_path, spans({"input.value": "no passage of theirs here"}))
    assert [p.id for p in plain.passages] == ["c1", "c2", "c3"]
    untold, _ = _one(tmp_path, spans({}))
    assert [p.id for p in untold.passages] == ["c1", "c2", "c3"]


def test_steps_whose_spans_share_a_start_time_are_counted_with_their_line(tmp_path: Path) -> None:
    """Two searches started at the same nanosecond: which came first is unknown; the trace is counted with the line
    of the first such span, the import says so, and the steps keep a fixed order (the span ids)."""
    ordered = [
        span(2, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q2?"}),
        span(2, 2, 1, kind="RETRIEVER", start_ms=5, attrs={"input.value": "one", **documents(["a"], id=["c1"])}),
        span(2, 3, 1, kind="RETRIEVER", start_ms=6, attrs={"input.value": "two", **documents(["b"], id=["c2"])}),
    ]
    tied = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 3, 1, kind="RETRIEVER", start_ms=5, attrs={"input.value": "second", **documents(["b"], id=["c2"])}),
        span(1, 2, 1, kind="RETRIEVER", start_ms=5, attrs={"input.value": "first", **documents(["a"], id=["c1"])}),
    ]
    path = write_lines(tmp_path / "t.jsonl", ordered, tied)
    read = read_traces(path)
    assert read.unordered_steps == [2]  # the second line of the file holds the tied trace
    tied_trace = next(t for t in read.traces if t.question == "q?")
    assert [s["query"] for s in tied_trace.steps] == ["first", "second"]  # by span id
    imported = import_traces(path)
    assert ("1 trace(s) have steps whose spans lack a start time or share one, so their order is unknown (kept in "
            "span-id order; spans at line 2).") in imported.notes()  # fmt: skip
