"""Spans from OTLP JSON files: what the OpenTelemetry collector's file exporter writes, or one OTLP JSON document.

Two layouts are read, told apart by the content:

* **JSON lines** (the collector's ``file`` exporter): one ``{"resourceSpans": [...]}`` object per line, each an
  ``ExportTraceServiceRequest``; lines of other signals (``resourceLogs``, ``resourceMetrics``,
  ``resourceProfiles``) are skipped and counted;
* **one document**: the same object over the whole file (pretty-printed or not), as an OTLP/HTTP JSON body is.

Inside, ``resourceSpans[].scopeSpans[].spans[]`` (``instrumentationLibrarySpans``, the name before OTLP 0.15, is
read too), each span with ``traceId``, ``spanId``, ``parentSpanId``, ``name``, ``startTimeUnixNano``,
``endTimeUnixNano``, ``attributes`` and ``status``. The encoding follows the OTLP/JSON rules (opentelemetry-proto
``docs/specification.md``, "JSON Protobuf Encoding") and accepts what protobuf's own JSON mapping writes besides,
because ``google.protobuf.json_format.MessageToJson`` of an SDK export is how many people make such files:

* ids are hex strings (OTLP/JSON, any case) or base64 (protobuf's mapping of ``bytes``): 32 hex digits or base64 of
  16 bytes for a trace id, 16 hex digits or base64 of 8 bytes for a span id; an empty ``parentSpanId`` means none;
* 64-bit integers (``intValue``, the times) are decimal strings or numbers;
* enums are integers (OTLP/JSON) or names (``"STATUS_CODE_ERROR"``); status code 2 is an error;
* an attribute value is an ``AnyValue``: ``stringValue``, ``intValue``, ``doubleValue`` (``"NaN"``, ``"Infinity"``
  allowed), ``boolValue``, ``bytesValue`` (kept as its base64 text), ``arrayValue``, ``kvlistValue``; a kvlist (or
  a list of kvlists) is flattened into dotted keys, so ``retrieval.documents`` given as a list of
  ``{"document.content": ...}`` reads as ``retrieval.documents.0.document.content``;
* unknown fields are ignored; keys are lowerCamelCase (the original snake_case names are accepted too).

No line is read whole when it is longer than ``max_line`` bytes (8 MiB unless set): one is read in blocks up to the
limit and raises :class:`~assay.errors.FormatError` naming its file and line, so a huge line costs bounded memory.
A last line that stops inside a JSON value (an open string, object or list) is said to be cut: the file ends
mid-record.

Every span keeps the line it came from (in a one-document file: the line of its ``spanId``), so that what is wrong
with it can be named at ``file:line``. A file that is empty, not JSON, or JSON of another shape raises
:class:`~assay.errors.FormatError` naming the file and line.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from assay.errors import FormatError
from assay.formats.progress import reading

__all__ = [
    "DEFAULT_MAX_LINE",
    "OTLP_EXPECTED",
    "Span",
    "SpanFile",
    "bounded_lines",
    "first_line_is_whole",
    "read_span_lines",
    "read_spans",
]

DEFAULT_MAX_LINE = 8 * 1024 * 1024  # bytes: a request of thousands of spans fits; a runaway line does not

OTLP_EXPECTED = (
    'OTLP JSON: one {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]} object per line, as the OpenTelemetry '
    "collector's file exporter writes it, or one such document"
)
_OTHER_SIGNALS = ("resourceLogs", "resourceMetrics", "resourceProfiles")
_ERROR_CODES = (2, "2", "STATUS_CODE_ERROR", "ERROR")
_HEX = re.compile(r"[0-9a-fA-F]+")


@dataclass(frozen=True, slots=True)
class Span:
    """One span: ids as lowercase hex, times in Unix nanoseconds (0 when absent), attributes flattened."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    error: bool
    status_message: str
    attributes: dict[str, Any]
    line: int
    events: tuple[tuple[str, dict[str, Any]], ...] = ()  # (name, attributes), e.g. an "exception" event


