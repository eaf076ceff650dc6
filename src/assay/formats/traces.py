"""Traces of a RAG system, read from OTLP JSON spans (:mod:`~assay.formats.otlp`) with the OpenInference semantic
conventions (and the OpenTelemetry GenAI ones where they carry the same facts): one :class:`Trace` per trace id.

**Span kinds.** A span's kind is its ``openinference.span.kind`` (CHAIN, LLM, RETRIEVER, RERANKER, EMBEDDING, TOOL,
AGENT, PROMPT, GUARDRAIL, EVALUATOR, UNKNOWN), else from ``gen_ai.operation.name``: ``chat``, ``text_completion``
and ``generate_content`` are LLM, ``embeddings`` EMBEDDING, ``execute_tool`` TOOL, ``invoke_agent`` and
``create_agent`` AGENT, any other value UNKNOWN. Spans with a kind are the *AI spans*; the others (an HTTP server
span around the chain, a database call) are read only for the tree. A span without a kind that carries what only an
AI span should (``retrieval.documents.*``, ``reranker.*``, ``llm.*``) is an error: its facts would be misplaced.

**Spans read twice** (a collector retries an export and delivers the same lines again) count once: a span is known
by its trace id and span id, and the first one read is kept (:func:`unique_spans`); the others are counted.

**Values of the wrong type** (``retrieval.documents`` set as one string, a score or a token count given as text,
a document id that is a list) are left out, counted per attribute and named in one warning
(:class:`~assay.formats.trace_values.AttributeProblems`); the rest of the trace is read as usual.

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
   the ``retrieval.documents`` of every RETRIEVER span, in the order the spans started; of several RETRIEVER spans
   (a system that searches several times), only the documents whose text the answering model call was given (the
   outermost LLM span that ended last: its ``llm.input_messages``, else ``gen_ai.input.messages`` or
   ``input.value``, words compared with spaces folded), when it recorded its input and holds some of them: the
   context the answer was written from, so that relevant text found and then dropped shows. Each document gives
   ``{"id", "score", "text"}`` from ``document.id``, ``document.score`` and ``document.content``; a document with
   neither content nor id is an error. Scores are kept only when every passage has one and they come from one span
   (scores of two retrievers are not on one scale); else the list order is the ranking. A score that is not a
   number leaves only its own passage without one.
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

9. *Steps*: every RETRIEVER and RERANKER span (the query sent, ``input.value`` or ``reranker.query``, and the
   documents returned, with their scores), every TOOL span (name, arguments as a JSON object, output, error) and
   every LLM span with no LLM ancestor (model, tokens), in the order the spans started, each with its latency.
   An ``input.value`` that is not a JSON object is a one-argument tool's input (OpenInference's LangChain
   instrumentation records it bare), kept as ``{"input": VALUE}``; ``gen_ai.tool.call.arguments`` that are not a
   JSON object are counted per attribute and named in the warning, the step kept without them. The run line
   carries them as ``steps`` when the system searched more than once or called a tool
   (:func:`Trace.searches_several_times`); a one-search pipeline's line stays as it was. A trace whose step spans
   lack a start time or share one has no order of its own: its steps follow the span ids, and it is counted
   (``unordered_steps``) with the line of the first such span.

Traces are returned in the order their roots started (ties by trace id), so the same file always reads the same.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import FormatError
from assay.formats.otlp import DEFAULT_MAX_LINE, Span, read_spans
from assay.formats.trace_values import (
    AttributeProblems,
    assistant_text,
    finite,
    first_number,
    last_user_message,
    message_text,
    text_value,
    tree,
)

__all__ = ["OPENINFERENCE_KINDS", "Trace", "TraceFile", "TracePassage", "read_traces", "traces_of", "unique_spans"]

OPENINFERENCE_KINDS = frozenset(
    {"CHAIN", "LLM", "RETRIEVER", "RERANKER", "EMBEDDING", "TOOL", "AGENT", "PROMPT", "GUARDRAIL", "EVALUATOR",
     "UNKNOWN"}
)  # fmt: skip
_GENAI_KINDS = {
    "chat": "LLM", "text_completion": "LLM", "generate_content": "LLM", "embeddings": "EMBEDDING",
    "execute_tool": "TOOL", "invoke_agent": "AGENT", "create_agent": "AGENT",
}  # fmt: skip
_NEEDS_KIND = ("retrieval.documents.", "reranker.", "llm.")
_DOCUMENT_LISTS = ("retrieval.documents", "reranker.output_documents")  # set as a whole: not flattened documents
_STEP_KINDS = frozenset({"RETRIEVER", "RERANKER", "TOOL", "LLM"})
_DOCUMENTS = {"RETRIEVER": "retrieval.documents", "RERANKER": "reranker.output_documents"}  # the spans that list some
_NUMBERS = (
    "llm.token_count.prompt", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.completion",
    "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.cost.total", "llm.cost.prompt",
    "llm.cost.completion",
)  # fmt: skip
_PROMPT_TOKENS = ("llm.token_count.prompt", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
_COMPLETION_TOKENS = ("llm.token_count.completion", "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
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
    steps: list[dict[str, Any]] = field(default_factory=list)  # rule 9: every search, tool and model call, in order

    def searches_several_times(self) -> bool:
        """More than one search (a reranking counts as one) or any tool call: a trajectory worth its steps."""
        kinds = [step["kind"] for step in self.steps if not step.get("rerank")]
        return kinds.count("retrieval") > 1 or "tool" in kinds


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
    duplicate_spans: int = 0  # a span read again (same trace id and span id), as a collector's retry delivers it
    problems: AttributeProblems = field(default_factory=AttributeProblems)
    # traces with steps whose spans lack a start time or share one (by the line of the first such span): their order
    # is the spans' ids, not the system's
    unordered_steps: list[int] = field(default_factory=list)


def read_traces(path: str | Path, max_line: int = DEFAULT_MAX_LINE) -> TraceFile:
    """The traces of an OTLP JSON file (no line over ``max_line`` bytes); a file with spans but no AI span at all
    raises :class:`FormatError`."""
    spans = read_spans(path, max_line)
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
    unique = unique_spans(spans)
    out = TraceFile(path, spans=len(unique), duplicate_spans=len(spans) - len(unique))
    groups: dict[str, list[Span]] = {}
    for span in unique:
        groups.setdefault(span.trace_id, []).append(span)
    for trace_id, group in groups.items():
        kinds = {s.span_id: kind for s in group if (kind := span_kind(s, path)) is not None}
        if not kinds:
            out.without_ai.append(group[0].line)
            continue
        trace = _trace(trace_id, group, kinds, path, out.problems)
        if trace is None:
            out.without_question.append(group[0].line)
            continue
        out.traces.append(trace)
        unordered = _unordered_steps(group, kinds) if trace.searches_several_times() else None
        if unordered is not None:
            out.unordered_steps.append(unordered)
    out.traces.sort(key=lambda t: (t.start_ns, t.trace_id))
    return out


def _unordered_steps(spans: Sequence[Span], kinds: Mapping[str, str]) -> int | None:
    """The line of the first step span (RETRIEVER, RERANKER, TOOL, LLM) without a start time or sharing its start
    time with another step span, None when the steps' spans all started at distinct, known times."""
    steps = sorted((s for s in spans if kinds.get(s.span_id) in _STEP_KINDS), key=lambda s: (s.line, s.span_id))
    starts = Counter(s.start_ns for s in steps)
    return next((s.line for s in steps if not s.start_ns or starts[s.start_ns] > 1), None)


