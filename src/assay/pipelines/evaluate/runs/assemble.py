"""A run's raw lines checked against the golden set, resolved to its units and ordered.

Passages that are not golden chunk ids are located in the golden documents (:mod:`~.locate`). What the run gets
wrong about the golden set is counted in :class:`~assay.results.RunCounts` and reported, never
fatal:

* a query id the golden set does not have: counted (``unknown_query_ids``), the line is skipped; a RAGAS row whose
  question matches none: counted (``unmatched_rows``) and named in the notes;
* an id that is not a golden chunk and comes without a text: counted (``unknown_chunk_ids``); it keeps its rank, is
  never judged and counts as not relevant (trec_eval's convention for unjudged documents);
* a passage listed twice for one query (or a query given on two lines): counted (``duplicate_ids``), the first
  occurrence is kept;
* an empty ``retrieved`` list: counted (``empty_retrieved``); the query is evaluated and scores 0 on ranking metrics
  (a retrieval that found nothing), unless no line of the run has a passage and some line an answer: an answer-only
  run (:attr:`~.loaded.LoadedRun.passage_free`), whose ranking, budget and passage measures are unscored;
* an answer that is ``""`` or only whitespace, or no ``answer`` on a line of a run that answers other questions:
  counted (``empty_answers``); it scores 0 on the recall-type answer measures and is unscored (``empty answer``) on
  the others; a run with no ``answer`` on any line is retrieval-only (its answer measures unscored, said once);
* ``citations`` name the run's own ids: each is read as the passage that id was given to;
* a line with ``error`` (the system failed on the question): counted (``failed``); it scores 0 on the recall-type
  answer measures (the system's failure) and every other metric of the query is unscored (reason ``system_failed``);
* a golden question without a line: counted (``missing_queries``) and left out of the means (trec_eval without -c);
* a line that names a conversation turn (``conversation_id``, ``turn``) the golden set does not have for its query,
  or whose query the golden set lacks altogether: a :class:`~assay.errors.FormatError` naming the line (the run was
  made on another golden set); a line without ``conversation_id`` whose query is unknown is counted as above;
* a line of a context turn (a conversation's unjudged turn, no question; ``assay run --history own`` asks it for
  the system's own history): counted (``context_turns``), checked as a turn's line, never scored; its answer is kept
  in :attr:`LoadedRun.context` (an earlier answer of the conversation for the contradiction check).

Ranking order: with scores, trec_eval's (score descending, ties by id descending, computed by :mod:`assay.metrics`);
without scores, the list order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from assay.errors import FormatError
from assay.formats.golden import GoldenSet
from assay.formats.runs import ranked_lists
from assay.metrics import Run
from assay.pipelines.evaluate.runs.loaded import LineStep, LoadedRun, RunLine, Search
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.runs.placing import Grade, graded_by, place_line
from assay.pipelines.evaluate.runs.sources import JSONL_EXPECTED, TREC_EXPECTED, RawLine
from assay.results import RunCounts
from assay.types import RetrievalStep, Step

__all__ = ["assemble", "run_notes"]


def assemble(
    run: LoadedRun, raws: Iterator[RawLine], *, golden: GoldenSet, resolver: Resolver, where: str | Path
) -> LoadedRun:
    """``run`` (name, path, kind, counts, notes so far) filled with the lines of ``raws``, resolved and ordered."""
    known = {q.id for q in golden.questions}
    turns = {turn.question_id: (c.id, i) for c in golden.conversations for i, turn in enumerate(c.turns)}
    context = {turn.question_id for c in golden.conversations for turn in c.turns if not turn.judged}
    counts = run.counts
    tables: dict[str, dict[str, float]] = {}
    matched: Counter[str] = Counter()
    qrels = golden.qrels_map()  # the labels as they stand before any judging: where a repeated text is placed
    unlocated: list[int] = []  # lines with a search step's passage found in no document
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
        grade = graded_by(resolver, qrels.get(raw.query_id, {}))
        before = counts.step_passages_unlocated
        run.lines[raw.query_id], tables[raw.query_id] = _line(raw, resolver, where, counts, matched, grade)
        if counts.step_passages_unlocated > before:
            unlocated.append(raw.line)
    if counts.lines == 0 and run.kind != "ragas":
        expected = TREC_EXPECTED if run.kind == "trec" else JSONL_EXPECTED
        raise FormatError(where, None, "no run lines", expected)
    _order_lines(run.lines, tables)
    _count_missing_answers(run.lines, counts)
    counts.matched_by = dict(sorted(matched.items()))
    counts.missing_queries = len(known - set(run.lines))
    counts.queries_evaluated = len(run.lines)
    run.notes = run_notes(run.name, counts, run.notes)
    if unlocated:
        shown = ", ".join(map(str, unlocated[:10])) + (", ..." if len(unlocated) > 10 else "")
        run.notes.append(f"{run.name}: {counts.step_passages_unlocated} passage(s) of search steps were found in no "
                         f"golden document (lines {shown}; never relevant: give each its text or the golden chunk "
                         "id).")  # fmt: skip
    resolver.save_cache()
    return run


def _count_missing_answers(lines: dict[str, RunLine], counts: RunCounts) -> None:
    """In a run that answers (some line has an ``answer``), a line it did not fail on that has none is an empty
    answer too: the system gave nothing."""
    if counts.with_answer + counts.empty_answers:
        counts.empty_answers += sum(line.error is None and line.answer is None for line in lines.values())


def _keep_context(run: LoadedRun, raw: RawLine) -> None:
    """A context turn's line: counted, its answer or error kept (the first line stands), never scored."""
    run.counts.context_turns += 1
    if raw.query_id not in run.context:
        run.context[raw.query_id] = RunLine(raw.query_id, [], {}, answer=raw.answer, error=raw.error)