@dataclass
class SpanFile:
    """What one file held: its spans in file order, and how many lines of other signals were skipped."""

    path: Path
    spans: list[Span] = field(default_factory=list)
    other_signal_lines: int = 0


def read_spans(path: str | Path, max_line: int = DEFAULT_MAX_LINE) -> SpanFile:
    """The spans of an OTLP JSON file (JSON lines or one document, no line over ``max_line`` bytes); see the module
    docstring."""
    source = Path(path)
    out = SpanFile(source)
    for line, obj, where in _objects(source, max_line):
        _request(source, line, obj, out, where)
    return out


def read_span_lines(path: str | Path, lines: Iterable[tuple[int, str]]) -> SpanFile:
    """The spans of some JSON lines of ``path`` given with their line numbers (the part of a growing export read
    since last time: ``assay traces watch``); blank lines are skipped, a line that is not JSON raises
    :class:`~assay.errors.FormatError` naming the file and line."""
    source = Path(path)
    out = SpanFile(source)
    for number, text in lines:
        if text.strip():
            _request(source, number, _parse_line(source, number, text), out, None)
    return out


def bounded_lines(handle: IO[bytes], path: Path, max_line: int, first: int = 1) -> Iterator[tuple[int, bytes]]:
    """``(number, bytes)`` for each line of ``handle`` from where it stands (with its newline; the last may have
    none), numbered from ``first``. A line over ``max_line`` bytes raises :class:`FormatError` once ``max_line`` + 1
    of its bytes are read: never more of it is held."""
    number = first
    while raw := handle.readline(max_line + 1):
        if len(raw) > max_line and not (len(raw) == max_line + 1 and raw.endswith(b"\n")):
            raise FormatError(path, number, f"a line over the limit of {max_line:,} bytes", _LIMIT_EXPECTED)
        yield number, raw
        number += 1


def first_line_is_whole(text: str) -> bool:
    """Whether the first non-blank line of a file, ``text``, is a whole JSON value (the file is JSON lines), rather
    than the opening of one document over many lines."""
    return _first(Path("-"), 1, text) is not None


_LIMIT_EXPECTED = "lines of at most that size; a bigger limit with --max-line (e.g. --max-line 64M)"


# ---------------------------------------------------------------------------------------------------- layouts


def _objects(path: Path, max_line: int) -> Iterator[tuple[int, Any, _LineOf | None]]:
    """``(line, parsed object, line finder)`` for each JSON line, or once for a one-document file (with a finder
    that gives the line of a span id in the text)."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise FormatError(path, None, f"cannot read: {exc.strerror}", OTLP_EXPECTED) from None
    meter = reading(path)
    with handle:
        seen = False
        for number, raw in bounded_lines(handle, path, max_line):
            meter.add(len(raw))
            text = _decode(path, number, raw)
            if not text.strip():
                continue
            if not seen:
                seen = True
                first = _first(path, number, text)
                if first is None:  # not a whole object on its first line: one (pretty-printed) document
                    rest = [_decode(path, n, more) for n, more in bounded_lines(handle, path, max_line, number + 1)]
                    meter.add(sum(map(len, rest)))
                    yield from _document(path, number, text + "".join(rest))
                    meter.finish()
                    return
                yield number, first, None
                continue
            yield number, _parse_line(path, number, text, cut=not raw.endswith(b"\n")), None
    meter.finish()
    if not seen:
        raise FormatError(path, 1, "empty file", OTLP_EXPECTED)


def _decode(path: Path, line: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig" if line == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        problem = f"bytes that are not UTF-8 at byte {exc.start + 1}"
        raise FormatError(path, line, problem, "a UTF-8 text file") from None


def _first(path: Path, line: int, text: str) -> Any:
    """The first non-blank line parsed, or None when it opens a JSON value it does not close."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        problem = f"not JSON (it starts {stripped.splitlines()[0][:30]!r}; a CSV or a text log?)"
        raise FormatError(path, line, problem, OTLP_EXPECTED)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _parse_line(path: Path, line: int, text: str, *, cut: bool = False) -> Any:
    """A JSON line parsed; ``cut``: it is the file's last and has no newline (it may stop mid-record)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON at column {exc.colno}: {exc.msg}"
        if cut and _stops_early(text, exc):
            problem = f"the file ends mid-record: its last line stops inside a JSON value ({problem})"
            raise FormatError(path, line, problem, _CUT_EXPECTED) from None
        raise FormatError(path, line, problem, OTLP_EXPECTED) from None


def _stops_early(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether the JSON ``text`` is wrong only in ending too soon: the parser ran out of text inside a value (an
    open string, object or list) rather than meeting a wrong character."""
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())


