"""Reading spans from OTLP JSON: the collector's JSON lines, one document, protobuf's own JSON mapping (base64 ids,
enum names), every AnyValue, and the files that are not OTLP JSON (each error names the file and line)."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from otlp_fixture import T0, request, span, span_id, trace_id, write_lines

from assay.errors import FormatError
from assay.formats.otlp import read_spans


def test_collector_lines_give_every_span_with_its_line(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", [span(1, 1, name="a")], [span(1, 2, 1, name="b"), span(2, 3, name="c")])
    spans = read_spans(path).spans
    assert [(s.name, s.line) for s in spans] == [("a", 1), ("b", 2), ("c", 2)]
    assert spans[1].trace_id == trace_id(1) and spans[1].parent_id == span_id(1) and spans[0].parent_id is None
    assert (spans[0].start_ns, spans[0].end_ns) == (T0, T0 + 10_000_000)


def test_every_any_value_is_read_and_kvlists_are_flattened(tmp_path: Path) -> None:
    attrs = {"s": "text", "i": 7, "d": 0.25, "b": True, "a": ["x", "y"], "kv": {"k": 1, "inner": {"z": "deep"}},
             "docs": [{"document.content": "one"}, {"document.content": "two"}]}  # fmt: skip
    one = span(1, 1, attrs=attrs)
    one["attributes"].append({"key": "nan", "value": {"doubleValue": "NaN"}})
    one["attributes"].append({"key": "empty", "value": {}})
    got = read_spans(write_lines(tmp_path / "t.jsonl", [one])).spans[0].attributes
    assert got["s"] == "text" and got["i"] == 7 and got["d"] == 0.25 and got["b"] is True
    assert got["a"] == ["x", "y"] and got["kv.k"] == 1 and got["kv.inner.z"] == "deep"
    assert got["docs.0.document.content"] == "one" and got["docs.1.document.content"] == "two"
    assert got["nan"] != got["nan"] and got["empty"] is None  # NaN, as protobuf's JSON mapping writes it


def test_protobuf_json_mapping_base64_ids_and_enum_names_read_as_hex(tmp_path: Path) -> None:
    """MessageToJson of an SDK export writes ids in base64 and enums by name; they mean what the hex form means."""
    raw = span(5, 6, 4, error="boom")
    raw["traceId"] = base64.b64encode(bytes.fromhex(trace_id(5))).decode()
    raw["spanId"] = base64.b64encode(bytes.fromhex(span_id(6))).decode()
    raw["parentSpanId"] = base64.b64encode(bytes.fromhex(span_id(4))).decode()
    raw["status"] = {"code": "STATUS_CODE_ERROR", "message": "boom"}
    raw["kind"] = "SPAN_KIND_INTERNAL"
    got = read_spans(write_lines(tmp_path / "t.jsonl", [raw])).spans[0]
    assert (got.trace_id, got.span_id, got.parent_id) == (trace_id(5), span_id(6), span_id(4))
    assert got.error and got.status_message == "boom"


def test_upper_case_hex_ids_are_lowered(tmp_path: Path) -> None:
    raw = span(1, 1)
    raw["traceId"] = "5B8EFFF798038103D269B633813FC60C"
    assert read_spans(write_lines(tmp_path / "t.jsonl", [raw])).spans[0].trace_id == "5b8efff798038103d269b633813fc60c"


def test_one_pretty_printed_document_names_each_span_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(request([span(1, 1, name="a"), span(1, 2, 1, name="b")]), indent=2), encoding="utf-8")
    spans = read_spans(path).spans
    text = path.read_text(encoding="utf-8").splitlines()
    assert [s.name for s in spans] == ["a", "b"]
    for s in spans:
        assert f'"spanId": "{s.span_id}"' in text[s.line - 1]


def test_snake_case_keys_and_the_old_instrumentation_library_name_are_read(tmp_path: Path) -> None:
    raw = {"trace_id": trace_id(1), "span_id": span_id(1), "name": "old", "start_time_unix_nano": "5"}
    doc = {"resource_spans": [{"instrumentationLibrarySpans": [{"spans": [raw]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    got = read_spans(path).spans[0]
    assert (got.name, got.start_ns, got.end_ns) == ("old", 5, 0)


def test_lines_of_other_signals_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"resourceLogs": []}) + "\n\n" + json.dumps(request([span(1, 1)])) + "\n", "utf-8")
    read = read_spans(path)
    assert read.other_signal_lines == 1 and len(read.spans) == 1


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        ("", 1, "empty file"),
        ("\n  \n", 1, "empty file"),
        ("query,answer\nq1,a1\n", 1, "not JSON"),
        ('{"question": "q", "answer": "a"}\n', 1, "another shape (keys: answer, question)"),
        ("[1, 2]\n", 1, "a JSON list where an OTLP request belongs"),
        (json.dumps(request([span(1, 1)])) + "\n" + json.dumps(request([span(1, 2)])) + "\n{oops\n", 3, "invalid JSON"),
        ('{\n  "resourceSpans": [\n  oops\n}', 3, "invalid JSON"),
    ],
)
def test_files_that_are_not_otlp_json_name_the_file_and_line(
    tmp_path: Path, content: str, line: int, problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_spans(path)
    assert caught.value.path == str(path) and caught.value.line == line
    assert problem in str(caught.value) and "OTLP JSON" in str(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("traceId", "xyz", "traceId 'xyz' is not an id"),
        ("traceId", None, "traceId None is not an id"),
        ("spanId", "00ff", "spanId '00ff' is not an id"),
        ("startTimeUnixNano", "soon", "time 'soon' is not an integer"),
    ],
)
def test_a_bad_span_field_names_its_line(tmp_path: Path, field: str, value: object, problem: str) -> None:
    bad = span(1, 2)
    bad[field] = value
    path = write_lines(tmp_path / "t.jsonl", [span(1, 1)], [bad])
    with pytest.raises(FormatError, match=f"t.jsonl:2: {problem}"):
        read_spans(path)