def unique_spans(spans: Iterable[Span]) -> list[Span]:
    """The spans with each (trace id, span id) once, the first read kept: a collector that retries an export
    delivers the same spans again, and a span counted twice would double a trace's passages and tokens."""
    seen: set[tuple[str, str]] = set()
    out = []
    for span in spans:
        if (span.trace_id, span.span_id) not in seen:
            seen.add((span.trace_id, span.span_id))
            out.append(span)
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


def _trace(
    trace_id: str, spans: list[Span], kinds: dict[str, str], path: Path, problems: AttributeProblems
) -> Trace | None:
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
    documents = _span_documents(by_start, kinds, path, problems)
    return Trace(
        trace_id=trace_id, line=root.line, question=question,
        passages=_passages(by_start, kinds, documents, problems, _last(first_llms)),
        answer=_answer(root, llms), latency_ms=latency, usage=_usage(first_llms, problems), error=_error(root),
        query_id=_query_id([root, *by_start]), start_ns=root.start_ns,
        steps=_steps(by_start, kinds, first_llms, documents, problems),
    )  # fmt: skip


def _last(spans: list[Span]) -> Span | None:
    """The span that ended last (ties: the larger span id), None without spans."""
    return max(spans, key=lambda s: (s.end_ns, s.span_id)) if spans else None


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
    found = text_value(attrs.get("input.value"), _QUESTION_KEYS)
    found = found or last_user_message(attrs, "gen_ai.input.messages") or text_value(attrs.get("gen_ai.prompt"), ())
    for span in searches:
        found = found or text_value(span.attributes.get("input.value"), _QUESTION_KEYS)
        found = found or text_value(span.attributes.get("reranker.query"), ())
    return found


def _answer(root: Span, llms: list[Span]) -> str | None:
    found = _output(root)
    for span in sorted(llms, key=lambda s: (s.end_ns, s.span_id), reverse=True):
        found = found or _output(span)
    return found


