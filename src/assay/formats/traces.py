"""Traces of a RAG system, read from OTLP JSON spans (:mod:`~assay.formats.otlp`) with the OpenInference semantic
conventions (and the OpenTelemetry GenAI ones where they carry the same facts): one :class:`Trace` per trace id.

**Span kinds.** A span's kind is its ``openinference.span.kind`` (CHAIN, LLM, RETRIEVER, RERANKER, EMBEDDING, TOOL,
AGENT, PROMPT, GUARDRAIL, EVALUATOR, UNKNOWN), else from ``gen_ai.operation.name``: ``chat``, ``text_completion``
and ``generate_content`` are LLM, ``embeddings`` EMBEDDING, ``execute_tool`` TOOL, ``invoke_agent`` and
``create_agent`` AGENT, any other value UNKNOWN. Spans with a kind are the *AI spans*; the others (an HTTP server
span around the chain, a database call) are read only for the tree. A span without a kind that carries what only an
AI span should (``retrieval.documents.*``, ``reranker.*``, ``llm.*``) is an error: its facts would be misplaced.

**The rules**, in order, for each trace (all spans sharing a ``traceId``):

1. *Root*: the AI span with no AI ancestor that started first (ties: the longer one, then the smaller span id). A
   trace without AI spans is counted (``without_ai``) and gives no line.
2. *Question*: the root's ``input.value``; a JSON input gives its ``question``, ``query``, ``input``,
   ``user_input``, ``user_query``, ``prompt``, ``q`` or ``text`` (the first that is a non-empty string), else its only
   string value. Else the last user message of the root's ``gen_ai.input.messages`` (or ``gen_ai.prompt``). Else the
   first RETRIEVER's ``input.value`` (or a RERANKER's ``reranker.query``). A trace without a question is counted
   (``without_question``) and gives no line.
3. *Passages*: the documents of the RERANKER that ended last, when a RERANKER recorded
   ``reranker.output_documents`` (a reranked list is what the generator saw, so it wins over the retriever's); else
   the ``retrieval.documents`` of every RETRIEVER span, in the order the spans started. Each document gives
   ``{"id", "score", "text"}`` from ``document.id``, ``document.score`` and ``document.content``; a document with
   neither content nor id is an error. Scores are kept only when every passage has one and they come from one span
   (scores of two retrievers are not on one scale); else the list order is the ranking.
4. *Answer*: the root's output (``llm.output_messages``, ``gen_ai.output.messages``, ``output.value`` (a JSON
   output gives its ``answer``, ``output``, ``result``, ``response``, ``text``, ``content`` or ``output_text``),
   ``gen_ai.completion``); else the output of the LLM span that ended last.
5. *Latency*: the root's duration in milliseconds (unknown when a time is missing).
6. *Usage*, over the LLM spans with no LLM ancestor (a model call traced twice, by a framework and by its client
   library, counts once): ``prompt_tokens`` from ``llm.token_count.prompt`` or ``gen_ai.usage.input_tokens``
   (``gen_ai.usage.prompt_tokens`` before that), ``completion_tokens`` likewise (``llm.token_count.completion``,
   ``gen_ai.usage.output_tokens``), ``cost_usd`` from ``llm.cost.total`` or ``llm.cost.prompt`` +
   ``llm.cost.completion``. A field no span reported is absent (unknown, not 0); no usage at all gives None.
7. *Error*: when the root's status is ERROR: kind ``exception`` with the type and message of its ``exception``
   event, else kind ``error_status`` with the status message.
8. *Query id*: an ``assay.query_id`` attribute, or ``query_id`` in the ``metadata`` attribute (LangChain's
   ``config={"metadata": {"query_id": ...}}`` lands there), on the root first, then on the other spans in start order.

Traces are returned in the order their roots started (ties by trace id), so the same file always reads the same.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import FormatError
from assay.formats.otlp import Span, read_spans

__all__ = ["OPENINFERENCE_KINDS", "Trace", "TraceFile", "TracePassage", "read_traces", "traces_of"]

OPENINFERENCE_KINDS = frozenset(
    {"CHAIN", "LLM", "RETRIEVER", "RERANKER", "EMBEDDING", "TOOL", "AGENT", "PROMPT", "GUARDRAIL", "EVALUATOR",
     "UNKNOWN"}
)  # fmt: skip
_GENAI_KINDS = {
    "chat": "LLM", "text_completion": "LLM", "generate_content": "LLM", "embeddings": "EMBEDDING",
    "execute_tool": "TOOL", "invoke_agent": "AGENT", "create_agent": "AGENT",
}  # fmt: skip
_NEEDS_KIND = ("retrieval.documents.", "reranker.", "llm.")
_QUESTION_KEYS = ("question", "query", "input", "user_input", "user_query", "prompt", "q", "text")
_ANSWER_KEYS = ("answer", "output", "result", "response", "text", "content", "output_text")
KIND_EXPECTED = (
    "openinference.span.kind on every OpenInference span (RETRIEVER, RERANKER, LLM, CHAIN, ...): the OpenInference "
    "instrumentors set it; on a span made by hand, set_attribute('openinference.span.kind', 'RETRIEVER')"
)


@dataclass(frozen=True)
class TracePassage:
    """One retrieved document of a trace: its id, score and text as the spans recorded them."""

    id: str | None
    score: float | None
    text: str | None


@dataclass(frozen=True)
class Trace:
    """One trace read by the rules of the module docstring; ``line`` is where its root span is in the file."""

    trace_id: str
    line: int
    question: str
    passages: list[TracePassage]
    answer: str | None
    latency_ms: float | None
    usage: dict[str, float] | None
    error: tuple[str, str] | None  # (kind, message)
    query_id: str | None
    start_ns: int


@dataclass
class TraceFile:
    """The traces of one file and what was left out: traces with no AI span, traces with no question (by line of
    their first span), lines of other signals."""

    path: Path
    traces: list[Trace] = field(default_factory=list)
    spans: int = 0
    without_ai: list[int] = field(default_factory=list)
    without_question: list[int] = field(default_factory=list)
    other_signal_lines: int = 0


def read_traces(path: str | Path) -> TraceFile:
    """The traces of an OTLP JSON file; a file with spans but no AI span at all raises :class:`FormatError`."""
    spans = read_spans(path)
    out = traces_of(spans.spans, spans.path)
    out.other_signal_lines = spans.other_signal_lines
    if not out.spans:
        raise FormatError(spans.path, 1, "no spans in the file", "OTLP JSON with resourceSpans[].scopeSpans[].spans")
    if not out.traces and not out.without_question:
        first = spans.spans[0]
        raise FormatError(
            spans.path, first.line,
            f"none of its {out.spans} spans carries openinference.span.kind or gen_ai.operation.name (not "
            "OpenInference or GenAI traces)",
            "spans from an OpenInference instrumentor (openinference-instrumentation-langchain, -llama-index, "
            "-openai, ...) or with the OpenTelemetry GenAI attributes",
        )  # fmt: skip
    return out


def traces_of(spans: Sequence[Span], path: Path) -> TraceFile:
    """Spans grouped by trace id and read by the rules of the module docstring."""
    out = TraceFile(path, spans=len(spans))
    groups: dict[str, list[Span]] = {}
    for span in spans:
        groups.setdefault(span.trace_id, []).append(span)
    for trace_id, group in groups.items():
        kinds = {s.span_id: kind for s in group if (kind := span_kind(s, path)) is not None}
        if not kinds:
            out.without_ai.append(group[0].line)
            continue
        trace = _trace(trace_id, group, kinds, path)
        if trace is None:
            out.without_question.append(group[0].line)
        else:
            out.traces.append(trace)
    out.traces.sort(key=lambda t: (t.start_ns, t.trace_id))
    return out


def span_kind(span: Span, path: Path) -> str | None:
    """The OpenInference kind of ``span`` (from GenAI's operation name when it has none), or None for a span that
    is not an AI span; a span that needs a kind and has none raises :class:`FormatError`."""
    kind = span.attributes.get("openinference.span.kind")
    if isinstance(kind, str) and kind.strip():
        return kind.strip().upper()
    operation = span.attributes.get("gen_ai.operation.name")
    if isinstance(operation, str) and operation.strip():
        return _GENAI_KINDS.get(operation.strip().lower(), "UNKNOWN")
    needs = next((key for key in span.attributes if key.startswith(_NEEDS_KIND)), None)
    if needs is not None:
        problem = f"span {span.name!r} (trace {span.trace_id[:12]}) has {needs} but no openinference.span.kind"
        raise FormatError(path, span.line, problem, KIND_EXPECTED)
    return None


# ---------------------------------------------------------------------------------------------------- one trace


def _trace(trace_id: str, spans: list[Span], kinds: dict[str, str], path: Path) -> Trace | None:
    by_id = {s.span_id: s for s in spans}
    ai = [s for s in spans if s.span_id in kinds]
    tops = [s for s in ai if _ancestor_kind(s, by_id, kinds, None) is None]
    root = min(tops or ai, key=lambda s: (s.start_ns, -(s.end_ns - s.start_ns), s.span_id))
    by_start = sorted(ai, key=lambda s: (s.start_ns, s.span_id))
    question = _question(root, [s for s in by_start if kinds[s.span_id] in ("RETRIEVER", "RERANKER")])
    if question is None:
        return None
    llms = [s for s in by_start if kinds[s.span_id] == "LLM"]
    first_llms = [s for s in llms if _ancestor_kind(s, by_id, kinds, "LLM") is None]
    latency = (root.end_ns - root.start_ns) / 1e6 if root.start_ns and root.end_ns >= root.start_ns else None
    return Trace(
        trace_id=trace_id, line=root.line, question=question, passages=_passages(by_start, kinds, path),
        answer=_answer(root, llms), latency_ms=latency, usage=_usage(first_llms), error=_error(root),
        query_id=_query_id([root, *by_start]), start_ns=root.start_ns,
    )  # fmt: skip


def _ancestor_kind(span: Span, by_id: Mapping[str, Span], kinds: Mapping[str, str], want: str | None) -> str | None:
    """The kind of the nearest ancestor that is an AI span (of kind ``want`` when given), or None."""
    parent, steps = span.parent_id, 0
    while parent is not None and steps <= len(by_id):  # steps: a cycle in bad data ends the walk
        kind = kinds.get(parent)
        if kind is not None and (want is None or kind == want):
            return kind
        above = by_id.get(parent)
        parent, steps = (above.parent_id if above is not None else None), steps + 1
    return None


def _question(root: Span, searches: list[Span]) -> str | None:
    attrs = root.attributes
    found = _text(attrs.get("input.value"), _QUESTION_KEYS)
    found = found or _last_user_message(attrs, "gen_ai.input.messages") or _text(attrs.get("gen_ai.prompt"), ())
    for span in searches:
        found = found or _text(span.attributes.get("input.value"), _QUESTION_KEYS)
        found = found or _text(span.attributes.get("reranker.query"), ())
    return found


def _answer(root: Span, llms: list[Span]) -> str | None:
    found = _output(root)
    for span in sorted(llms, key=lambda s: (s.end_ns, s.span_id), reverse=True):
        found = found or _output(span)
    return found


def _output(span: Span) -> str | None:
    attrs = span.attributes
    message = _tree(attrs, "llm.output_messages").get("0", {}).get("message", {})
    return (
        _message_text(message)
        or _assistant_text(attrs, "gen_ai.output.messages")
        or _text(attrs.get("output.value"), _ANSWER_KEYS)
        or _text(attrs.get("gen_ai.completion"), ())
    )


def _passages(spans: list[Span], kinds: Mapping[str, str], path: Path) -> list[TracePassage]:
    reranked = [s for s in spans if kinds[s.span_id] == "RERANKER" and _has(s, "reranker.output_documents.")]
    if reranked:
        last = max(reranked, key=lambda s: (s.end_ns, s.span_id))
        return _documents(last, "reranker.output_documents", path, scored=True)
    retrievers = [s for s in spans if kinds[s.span_id] == "RETRIEVER" and _has(s, "retrieval.documents.")]
    lists = [_documents(s, "retrieval.documents", path, scored=len(retrievers) == 1) for s in retrievers]
    return [p for one in lists for p in one]


def _has(span: Span, prefix: str) -> bool:
    return any(key.startswith(prefix) for key in span.attributes)


def _documents(span: Span, prefix: str, path: Path, *, scored: bool) -> list[TracePassage]:
    tree = _tree(span.attributes, prefix)
    out = []
    for index in sorted((k for k in tree if k.isdigit()), key=int):
        node = tree[index].get("document", {}) if isinstance(tree[index], dict) else {}
        text, ident, score = node.get("content"), node.get("id"), node.get("score")
        text = text if isinstance(text, str) and text.strip() else None
        ident = str(ident) if isinstance(ident, str | int) and not isinstance(ident, bool) and str(ident) else None
        if text is None and ident is None:
            problem = (f"{prefix}.{index} of span {span.name!r} (trace {span.trace_id[:12]}) has neither "
                       "document.content nor document.id")  # fmt: skip
            raise FormatError(path, span.line, problem, "each document with its content (and its id when it has one)")
        out.append(TracePassage(ident, _finite(score), text))
    if not scored or any(p.score is None for p in out):
        return [TracePassage(p.id, None, p.text) for p in out]
    return out


def _usage(llms: Iterable[Span]) -> dict[str, float] | None:
    total: dict[str, float] = {}
    for span in llms:
        a = span.attributes
        prompt = _first_number(a, "llm.token_count.prompt", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
        completion = _first_number(a, "llm.token_count.completion", "gen_ai.usage.output_tokens",
                                   "gen_ai.usage.completion_tokens")  # fmt: skip
        cost = _first_number(a, "llm.cost.total")
        if cost is None:
            parts = [x for k in ("llm.cost.prompt", "llm.cost.completion") if (x := _finite(a.get(k))) is not None]
            cost = sum(parts) if parts else None
        for name, value in (("prompt_tokens", prompt), ("completion_tokens", completion), ("cost_usd", cost)):
            if value is not None:
                total[name] = total.get(name, 0.0) + value
    return {k: total[k] for k in ("prompt_tokens", "completion_tokens", "cost_usd") if k in total} or None


def _error(root: Span) -> tuple[str, str] | None:
    if not root.error:
        return None
    for name, attrs in root.events:
        if name == "exception":
            kind, message = attrs.get("exception.type"), attrs.get("exception.message")
            return "exception", ": ".join(str(x) for x in (kind, message) if x) or root.status_message
    return "error_status", root.status_message or "the root span's status is ERROR"


def _query_id(spans: Iterable[Span]) -> str | None:
    for span in spans:
        given = span.attributes.get("assay.query_id", span.attributes.get("metadata.query_id"))
        if given is None and isinstance(meta := span.attributes.get("metadata"), str) and "query_id" in meta:
            try:
                parsed = json.loads(meta)
            except ValueError:
                parsed = None
            given = parsed.get("query_id") if isinstance(parsed, dict) else None
        if isinstance(given, str | int) and not isinstance(given, bool) and str(given).strip():
            return str(given).strip()
    return None


# ---------------------------------------------------------------------------------------------------- values


def _finite(value: Any) -> float | None:
    """A number as a finite float, else None (a bool, a string, NaN or infinity)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _first_number(attrs: Mapping[str, Any], *keys: str) -> float | None:
    for key in keys:
        number = _finite(attrs.get(key))
        if number is not None:
            return number
    return None


def _text(value: Any, keys: Sequence[str]) -> str | None:
    """A text value, or from a JSON value: a string, the first of ``keys`` holding a non-empty string, else the
    only string value of an object."""
    if not isinstance(value, str) or not value.strip():
        return None
    stripped = value.strip()
    if not stripped.startswith(("{", '"')):
        return stripped
    try:
        parsed = json.loads(stripped)
    except ValueError:
        return stripped
    if isinstance(parsed, str):
        return parsed.strip() or None
    if not isinstance(parsed, dict):
        return None
    for key in keys:
        if isinstance(parsed.get(key), str) and parsed[key].strip():
            return str(parsed[key]).strip()
    strings = [v for v in parsed.values() if isinstance(v, str) and v.strip()]
    return strings[0].strip() if len(strings) == 1 else None


def _tree(attrs: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The flat attributes under ``prefix.`` as nested dicts split on dots (``a.0.b`` -> ``{"0": {"b": ...}}``)."""
    out: dict[str, Any] = {}
    start = len(prefix) + 1
    for key, value in attrs.items():
        if not key.startswith(prefix) or key[len(prefix) : start] != ".":
            continue
        node = out
        *path, leaf = key[start:].split(".")
        for part in path:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[leaf] = value
    return out


def _messages(attrs: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """GenAI messages: a JSON string, or flattened attributes (``key.0.role``)."""
    raw = attrs.get(key)
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return []
        return [m for m in parsed if isinstance(m, dict)] if isinstance(parsed, list) else []
    tree = _tree(attrs, key)
    return [tree[k] for k in sorted((k for k in tree if k.isdigit()), key=int) if isinstance(tree[k], dict)]


def _message_text(message: Mapping[str, Any]) -> str | None:
    """The text of a message: OpenInference's ``content`` / ``contents.N.message_content.text``, GenAI's
    ``parts`` of type text (``content``), or a plain ``content`` string."""
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return content.strip()
    texts: list[str] = []
    contents = message.get("contents")
    if isinstance(contents, dict):
        for k in sorted((k for k in contents if k.isdigit()), key=int):
            text = contents[k].get("message_content", {}).get("text") if isinstance(contents[k], dict) else None
            texts += [text] if isinstance(text, str) else []
    parts = message.get("parts")
    if isinstance(parts, dict):
        parts = [parts[k] for k in sorted((k for k in parts if k.isdigit()), key=int)]
    if isinstance(parts, list):
        for part in parts:
            text = part.get("content", part.get("text")) if isinstance(part, dict) else None
            kind = part.get("type", "text") if isinstance(part, dict) else None
            texts += [text] if isinstance(text, str) and kind == "text" else []
    joined = "\n".join(t for t in texts if t.strip()).strip()
    return joined or None


def _last_user_message(attrs: Mapping[str, Any], key: str) -> str | None:
    users = [m for m in _messages(attrs, key) if m.get("role") == "user"]
    return _message_text(users[-1]) if users else None


def _assistant_text(attrs: Mapping[str, Any], key: str) -> str | None:
    texts = [_message_text(m) for m in _messages(attrs, key) if m.get("role") in (None, "assistant", "model")]
    joined = "\n".join(t for t in texts if t)
    return joined or None
