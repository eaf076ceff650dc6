"""OTLP JSON built by hand, as the OpenTelemetry collector's file exporter writes it (hex ids, integer enums, 64-bit
integers as strings), for the tests of the trace readers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

T0 = 1_735_689_600_000_000_000  # 2025-01-01T00:00:00Z in nanoseconds
MS = 1_000_000


def any_value(value: Any) -> dict[str, Any]:
    """A Python value as an OTLP ``AnyValue``."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": [{"key": k, "value": any_value(v)} for k, v in value.items()]}}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    raise TypeError(value)


def trace_id(n: int) -> str:
    return f"{n:032x}"


def span_id(n: int) -> str:
    return f"{n:016x}"


def span(
    trace: int,
    sid: int,
    parent: int | None = None,
    *,
    name: str = "span",
    kind: str | None = None,
    start_ms: int = 0,
    end_ms: int = 10,
    attrs: Mapping[str, Any] | None = None,
    error: str | None = None,
    events: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """One span; ``kind`` sets ``openinference.span.kind``; ``error`` sets an ERROR status with that message."""
    attributes = dict(attrs or {})
    if kind is not None:
        attributes["openinference.span.kind"] = kind
    out: dict[str, Any] = {
        "traceId": trace_id(trace),
        "spanId": span_id(sid),
        "parentSpanId": span_id(parent) if parent is not None else "",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(T0 + start_ms * MS),
        "endTimeUnixNano": str(T0 + end_ms * MS),
        "attributes": [{"key": k, "value": any_value(v)} for k, v in attributes.items()],
        "status": {"code": 2, "message": error} if error is not None else {},
    }
    if events:
        out["events"] = list(events)
    return out


def request(spans: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` holding ``spans`` under one resource and scope."""
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "rag"}}]}
    scope = {"scope": {"name": "openinference.instrumentation.test"}, "spans": list(spans)}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


def write_lines(path: Path, *batches: Sequence[dict[str, Any]]) -> Path:
    """One request per line, as the collector's file exporter writes them."""
    path.write_text("".join(json.dumps(request(batch)) + "\n" for batch in batches), encoding="utf-8")
    return path


def documents(texts: Sequence[str], prefix: str = "retrieval.documents", **fields: Sequence[Any]) -> dict[str, Any]:
    """OpenInference document attributes: ``{prefix}.{i}.document.content`` and any other field per document."""
    out: dict[str, Any] = {}
    for i, text in enumerate(texts):
        out[f"{prefix}.{i}.document.content"] = text
        for name, values in fields.items():
            out[f"{prefix}.{i}.document.{name}"] = values[i]
    return out


def rag_trace(
    trace: int,
    question: str,
    passages: Sequence[str],
    answer: str,
    *,
    start_ms: int = 0,
    metadata: Mapping[str, Any] | None = None,
    tokens: tuple[int, int] = (50, 10),
) -> list[dict[str, Any]]:
    """A chain with a retriever and an LLM, as OpenInference's LangChain instrumentation records one."""
    base = trace * 10
    meta = {"metadata": json.dumps(metadata)} if metadata else {}
    scores = [1.0 - i / 10 for i in range(len(passages))]
    return [
        span(trace, base + 1, name="RunnableSequence", kind="CHAIN", start_ms=start_ms, end_ms=start_ms + 120,
             attrs={"input.value": question, "output.value": answer, **meta}),
        span(trace, base + 2, base + 1, name="Retriever", kind="RETRIEVER", start_ms=start_ms + 5,
             end_ms=start_ms + 30, attrs={"input.value": question,
                                          **documents(passages, id=[f"p{i}" for i in range(len(passages))],
                                                      score=scores)}),
        span(trace, base + 3, base + 1, name="ChatModel", kind="LLM", start_ms=start_ms + 40, end_ms=start_ms + 110,
             attrs={"llm.token_count.prompt": tokens[0], "llm.token_count.completion": tokens[1],
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": answer}),
    ]  # fmt: skip
