"""OTLP JSON reading pinned by hand: the line limit at its exact bound, a byte-order mark on the first line only,
lines given by number (``watch``), which first line opens a document, a cut last line told from a wrong character,
every structural refusal's words, each AnyValue kind under both key spellings, events, and the line of a span in a
one-document file (snake_case ids too)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from otlp_fixture import request, span, span_id, trace_id, write_lines

from assay.errors import FormatError
from assay.formats.otlp import bounded_lines, first_line_is_whole, read_span_lines, read_spans


def _problem(path: Path, **options: Any) -> FormatError:
    with pytest.raises(FormatError) as caught:
        read_spans(path, **options)
    return caught.value


def test_a_line_of_exactly_the_limit_passes_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    # 10 bytes then a newline: within a limit of 10 (the newline is not counted), over a limit of 9
    lines = list(bounded_lines(io.BytesIO(b"0123456789\nab"), tmp_path / "f", 10, first=5))
    assert lines == [(5, b"0123456789\n"), (6, b"ab")]
    with pytest.raises(FormatError) as caught:
        list(bounded_lines(io.BytesIO(b"ok\n0123456789\n"), tmp_path / "f", 9))
    assert caught.value.line == 2
    assert caught.value.problem == "a line over the limit of 9 bytes"
    assert caught.value.expected == "lines of at most that size; a bigger limit with --max-line (e.g. --max-line 64M)"
    with pytest.raises(FormatError):  # 11 bytes without a newline at the end of the file
        list(bounded_lines(io.BytesIO(b"01234567890"), tmp_path / "f", 10))


def test_read_spans_applies_its_line_limit(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", [span(1, 1)])
    size = len(path.read_bytes()) - 1
    assert len(read_spans(path, max_line=size).spans) == 1
    assert _problem(path, max_line=size - 1).line == 1


def test_a_byte_order_mark_is_read_on_the_first_line_and_bad_bytes_are_named(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(request([span(1, 1)])).encode() + b"\n")
    assert len(read_spans(path).spans) == 1
    path.write_bytes(json.dumps(request([span(1, 1)])).encode() + b"\n\xef\xbb\xbf" + b"{}\n")
    assert _problem(path).line == 2  # a mark on a later line is a character, not JSON
    path.write_bytes(json.dumps(request([span(1, 1)])).encode() + b'\n{"a": "\xff"}\n')
    problem = _problem(path)
    assert (problem.line, problem.problem, problem.expected) == (
        2,
        "bytes that are not UTF-8 at byte 8",
        "a UTF-8 text file",
    )


def test_lines_given_by_number_are_read_and_a_bad_one_named(tmp_path: Path) -> None:
    one, two = json.dumps(request([span(1, 1, name="a")])), json.dumps(request([span(1, 2, name="b")]))
    read = read_span_lines(tmp_path / "t.jsonl", [(7, one), (8, "  \n"), (9, two)])
    assert [(s.name, s.line) for s in read.spans] == [("a", 7), ("b", 9)]
    with pytest.raises(FormatError) as caught:
        read_span_lines(tmp_path / "t.jsonl", [(4, "{oops")])
    assert caught.value.line == 4 and caught.value.problem.startswith("invalid JSON at column 2")


def test_which_first_line_is_whole() -> None:
    assert first_line_is_whole('{"resourceSpans": []}\n')
    assert first_line_is_whole("[]")
    assert not first_line_is_whole('{"resourceSpans": [')
    with pytest.raises(FormatError):
        first_line_is_whole("name,value")


def test_a_cut_last_line_is_told_from_a_wrong_character(tmp_path: Path) -> None:
    whole = json.dumps(request([span(1, 1)]))
    path = tmp_path / "t.jsonl"
    path.write_text(whole + "\n" + whole[:40], encoding="utf-8")  # stops inside the ids
    cut = _problem(path)
    assert cut.line == 2 and cut.problem.startswith("the file ends mid-record: its last line stops inside a JSON value")
    assert cut.expected == "whole records: wait until the exporter has finished writing, or copy the file again"
    path.write_text(whole + "\n" + whole[:-1], encoding="utf-8")  # the closing brace missing: cut too
    assert _problem(path).problem.startswith("the file ends mid-record")
    path.write_text(whole + "\n" + whole[:40] + "\n", encoding="utf-8")  # the same, but the line has ended
    assert _problem(path).problem.startswith("invalid JSON at column")
    path.write_text(whole + "\n{]", encoding="utf-8")  # a wrong character on a last line without newline
    assert _problem(path).problem.startswith("invalid JSON at column 2")


def test_a_cut_document_says_where_it_stops(tmp_path: Path) -> None:
    text = json.dumps(request([span(1, 1)]), indent=2)
    path = tmp_path / "t.json"
    path.write_text("\n" + text[: text.index('"name"')], encoding="utf-8")  # a blank line, then a cut document
    cut = _problem(path)
    assert cut.problem.startswith("the file ends mid-record: it stops inside a JSON value (invalid JSON at column")
    assert cut.line == text[: text.index('"name"')].count("\n") + 2


def test_every_structural_refusal_is_worded(tmp_path: Path) -> None:
    def refused(document: Any) -> FormatError:
        path = tmp_path / "t.jsonl"
        path.write_text(json.dumps(document) + "\n", encoding="utf-8")
        return _problem(path)

    assert refused({"resourceSpans": {}}).problem == "'resourceSpans' is a dict"
    assert refused({}).problem == "a JSON object of another shape (keys: none)"
    assert refused({"resourceSpans": [{"scopeSpans": [{"spans": [5]}]}]}).problem == "a span that is a JSON int"
    bad_attributes = span(1, 1)
    bad_attributes["attributes"] = {"k": "v"}
    assert refused(request([bad_attributes])).problem == "'attributes' is a dict"
    no_key = span(1, 1)
    no_key["attributes"] = [{"value": {"stringValue": "v"}}]
    assert refused(request([no_key])).problem == "attribute {'value': {'stringValue': 'v'}} has no 'key'"
    bad_double = span(1, 1)
    bad_double["attributes"] = [{"key": "d", "value": {"doubleValue": "many"}}]
    assert refused(request([bad_double])).problem == "doubleValue 'many' is not a number"
    assert refused(request([bad_double])).expected == "a JSON number"


def test_each_any_value_under_both_spellings(tmp_path: Path) -> None:
    values = {
        "s": {"string_value": "text"},
        "i": {"int_value": 12},
        "d": {"double_value": "Infinity"},
        "b": {"bool_value": False},
        "t": {"boolValue": True},
        "y": {"bytesValue": "AAE="},
        "z": {"bytes_value": "AAI="},
        "a": {"array_value": {"values": [{"intValue": "1"}, {"stringValue": "x"}]}},
        "e": {"arrayValue": {}},
        "k": {"kvlist_value": {"values": [{"key": "n", "value": {"intValue": "3"}}, "junk"]}},
        "u": {"unknownValue": 1},
        "none": None,
    }
    raw = span(1, 1)
    raw["attributes"] = [{"key": key, "value": value} for key, value in values.items()]
    got = read_spans(write_lines(tmp_path / "t.jsonl", [raw])).spans[0].attributes
    assert got == {"s": "text", "i": 12, "d": float("inf"), "b": False, "t": True, "y": "AAE=", "z": "AAI=",
                   "a": [1, "x"], "e": [], "k.n": 3, "u": None, "none": None}  # fmt: skip


def test_events_are_kept_with_their_attributes_and_a_status_without_error(tmp_path: Path) -> None:
    events = [{"name": "exception", "attributes": [{"key": "exception.type", "value": {"stringValue": "KeyError"}}]},
              "junk", {"attributes": []}]  # fmt: skip
    raw = span(1, 1, events=events)
    raw["status"] = {"code": 1, "message": 7}
    got = read_spans(write_lines(tmp_path / "t.jsonl", [raw])).spans[0]
    assert got.events == (("exception", {"exception.type": "KeyError"}), ("", {}))
    assert not got.error and got.status_message == ""


def test_error_codes_by_number_text_and_name(tmp_path: Path) -> None:
    spans = []
    for i, code in enumerate((2, "2", "STATUS_CODE_ERROR", "ERROR", 1, "STATUS_CODE_OK"), start=1):
        raw = span(1, i)
        raw["status"] = {"code": code}
        spans.append(raw)
    got = read_spans(write_lines(tmp_path / "t.jsonl", spans)).spans
    assert [s.error for s in got] == [True, True, True, True, False, False]


def test_a_document_names_each_span_by_the_line_of_its_id_in_either_spelling(tmp_path: Path) -> None:
    first = {"trace_id": trace_id(1), "span_id": span_id(1), "name": "a"}
    second = {"traceId": trace_id(1), "spanId": span_id(2), "name": "b"}
    no_id_text = {"traceId": trace_id(1), "spanId": "AAAAAAAAAAM=", "name": "c"}
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [first, second, no_id_text]}]}]}
    path = tmp_path / "t.json"
    text = json.dumps(document, indent=1)
    path.write_text("\n\n" + text, encoding="utf-8")  # two blank lines first: the document opens on line 3
    lines = ("\n\n" + text).splitlines()
    got = read_spans(path).spans
    assert [s.name for s in got] == ["a", "b", "c"]
    assert '"span_id": "' + span_id(1) in lines[got[0].line - 1]
    assert '"spanId": "' + span_id(2) in lines[got[1].line - 1]
    assert got[2].span_id == span_id(3) and '"spanId": "AAAAAAAAAAM="' in lines[got[2].line - 1]
    assert got[0].line > 3


def test_a_base64_id_of_the_wrong_size_and_an_absent_parent(tmp_path: Path) -> None:
    raw = span(1, 1)
    raw["spanId"] = "AAE="  # base64 of 2 bytes, not 8
    problem = _problem(write_lines(tmp_path / "t.jsonl", [raw]))
    assert problem.problem == "spanId 'AAE=' is not an id"
    assert problem.expected == "16 hex digits (or base64 of 8 bytes)"
    raw = span(1, 1)
    del raw["parentSpanId"]
    raw["startTimeUnixNano"] = ""
    got = read_spans(write_lines(tmp_path / "t.jsonl", [raw])).spans[0]
    assert got.parent_id is None and got.start_ns == 0


def test_errors_name_the_file_they_are_about(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    read = read_span_lines(path, [(1, json.dumps(request([span(1, 1)])))])
    assert read.path == path and read.spans[0].line == 1
    with pytest.raises(FormatError) as caught:
        read_span_lines(path, [(3, '{"resourceSpans": ')])  # a whole line given by watch: never said to be cut
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert caught.value.problem.startswith("invalid JSON at column 19")
    with pytest.raises(FormatError) as caught:
        first_line_is_whole("query,answer")
    assert caught.value.path == "-"
    text = json.dumps(request([span(1, 1)]), indent=2)
    document = tmp_path / "t.json"
    document.write_text(text[: text.index('"name"')], encoding="utf-8")
    cut = _problem(document)
    assert cut.path == str(document)
    assert cut.expected == "whole records: wait until the exporter has finished writing, or copy the file again"


def test_a_span_id_the_text_does_not_show_as_is_takes_the_documents_first_line(tmp_path: Path) -> None:
    raw = span(1, 1)
    text = "\n" + json.dumps(request([raw]), indent=2).replace(span_id(1), span_id(1)[:-1] + "\\u0031")
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    got = read_spans(path).spans[0]
    assert got.span_id == span_id(1) and got.line == 2  # the line the document opens on
    raw["spanId"] = [1]
    path.write_text(json.dumps(request([raw]), indent=2), encoding="utf-8")
    assert _problem(path).problem == "spanId [1] is not an id"
