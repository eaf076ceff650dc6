"""Reading and checking the runs ``assay eval`` scores: JSONL runs (DESIGN.md section 3), TREC runs, RAGAS
evaluation data, and runs given in memory as lists of dicts.

A JSONL run has one line per query, validated as :class:`assay.types.RunItem`: ``query_id``, ranked ``retrieved``
passages in any of the forms of :class:`assay.types.RetrievedItem` (a chunk id, ``{"id", "score", "text"}``,
``{"text"}`` alone, ``{"doc_id", "start", "end"}``; mixed forms are fine), optional ``answer`` and ``citations``,
and from ``assay run`` ``latency_ms``, ``usage`` and ``error``. A TREC run (``qid Q0 docid rank score tag``) gives
rankings only. RAGAS evaluation data (JSONL or CSV: ``user_input``, ``retrieved_contexts``, optional
``retrieved_context_ids``, ``response``, ``reference``) is read by the same command: a row is matched to a golden
question by ``query_id`` when it has one, else by its question text (its words: case, spacing and punctuation
folded).

Passages that are not golden chunk ids are located in the golden documents (:mod:`~.locate`). What the run gets
wrong about the golden set is counted in :class:`~assay.results.RunCounts` and reported, never
fatal:

* a query id the golden set does not have: counted (``unknown_query_ids``), the line is skipped; a RAGAS row whose
  question matches none: counted (``unmatched_rows``) and named in the notes;
* an id that is not a golden chunk and comes without a text: counted (``unknown_chunk_ids``); it keeps its rank, is
  never judged and counts as not relevant (trec_eval's convention for unjudged documents);
* a passage listed twice for one query (or a query given on two lines): counted (``duplicate_ids``), the first
  occurrence is kept;
* an empty ``retrieved`` list: counted (``empty_retrieved``); the query is evaluated and scores 0 on ranking metrics;
* ``citations`` name the run's own ids: each is read as the passage that id was given to;
* a line with ``error`` (the system failed on the question): counted (``failed``); every metric of the query is
  unscored (reason ``system_failed``), never an empty answer scored as 0;
* a golden question without a line: counted (``missing_queries``) and left out of the means (trec_eval without -c);
* a line that names a conversation turn (``conversation_id``, ``turn``) the golden set does not have for its query,
  or whose query the golden set lacks altogether: a :class:`~assay.errors.FormatError` naming the line (the run was
  made on another golden set); a line without ``conversation_id`` whose query is unknown is counted as above;
* a line of a context turn (a conversation's unjudged turn, no question; ``assay run --history own`` asks it for
  the system's own history): counted (``context_turns``), checked as a turn's line, never scored; its answer is kept
  in :attr:`LoadedRun.context` (an earlier answer of the conversation for the contradiction check).

A run of a system asked every question N times (``assay run --repeats N``) numbers its lines with ``repeat``
(0 to N - 1): it is read as N runs, ``NAME#0`` to ``NAME#N-1`` (:attr:`LoadedRun.repeat_of` names the run they
belong to), each scored on its own and merged per question by the evaluation. Every question the run answers must
have one line for every repeat, and either every line has ``repeat`` or none: otherwise a
:class:`~assay.errors.FormatError` names the line.

A malformed line (not JSON, wrong field types, scores on some items only, an item with no id, text or offsets,
offsets outside the document, an unknown ``doc_id``, a TREC line without six fields) raises
:class:`~assay.errors.FormatError` with the file and line.

Ranking order: with scores, trec_eval's (score descending, ties by id descending, computed by :mod:`assay.metrics`);
without scores, the list order.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from assay.corpus.align import question_key
from assay.errors import FormatError, InputError
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import JsonlHeader, first_problem, iter_json_lines, read_header
from assay.formats.ragas import read_ragas_run
from assay.formats.runs import ranked_lists, sniff_run_format
from assay.metrics import Run
from assay.pipelines.evaluate.runs.locate import Located, Resolver
from assay.results import RunCounts
from assay.types import RetrievedItem, RunError, RunItem

__all__ = ["LoadedRun", "RunLine", "RunSpec", "Runs", "SystemTrace", "load_run", "load_runs", "run_name", "specs_of"]

JSONL_EXPECTED = 'a line like {"query_id": "q1", "retrieved": ["c1", {"text": "..."}], "answer": "..."}'
TREC_EXPECTED = "6 whitespace-separated fields: query_id Q0 chunk_id rank score tag"
FAILED = "system_failed"
RunSpec = Path | str | tuple[str, Path | str | Sequence[Mapping[str, Any]]]
RunKind = Literal["jsonl", "trec", "ragas", "memory"]
# runs as paths, (name, path) or (name, list of dicts), or a mapping name -> path or list of dicts
Runs = Sequence[RunSpec] | Mapping[str, Path | str | Sequence[Mapping[str, Any]]]


@dataclass
class RunLine:
    """One query of a run: unit ids in rank order (duplicates removed), their scores, texts and where they were
    found, the answer and citations; ``error`` when the system failed on the question."""

    query_id: str
    ranked: list[str]
    scores: dict[str, float]
    texts: dict[str, str] = field(default_factory=dict)
    answer: str | None = None
    citations: list[str] = field(default_factory=list)
    located: dict[str, Located] = field(default_factory=dict)
    error: RunError | None = None
    rewrite: str | None = None  # a conversation turn: the system's own standalone rewrite of it

    def top(self, k: int) -> list[str]:
        """The first ``k`` unit ids."""
        return self.ranked[:k]


@dataclass
class SystemTrace:
    """What every line of a run says of the system that answered (``assay run`` writes it): latency of the answered
    lines, failure kinds, token and cost usage."""

    latencies: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    usages: list[dict[str, float]] = field(default_factory=list)

    def add(self, raw: _Raw) -> None:
        if raw.error is not None:
            self.failures[raw.error.kind] += 1
        elif raw.latency_ms is not None:
            self.latencies.append(raw.latency_ms)
        if raw.usage is not None:
            self.usages.append(raw.usage)


@dataclass
class LoadedRun:
    """A run read and checked against a golden set: its lines by known query id, its counts and notes."""

    name: str
    path: Path
    kind: RunKind
    lines: dict[str, RunLine]
    counts: RunCounts
    notes: list[str] = field(default_factory=list)
    header: JsonlHeader | None = None  # a JSONL run's header (``assay run`` records its target, label and times)
    trace: SystemTrace = field(default_factory=SystemTrace)
    repeat_of: str | None = None  # one asking of a repeated run: the run's own name (this one is NAME#r)
    repeat: int | None = None
    context: dict[str, RunLine] = field(default_factory=dict)  # lines of context turns: answer and error only

    def length_summary(self) -> dict[str, float]:
        """Length in characters of the retrieved passages (each once per query): count, min, quartiles, max, mean;
        empty without passages."""
        sizes = [len(text) for line in self.lines.values() for text in line.texts.values()]
        if not sizes:
            return {}
        one = [float(sizes[0])] * 3
        q1, median, q3 = statistics.quantiles(sizes, n=4, method="inclusive") if len(sizes) > 1 else one
        return {"count": len(sizes), "min": min(sizes), "p25": round(q1, 1), "median": round(median, 1),
                "p75": round(q3, 1), "max": max(sizes), "mean": round(statistics.fmean(sizes), 1)}  # fmt: skip


def run_name(spec: RunSpec) -> tuple[str, Path | Sequence[Mapping[str, Any]]]:
    """``(name, source)``: a given name, else the file stem."""
    if isinstance(spec, tuple):
        name, source = spec
        return name, Path(source) if isinstance(source, str | Path) else source
    return Path(spec).stem, Path(spec)


@dataclass
class _Raw:
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


# ---------------------------------------------------------------------------------------------------- sources


def _records(where: str | Path, rows: Iterator[tuple[int, dict[str, Any]]]) -> Iterator[_Raw]:
    for line, obj in rows:
        try:
            item = RunItem.model_validate(obj)
        except ValidationError as exc:
            raise FormatError(where, line, first_problem(exc), JSONL_EXPECTED) from None
        scored = [r.score for r in item.retrieved if r.score is not None]
        if any(math.isnan(score) for score in scored):
            raise FormatError(where, line, "a score is NaN", "a number")
        if 0 < len(scored) < len(item.retrieved):
            problem = f"{len(scored)} of {len(item.retrieved)} items have a score"
            raise FormatError(where, line, problem, "scores on all or none")
        yield _Raw(item.query_id, item.retrieved, item.answer, list(item.citations), line, item.error,
                   item.latency_ms, item.usage, item.repeat, item.conversation_id, item.turn, item.rewrite)  # fmt: skip


def _memory_where(name: str) -> str:
    """How errors name an in-memory run: ``run 'mine' (in memory), item 3``."""
    return f"run {name!r} (in memory), item"


def _memory_lines(name: str, rows: Sequence[Mapping[str, Any]]) -> Iterator[_Raw]:
    where = _memory_where(name)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise FormatError(where, i + 1, f"a {type(row).__name__}", "a dict like " + JSONL_EXPECTED[12:])
    yield from _records(where, ((i + 1, dict(row)) for i, row in enumerate(rows)))


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
            current = _Raw(fields[0], [], None, [], number)
        current.items.append(RetrievedItem(id=fields[2], score=score))
    if current is not None:
        yield current


def _ragas_lines(path: Path, golden: GoldenSet, counts: RunCounts, notes: list[str], name: str) -> Iterator[_Raw]:
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
        yield _Raw(qid, items, row.response, [], row.line)
    if unmatched:
        shown = "; ".join(unmatched[:3]) + (f"; and {len(unmatched) - 3} more" if len(unmatched) > 3 else "")
        notes.append(f"{name}: {len(unmatched)} RAGAS row(s) match no golden question by query_id or text ({shown}).")


def _kind(source: Path | Sequence[Mapping[str, Any]]) -> RunKind:
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


# ---------------------------------------------------------------------------------------------------- loading


def load_run(spec: RunSpec, golden: GoldenSet, resolver: Resolver | None = None) -> LoadedRun:
    """Read one run and check it against ``golden``; see the module docstring. A run with repeats raises
    :class:`InputError` (read it with :func:`load_runs`, which splits it)."""
    loaded = _load(spec, golden, resolver or Resolver(golden))
    if len(loaded) > 1 or loaded[0].repeat_of is not None:
        raise InputError(f"run {loaded[0].repeat_of} has repeats: read it with load_runs, which gives one per repeat")
    return loaded[0]


def _load(spec: RunSpec, golden: GoldenSet, resolver: Resolver) -> list[LoadedRun]:
    """The run of ``spec``, or one run per repeat when its lines carry ``repeat``."""
    name, source = run_name(spec)
    if isinstance(source, Path) and not source.is_file():
        raise InputError(f"run {source} does not exist (or is a folder): give a JSONL, TREC or RAGAS run file")
    kind = _kind(source)
    counts, notes = RunCounts(), list[str]()
    raws = list(_raws(kind, name=name, source=source, golden=golden, counts=counts, notes=notes))
    path = source if isinstance(source, Path) else Path(f"<{name}>")
    where: str | Path = path if isinstance(source, Path) else _memory_where(name)
    header = read_header(source) if kind == "jsonl" and isinstance(source, Path) else None
    repeats = _repeats(raws, golden, where)
    if not repeats:
        loaded = LoadedRun(name, path, kind, {}, counts, notes, header)
        return [_assemble(loaded, iter(raws), golden=golden, resolver=resolver, where=where)]
    out = []
    for r in range(repeats):
        mine = [raw for raw in raws if raw.repeat == r]
        one = LoadedRun(f"{name}#{r}", path, kind, {}, RunCounts(), list(notes), header, repeat_of=name, repeat=r)
        out.append(_assemble(one, iter(mine), golden=golden, resolver=resolver, where=where))
    return out


def _repeats(raws: Sequence[_Raw], golden: GoldenSet, where: str | Path) -> int:
    """The number of repeats of a run whose lines carry ``repeat`` (0 without), checked: every line has it, the
    repeats are 0..N-1, and every known question has one line per repeat."""
    marked = [raw for raw in raws if raw.repeat is not None]
    if not marked:
        return 0
    if len(marked) < len(raws):
        bare = next(raw for raw in raws if raw.repeat is None)
        raise FormatError(where, bare.line, 'no "repeat" in a run whose other lines have one',
                          'a "repeat" on every line (0 to N - 1), or on none')  # fmt: skip
    count = max(raw.repeat or 0 for raw in marked) + 1
    known = {q.id for q in golden.questions}
    seen: dict[str, dict[int, int]] = {}
    for raw in marked:
        if raw.query_id not in known:
            continue
        lines = seen.setdefault(raw.query_id, {})
        if raw.repeat in lines:
            raise FormatError(where, raw.line, f"query {raw.query_id!r} repeat {raw.repeat} is given twice "
                              f"(first on line {lines[raw.repeat]})", "one line per query and repeat")  # fmt: skip
        lines[raw.repeat or 0] = raw.line
    for qid, lines in seen.items():
        if len(lines) != count:
            missing = sorted(set(range(count)) - set(lines))
            raise FormatError(
                where, max(lines.values()),
                f"query {qid!r} has {len(lines)} repeat(s) where the run has {count} (missing: "
                f"{', '.join(map(str, missing))})",
                f"every question asked the same number of times (0 to {count - 1}); rerun assay run --repeats {count}",
            )  # fmt: skip
    return count


def _raws(
    kind: RunKind,
    *,
    name: str,
    source: Path | Sequence[Mapping[str, Any]],
    golden: GoldenSet,
    counts: RunCounts,
    notes: list[str],
) -> Iterator[_Raw]:
    if not isinstance(source, Path):
        return _memory_lines(name, source)
    if kind == "ragas":
        return _ragas_lines(source, golden, counts, notes, name)
    if kind == "trec":
        return _trec_lines(source)
    return _records(source, iter_json_lines(source, kind="runs", header="optional"))


def _assemble(
    run: LoadedRun, raws: Iterator[_Raw], *, golden: GoldenSet, resolver: Resolver, where: str | Path
) -> LoadedRun:
    """``run`` (name, path, kind, counts, notes so far) filled with the lines of ``raws``, resolved and ordered."""
    known = {q.id for q in golden.questions}
    turns = {turn.question_id: (c.id, i) for c in golden.conversations for i, turn in enumerate(c.turns)}
    context = {turn.question_id for c in golden.conversations for turn in c.turns if not turn.judged}
    counts = run.counts
    tables: dict[str, dict[str, float]] = {}
    matched: Counter[str] = Counter()
    for raw in raws:
        counts.lines += 1
        run.trace.add(raw)
        if raw.query_id in context:
            _check_turn(raw, turns[raw.query_id], where)
            _keep_context(run, raw)
            continue
        if raw.query_id not in known:
            if raw.conversation_id is not None:  # a turn the golden set lacks: a run made on another golden set
                _check_turn(raw, None, where, known=False)
            counts.unknown_query_ids += 1
            continue
        if raw.query_id in run.lines:
            counts.duplicate_ids += 1  # a query given twice: the first line stands
            continue
        _check_turn(raw, turns.get(raw.query_id), where)
        run.lines[raw.query_id], tables[raw.query_id] = _line(raw, resolver, where, counts, matched)
    if counts.lines == 0 and run.kind != "ragas":
        expected = TREC_EXPECTED if run.kind == "trec" else JSONL_EXPECTED
        raise FormatError(where, None, "no run lines", expected)
    _order_lines(run.lines, tables)
    counts.matched_by = dict(sorted(matched.items()))
    counts.missing_queries = len(known - set(run.lines))
    counts.queries_evaluated = len(run.lines)
    run.notes = run_notes(run.name, counts, run.notes)
    resolver.save_cache()
    return run


def _keep_context(run: LoadedRun, raw: _Raw) -> None:
    """A context turn's line: counted, its answer or error kept (the first line stands), never scored."""
    run.counts.context_turns += 1
    if raw.query_id not in run.context:
        run.context[raw.query_id] = RunLine(raw.query_id, [], {}, answer=raw.answer, error=raw.error)


