"""Reading and checking the runs ``assay eval`` scores: JSONL runs (DESIGN.md section 3) and TREC runs.

A JSONL run has one line per query, validated as :class:`assay.types.RunItem`: ``query_id``, ranked ``retrieved``
ids (strings or ``{"id", "score", "text"}`` objects), optional ``answer`` and ``citations``. A TREC run
(``qid Q0 docid rank score tag``) gives rankings only. What the run gets wrong about the golden set is counted in
:class:`~assay.pipelines.evaluate.results.RunCounts` and reported, never fatal:

* a query id the golden set does not have: counted (``unknown_query_ids``), the line is skipped;
* a chunk id the golden set does not have: counted (``unknown_chunk_ids``); it keeps its rank, is never judged and
  counts as not relevant (trec_eval's convention for unjudged documents);
* an id listed twice for one query (or a query given on two lines): counted (``duplicate_ids``), the first
  occurrence is kept;
* an empty ``retrieved`` list: counted (``empty_retrieved``); the query is evaluated and scores 0 on ranking metrics;
* a golden question without a line: counted (``missing_queries``) and left out of the means (trec_eval without -c).

A malformed line (not JSON, wrong field types, scores on some items only, a TREC line without six fields or with a
score that is not a number) raises :class:`~assay.errors.FormatError` with the file and line.

Ranking order: with scores, trec_eval's (score descending, ties by docid descending, computed by
:mod:`assay.metrics`); without scores, the list order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from assay.errors import FormatError, InputError
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import first_problem, iter_json_lines
from assay.formats.runs import ranked_lists, sniff_run_format
from assay.metrics import Run
from assay.pipelines.evaluate.results import RunCounts
from assay.types import RunItem

__all__ = ["LoadedRun", "RunLine", "load_run", "load_runs", "run_name"]

JSONL_EXPECTED = 'a line like {"query_id": "q1", "retrieved": ["c1", {"id": "c2", "score": 0.5}], "answer": "..."}'
TREC_EXPECTED = "6 whitespace-separated fields: query_id Q0 chunk_id rank score tag"


@dataclass
class RunLine:
    """One query of a run: chunk ids in rank order (duplicates removed), their scores, texts, answer, citations."""

    query_id: str
    ranked: list[str]
    scores: dict[str, float]
    texts: dict[str, str] = field(default_factory=dict)
    answer: str | None = None
    citations: list[str] = field(default_factory=list)

    def top(self, k: int) -> list[str]:
        """The first ``k`` chunk ids."""
        return self.ranked[:k]


@dataclass
class LoadedRun:
    """A run read and checked against a golden set: its lines by known query id, its counts and notes."""

    name: str
    path: Path
    kind: Literal["jsonl", "trec"]
    lines: dict[str, RunLine]
    counts: RunCounts
    notes: list[str] = field(default_factory=list)


def run_name(spec: Path | tuple[str, Path]) -> tuple[str, Path]:
    """``(name, path)``: a given name, else the file stem."""
    if isinstance(spec, tuple):
        return spec[0], Path(spec[1])
    return Path(spec).stem, Path(spec)


@dataclass
class _Raw:
    """A line before ordering: (id, score or None) items in list order, and the rest of the record."""

    query_id: str
    items: list[tuple[str, float | None]]
    texts: dict[str, str]
    answer: str | None
    citations: list[str]
    line: int


def _jsonl_lines(path: Path) -> Iterator[_Raw]:
    for line, obj in iter_json_lines(path, kind="runs", header="optional"):
        try:
            item = RunItem.model_validate(obj)
        except ValidationError as exc:
            raise FormatError(path, line, first_problem(exc), JSONL_EXPECTED) from None
        items: list[tuple[str, float | None]] = []
        for r in item.retrieved:
            if r.score is not None and math.isnan(r.score):
                raise FormatError(path, line, f"score of {r.id!r} is NaN", "a number")
            items.append((r.id, r.score))
        with_score = sum(score is not None for _, score in items)
        if 0 < with_score < len(items):
            raise FormatError(path, line, f"{with_score} of {len(items)} items have a score", "scores on all or none")
        texts = {r.id: r.text for r in item.retrieved if r.text}
        yield _Raw(item.query_id, items, texts, item.answer, list(item.citations), line)


def _trec_lines(path: Path) -> Iterator[_Raw]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(path, None, f"cannot read: {exc}", "a readable UTF-8 TREC run") from None
    current: _Raw | None = None
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
            current = _Raw(fields[0], [], {}, None, [], number)
        current.items.append((fields[2], score))
    if current is not None:
        yield current


def _dedupe(items: list[tuple[str, float | None]]) -> tuple[dict[str, float], int]:
    """``{id: score}`` keeping the first occurrence (synthetic scores n..1 when there are none), and the drops."""
    n = len(items)
    scores: dict[str, float] = {}
    for i, (cid, score) in enumerate(items):
        if cid not in scores:
            scores[cid] = score if score is not None else float(n - i)
    return scores, n - len(scores)


def _order(tables: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """trec_eval's order per query (the same the metrics use), empty lists kept."""
    filled = {q: t for q, t in tables.items() if t}
    ranked = ranked_lists(Run.from_dict(filled)) if filled else {}
    return {q: ranked.get(q, []) for q in tables}


