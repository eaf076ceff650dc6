"""Pins of the trace reader (formats/traces.py) beside its rule tests: JSON values of the question, answer and
search queries, which model calls are steps, which spans pick the passages of several searches (the answering
prompt's messages in index order, or its GenAI and plain inputs), and what a file or a trace that gives no line
is counted as."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from otlp_fixture import documents, span, write_lines

from assay.errors import FormatError
from assay.formats.traces import Trace, TraceFile, read_traces

QUESTION_JSON = json.dumps({"asked": "How old is A?"})  # an object with one string value: that value


def _read(tmp_path: Path, *batches: list[dict[str, Any]]) -> TraceFile:
    return read_traces(write_lines(tmp_path / "t.jsonl", *batches))


def _one(tmp_path: Path, spans: list[dict[str, Any]]) -> Trace:
    [trace] = _read(tmp_path, spans).traces
    return trace


# --------------------------------------------------------------------------------------- JSON values of spans


def test_json_objects_in_the_genai_prompt_and_completion_and_the_search_queries(tmp_path: Path) -> None:
    root = span(
        1,
        1,
        kind="LLM",
        end_ms=100,
        attrs={"gen_ai.prompt": QUESTION_JSON, "gen_ai.completion": json.dumps({"said": "80 years."})},
    )
    assert (_one(tmp_path, [root]).question, _one(tmp_path, [root]).answer) == ("How old is A?", "80 years.")
    searched = [
        span(1, 1, kind="CHAIN", end_ms=100),
        span(1, 2, 1, kind="RETRIEVER", start_ms=1, attrs={"input.value": json.dumps({"query": "A founded"}),
                                                          **documents(["A was founded in 1900."], id=["c1"])}),
    ]  # fmt: skip
    assert _one(tmp_path, searched).question == "A founded"  # no question on the root: the first search's query
    reranked = [
        span(1, 1, kind="CHAIN", end_ms=100),
        span(1, 2, 1, kind="RERANKER", start_ms=1, attrs={"reranker.query": json.dumps({"q": "B founded"}),
             **documents(["B was founded in 1950."], "reranker.output_documents", id=["c2"])}),
    ]  # fmt: skip
    trace = _one(tmp_path, reranked)
    assert trace.question == "B founded" and trace.steps[0]["query"] == "B founded"


# -------------------------------------------------------------------------------------------------------- steps


def test_a_model_call_inside_a_model_call_is_one_step(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="LLM", start_ms=1, end_ms=50, attrs={"llm.model_name": "outer"}),
        span(1, 3, 2, kind="LLM", start_ms=2, end_ms=40, attrs={"llm.model_name": "inner"}),
        span(1, 4, 1, kind="TOOL", start_ms=60, end_ms=61, attrs={"tool.name": "calc"}),
    ]
    trace = _one(tmp_path, spans)
    assert [(s["kind"], s.get("model") or s.get("name")) for s in trace.steps] == [("llm", "outer"), ("tool", "calc")]


def test_a_one_search_trace_with_tied_start_times_is_not_counted_unordered(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="RETRIEVER", start_ms=5, attrs=documents(["A"], id=["c1"])),
        span(1, 3, 1, kind="LLM", start_ms=5, attrs={"output.value": "a"}),
    ]
    read = _read(tmp_path, spans)
    assert len(read.traces) == 1 and read.unordered_steps == []


# ----------------------------------------------------------------------------------------------------- passages


def _two_searches(answering: dict[str, Any] | None, texts: tuple[str, str] = ("alpha beta", "gamma")) -> list[Any]:
    spans = [
        span(1, 1, kind="AGENT", end_ms=500, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="RETRIEVER", start_ms=10, attrs=documents([texts[0]], id=["c1"])),
        span(1, 3, 1, kind="RETRIEVER", start_ms=20, attrs=documents([texts[1]], id=["c2"])),
    ]
    if answering is not None:
        spans.append(span(1, 4, 1, kind="LLM", start_ms=30, end_ms=40, attrs={"output.value": "a", **answering}))
    return spans


def _messages(contents: dict[str, str]) -> dict[str, Any]:
    return {f"llm.input_messages.{k}.message.content": v for k, v in contents.items()}


def test_the_answering_prompt_s_messages_are_read_in_index_order_non_numbered_last(tmp_path: Path) -> None:
    # "alpha beta" holds only when message 9 is followed by message 10 (as text, "10" sorts before "2")
    numbered = {str(i): f"m{i}" for i in range(11)} | {"9": "alpha", "10": "beta"}
    trace = _one(tmp_path, _two_searches(_messages(numbered)))
    assert [p.id for p in trace.passages] == ["c1"]
    # a key that is no number comes after every numbered message: "alpha" (0) is followed by "beta" (1)
    named = _one(tmp_path, _two_searches(_messages({"0": "alpha", "1": "beta", "note": "gamma"})))
    assert [p.id for p in named.passages] == ["c1", "c2"]  # gamma is read too, after beta


def test_a_message_without_its_message_node_is_skipped(tmp_path: Path) -> None:
    prompt = {"llm.input_messages.0.content": "gamma", "llm.input_messages.1.message.content": "alpha beta"}
    assert [p.id for p in _one(tmp_path, _two_searches(prompt)).passages] == ["c1"]


@pytest.mark.parametrize("key", ["gen_ai.input.messages", "input.value"])
def test_an_answering_prompt_given_as_genai_messages_or_a_plain_input(tmp_path: Path, key: str) -> None:
    trace = _one(tmp_path, _two_searches({key: "Context: gamma\n\nQuestion: q?"}))
    assert [p.id for p in trace.passages] == ["c2"]


def test_without_a_model_call_every_search_s_passages_stand(tmp_path: Path) -> None:
    trace = _one(tmp_path, _two_searches(None, ("X", "Y")))
    assert [p.id for p in trace.passages] == ["c1", "c2"]


def test_a_reranker_without_output_documents_leaves_the_searches_passages(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="RETRIEVER", start_ms=1, attrs=documents(["A", "B"], id=["c1", "c2"])),
        span(1, 3, 1, kind="RERANKER", start_ms=2, attrs={"reranker.query": "q?"}),
    ]
    assert [p.id for p in _one(tmp_path, spans).passages] == ["c1", "c2"]


def test_a_document_set_as_a_bare_value_has_neither_content_nor_id(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="RETRIEVER", name="search", start_ms=1, attrs={"retrieval.documents.0": "loose text"}),
    ]
    with pytest.raises(FormatError, match=r"retrieval\.documents\.0 of span 'search' .* has neither document\.content"):
        _read(tmp_path, spans)


# ------------------------------------------------------------------------------------------------ the file


def test_a_trace_without_ai_spans_or_a_question_does_not_stop_the_traces_after_it(tmp_path: Path) -> None:
    plain = [span(3, 1, name="GET /", end_ms=5)]
    silent = [span(1, 1, kind="CHAIN", end_ms=10)]
    asked = [span(2, 1, kind="CHAIN", start_ms=20, end_ms=30, attrs={"input.value": "q?", "output.value": "a"})]
    read = _read(tmp_path, plain, silent, asked)
    assert (read.without_ai, read.without_question) == ([1], [2])
    assert [t.question for t in read.traces] == ["q?"]


def test_a_file_without_spans_says_what_it_expected(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"resourceSpans": []}) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_traces(empty)
    assert (caught.value.line, caught.value.problem) == (1, "no spans in the file")
    assert caught.value.expected == "OTLP JSON with resourceSpans[].scopeSpans[].spans"