def _check_turn(raw: _Raw, golden: tuple[str, int] | None, where: str | Path, *, known: bool = True) -> None:
    """A line that names a conversation turn must name the golden set's: the same conversation and turn index
    (``known``: the golden set has the line's query at all)."""
    said = (raw.conversation_id, raw.turn)
    if said == (None, None) or (golden is not None and said in (golden, (golden[0], None))):
        return
    has = "is no turn of a conversation" if golden is None else f"is turn {golden[1]} of conversation {golden[0]!r}"
    has = has if known else "has no such question or turn"
    raise FormatError(where, raw.line, f"query {raw.query_id!r} is given as turn {raw.turn} of conversation "
                      f"{raw.conversation_id!r}, but in the golden set it {has}",
                      "a run made on this golden set (assay run GOLDEN ...), or the line's conversation_id and turn "
                      "as the golden set's conversations.jsonl has them")  # fmt: skip


def _line(
    raw: _Raw, resolver: Resolver, where: str | Path, counts: RunCounts, matched: Counter[str]
) -> tuple[RunLine, dict[str, float]]:
    """One query's line with its items resolved to units and deduplicated, and its ``{unit: score}`` table."""
    line = RunLine(raw.query_id, [], {}, answer=raw.answer, citations=raw.citations, error=raw.error,
                   rewrite=raw.rewrite)  # fmt: skip
    if raw.error is not None:
        counts.failed += 1
        return line, {}
    n = len(raw.items)
    counts.empty_retrieved += not raw.items
    counts.with_answer += bool(raw.answer and raw.answer.strip())
    table: dict[str, float] = {}
    aliases: dict[str, str] = {}  # the run's own ids -> units, for its citations
    for i, item in enumerate(raw.items):
        found = resolver.resolve(item, where, raw.line)
        if item.id is not None:
            aliases.setdefault(item.id, found.unit)
        matched[found.match] += 1
        counts.unknown_chunk_ids += found.match == "unmatched" and found.text is None
        if found.unit in table:
            counts.duplicate_ids += 1
            continue
        table[found.unit] = item.score if item.score is not None else float(n - i)
        line.located[found.unit] = found
        if found.text:
            line.texts[found.unit] = found.text
    line.citations = [aliases.get(cited, cited) for cited in raw.citations]
    return line, table