def _output(span: Span) -> str | None:
    attrs = span.attributes
    message = tree(attrs, "llm.output_messages").get("0", {}).get("message", {})
    return (
        message_text(message)
        or assistant_text(attrs, "gen_ai.output.messages")
        or text_value(attrs.get("output.value"), _ANSWER_KEYS)
        or text_value(attrs.get("gen_ai.completion"), ())
    )


def _span_documents(
    spans: list[Span], kinds: Mapping[str, str], path: Path, problems: AttributeProblems
) -> dict[str, list[TracePassage]]:
    """Each RETRIEVER's and RERANKER's documents, read once with their scores, for rule 3 and rule 9."""
    return {s.span_id: _documents(s, _DOCUMENTS[kinds[s.span_id]], path, problems)
            for s in spans if kinds[s.span_id] in _DOCUMENTS}  # fmt: skip


def _passages(
    spans: list[Span], kinds: Mapping[str, str], documents: Mapping[str, list[TracePassage]],
    problems: AttributeProblems, answering: Span | None,
) -> list[TracePassage]:  # fmt: skip
    for span in spans:  # documents of the wrong shape (a string, a list of strings) are named, never silently lost
        for key in _DOCUMENT_LISTS:
            if span.attributes.get(key) not in (None, []) and kinds[span.span_id] in ("RETRIEVER", "RERANKER"):
                problems.add(key, span.attributes[key], "a list of documents", span.line)
    reranked = [s for s in spans if kinds[s.span_id] == "RERANKER" and _has(s, "reranker.output_documents.")]
    if reranked:
        last = max(reranked, key=lambda s: (s.end_ns, s.span_id))
        return documents[last.span_id]
    retrievers = [s for s in spans if kinds[s.span_id] == "RETRIEVER" and _has(s, "retrieval.documents.")]
    if len(retrievers) == 1:
        return documents[retrievers[0].span_id]
    every = [TracePassage(p.id, None, p.text) for s in retrievers for p in documents[s.span_id]]
    read = _prompt_words(answering)
    kept = [p for p in every if p.text and read and " ".join(p.text.split()) in read]
    return kept or every


def _prompt_words(span: Span | None) -> str:
    """What the answering model call was given, its words joined by single spaces ("" when it recorded none):
    ``llm.input_messages``' contents, else ``gen_ai.input.messages``' or ``input.value``."""
    if span is None:
        return ""
    attrs = span.attributes
    messages = tree(attrs, "llm.input_messages")
    parts = [message_text(messages[k].get("message", {})) for k in sorted(messages, key=_index) if isinstance(
        messages[k], dict)]  # fmt: skip
    texts = [p for p in parts if p] or [v for k in ("gen_ai.input.messages", "input.value")
                                       if isinstance(v := attrs.get(k), str)]  # fmt: skip
    return " ".join(" ".join(text.split()) for text in texts)


def _index(key: str) -> tuple[float, str]:
    """Numbered messages in their order, then any other key (after every number, however large)."""
    return (int(key), "") if key.isdigit() else (math.inf, key)


def _steps(
    spans: list[Span], kinds: Mapping[str, str], first_llms: list[Span], documents: Mapping[str, list[TracePassage]],
    problems: AttributeProblems,
) -> list[dict[str, Any]]:  # fmt: skip
    """Rule 9: a step per RETRIEVER, RERANKER, TOOL and (outermost) LLM span, in the order the spans started, each as
    a run line's ``steps`` holds it (:class:`~assay.types.RetrievalStep`, ``ToolStep``, ``LlmStep``)."""
    outermost = {s.span_id for s in first_llms}
    out: list[dict[str, Any]] = []
    for span in spans:
        kind = kinds[span.span_id]
        if kind == "RETRIEVER":
            query = text_value(span.attributes.get("input.value"), _QUESTION_KEYS)
            out.append(_step("retrieval", span, query=query, retrieved=_items(documents[span.span_id])))
        elif kind == "RERANKER":
            query = text_value(span.attributes.get("reranker.query"), ())
            out.append(_step("retrieval", span, query=query, retrieved=_items(documents[span.span_id]), rerank=True))
        elif kind == "TOOL":
            out.append(_tool_step(span, problems))
        elif kind == "LLM" and span.span_id in outermost:
            out.append(_llm_step(span))
    return out


def _llm_step(span: Span) -> dict[str, Any]:
    a = span.attributes
    model = next((a[k] for k in ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model")
                  if isinstance(a.get(k), str) and a[k]), None)  # fmt: skip
    prompt, completion = first_number(a, *_PROMPT_TOKENS), first_number(a, *_COMPLETION_TOKENS)
    return _step("llm", span, model=model, prompt_tokens=_count(prompt), completion_tokens=_count(completion))


