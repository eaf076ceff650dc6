"""Trace files read with care: attribute values of the wrong type counted per attribute and named in one warning
(never a silent drop of the rest), spans delivered twice read once, a cut last line said to end mid-record, and a
line over the size limit refused at its line without being read whole."""

from __future__ import annotations

import json
import re
import sys
import tracemalloc
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from otlp_fixture import documents, rag_trace, request, span, write_lines
from passages_fixture import chunk_text, make_passages_golden

from assay.errors import FormatError
from assay.formats.otlp import read_spans
from assay.formats.traces import read_traces
from assay.pipelines.traces.imports import import_traces

QUESTION = "How long do customers have to return an item?"


def chain(trace: int, *children: dict[str, object]) -> list[dict[str, object]]:
    root = span(trace, trace * 10, name="chain", kind="CHAIN", attrs={"input.value": QUESTION, "output.value": "ok"})
    return [root, *children]


def test_documents_given_as_one_string_are_named_not_silently_dropped(tmp_path: Path) -> None:
    retriever = span(1, 11, 10, kind="RETRIEVER", attrs={"retrieval.documents": "[{'page_content': 'a'}]"})
    path = write_lines(tmp_path / "t.jsonl", chain(1, retriever))
    read = read_traces(path)
    assert read.traces[0].passages == [] and read.traces[0].answer == "ok"  # the rest of the trace is kept
    warning = read.problems.warning()
    assert warning is not None
    assert "1 attribute value(s) of the wrong type" in warning
    assert "retrieval.documents: 1 x a string \"[{'page_content': 'a\" where a list of documents belongs" in warning
    assert "(first at line 1)" in warning
    notes = import_traces(path).notes()  # and the import says so (before: exit 0, retrieved [], no word)
    assert any("retrieval.documents" in note for note in notes)


def test_one_score_of_the_wrong_type_leaves_the_other_scores(tmp_path: Path) -> None:
    docs = documents(["first", "second", "third"], id=["a", "b", "c"], score=[0.9, "high", 0.5])
    path = write_lines(tmp_path / "t.jsonl", chain(1, span(1, 11, 10, kind="RETRIEVER", attrs=docs)))
    read = read_traces(path)
    assert [(p.id, p.score) for p in read.traces[0].passages] == [("a", 0.9), ("b", None), ("c", 0.5)]
    warning = read.problems.warning()
    assert warning is not None and "document.score: 1 x a string 'high' where a finite number belongs" in warning


def test_wrong_types_are_counted_per_attribute_over_the_file(tmp_path: Path) -> None:
    def llm(trace: int) -> dict[str, object]:
        return span(trace, trace * 10 + 2, trace * 10, kind="LLM",
                    attrs={"llm.token_count.prompt": "12", "llm.token_count.completion": 3})  # fmt: skip

    docs = documents(["x"], id=[[1, 2]])
    path = write_lines(
        tmp_path / "t.jsonl",
        chain(1, llm(1)), chain(2, llm(2)), chain(3, span(3, 31, 30, kind="RETRIEVER", attrs=docs)),
    )  # fmt: skip
    read = read_traces(path)
    assert [t.usage for t in read.traces[:2]] == [{"completion_tokens": 3.0}] * 2
    warning = read.problems.warning()
    assert warning is not None and warning.startswith("3 attribute value(s) of the wrong type")
    assert "llm.token_count.prompt: 2 x a string '12' where a finite number belongs (first at line 1)" in warning
    assert "document.id: 1 x a list where a string or an integer belongs (first at line 3)" in warning
    assert warning.index("llm.token_count.prompt") < warning.index("document.id")  # the commonest first


def test_spans_delivered_twice_count_once(tmp_path: Path) -> None:
    batch = rag_trace(1, QUESTION, [chunk_text("returns#1"), chunk_text("returns#2")], "30 days.")
    path = write_lines(tmp_path / "t.jsonl", batch, batch, batch[1:])  # a collector retrying its export
    result = import_traces(path, make_passages_golden())
    assert result.traces == 1 and result.spans == 3 and result.duplicate_spans == 5
    line = result.lines[0]
    assert [p["id"] for p in line["retrieved"]] == ["p0", "p1"]  # before: p0, p1, p0, p1
    assert line["usage"] == {"prompt_tokens": 50.0, "completion_tokens": 10.0}  # before: 150 and 30
    assert "5 span(s) read again (the same trace id and span id" in " ".join(result.notes())