def _order_lines(lines: dict[str, RunLine], tables: dict[str, dict[str, float]]) -> None:
    """trec_eval's order per query (the same the metrics use), empty lists kept."""
    filled = {q: t for q, t in tables.items() if t}
    ranked = ranked_lists(Run.from_dict(filled)) if filled else {}
    for qid, line in lines.items():
        line.ranked, line.scores = ranked.get(qid, []), tables.get(qid, {})


def run_notes(name: str, counts: RunCounts, notes: list[str]) -> list[str]:
    out = list(notes)
    if counts.unknown_query_ids:
        out.append(f"{name}: {counts.unknown_query_ids} line(s) name a query the golden set does not have (skipped).")
    if counts.unknown_chunk_ids:
        out.append(
            f"{name}: {counts.unknown_chunk_ids} retrieved id(s) are not chunks of the golden set and come without a "
            'text (counted as not relevant; give each item its text, {"id": ..., "text": ...}, to have it located).'
        )
    texts_lost = counts.matched_by.get("unmatched", 0) - counts.unknown_chunk_ids
    if texts_lost:
        out.append(f"{name}: {texts_lost} retrieved text(s) were found in no golden document (labelled by the judge "
                   "when one is given, else unlabelled).")  # fmt: skip
    if counts.failed:
        out.append(f"{name}: the system failed on {counts.failed} question(s) (every metric of them unscored).")
    if counts.missing_queries:
        out.append(f"{name}: {counts.missing_queries} golden question(s) have no line in the run (left out).")
    return out


def load_runs(specs: Sequence[RunSpec], golden: GoldenSet, resolver: Resolver | None = None) -> list[LoadedRun]:
    """Read every run (one document index and alignment cache for all: ``resolver``, made here when None); two
    runs with the same name raise :class:`InputError` (name them with NAME=PATH)."""
    if not specs:
        raise InputError("no run given: pass at least one run file (JSONL, TREC or RAGAS)")
    resolver = resolver or Resolver(golden)
    runs = [run for spec in specs for run in _load(spec, golden, resolver)]
    seen: set[str] = set()
    for run in runs:
        if run.name in seen:
            raise InputError(f"two runs are named {run.name!r}: name them apart with NAME=PATH, e.g. bm25={run.path}")
        seen.add(run.name)
    return runs


def specs_of(runs: Runs) -> list[RunSpec]:
    """Runs as a list of specs: a mapping's items become (name, source) pairs."""
    if isinstance(runs, Mapping):
        return [(name, source) for name, source in runs.items()]
    return list(runs)