def _check_turn(raw: RawLine, golden: tuple[str, int] | None, where: str | Path, *, known: bool = True) -> None:
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


def _line(  # noqa: PLR0917
    raw: RawLine, resolver: Resolver, where: str | Path, counts: RunCounts, matched: Counter[str], grade: Grade
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
    counts.empty_answers += raw.answer is not None and not raw.answer.strip()
    table: dict[str, float] = {}
    aliases: dict[str, str] = {}  # the run's own ids -> units, for its citations
    first = [resolver.resolve(item, where, raw.line) for item in raw.items]
    resolved = place_line(resolver, first, [item.doc_id for item in raw.items], grade)
    for i, (item, found) in enumerate(zip(raw.items, resolved, strict=True)):
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
    line.steps = [_step(step, line, resolver, where, raw.line, counts, grade) for step in raw.steps]
    return line, table


def _step(  # noqa: PLR0917
    step: Step, line: RunLine, resolver: Resolver, where: str | Path, at: int, counts: RunCounts, grade: Grade
) -> LineStep:
    """A step of the line: a search's passages resolved to units by the same rules as the context's (their
    :class:`Located` kept in ``line.step_found``, those found in no document counted), a tool or model call as
    given."""
    if not isinstance(step, RetrievalStep):
        return step
    first = [resolver.resolve(item, where, at) for item in step.retrieved]
    units: dict[str, None] = {}
    for found in place_line(resolver, first, [item.doc_id for item in step.retrieved], grade):
        if found.unit in units:
            continue
        units[found.unit] = None
        counts.step_passages_unlocated += found.match == "unmatched"
        if found.unit not in line.located:
            line.step_found.setdefault(found.unit, found)
    return Search(step.query, tuple(units), step.rerank, step.latency_ms)


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
        out.append(f"{name}: the system failed on {counts.failed} question(s) (0 on the recall-type answer measures, "
                   "every other metric of them unscored).")  # fmt: skip
    if counts.empty_answers:
        out.append(f'{name}: {counts.empty_answers} empty answer(s) ("" or only whitespace, or none on the line): 0 '
                   'on the recall-type answer measures (nugget recall, claim recall, claim F1), unscored ("empty '
                   'answer") on the others.')  # fmt: skip
    if counts.missing_queries:
        out.append(f"{name}: {counts.missing_queries} golden question(s) have no line in the run (left out).")
    return out