def test_a_cut_last_line_says_the_file_ends_mid_record(tmp_path: Path) -> None:
    whole = json.dumps(request(rag_trace(1, QUESTION, ["a passage"], "ok"))) + "\n"
    path = tmp_path / "t.jsonl"
    path.write_text(whole + whole[:200], encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_spans(path)
    message = str(caught.value)
    assert f"{path}:2: the file ends mid-record: its last line stops inside a JSON value" in message
    assert "wait until the exporter has finished writing" in message
    path.write_text(whole[:200], encoding="utf-8")  # a file of one cut line
    with pytest.raises(FormatError, match=r":1: the file ends mid-record"):
        read_spans(path)
    path.write_text(whole + '{"resourceSpans": oops}', encoding="utf-8")  # a wrong character, not a cut
    with pytest.raises(FormatError, match=r":2: invalid JSON at column 19") as caught:
        read_spans(path)
    assert "mid-record" not in str(caught.value)


def test_a_line_over_the_limit_is_refused_at_its_line_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = json.dumps(request(rag_trace(1, QUESTION, ["a passage"], "ok"))) + "\n"
    with path.open("w", encoding="utf-8") as handle:
        handle.write(first + '{"resourceSpans": [{"x": "')
        for _ in range(40):
            handle.write("y" * 1_000_000)  # one 40 MB line
    tracemalloc.start()
    try:
        with pytest.raises(FormatError) as caught:
            read_spans(path, max_line=1_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"{path}:2: a line over the limit of 1,000,000 bytes" in str(caught.value)
    assert peak < 8_000_000  # the limit and change, not the 40 MB line (before: read whole)
    assert len(read_traces(write_lines(tmp_path / "ok.jsonl", rag_trace(1, QUESTION, ["p"], "ok"))).traces) == 1


def test_an_empty_list_of_documents_is_no_problem(tmp_path: Path) -> None:
    retriever = span(1, 11, 10, kind="RETRIEVER", attrs={"retrieval.documents": []})  # nothing found: no error
    read = read_traces(write_lines(tmp_path / "t.jsonl", chain(1, retriever)))
    assert read.traces[0].passages == [] and read.problems.warning() is None


def test_a_document_content_of_the_wrong_type_is_named_with_its_line(tmp_path: Path) -> None:
    odd = {"retrieval.documents.1.document.content": 42, "retrieval.documents.1.document.id": "d1"}
    bad = span(2, 21, 20, kind="RETRIEVER", attrs=documents(["kept"]) | odd)
    path = write_lines(tmp_path / "t.jsonl", chain(1), chain(2, bad))
    read = read_traces(path)
    assert [(p.id, p.text) for p in read.traces[1].passages] == [(None, "kept"), ("d1", None)]
    warning = read.problems.warning()
    assert warning == (
        "1 attribute value(s) of the wrong type, left out (the rest of each trace kept): "
        "document.content: 1 x an integer where a string belongs (first at line 2)."
    )


def test_a_file_without_spans_or_without_ai_spans_is_refused_with_the_fix(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"resourceSpans": []}) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_traces(empty)
    assert "no spans in the file" in str(caught.value)
    assert "OTLP JSON with resourceSpans[].scopeSpans[].spans" in str(caught.value)
    plain = write_lines(tmp_path / "plain.jsonl", [span(1, 10, name="GET /")], [span(2, 20, name="GET /x")])
    with pytest.raises(FormatError) as caught:
        read_traces(plain)
    message = str(caught.value)
    assert "none of its 2 spans carries openinference.span.kind or gen_ai.operation.name (not OpenInference" in message
    assert (
        "spans from an OpenInference instrumentor (openinference-instrumentation-langchain, -llama-index, -openai, "
        "...) or with the OpenTelemetry GenAI attributes" in message
    )


def test_the_older_genai_attribute_names_are_read(tmp_path: Path) -> None:
    root = span(1, 10, kind="CHAIN", attrs={"gen_ai.prompt": "Which tent is lightest?"})
    said = {"gen_ai.completion": "The Brackenhow 2.", "gen_ai.usage.prompt_tokens": 30}
    llm = span(1, 11, 10, kind="LLM", attrs=said | {"gen_ai.usage.completion_tokens": 7})
    trace = read_traces(write_lines(tmp_path / "t.jsonl", [root, llm])).traces[0]
    assert (trace.question, trace.answer) == ("Which tent is lightest?", "The Brackenhow 2.")
    assert trace.usage == {"prompt_tokens": 30.0, "completion_tokens": 7.0}


def test_a_rerankers_query_is_the_question_when_nothing_else_gives_it(tmp_path: Path) -> None:
    root = span(1, 10, kind="CHAIN", attrs={"output.value": "ok"})
    rerank = span(1, 11, 10, kind="RERANKER", attrs={"reranker.query": "Which tent is lightest?"}
                  | documents(["a", "b"], prefix="reranker.output_documents"))  # fmt: skip
    trace = read_traces(write_lines(tmp_path / "t.jsonl", [root, rerank])).traces[0]
    assert trace.question == "Which tent is lightest?"
    assert [p.text for p in trace.passages] == ["a", "b"]


def test_an_error_status_without_a_message_says_so(tmp_path: Path) -> None:
    root = span(1, 10, kind="CHAIN", attrs={"input.value": QUESTION}, error="")
    trace = read_traces(write_lines(tmp_path / "t.jsonl", [root])).traces[0]
    assert trace.error == ("error_status", "the root span's status is ERROR")


def test_the_root_is_the_ai_span_with_no_ai_ancestor_through_any_depth_of_other_spans(tmp_path: Path) -> None:
    # the chain's own parent (99) was not exported; between the chain and its LLM calls, five spans of a web
    # framework (no AI kind). The first LLM call started before the chain (clock skew): it is still no root, and the
    # second LLM call, below the first through another plain span, adds no tokens of its own.
    spans = [
        span(
            1,
            10,
            99,
            kind="CHAIN",
            start_ms=5,
            end_ms=100,
            attrs={"input.value": QUESTION, "output.value": "from the chain"},
        )
    ]
    spans += [span(1, 11 + i, 10 + i, name=f"http {i}", start_ms=5, end_ms=90) for i in range(5)]  # 11..15
    spans.append(span(1, 16, 15, kind="LLM", start_ms=0, end_ms=60, attrs={"llm.token_count.prompt": 40}))
    spans.append(span(1, 17, 16, name="retry"))
    spans.append(span(1, 18, 17, kind="LLM", attrs={"llm.token_count.prompt": 25}))
    trace = read_traces(write_lines(tmp_path / "t.jsonl", spans)).traces[0]
    assert (trace.question, trace.answer, trace.latency_ms) == (QUESTION, "from the chain", 95.0)
    assert trace.usage == {"prompt_tokens": 40.0}


def test_a_parent_cycle_in_bad_data_ends_the_walk(tmp_path: Path) -> None:
    spans = [span(1, 10, kind="CHAIN", attrs={"input.value": QUESTION, "output.value": "ok"}),
             span(1, 11, 12, name="a"), span(1, 12, 11, name="b"),
             span(1, 13, 11, kind="LLM", attrs={"llm.token_count.prompt": 5})]  # fmt: skip
    trace = read_traces(write_lines(tmp_path / "t.jsonl", spans)).traces[0]
    assert trace.question == QUESTION and trace.usage == {"prompt_tokens": 5.0}


@pytest.mark.parametrize(("end_ms", "latency"), [(10, 0.0), (9, None)])
def test_latency_is_the_roots_duration_and_none_when_it_ends_before_it_starts(
    tmp_path: Path, end_ms: int, latency: float | None
) -> None:
    root = span(1, 10, kind="CHAIN", start_ms=10, end_ms=end_ms, attrs={"input.value": QUESTION})
    assert read_traces(write_lines(tmp_path / "t.jsonl", [root])).traces[0].latency_ms == latency


def test_reranker_documents_of_the_wrong_shape_are_named(tmp_path: Path) -> None:
    rerank = span(1, 11, 10, kind="RERANKER", attrs={"reranker.output_documents": "a, b"})
    read = read_traces(write_lines(tmp_path / "t.jsonl", chain(1, rerank)))
    warning = read.problems.warning()
    assert warning is not None and "reranker.output_documents: 1 x a string 'a, b' where a list of" in warning


def test_a_genai_operation_of_an_unknown_name_is_still_an_ai_span(tmp_path: Path) -> None:
    root = span(1, 10, attrs={"gen_ai.operation.name": "workflow", "gen_ai.prompt": QUESTION})
    read = read_traces(write_lines(tmp_path / "t.jsonl", [root]))
    assert [t.question for t in read.traces] == [QUESTION] and read.without_ai == []


def _named(one: dict[str, object], trace_hex: str) -> dict[str, object]:
    return one | {"traceId": trace_hex}


def test_a_span_that_needs_a_kind_or_a_document_with_nothing_is_an_error_naming_file_line_and_trace(
    tmp_path: Path,
) -> None:
    kindless = _named(span(1, 10, name="llm call", attrs={"llm.token_count.prompt": 3}), "ab" * 16)
    path = write_lines(tmp_path / "t.jsonl", chain(2), [kindless])
    with pytest.raises(FormatError) as caught:
        read_traces(path)
    assert str(caught.value).startswith(
        f"{path}:2: span 'llm call' (trace abababababab) has llm.token_count.prompt but no openinference.span.kind"
    )
    empty = _named(span(1, 11, 10, name="search", kind="RETRIEVER", attrs={"retrieval.documents.0.document.score": 1}),
                   "cd" * 16)  # fmt: skip
    path = write_lines(tmp_path / "d.jsonl", [_named(chain(1)[0], "cd" * 16), empty])
    with pytest.raises(FormatError) as caught:
        read_traces(path)
    assert str(caught.value) == (
        f"{path}:1: retrieval.documents.0 of span 'search' (trace cdcdcdcdcdcd) has neither document.content nor "
        "document.id (expected each document with its content (and its id when it has one))"
    )


@pytest.mark.parametrize("metadata", ['["query_id"]', '{"query_id": "  "}', "query_id: q1 (not JSON)"])
def test_a_query_id_that_is_no_id_is_left_out(tmp_path: Path, metadata: str) -> None:
    root = span(1, 10, kind="CHAIN", attrs={"input.value": QUESTION, "metadata": metadata})
    assert read_traces(write_lines(tmp_path / "t.jsonl", [root])).traces[0].query_id is None


def test_a_trace_without_ai_spans_is_passed_over_and_the_next_read(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", [span(1, 10, name="GET /")], chain(2))
    metrics = json.dumps({"resourceMetrics": []}) + "\n"
    path.write_text(path.read_text(encoding="utf-8") + metrics, encoding="utf-8")
    read = read_traces(path)
    assert [t.question for t in read.traces] == [QUESTION]
    assert read.without_ai == [1] and read.other_signal_lines == 1
    with pytest.raises(FormatError, match="line"):
        read_traces(path, max_line=100)  # each line is longer than that


def test_of_two_top_spans_starting_together_the_longer_is_the_root(tmp_path: Path) -> None:
    inner = span(1, 10, kind="CHAIN", start_ms=0, end_ms=40, attrs={"input.value": "rewritten question"})
    outer = span(1, 11, kind="CHAIN", start_ms=0, end_ms=90, attrs={"input.value": QUESTION})
    trace = read_traces(write_lines(tmp_path / "t.jsonl", [inner, outer])).traces[0]
    assert (trace.question, trace.latency_ms) == (QUESTION, 90.0)


def test_the_last_reranker_to_end_gives_the_passages_scored(tmp_path: Path) -> None:
    first = span(1, 11, 10, kind="RERANKER", end_ms=80,
                 attrs=documents(["late"], prefix="reranker.output_documents", score=[0.5]))  # fmt: skip
    second = span(1, 12, 10, kind="RERANKER", end_ms=30,
                  attrs=documents(["early"], prefix="reranker.output_documents", score=[0.7]))  # fmt: skip
    read = read_traces(write_lines(tmp_path / "t.jsonl", chain(1, second, first)))
    assert [(p.text, p.score) for p in read.traces[0].passages] == [("late", 0.5)]
    assert read.problems.warning() is None  # finite scores are no problem
    bad = span(2, 21, 20, kind="RERANKER", attrs=documents(["x"], prefix="reranker.output_documents", score=["hi"]))
    read = read_traces(write_lines(tmp_path / "b.jsonl", chain(1), chain(2, bad)))
    warning = read.problems.warning()
    assert (
        warning is not None
        and "document.score: 1 x a string 'hi' where a finite number belongs (first at line 2)" in warning
    )
    hollow = span(1, 11, 10, kind="RERANKER", attrs={"reranker.output_documents.0.document.score": 0.5})
    path = write_lines(tmp_path / "h.jsonl", chain(1, hollow))
    with pytest.raises(FormatError, match="^" + re.escape(f"{path}:1: reranker.output_documents.0 of span")):
        read_traces(path)


def test_document_fields_outside_a_document_are_no_document(tmp_path: Path) -> None:
    odd = span(1, 11, 10, kind="RETRIEVER", attrs={"retrieval.documents.0.id": "d1"})  # no ".document." level
    with pytest.raises(FormatError, match=r"has neither document\.content nor document\.id"):
        read_traces(write_lines(tmp_path / "t.jsonl", chain(1, odd)))


def test_an_exception_event_says_what_was_raised(tmp_path: Path) -> None:
    event = {"name": "exception", "timeUnixNano": "0",
             "attributes": [{"key": "exception.type", "value": {"stringValue": "ValueError"}},
                            {"key": "exception.message", "value": {"stringValue": "bad input"}}]}  # fmt: skip
    root = span(1, 10, kind="CHAIN", attrs={"input.value": QUESTION}, error="status text", events=[event])
    trace = read_traces(write_lines(tmp_path / "t.jsonl", [root])).traces[0]
    assert trace.error == ("exception", "ValueError: bad input")


def test_documents_on_a_span_that_is_no_retriever_are_not_passages(tmp_path: Path) -> None:
    root = span(1, 10, kind="CHAIN", attrs={"input.value": QUESTION} | documents(["echoed"]))
    assert read_traces(write_lines(tmp_path / "t.jsonl", [root])).traces[0].passages == []