_CUT_EXPECTED = "whole records: wait until the exporter has finished writing, or copy the file again"


def _document(path: Path, first_line: int, text: str) -> Iterator[tuple[int, Any, _LineOf]]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        line = first_line + exc.lineno - 1
        problem = f"invalid JSON at column {exc.colno}: {exc.msg}"
        if _stops_early(text, exc):
            problem = f"the file ends mid-record: it stops inside a JSON value ({problem})"
            raise FormatError(path, line, problem, _CUT_EXPECTED) from None
        raise FormatError(path, line, problem, OTLP_EXPECTED) from None
    yield first_line, obj, _LineOf(text, first_line)


class _LineOf:
    """The line of a span in a one-document file: where its ``"spanId": "<id>"`` is first written (one pass over the
    text, on the first question)."""

    _SPAN_ID = re.compile(r'"span_?[iI]d"\s*:\s*"([^"]*)"')

    def __init__(self, text: str, first_line: int) -> None:
        self.text = text
        self.first = first_line
        self.lines: dict[str, int] | None = None

    def __call__(self, raw_span_id: object) -> int:
        if self.lines is None:
            self.lines = {}
            line, at = self.first, 0
            for found in self._SPAN_ID.finditer(self.text):
                line += self.text.count("\n", at, found.start())
                at = found.start()
                self.lines.setdefault(found.group(1), line)
        return self.lines.get(raw_span_id, self.first) if isinstance(raw_span_id, str) else self.first


# ---------------------------------------------------------------------------------------------------- structure


def _get(obj: Mapping[str, Any], camel: str, snake: str | None = None) -> Any:
    """A field by its lowerCamelCase name, else its proto name."""
    value = obj.get(camel)
    return obj.get(snake) if value is None and snake is not None else value


def _list(path: Path, line: int, obj: Mapping[str, Any], camel: str, snake: str) -> list[Any]:
    value = _get(obj, camel, snake)
    if value is None:
        return []
    if not isinstance(value, list):
        raise FormatError(path, line, f"{camel!r} is a {type(value).__name__}", f"a list in {OTLP_EXPECTED}")
    return value


def _request(path: Path, line: int, obj: Any, out: SpanFile, where: _LineOf | None) -> None:
    if not isinstance(obj, dict):
        raise FormatError(path, line, f"a JSON {type(obj).__name__} where an OTLP request belongs", OTLP_EXPECTED)
    if "resourceSpans" not in obj and "resource_spans" not in obj:
        if any(key in obj for key in _OTHER_SIGNALS):
            out.other_signal_lines += 1
            return
        keys = ", ".join(sorted(obj)[:6]) or "none"
        raise FormatError(path, line, f"a JSON object of another shape (keys: {keys})", OTLP_EXPECTED)
    for resource in _list(path, line, obj, "resourceSpans", "resource_spans"):
        scopes = _list(path, line, resource, "scopeSpans", "scope_spans")
        scopes += _list(path, line, resource, "instrumentationLibrarySpans", "instrumentation_library_spans")
        for scope in scopes:
            for raw in _list(path, line, scope, "spans", "spans"):
                at = where(_get(raw, "spanId", "span_id")) if where is not None else line
                out.spans.append(_span(path, at, raw))