def load_run(spec: Path | tuple[str, Path], golden: GoldenSet) -> LoadedRun:
    """Read one run (JSONL or TREC, by content) and check it against ``golden``; see the module docstring."""
    name, path = run_name(spec)
    if not path.is_file():
        raise InputError(f"run {path} does not exist (or is a folder): give a JSONL or TREC run file")
    kind: Literal["jsonl", "trec"] = "jsonl" if sniff_run_format(path) == "jsonl" else "trec"
    raws = _jsonl_lines(path) if kind == "jsonl" else _trec_lines(path)
    counts = RunCounts()
    known = {q.id for q in golden.questions}
    kept: dict[str, _Raw] = {}
    tables: dict[str, dict[str, float]] = {}
    for raw in raws:
        counts.lines += 1
        if raw.query_id not in known:
            counts.unknown_query_ids += 1
            continue
        if raw.query_id in kept:
            counts.duplicate_ids += 1  # a query given twice: the first line stands
            continue
        tables[raw.query_id], dropped = _dedupe(raw.items)
        counts.duplicate_ids += dropped
        counts.empty_retrieved += not raw.items
        kept[raw.query_id] = raw
    if counts.lines == 0:
        raise FormatError(path, None, "no run lines", JSONL_EXPECTED if kind == "jsonl" else TREC_EXPECTED)
    lines = _lines(kept, tables, golden, counts)
    counts.missing_queries = len(known - set(lines))
    counts.queries_evaluated = len(lines)
    return LoadedRun(name, path, kind, lines, counts, _notes(name, counts))


def _lines(
    kept: dict[str, _Raw], tables: dict[str, dict[str, float]], golden: GoldenSet, counts: RunCounts
) -> dict[str, RunLine]:
    ordered = _order(tables)
    lines: dict[str, RunLine] = {}
    for qid, raw in kept.items():
        ranked = ordered[qid]
        counts.unknown_chunk_ids += sum(not golden.has_chunk(cid) for cid in ranked)
        counts.with_answer += bool(raw.answer and raw.answer.strip())
        lines[qid] = RunLine(qid, ranked, tables[qid], raw.texts, raw.answer, raw.citations)
    return lines


def _notes(name: str, counts: RunCounts) -> list[str]:
    notes = []
    if counts.unknown_query_ids:
        notes.append(f"{name}: {counts.unknown_query_ids} line(s) name a query the golden set does not have (skipped)")
    if counts.unknown_chunk_ids:
        notes.append(
            f"{name}: {counts.unknown_chunk_ids} retrieved id(s) are not chunks of the golden set (counted as not "
            "relevant; were the chunks built with the same chunker?)"
        )
    if counts.missing_queries:
        notes.append(f"{name}: {counts.missing_queries} golden question(s) have no line in the run (left out)")
    return notes


def load_runs(specs: Sequence[Path | tuple[str, Path]], golden: GoldenSet) -> list[LoadedRun]:
    """Read every run; two runs with the same name raise :class:`InputError` (name them with NAME=PATH)."""
    if not specs:
        raise InputError("no run given: pass at least one run file (JSONL or TREC)")
    runs = [load_run(spec, golden) for spec in specs]
    seen: set[str] = set()
    for run in runs:
        if run.name in seen:
            raise InputError(f"two runs are named {run.name!r}: name them apart with NAME=PATH, e.g. bm25={run.path}")
        seen.add(run.name)
    return runs
