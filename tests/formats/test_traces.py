"""Traces read by the OpenInference rules (assay.formats.traces' docstring), one test per rule, then GenAI-only
traces, and the bad input that stops the import (file and line named)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from otlp_fixture import documents, rag_trace, span, trace_id, write_lines

from assay.errors import FormatError
from assay.formats.traces import Trace, TracePassage, read_traces


def read_one(tmp_path: Path, spans: list[dict[str, Any]], name: str = "t.jsonl") -> Trace:
    traces = read_traces(write_lines(tmp_path / name, spans)).traces
    assert len(traces) == 1
    return traces[0]


def test_a_langchain_shaped_trace_gives_every_fact(tmp_path: Path) -> None:
    trace = read_one(tmp_path, rag_trace(1, "How long is the warranty?", ["A", "B"], "Two years.", tokens=(40, 8)))
    assert trace.trace_id == trace_id(1) and trace.line == 1
    assert trace.question == "How long is the warranty?" and trace.answer == "Two years."
    assert trace.passages == [TracePassage("p0", 1.0, "A"), TracePassage("p1", 0.9, "B")]
    assert trace.latency_ms == 120.0 and trace.error is None and trace.query_id is None
    assert trace.usage == {"prompt_tokens": 40.0, "completion_tokens": 8.0}


def test_rule_1_the_root_is_the_first_ai_span_below_non_ai_spans(tmp_path: Path) -> None:
    """An HTTP server span around the chain is not the root: the chain is (its latency, its input)."""
    spans = [
        span(1, 1, name="POST /ask", start_ms=0, end_ms=500, attrs={"http.method": "POST"}),
        span(1, 2, 1, kind="CHAIN", start_ms=10, end_ms=310, attrs={"input.value": "the chain's question"}),
        span(1, 3, 2, kind="CHAIN", start_ms=10, end_ms=300, attrs={"input.value": "an inner step"}),
    ]
    trace = read_one(tmp_path, spans)
    assert trace.question == "the chain's question" and trace.latency_ms == 300.0


def test_rule_1_a_trace_without_ai_spans_is_counted_not_read(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", rag_trace(1, "q?", ["A"], "a"), [span(2, 1, name="GET /health")])
    read = read_traces(path)
    assert [t.trace_id for t in read.traces] == [trace_id(1)] and read.without_ai == [2]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"question": "What is X?", "chat_history": []}', "What is X?"),
        ('{"input": "What is Y?", "k": 3}', "What is Y?"),
        ('{"topic": "What is Z?"}', "What is Z?"),  # the only string value
        ('"What is W?"', "What is W?"),
        ("  plain text?  ", "plain text?"),
    ],
)
def test_rule_2_the_question_from_the_roots_input(tmp_path: Path, value: str, expected: str) -> None:
    assert read_one(tmp_path, [span(1, 1, kind="CHAIN", attrs={"input.value": value})]).question == expected


def test_rule_2_else_the_retrievers_query(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", attrs={"input.value": '{"a": "one", "b": "two"}'}),  # two strings: no question
        span(1, 2, 1, kind="RETRIEVER", start_ms=1, attrs={"input.value": "the query", **documents(["A"])}),
    ]
    assert read_one(tmp_path, spans).question == "the query"


def test_rule_2_a_trace_without_a_question_is_counted(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", rag_trace(1, "q?", ["A"], "a"), [span(2, 1, kind="CHAIN")])
    read = read_traces(path)
    assert len(read.traces) == 1 and read.without_question == [2]


def test_rule_3_reranked_documents_win_over_the_retrievers(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="RETRIEVER", start_ms=1, end_ms=10, attrs=documents(["A", "B", "C"], score=[3.0, 2.0, 1.0])),
        span(1, 3, 1, kind="RERANKER", start_ms=11, end_ms=20,
             attrs=documents(["C", "A"], prefix="reranker.output_documents", score=[0.9, 0.2])),
    ]  # fmt: skip
    assert read_one(tmp_path, spans).passages == [TracePassage(None, 0.9, "C"), TracePassage(None, 0.2, "A")]


def test_rule_3_several_retrievers_are_joined_in_start_order_without_scores(tmp_path: Path) -> None:
    spans = [
        span(1, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(1, 3, 1, kind="RETRIEVER", start_ms=20, attrs=documents(["dense"], score=[0.8])),
        span(1, 2, 1, kind="RETRIEVER", start_ms=5, attrs=documents(["bm25"], score=[12.5])),
    ]
    assert read_one(tmp_path, spans).passages == [TracePassage(None, None, "bm25"), TracePassage(None, None, "dense")]


def test_rule_3_scores_on_some_documents_only_are_dropped(tmp_path: Path) -> None:
    attrs = documents(["A", "B"], id=["a", 7])
    attrs["retrieval.documents.0.document.score"] = 0.5
    spans = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}), span(1, 2, 1, kind="RETRIEVER", attrs=attrs)]
    assert read_one(tmp_path, spans).passages == [TracePassage("a", None, "A"), TracePassage("7", None, "B")]


def test_rule_3_documents_are_ordered_by_index_as_numbers(tmp_path: Path) -> None:
    texts = [f"doc {i}" for i in range(12)]
    spans = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}), span(1, 2, 1, kind="RETRIEVER",
             attrs=documents(texts))]  # fmt: skip
    assert [p.text for p in read_one(tmp_path, spans).passages] == texts


def test_rule_3_a_document_with_only_an_id_is_kept(tmp_path: Path) -> None:
    attrs = {"retrieval.documents.0.document.id": "chunk-9"}
    spans = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}), span(1, 2, 1, kind="RETRIEVER", attrs=attrs)]
    assert read_one(tmp_path, spans).passages == [TracePassage("chunk-9", None, None)]


def test_rule_4_the_answer_from_a_json_output_else_the_last_llm(tmp_path: Path) -> None:
    with_json = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?", "output.value": json.dumps(
        {"input": "q?", "context": ["x"], "answer": "from the chain"})})]  # fmt: skip
    assert read_one(tmp_path, with_json).answer == "from the chain"
    llms = [
        span(2, 1, kind="CHAIN", end_ms=100, attrs={"input.value": "q?"}),
        span(2, 2, 1, kind="LLM", start_ms=1, end_ms=50, attrs={"llm.output_messages.0.message.content": "draft"}),
        span(2, 3, 1, kind="LLM", start_ms=51, end_ms=90, attrs={"output.value": "final"}),
    ]
    assert read_one(tmp_path, llms, "u.jsonl").answer == "final"


def test_rule_6_usage_counts_a_model_call_traced_twice_once(tmp_path: Path) -> None:
    """A framework's LLM span with the client library's LLM span inside: the outer one counts."""
    spans = [
        span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}),
        span(1, 2, 1, kind="LLM", attrs={"llm.token_count.prompt": 100, "llm.token_count.completion": 20,
                                         "llm.cost.total": 0.002}),
        span(1, 3, 2, kind="LLM", attrs={"llm.token_count.prompt": 100, "llm.token_count.completion": 20}),
        span(1, 4, 1, kind="LLM", attrs={"gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 5,
                                         "llm.cost.prompt": 0.001, "llm.cost.completion": 0.0005}),
    ]  # fmt: skip
    usage = read_one(tmp_path, spans).usage
    assert usage == {"prompt_tokens": 130.0, "completion_tokens": 25.0, "cost_usd": pytest.approx(0.0035)}


def test_rule_6_no_reported_usage_is_none_not_zero(tmp_path: Path) -> None:
    spans = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}), span(1, 2, 1, kind="LLM")]
    assert read_one(tmp_path, spans).usage is None


def test_rule_7_an_error_on_the_root_with_its_exception(tmp_path: Path) -> None:
    said = {"exception.type": "TimeoutError", "exception.message": "LLM timed out"}
    event = {"name": "exception", "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in said.items()]}
    raised = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}, error="TimeoutError: LLM timed out",
                   events=[event])]  # fmt: skip
    assert read_one(tmp_path, raised).error == ("exception", "TimeoutError: LLM timed out")
    status_only = [span(2, 1, kind="CHAIN", attrs={"input.value": "q?"}, error="upstream 503")]
    assert read_one(tmp_path, status_only, "u.jsonl").error == ("error_status", "upstream 503")


def test_rule_7_an_error_below_the_root_is_not_the_traces(tmp_path: Path) -> None:
    spans = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}), span(1, 2, 1, kind="RETRIEVER", error="retry")]
    assert read_one(tmp_path, spans).error is None


@pytest.mark.parametrize(
    "attrs",
    [
        {"metadata": json.dumps({"query_id": "q7", "user": "x"})},
        {"metadata.query_id": "q7"},  # the metadata given as a kvlist
        {"assay.query_id": "q7"},
    ],
)
def test_rule_8_the_query_id_attribute(tmp_path: Path, attrs: dict[str, Any]) -> None:
    spans = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}), span(1, 2, 1, kind="LLM", attrs=attrs)]
    assert read_one(tmp_path, spans).query_id == "q7"


def test_traces_come_in_the_order_their_roots_started(tmp_path: Path) -> None:
    batches = [rag_trace(3, "c?", ["C"], "c", start_ms=50), rag_trace(1, "a?", ["A"], "a", start_ms=900),
               rag_trace(2, "b?", ["B"], "b", start_ms=50)]  # fmt: skip
    path = write_lines(tmp_path / "t.jsonl", *batches)
    assert [t.question for t in read_traces(path).traces] == ["b?", "c?", "a?"]


def test_a_genai_only_trace(tmp_path: Path) -> None:
    """An agent with a chat call, recorded with the OpenTelemetry GenAI attributes only."""
    user = [{"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
            {"role": "user", "parts": [{"type": "text", "content": "Which plan includes SSO?"}]}]  # fmt: skip
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "The Business plan."}],
             "finish_reason": "stop"}]  # fmt: skip
    spans = [
        span(1, 1, name="invoke_agent helper", end_ms=900, attrs={"gen_ai.operation.name": "invoke_agent",
                                                                  "gen_ai.input.messages": json.dumps(user)}),
        span(1, 2, 1, name="chat gpt-4o-mini", start_ms=100, end_ms=800, attrs={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 12,
            "gen_ai.usage.output_tokens": 4, "gen_ai.output.messages": json.dumps(said)}),
    ]  # fmt: skip
    trace = read_one(tmp_path, spans)
    assert trace.question == "Which plan includes SSO?" and trace.answer == "The Business plan."
    assert trace.usage == {"prompt_tokens": 12.0, "completion_tokens": 4.0} and trace.latency_ms == 900.0


def test_openinference_message_contents_give_the_answer(tmp_path: Path) -> None:
    attrs = {"llm.output_messages.0.message.contents.0.message_content.type": "text",
             "llm.output_messages.0.message.contents.0.message_content.text": "part one",
             "llm.output_messages.0.message.contents.1.message_content.text": "part two"}  # fmt: skip
    spans = [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"}), span(1, 2, 1, kind="LLM", attrs=attrs)]
    assert read_one(tmp_path, spans).answer == "part one\npart two"


# ---------------------------------------------------------------------------------------------------- bad input


def test_a_document_with_neither_content_nor_id_names_its_span_line(tmp_path: Path) -> None:
    bad = span(1, 2, 1, name="Retriever", kind="RETRIEVER", attrs={"retrieval.documents.0.document.score": 0.3})
    path = write_lines(tmp_path / "t.jsonl", [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"})], [bad])
    with pytest.raises(FormatError, match=r"t.jsonl:2: retrieval.documents.0 of span 'Retriever' .* neither "
                                          r"document.content nor document.id"):  # fmt: skip
        read_traces(path)


def test_a_span_with_documents_but_no_kind_names_its_line_and_the_fix(tmp_path: Path) -> None:
    bad = span(1, 2, 1, name="my_search", attrs=documents(["A"]))
    path = write_lines(tmp_path / "t.jsonl", [span(1, 1, kind="CHAIN", attrs={"input.value": "q?"})], [bad])
    with pytest.raises(FormatError) as caught:
        read_traces(path)
    assert caught.value.line == 2 and "span 'my_search'" in str(caught.value)
    assert "no openinference.span.kind" in str(caught.value) and "set_attribute" in str(caught.value)


def test_spans_of_no_ai_kind_at_all_are_not_openinference(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", [span(1, 1, name="GET /", attrs={"http.method": "GET"})])
    with pytest.raises(FormatError, match=r"t.jsonl:1: none of its 1 spans carries openinference.span.kind"):
        read_traces(path)


def test_a_request_without_spans_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"t\.jsonl:1: no spans in the file"):
        read_traces(write_lines(tmp_path / "t.jsonl", []))