def _span(path: Path, line: int, raw: Any) -> Span:
    if not isinstance(raw, dict):
        raise FormatError(path, line, f"a span that is a JSON {type(raw).__name__}", "a span object")
    status = _get(raw, "status") or {}
    code = status.get("code") if isinstance(status, dict) else None
    message = status.get("message") if isinstance(status, dict) else None
    events = tuple(
        (str(event.get("name", "")), _attributes(path, line, event.get("attributes")))
        for event in _list(path, line, raw, "events", "events")
        if isinstance(event, dict)
    )
    parent = _id(path, line, _get(raw, "parentSpanId", "parent_span_id"), 8, "parentSpanId", optional=True)
    return Span(
        trace_id=_id(path, line, _get(raw, "traceId", "trace_id"), 16, "traceId"),
        span_id=_id(path, line, _get(raw, "spanId", "span_id"), 8, "spanId"),
        parent_id=parent or None,
        name=str(raw.get("name") or ""),
        start_ns=_nanos(path, line, _get(raw, "startTimeUnixNano", "start_time_unix_nano")),
        end_ns=_nanos(path, line, _get(raw, "endTimeUnixNano", "end_time_unix_nano")),
        error=code in _ERROR_CODES,
        status_message=message if isinstance(message, str) else "",
        attributes=_attributes(path, line, raw.get("attributes")),
        line=line,
        events=events,
    )


def _id(path: Path, line: int, value: Any, size: int, name: str, *, optional: bool = False) -> str:
    """An id as lowercase hex, from hex (OTLP/JSON) or base64 (protobuf's JSON mapping) of ``size`` bytes."""
    if value in (None, "") and optional:
        return ""
    if isinstance(value, str):
        if len(value) == 2 * size and _HEX.fullmatch(value):
            return value.lower()
        try:
            decoded = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        if len(decoded) == size:
            return decoded.hex()
    expected = f"{2 * size} hex digits (or base64 of {size} bytes)"
    raise FormatError(path, line, f"{name} {value!r} is not an id", expected)


def _nanos(path: Path, line: int, value: Any) -> int:
    if value is None or value == "":
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise FormatError(path, line, f"time {value!r} is not an integer", "Unix nanoseconds as a string") from None


def _attributes(path: Path, line: int, raw: Any) -> dict[str, Any]:
    """``[{"key", "value": AnyValue}]`` as a flat dict (kvlists flattened into dotted keys)."""
    out: dict[str, Any] = {}
    if raw is None:
        return out
    if not isinstance(raw, list):
        raise FormatError(path, line, f"'attributes' is a {type(raw).__name__}", 'a list of {"key", "value"}')
    for pair in raw:
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise FormatError(path, line, f"attribute {pair!r} has no 'key'", '{"key": "...", "value": {...}}')
        _put(out, pair["key"], _value(path, line, pair.get("value")))
    return out


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, dict):
        for inner, item in value.items():
            _put(out, f"{key}.{inner}", item)
    elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        for i, item in enumerate(value):
            _put(out, f"{key}.{i}", item)
    else:
        out[key] = value


def _value(path: Path, line: int, value: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    if not isinstance(value, dict) or not value:
        return None
    if "stringValue" in value or "string_value" in value:
        return _get(value, "stringValue", "string_value")
    if "intValue" in value or "int_value" in value:
        return _nanos(path, line, _get(value, "intValue", "int_value"))
    if "doubleValue" in value or "double_value" in value:
        number = _get(value, "doubleValue", "double_value")
        try:
            return float(number)
        except (TypeError, ValueError):
            raise FormatError(path, line, f"doubleValue {number!r} is not a number", "a JSON number") from None
    if "boolValue" in value or "bool_value" in value:
        return bool(_get(value, "boolValue", "bool_value"))
    if "arrayValue" in value or "array_value" in value:
        items = (_get(value, "arrayValue", "array_value") or {}).get("values") or []
        return [_value(path, line, item) for item in items]
    if "kvlistValue" in value or "kvlist_value" in value:
        pairs = (_get(value, "kvlistValue", "kvlist_value") or {}).get("values") or []
        return {p.get("key"): _value(path, line, p.get("value")) for p in pairs if isinstance(p, dict)}
    if "bytesValue" in value or "bytes_value" in value:
        return _get(value, "bytesValue", "bytes_value")
    return None