def _step(kind: str, span: Span, **facts: Any) -> dict[str, Any]:
    latency = (span.end_ns - span.start_ns) / 1e6 if span.start_ns and span.end_ns >= span.start_ns else None
    return {"kind": kind, **{k: v for k, v in facts.items() if v is not None}} | (
        {"latency_ms": latency} if latency is not None else {}
    )


def _items(passages: list[TracePassage]) -> list[dict[str, Any]]:
    return [{k: v for k, v in (("id", p.id), ("score", p.score), ("text", p.text)) if v is not None} for p in passages]


def _count(value: float | None) -> int | None:
    return int(value) if value is not None and value >= 0 else None


def _tool_step(span: Span, problems: AttributeProblems) -> dict[str, Any]:
    """A TOOL span: its name (``tool.name``, ``gen_ai.tool.name``, else the span's), arguments (``input.value`` or
    ``gen_ai.tool.call.arguments``: a JSON object; an ``input.value`` that is no JSON object is the tool's one input,
    kept as ``{"input": VALUE}``, as LangChain's one-argument tools are traced; anything else is counted as a
    problem and left out), output
    (``output.value``, ``gen_ai.tool.call.result``) and the error of a span whose status is ERROR."""
    a = span.attributes
    name = next((a[k] for k in ("tool.name", "gen_ai.tool.name") if isinstance(a.get(k), str) and a[k]), span.name)
    given, raw = next(((k, a[k]) for k in ("input.value", "gen_ai.tool.call.arguments") if a.get(k) is not None),
                      ("", None))  # fmt: skip
    arguments = _json_object(raw)
    if arguments is None and given == "input.value" and isinstance(raw, str):
        arguments = {"input": raw}  # a one-argument tool: OpenInference's LangChain records the bare value
    elif raw is not None and arguments is None:
        problems.add("tool arguments", raw, "a JSON object", span.line)
    output = next((a[k] for k in ("output.value", "gen_ai.tool.call.result") if a.get(k) is not None), None)
    output = output if output is None or isinstance(output, str) else json.dumps(output)  # a number or a list
    error = (span.status_message or "the tool span's status is ERROR") if span.error else None
    return _step("tool", span, name=name, arguments=arguments, output=output, error=error)


def _json_object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _has(span: Span, prefix: str) -> bool:
    return any(key.startswith(prefix) for key in span.attributes)


def _documents(span: Span, prefix: str, path: Path, problems: AttributeProblems) -> list[TracePassage]:
    """The span's documents in index order; a score kept only when every document has one."""
    nodes = tree(span.attributes, prefix)
    out, unscored = [], False
    for index in sorted((k for k in nodes if k.isdigit()), key=int):
        node = nodes[index].get("document", {}) if isinstance(nodes[index], dict) else {}
        text, ident = _document_text(node, span, problems), _document_id(node, span, problems)
        if text is None and ident is None:
            problem = (f"{prefix}.{index} of span {span.name!r} (trace {span.trace_id[:12]}) has neither "
                       "document.content nor document.id")  # fmt: skip
            raise FormatError(path, span.line, problem, "each document with its content (and its id when it has one)")
        score = node.get("score")
        unscored = unscored or score is None
        if score is not None and finite(score) is None:
            problems.add("document.score", score, "a finite number", span.line)
        out.append(TracePassage(ident, finite(score), text))
    if unscored:
        return [TracePassage(p.id, None, p.text) for p in out]
    return out


def _document_text(node: Mapping[str, Any], span: Span, problems: AttributeProblems) -> str | None:
    text = node.get("content")
    if text is not None and not isinstance(text, str):
        problems.add("document.content", text, "a string", span.line)
    return text if isinstance(text, str) and text.strip() else None


def _document_id(node: Mapping[str, Any], span: Span, problems: AttributeProblems) -> str | None:
    ident = node.get("id")
    if isinstance(ident, str | int) and not isinstance(ident, bool):
        return str(ident) or None
    if ident is not None:
        problems.add("document.id", ident, "a string or an integer", span.line)
    return None


def _usage(llms: Iterable[Span], problems: AttributeProblems) -> dict[str, float] | None:
    total: dict[str, float] = {}
    for span in llms:
        a = span.attributes
        for key in _NUMBERS:
            if key in a and a[key] is not None and finite(a[key]) is None:
                problems.add(key, a[key], "a finite number", span.line)
        prompt, completion = first_number(a, *_PROMPT_TOKENS), first_number(a, *_COMPLETION_TOKENS)
        cost = first_number(a, "llm.cost.total")
        if cost is None:
            parts = [x for k in ("llm.cost.prompt", "llm.cost.completion") if (x := finite(a.get(k))) is not None]
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
