"""The kinds of run ``assay eval`` reads, each read into raw lines (:class:`RawLine`, before alignment and ordering):
JSONL runs (DESIGN.md section 3), TREC runs, RAGAS evaluation data, and runs given in memory as lists of dicts.

A JSONL run has one line per query, validated as :class:`assay.types.RunItem`: ``query_id``, ranked ``retrieved``
passages in any of the forms of :class:`assay.types.RetrievedItem` (a chunk id, ``{"id", "score", "text"}``,
``{"text"}`` alone, ``{"doc_id", "start", "end"}``; mixed forms are fine), optional ``answer`` and ``citations``,
and from ``assay run`` ``latency_ms``, ``usage`` and ``error``. A TREC run (``qid Q0 docid rank score tag``) gives
rankings only. RAGAS evaluation data (JSONL or CSV: ``user_input``, ``retrieved_contexts``, optional
``retrieved_context_ids``, ``response``, ``reference``) is read by the same command: a row is matched to a golden
question by ``query_id`` when it has one, else by its question text (its words: case, spacing and punctuation
folded).

A malformed line (not JSON, wrong field types, scores on some items only, an item with no id, text or offsets,
offsets outside the document, an unknown ``doc_id``, a TREC line without six fields) raises
:class:`~assay.errors.FormatError` with the file and line.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from assay.errors import FormatError
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import first_problem, iter_json_lines
from assay.formats.messages import MessagesError, steps_from_messages
from assay.formats.ragas import read_ragas_run
from assay.formats.runs import sniff_run_format
from assay.results import RunCounts
from assay.text import question_key
from assay.types import RetrievedItem, RunError, RunItem, Step

_STEPS: TypeAdapter[list[Step]] = TypeAdapter(list[Step])

__all__ = ["JSONL_EXPECTED", "TREC_EXPECTED", "RawLine", "RunKind", "memory_where", "raw_lines", "run_kind"]

STEPS_EXPECTED = (
    'steps in order, each {"kind": "retrieval", "query": "...", "retrieved": ["c1"]}, {"kind": "tool", "name": '
    '"calculator", "arguments": {"expression": "2 * 3"}, "output": "6"} or {"kind": "llm", "prompt_tokens": 120}'
)
MESSAGES_EXPECTED = (
    'chat messages like {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "search", '
    '"arguments": "{\\"query\\": \\"...\\"}"}}]}, {"role": "tool", "tool_call_id": "1", "content": "[...]"}'
)
JSONL_EXPECTED = 'a line like {"query_id": "q1", "retrieved": ["c1", {"text": "..."}], "answer": "..."}'
TREC_EXPECTED = "6 whitespace-separated fields: query_id Q0 chunk_id rank score tag"
RunKind = Literal["jsonl", "trec", "ragas", "memory"]


@dataclass
class RawLine:
    """A line before alignment and ordering."""

    query_id: str
    items: list[RetrievedItem]
    answer: str | None
    citations: list[str]
    line: int
    error: RunError | None = None
    latency_ms: float | None = None
    usage: dict[str, float] | None = None
    repeat: int | None = None
    conversation_id: str | None = None
    turn: int | None = None
    rewrite: str | None = None
    steps: list[Step] = field(default_factory=list)  # a system that searches several times: what it did, in order


def _records(where: str | Path, rows: Iterator[tuple[int, dict[str, Any]]]) -> Iterator[RawLine]:
    for line, obj in rows:
        try:
            item = RunItem.model_validate(obj)
        except ValidationError as exc:
            problem = first_problem(exc)
            fix = STEPS_EXPECTED if problem.startswith("field 'steps") else JSONL_EXPECTED
            raise FormatError(where, line, problem, fix) from None
        if item.messages is not None and not item.steps:
            item = _from_messages(item, where, line)
        scored = [r.score for r in item.retrieved if r.score is not None]
        if any(math.isnan(score) for score in scored):
            raise FormatError(where, line, "a score is NaN", "a number")
        if 0 < len(scored) < len(item.retrieved):
            problem = f"{len(scored)} of {len(item.retrieved)} items have a score"
            raise FormatError(where, line, problem, "scores on all or none")
        yield RawLine(item.query_id, item.retrieved, item.answer, list(item.citations), line, item.error,
                   item.latency_ms, item.usage, item.repeat, item.conversation_id, item.turn, item.rewrite,
                   item.steps)  # fmt: skip


def _from_messages(item: RunItem, where: str | Path, line: int) -> RunItem:
    """A line with ``messages`` and no ``steps``: the steps read from them, and the answer and context when the line
    gives none (:mod:`assay.formats.messages`)."""
    try:
        found = steps_from_messages(item.messages or [])
        steps = _STEPS.validate_python(found.steps)
    except (MessagesError, ValidationError) as exc:
        problem = first_problem(exc) if isinstance(exc, ValidationError) else str(exc)
        raise FormatError(where, line, f"messages: {problem}", MESSAGES_EXPECTED) from None
    retrieved = item.retrieved or [RetrievedItem.model_validate(p) for p in found.context]
    answer = item.answer if item.answer is not None else found.answer
    return item.model_copy(update={"steps": steps, "retrieved": retrieved, "answer": answer})


def memory_where(name: str) -> str:
    """How errors name an in-memory run: ``run 'mine' (in memory), item 3``."""
    return f"run {name!r} (in memory), item"


def _memory_lines(name: str, rows: Sequence[Mapping[str, Any]]) -> Iterator[RawLine]:
    where = memory_where(name)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise FormatError(where, i + 1, f"a {type(row).__name__}", "a dict like " + JSONL_EXPECTED[12:])
    yield from _records(where, ((i + 1, dict(row)) for i, row in enumerate(rows)))


def _trec_lines(path: Path) -> Iterator[RawLine]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(path, None, f"cannot read: {exc}", "a readable UTF-8 TREC run") from None
    current: RawLine | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != 6:
            raise FormatError(path, number, f"{len(fields)} fields", TREC_EXPECTED)
        try:
            score = float(fields[4])
        except ValueError:
            raise FormatError(path, number, f"score {fields[4]!r} is not a number", TREC_EXPECTED) from None
        if math.isnan(score):
            raise FormatError(path, number, "score is NaN", TREC_EXPECTED)
        if current is None or current.query_id != fields[0]:
            if current is not None:
                yield current
            current = RawLine(fields[0], [], None, [], number)
        current.items.append(RetrievedItem(id=fields[2], score=score))
    if current is not None:
        yield current


def _ragas_lines(path: Path, golden: GoldenSet, counts: RunCounts, notes: list[str], name: str) -> Iterator[RawLine]:
    """RAGAS rows matched to golden questions (by ``query_id``, else by question text); unmatched ones counted."""
    by_text = {question_key(q.text): q.id for q in golden.questions}
    unmatched: list[str] = []
    for row in read_ragas_run(path):
        qid = row.query_id if row.query_id is not None else by_text.get(question_key(row.user_input))
        if qid is None:
            counts.lines += 1
            counts.unmatched_rows += 1
            unmatched.append(f"line {row.line}: {row.user_input[:60]!r}")
            continue
        items = [RetrievedItem(id=cid, text=text) for text, cid in zip(row.contexts, row.context_ids, strict=True)]
        yield RawLine(qid, items, row.response, [], row.line)
    if unmatched:
        shown = "; ".join(unmatched[:3]) + (f"; and {len(unmatched) - 3} more" if len(unmatched) > 3 else "")
        notes.append(f"{name}: {len(unmatched)} RAGAS row(s) match no golden question by query_id or text ({shown}).")


def run_kind(source: Path | Sequence[Mapping[str, Any]]) -> RunKind:
    if not isinstance(source, Path):
        return "memory"
    if source.suffix.lower() == ".csv":
        return "ragas"
    if sniff_run_format(source) != "jsonl":
        return "trec"
    for _, obj in iter_json_lines(source, header="optional"):
        is_ragas = "retrieved" not in obj and ("user_input" in obj or "retrieved_contexts" in obj)
        return "ragas" if is_ragas else "jsonl"
    return "jsonl"


def raw_lines(
    kind: RunKind,
    *,
    name: str,
    source: Path | Sequence[Mapping[str, Any]],
    golden: GoldenSet,
    counts: RunCounts,
    notes: list[str],
) -> Iterator[RawLine]:
    if not isinstance(source, Path):
        return _memory_lines(name, source)
    if kind == "ragas":
        return _ragas_lines(source, golden, counts, notes, name)
    if kind == "trec":
        return _trec_lines(source)
    return _records(source, iter_json_lines(source, kind="runs", header="optional"))
