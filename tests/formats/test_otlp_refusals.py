"""OTLP JSON reading pinned further (found by the mutation habit): every refusal of a span's parts names the file, the
line (the second of the file, so a line left out or misnumbered shows) and its words; a one-document file names the
line of bad bytes inside it; snake_case spellings of each field; fields spelled in another case are unknown (ignored);
values of the wrong shape where an object belongs read as nothing rather than failing."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from otlp_fixture import request, span, span_id, trace_id

from assay.errors import FormatError
from assay.formats.otlp import OTLP_EXPECTED, bounded_lines, first_line_is_whole, read_span_lines, read_spans


def _second_line(tmp_path: Path, document: Any) -> Path:
    """A file whose first line is one good span and whose second line is ``document``."""
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(request([span(1, 1)])) + "\n" + json.dumps(document) + "\n", encoding="utf-8")
    return path


def _refusal(path: Path) -> tuple[str, int | None, str, str | None]:
    with pytest.raises(FormatError) as caught:
        read_spans(path)
    return caught.value.path, caught.value.line, caught.value.problem, caught.value.expected


_BAD_INT_PAIR = {"key": "i", "value": {"intValue": "z"}}


def _with(**fields: Any) -> dict[str, Any]:
    raw = span(1, 2)
    raw.update(fields)
    return raw


@pytest.mark.parametrize(
    ("document", "problem", "expected"),
    [
        ({"resourceSpans": {}}, "'resourceSpans' is a dict", f"a list in {OTLP_EXPECTED}"),
        ({"resourceSpans": [{"scopeSpans": 3}]}, "'scopeSpans' is a int", f"a list in {OTLP_EXPECTED}"),
        (
            {"resourceSpans": [{"instrumentationLibrarySpans": "x"}]},
            "'instrumentationLibrarySpans' is a str",
            f"a list in {OTLP_EXPECTED}",
        ),
        ({"resourceSpans": [{"scopeSpans": [{"spans": {}}]}]}, "'spans' is a dict", f"a list in {OTLP_EXPECTED}"),
        (request([7]), "a span that is a JSON int", "a span object"),
        (request([_with(events={})]), "'events' is a dict", f"a list in {OTLP_EXPECTED}"),
        (request([_with(attributes={"k": "v"})]), "'attributes' is a dict", 'a list of {"key", "value"}'),
        (
            request([_with(attributes=[{"value": {"stringValue": "v"}}])]),
            "attribute {'value': {'stringValue': 'v'}} has no 'key'",
            '{"key": "...", "value": {...}}',
        ),
        (
            request([_with(events=[{"name": "e", "attributes": [{"key": "n", "value": {"intValue": "x"}}]}])]),
            "time 'x' is not an integer",
            "Unix nanoseconds as a string",
        ),
        (request([_with(parentSpanId="zz")]), "parentSpanId 'zz' is not an id", "16 hex digits (or base64 of 8 bytes)"),
        (request([_with(endTimeUnixNano="soon")]), "time 'soon' is not an integer", "Unix nanoseconds as a string"),
        (
            request([_with(attributes=[{"key": "n", "value": {"intValue": "many"}}])]),
            "time 'many' is not an integer",
            "Unix nanoseconds as a string",
        ),
        (
            request([_with(attributes=[{"key": "d", "value": {"doubleValue": "x"}}])]),
            "doubleValue 'x' is not a number",
            "a JSON number",
        ),
        (
            request([_with(attributes=[{"key": "a", "value": {"arrayValue": {"values": [{"intValue": "y"}]}}}])]),
            "time 'y' is not an integer",
            "Unix nanoseconds as a string",
        ),
        (
            request([_with(attributes=[{"key": "k", "value": {"kvlistValue": {"values": [_BAD_INT_PAIR]}}}])]),
            "time 'z' is not an integer",
            "Unix nanoseconds as a string",
        ),
    ],
)
def test_each_refusal_names_the_file_the_line_and_what_was_expected(
    tmp_path: Path, document: Any, problem: str, expected: str
) -> None:
    path = _second_line(tmp_path, document)
    assert _refusal(path) == (str(path), 2, problem, expected)


def test_a_file_that_cannot_be_opened_is_named_without_a_line(tmp_path: Path) -> None:
    path = tmp_path / "missing.jsonl"
    assert _refusal(path) == (str(path), None, "cannot read: No such file or directory", OTLP_EXPECTED)


def test_an_empty_file_is_said_to_be_empty(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n", encoding="utf-8")
    assert _refusal(path) == (str(path), 1, "empty file", OTLP_EXPECTED)


def test_bad_bytes_are_named_at_their_line_on_the_first_line_and_inside_a_document(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": "\xff"}\n')
    assert _refusal(path) == (str(path), 1, "bytes that are not UTF-8 at byte 8", "a UTF-8 text file")
    # a pretty-printed document opening on line 2 (after a blank line): bad bytes on its third line are file line 4
    path.write_bytes(b'\n{\n  "resourceSpans": [\n  "\xff"]\n}\n')
    assert _refusal(path) == (str(path), 4, "bytes that are not UTF-8 at byte 4", "a UTF-8 text file")


def test_a_line_over_the_limit_inside_a_document_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{\n  "resourceSpans": [\n' + " " * 40 + "]\n}\n", encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_spans(path, max_line=30)
    assert (caught.value.path, caught.value.line) == (str(path), 3)


def test_a_byte_order_mark_on_a_later_line_is_refused(tmp_path: Path) -> None:
    # utf-8-sig strips a mark only where a file can start: on line 2 it is a character before the JSON
    path = tmp_path / "t.jsonl"
    line = json.dumps(request([span(1, 1)])).encode()
    path.write_bytes(line + b"\n\xef\xbb\xbf" + line + b"\n")
    assert _refusal(path)[1] == 2


def test_a_first_line_indented_is_still_json_lines_and_a_long_non_json_start_is_quoted_to_30_characters(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("   " + json.dumps(request([span(1, 1)])) + "\n", encoding="utf-8")
    assert len(read_spans(path).spans) == 1
    path.write_text("abcdefghijklmnopqrstuvwxyz0123456789\n", encoding="utf-8")
    problem = _refusal(path)[2]
    assert problem == "not JSON (it starts 'abcdefghijklmnopqrstuvwxyz0123'; a CSV or a text log?)"


def test_a_base64_id_with_characters_outside_the_alphabet_is_refused(tmp_path: Path) -> None:
    # "AAAA!AAAAAAM=" is base64 of 8 bytes once the '!' is dropped: a lenient decoder would take it
    path = _second_line(tmp_path, request([_with(spanId="AAAA!AAAAAAM=")]))
    assert _refusal(path)[1:3] == (2, "spanId 'AAAA!AAAAAAM=' is not an id")


def test_each_line_of_another_signal_is_counted_and_seven_keys_are_cut_to_six(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [{"resourceLogs": []}, {"resourceMetrics": []}, request([span(1, 1)]), {"resourceProfiles": []}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert read_spans(path).other_signal_lines == 3
    path = _second_line(tmp_path, {key: 1 for key in "gfedcba"})
    assert _refusal(path)[2] == "a JSON object of another shape (keys: a, b, c, d, e, f)"


def test_snake_case_spellings_of_every_nested_field(tmp_path: Path) -> None:
    raw = {"trace_id": trace_id(1), "span_id": span_id(2), "parent_span_id": span_id(1), "end_time_unix_nano": "9",
           "attributes": [{"key": "b", "value": {"bool_value": True}}]}  # fmt: skip
    old = {"trace_id": trace_id(1), "span_id": span_id(3)}
    document = {"resource_spans": [{"scope_spans": [{"spans": [raw]}]},
                                   {"instrumentation_library_spans": [{"spans": [old]}]}]}  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(document) + "\n", encoding="utf-8")
    got = read_spans(path).spans
    assert [(s.span_id, s.parent_id, s.end_ns, s.attributes, s.name) for s in got] == [
        (span_id(2), span_id(1), 9, {"b": True}, ""),
        (span_id(3), None, 0, {}, ""),
    ]


def test_fields_spelled_in_another_case_are_unknown_and_ignored(tmp_path: Path) -> None:
    raw = span(1, 1)
    raw["EVENTS"] = [{"name": "exception"}]
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [raw]}, {"SPANS": [span(1, 2)]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(document) + "\n", encoding="utf-8")
    got = read_spans(path).spans
    assert [(s.span_id, s.events) for s in got] == [(span_id(1), ())]


def test_a_status_or_a_value_of_the_wrong_shape_reads_as_nothing(tmp_path: Path) -> None:
    raw = span(1, 1, error="boom")
    raw["status"] = "STATUS_CODE_ERROR"  # not an object: no code, no message
    raw["attributes"] = [{"key": "s", "value": "stringValue"}, {"key": "l", "value": ["intValue"]}]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(request([raw])) + "\n", encoding="utf-8")
    got = read_spans(path).spans[0]
    assert (got.error, got.status_message, got.attributes) == (False, "", {"s": None, "l": None})


def test_a_last_line_of_exactly_the_limit_without_a_newline_passes(tmp_path: Path) -> None:
    assert list(bounded_lines(io.BytesIO(b"ok\n0123456789"), tmp_path / "f", 10)) == [(1, b"ok\n"), (2, b"0123456789")]


def test_refusals_of_lines_given_by_number_and_of_a_first_line_name_their_place(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with pytest.raises(FormatError) as caught:
        read_span_lines(path, [(5, json.dumps({"x": 1}))])
    assert (caught.value.path, caught.value.line) == (str(path), 5)
    with pytest.raises(FormatError) as caught:
        first_line_is_whole("name,value")
    assert caught.value.line == 1
