"""Production traces in, a run out: ``assay import traces FILE -o run.jsonl [--golden golden/]``.

Each trace read by :mod:`assay.formats.traces` (the OpenInference rules: question, passages, answer, latency, usage,
error) becomes one line of a JSONL run (:class:`~assay.types.RunItem`), which ``assay eval`` scores like any other:

* ``query_id``: with a golden set, the golden question the trace asked (:mod:`~assay.pipelines.traces.matching`),
  by the first of these that gives one, each counted by kind in the summary:

  1. *query id*: the trace's own query id (an ``assay.query_id`` attribute or ``metadata.query_id``) when the golden
     set has it;
  2. *question*: the golden question with the same words (case, spacing and punctuation folded, as RAGAS rows are
     matched: :func:`~assay.text.question_key`);
  3. *near question* (a user's typo): the golden question nearest in word edit distance (a word inserted, deleted or
     replaced is one edit, after the folding of 2), when the distance is at most one edit per four words of that
     golden question and at most two (a golden question of three words or fewer is matched only by 1 or 2); between
     golden questions equally near, the one whose replaced words are more often misspellings of its own (a
     character edit per four characters, a swap of two letters being one); when two golden questions or more are
     still equally near, the trace is *ambiguous*: counted, named, and left unmatched;
  4. *none*: counted and named in the notes, and left out of the run.

  Without a golden set: the trace's own query id, else ``t-`` and the first 12 hex digits of its
  trace id (the same trace always gets the same id; two traces of the file whose ids begin alike get ``t-`` and
  their whole trace ids);
* ``retrieved``: ``{"id", "score", "text"}`` per passage (``assay eval`` locates each text in the golden
  documents; the id alone is read when the golden set has that chunk);
* ``answer``, ``latency_ms``, ``usage`` (``prompt_tokens``, ``completion_tokens``, ``cost_usd``: what the spans
  reported), and ``error`` (``kind``, ``message``) when the root span failed: ``assay eval`` counts that question as
  failed, every metric of it unscored;
* besides the run format: ``question`` (the trace's question as asked) and ``trace_id``, so that the run can seed a
  golden set of its own questions and each line leads back to its trace.

Spans read twice (a collector's retry) count once (:func:`~assay.formats.traces.unique_spans`), so a trace's
passages and tokens are never doubled; attribute values of the wrong type are counted and named in one note.

A question asked by several traces (users repeat themselves) keeps one line: the trace that started last (the
system as it is now; ties by the larger trace id). The others are counted as ``repeated``. Lines are in the order
their traces started. The run's header names the file (``target``: ``traces FILE``) and the first start and last
end of the traces kept (UTC).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import NothingProduced
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import write_jsonl
from assay.formats.otlp import DEFAULT_MAX_LINE
from assay.formats.traces import Trace, read_traces
from assay.pipelines.traces.matching import Matching, match_traces

__all__ = [
    "TracesImport",
    "import_traces",
    "latest_per_question",
    "name_traces",
    "run_line",
    "trace_query_id",
    "write_traces_run",
]

_SHOWN = 3  # unmatched traces named in a note


@dataclass
class TracesImport:
    """Traces read from ``path`` as run lines (not yet written), and what did not become a line and why."""

    path: Path
    lines: list[dict[str, Any]]
    spans: int = 0
    traces: int = 0
    matched_by: dict[str, int] = field(default_factory=dict)  # query_id / question / near_question; or trace_id
    unmatched: list[Trace] = field(default_factory=list)
    ambiguous: list[tuple[Trace, tuple[str, ...]]] = field(default_factory=list)  # equally near golden questions
    duplicate_spans: int = 0
    attribute_warning: str | None = None
    repeated: int = 0
    without_ai: int = 0
    without_question: list[int] = field(default_factory=list)  # the line of each such trace's first span
    unordered_steps: list[int] = field(default_factory=list)  # traces whose steps have no order: a line each
    other_signal_lines: int = 0
    header: dict[str, str | None] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        """Lines whose root span failed."""
        return sum("error" in line for line in self.lines)

    def notes(self) -> list[str]:
        """What the user should know beyond the count of lines, one sentence each."""
        out = []
        if self.unmatched:
            shown = "; ".join(f"line {t.line}: {t.question[:60]!r}" for t in self.unmatched[:_SHOWN])
            more = f"; and {len(self.unmatched) - _SHOWN} more" if len(self.unmatched) > _SHOWN else ""
            out.append(f"{len(self.unmatched)} trace(s) match no golden question by query id or text (left out of "
                       f"the run: {shown}{more}).")  # fmt: skip
        if self.ambiguous:
            trace, ids = self.ambiguous[0]
            out.append(f"{len(self.ambiguous)} trace(s) are as near to two golden questions or more, so a typo cannot "
                       f"tell which (left out; line {trace.line}: {trace.question[:60]!r} is as near to "
                       f"{' and '.join(ids[:3])}).")  # fmt: skip
        if self.duplicate_spans:
            out.append(f"{self.duplicate_spans} span(s) read again (the same trace id and span id, as a collector's "
                       "retry delivers them) counted once.")  # fmt: skip
        if self.attribute_warning:
            out.append(self.attribute_warning)
        if self.repeated:
            out.append(f"{self.repeated} trace(s) asked a question another, later trace asked too (the latest kept).")
        if self.without_question:
            lines = ", ".join(map(str, self.without_question[:_SHOWN]))
            out.append(f"{len(self.without_question)} trace(s) have no question in their root or retriever spans "
                       f"(left out; first span at line {lines}).")  # fmt: skip
        if self.without_ai:
            out.append(f"{self.without_ai} trace(s) hold no OpenInference or GenAI span (left out).")
        if self.unordered_steps:
            lines = ", ".join(map(str, self.unordered_steps[:_SHOWN]))
            out.append(f"{len(self.unordered_steps)} trace(s) have steps whose spans lack a start time or share one, "
                       f"so their order is unknown (kept in span-id order; spans at line {lines}).")  # fmt: skip
        if self.other_signal_lines:
            out.append(f"{self.other_signal_lines} line(s) of logs or metrics skipped.")
        if self.failed:
            out.append(f"{self.failed} trace(s) failed (an ERROR status on the root span): kept as failed lines.")
        return out


def trace_query_id(trace_id: str) -> str:
    """The query id of a trace with none of its own: ``t-`` and the first 12 hex digits of its trace id."""
    return f"t-{trace_id[:12]}"


def import_traces(path: str | Path, golden: GoldenSet | None = None, max_line: int = DEFAULT_MAX_LINE) -> TracesImport:
    """The run lines of the traces in ``path`` (see the module docstring; no line over ``max_line`` bytes); nothing
    is written.

    Raises :class:`~assay.errors.FormatError` for a file that is not OTLP JSON of OpenInference or GenAI spans,
    and :class:`~assay.errors.NothingProduced` when no trace gives a line.
    """
    read = read_traces(path, max_line)
    matching = name_traces(read.traces, golden)
    kept, repeated = latest_per_question(matching.named)
    result = TracesImport(
        path=read.path, lines=[run_line(qid, trace) for qid, trace, _ in kept], spans=read.spans,
        traces=len(read.traces), matched_by=dict(sorted(Counter(how for _, _, how in kept).items())),
        unmatched=matching.unmatched, ambiguous=matching.ambiguous, duplicate_spans=read.duplicate_spans,
        attribute_warning=read.problems.warning(),
        repeated=repeated, without_ai=len(read.without_ai), without_question=read.without_question,
        unordered_steps=read.unordered_steps,
        other_signal_lines=read.other_signal_lines, header=_header(read.path, [t for _, t, _ in kept]),
    )  # fmt: skip
    if not result.lines:
        raise NothingProduced(_nothing(result, golden is not None))
    return result


def write_traces_run(result: TracesImport, out: str | Path) -> int:
    """Write the run atomically (a JSONL run with its header); returns the number of lines."""
    return write_jsonl(out, "runs", result.lines, header=result.header)


def run_line(query_id: str, trace: Trace) -> dict[str, Any]:
    """One run line (:class:`~assay.types.RunItem` fields, plus ``question`` and ``trace_id``); unknown facts are
    left out rather than written as null."""
    retrieved = [
        {k: v for k, v in (("id", p.id), ("score", p.score), ("text", p.text)) if v is not None} for p in trace.passages
    ]
    error = {"kind": trace.error[0], "message": trace.error[1]} if trace.error is not None else None
    facts = {"answer": trace.answer, "latency_ms": trace.latency_ms, "usage": trace.usage, "error": error}
    line = {"query_id": query_id, "retrieved": retrieved} | {k: v for k, v in facts.items() if v is not None}
    steps = {"steps": trace.steps} if trace.searches_several_times() else {}
    return line | steps | {"question": trace.question, "trace_id": trace.trace_id}


# ---------------------------------------------------------------------------------------------------- steps


def name_traces(traces: Sequence[Trace], golden: GoldenSet | None) -> Matching:
    """The query id of each trace: its golden question (the module docstring's rule), or without a golden set its
    own query id, else one made from its trace id."""
    if golden is not None:
        return match_traces(traces, golden)
    prefixes = Counter(trace_query_id(t.trace_id) for t in traces)
    own = {t.trace_id: trace_query_id(t.trace_id) if prefixes[trace_query_id(t.trace_id)] == 1
           else f"t-{t.trace_id}" for t in traces}  # fmt: skip
    named = [(t.query_id, t, "query_id") if t.query_id else (own[t.trace_id], t, "trace_id") for t in traces]
    return Matching(named=named, kinds=Counter(how for _, _, how in named))


def latest_per_question(named: Iterable[tuple[str, Trace, str]]) -> tuple[list[tuple[str, Trace, str]], int]:
    """One trace per query id, the latest started (ties: the larger trace id), in start order; and how many were
    dropped."""
    best: dict[str, tuple[str, Trace, str]] = {}
    total = 0
    for entry in named:
        total += 1
        qid, trace, _ = entry
        held = best.get(qid)
        if held is None or (trace.start_ns, trace.trace_id) > (held[1].start_ns, held[1].trace_id):
            best[qid] = entry
    kept = sorted(best.values(), key=lambda e: (e[1].start_ns, e[1].trace_id))
    return kept, total - len(kept)


def _header(path: Path, traces: Sequence[Trace]) -> dict[str, str | None]:
    starts = [t.start_ns for t in traces if t.start_ns]
    ends = [t.start_ns + int(t.latency_ms * 1e6) for t in traces if t.start_ns and t.latency_ms is not None]
    return {"target": f"traces {path.name}", "started": _iso(min(starts, default=0)),
            "ended": _iso(max(ends, default=0))}  # fmt: skip


def _iso(nanos: int) -> str | None:
    return datetime.fromtimestamp(nanos / 1e9, UTC).isoformat(timespec="seconds") if nanos else None


def _nothing(result: TracesImport, with_golden: bool) -> str:
    if with_golden and (result.unmatched or result.ambiguous):
        return (f"{result.path}: none of its {result.traces} trace(s) matches a golden question by query id or "
                "question text. Check that the traces ask this golden set's questions, or carry the golden query id "
                "on the root span (an assay.query_id attribute, or LangChain's config={'metadata': {'query_id': "
                "...}}).")  # fmt: skip
    return (f"{result.path}: no trace gives a run line ({len(result.without_question)} have no question in their "
            "root or retriever spans). Record the question as the root span's input.value (OpenInference "
            "instrumentors do).")  # fmt: skip
