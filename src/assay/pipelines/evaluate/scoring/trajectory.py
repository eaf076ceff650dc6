"""The measures of a trajectory per question (:data:`~.names.TRAJECTORY_METRICS`), for runs whose lines carry
``steps`` (a system that searches several times), computed for every run of an evaluation where some line has steps,
so that a single-shot system is measured beside the one that searches again: a line without steps is one search,
its context.

Every search's passages are graded by the same pool and rule as the context's passages
(:func:`~.runs.carry.carry_labels` reads them; no second labelling), and measured in characters of relevant text
against the same character grades as the budget measures (:class:`~.budget.SpanPool`;
:mod:`assay.metrics.trajectory` has the formulas), so the figures do not depend on how the text was cut:

* ``trajectory_recall``: the question's relevant text that some search returned (did the system ever see the
  evidence); ``first_search_recall``: that after the first search;
* ``evidence_dropped``: the relevant text some search returned that the final context (``retrieved``, what the answer
  was written from) lacks, as a share of the question's relevant text (lower is better);
* ``hop_coverage``: the share of the question's hops (:func:`hops_of`) whose evidence some search showed (at least
  half of its relevant characters); unscored ``no_hops`` for a question with fewer than two;
* ``redundant_searches``: the share of searches that returned no relevant character an earlier one had not (lower
  is better);
* ``looped``: 1 when a search repeats an earlier search's query, or a tool call an earlier call's name and
  arguments, else 0 (lower is better);
* ``step_query_bm25_ndcg@10``: each search's query scored as a rewrite is (nDCG@10 of BM25 over the golden chunks
  against the question's labels, :func:`~.conversations.bm25_ndcg`), averaged over the searches that name a query;
* ``searches``, ``tool_calls`` and ``step_tokens`` (prompt and completion tokens of the model calls among the
  steps; unscored ``no_token_counts`` when no model call reports them), ``step_latency_ms`` (the milliseconds the
  steps report, summed; lower is better; unscored ``no_step_latency`` when none does);
* against a question's reference tool calls (``tool_calls`` in ``questions.jsonl``), the line's tool steps:
  ``tool_name_precision``, ``tool_name_recall``, ``tool_name_f1`` (names, unordered), ``tool_order_f1`` (names in
  order) and ``tool_args_exact`` (:mod:`assay.metrics.tool_calls`); unscored ``no_reference_tool_calls`` for a
  question without any, and the precision ``no_tool_calls`` when the system called none.

Recall-type measures of a question with no relevant character are unscored (``no_relevant_text``), as the budget
measures are.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from assay.corpus.pooling import Bm25Index
from assay.formats.golden import GoldenSet
from assay.metrics.tool_calls import Call, tool_scores
from assay.metrics.trajectory import Trajectory, trajectory
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine, Search
from assay.pipelines.evaluate.scoring.budget import NO_RELEVANT_TEXT, SpanPool
from assay.pipelines.evaluate.scoring.conversations import bm25_ndcg
from assay.pipelines.evaluate.scoring.names import TRAJECTORY_METRICS
from assay.pipelines.evaluate.scoring.ranking import Labels, QueryValues
from assay.results import QueryResult, TrajectorySummary
from assay.types import LlmStep, Question, ToolStep

__all__ = ["HOP_TYPES", "QuestionPath", "calls_of", "hops_of", "path_of", "trajectory_summary", "trajectory_values"]

HOP_TYPES = ("multi-hop", "comparison")
Range = tuple[str, int, int]


def hops_of(question: Question) -> list[str]:
    """The question's hops: those it records, else a multi-hop or comparison question's source chunks (a golden set
    built before hops were written); none for another question."""
    if question.hops:
        return list(question.hops)
    return list(question.source_chunk_ids) if question.type in HOP_TYPES and len(question.source_chunk_ids) > 1 else []


@dataclass(frozen=True)
class QuestionPath:
    """What one line's steps did for its question: the searches' queries, the measures of
    :func:`assay.metrics.trajectory.trajectory`, the hops (chunk ids) and the first repeated step (None: none)."""

    queries: tuple[str | None, ...]
    measured: Trajectory
    hops: tuple[str, ...]
    loop: str | None

    @property
    def looped(self) -> bool:
        return self.loop is not None

    def notes(self) -> list[str]:
        """The diagnosis of the path, one line each: hops never searched, evidence found but dropped, a loop."""
        got, out = self.measured, []
        for h, (cid, found) in enumerate(zip(self.hops, got.hop_found, strict=True), start=1):
            if found is None:
                out.append(f"never searched for hop {h} of {len(self.hops)} ({cid}): no search returned half of "
                           "its evidence")  # fmt: skip
        lost = [f"search {i} ({n:,} characters)" for i, n in enumerate(got.lost, start=1) if n]
        if lost:
            out.append(f"found but dropped: relevant text returned by {', '.join(lost)} is not in the final context "
                       f"(evidence_dropped {got.dropped:.3f})")  # fmt: skip
        if self.loop is not None:
            out.append(f"looped: {self.loop}")
        return out


def _searches(line: RunLine) -> list[tuple[str | None, Sequence[str]]]:
    """The line's searches as (query, units); a line without steps is one search, its context (none when empty)."""
    if not line.steps:
        return [(None, line.ranked)] if line.ranked else []
    return [(step.query, step.units) for step in line.steps if isinstance(step, Search)]


def _ranges(line: RunLine, units: Sequence[str], pool: SpanPool) -> list[Range]:
    """The letters-and-digits ranges of the located passages ``units`` of ``line`` (the others hold no relevant
    text)."""
    out = []
    for unit in units:
        found = line.found(unit)
        span = found.span if found is not None else None
        if span is not None:
            out.append((span.doc_id, pool.chars.at(span.doc_id, span.start), pool.chars.at(span.doc_id, span.end)))
    return out


def _hop_target(cid: str, qid: str, pool: SpanPool, threshold: int) -> list[Range]:
    """A hop's evidence: the relevant characters of its chunk, else (its label not painted relevant) the whole
    chunk."""
    span = pool.index.resolver.chunk_span(cid)
    if span is None:
        return []
    doc, start, end = span.doc_id, pool.chars.at(span.doc_id, span.start), pool.chars.at(span.doc_id, span.end)
    inside = [(doc, max(s, start), min(e, end)) for s, e, g in pool.grades(qid).get(doc, [])
              if g >= threshold and min(e, end) > max(s, start)]  # fmt: skip
    return inside or [(doc, start, end)]


def _loop(line: RunLine) -> str | None:
    """The first step that repeats an earlier search's query (words and case folded) or an earlier tool call's name
    and arguments, said with both step numbers; None when no step does."""
    seen: dict[str, int] = {}
    for at, step in enumerate(line.steps, start=1):
        if isinstance(step, Search) and step.query is not None and step.query.strip():
            key, what = "search\x1f" + " ".join(step.query.casefold().split()), f"the query {step.query.strip()!r}"
        elif isinstance(step, ToolStep):
            arguments = json.dumps(step.arguments, sort_keys=True)
            key, what = f"tool\x1f{step.name}\x1f{arguments}", f"the call {step.name}({arguments})"
        else:
            continue
        if key in seen:
            return f"step {at} repeats {what} of step {seen[key]}"
        seen[key] = at
    return None


def path_of(line: RunLine, question: Question, pool: SpanPool, threshold: int) -> QuestionPath:
    """The measures of ``line``'s trajectory for ``question`` (module docstring)."""
    searches = _searches(line)
    hops = hops_of(question)
    measured = trajectory(
        [_ranges(line, units, pool) for _, units in searches],
        _ranges(line, line.ranked, pool),
        pool.grades(question.id),
        threshold,
        [_hop_target(cid, question.id, pool, threshold) for cid in hops],
    )
    return QuestionPath(tuple(q for q, _ in searches), measured, tuple(hops), _loop(line))


def trajectory_values(
    run: LoadedRun, gold: GoldenSet, pool: SpanPool, labels: Labels, *, threshold: int, index: Bm25Index | None
) -> dict[str, QueryValues]:
    """The measures of the module docstring for every question of ``run`` the system did not fail on (``index``:
    BM25 over the golden chunks; None: the step queries are not scored)."""
    names = dict(zip(("recall", "first", "dropped", "hops", "redundant", "looped", "query", "searches", "tools",
                      "tokens"), TRAJECTORY_METRICS[:10], strict=True))  # fmt: skip
    out: dict[str, QueryValues] = {}
    for qid, line in run.lines.items():
        if line.error is not None:
            continue
        path = path_of(line, gold.question(qid), pool, threshold)
        got, values = path.measured, QueryValues()
        out[qid] = values
        n_searches = len(path.queries)
        values.put(names["recall"], got.recall, NO_RELEVANT_TEXT)
        values.put(names["first"], got.recall_after[0] if got.recall_after else got.recall, NO_RELEVANT_TEXT)
        values.put(names["dropped"], got.dropped, NO_RELEVANT_TEXT)
        found = [h for h in got.hop_found if h is not None]
        values.put(names["hops"], len(found) / len(path.hops) if len(path.hops) > 1 else None, "no_hops")
        redundant = got.redundant / n_searches if n_searches and got.n_relevant else None
        values.put(names["redundant"], redundant, NO_RELEVANT_TEXT if n_searches else "no_search")
        values.put(names["looped"], float(path.looped))
        values.put(names["query"], _query_quality(path.queries, qid, labels, threshold, index), _why_no_query(path))
        values.put(names["searches"], float(n_searches))
        values.put(names["tools"], float(sum(isinstance(step, ToolStep) for step in line.steps)))
        values.put(names["tokens"], _tokens(line), "no_token_counts")
        _put_tools(values, gold.question(qid), line)
        values.put("step_latency_ms", _latency(line), "no_step_latency")
    return out


def calls_of(question: Question, line: RunLine) -> tuple[list[Call], list[Call]]:
    """The question's reference tool calls and the line's tool steps, as (name, arguments)."""
    reference: list[Call] = [(call.name, call.arguments) for call in question.tool_calls]
    return reference, [(step.name, step.arguments) for step in line.steps if isinstance(step, ToolStep)]


def _put_tools(values: QueryValues, question: Question, line: RunLine) -> None:
    """The tool-call measures of ``line`` against the question's reference calls (module docstring)."""
    reference, made = calls_of(question, line)
    got = tool_scores(reference, made)
    why = "no_reference_tool_calls"
    values.put("tool_name_precision", got.name_precision, why if not reference else "no_tool_calls")
    for name, value in (("tool_name_recall", got.name_recall), ("tool_name_f1", got.name_f1),
                        ("tool_order_f1", got.order_f1), ("tool_args_exact", got.args_exact)):  # fmt: skip
        values.put(name, value, why)


def _query_quality(
    queries: Sequence[str | None], qid: str, labels: Labels, threshold: int, index: Bm25Index | None
) -> float | None:
    asked = [q for q in queries if q is not None and q.strip()]
    if index is None or not asked or labels.n_relevant(qid, threshold) == 0:
        return None
    return statistics.fmean(bm25_ndcg(index, labels, qid, q) for q in asked)


def _why_no_query(path: QuestionPath) -> str:
    return "no_relevant_label" if any(q is not None and q.strip() for q in path.queries) else "no_step_query"


def _latency(line: RunLine) -> float | None:
    """The milliseconds the line's steps report, summed (None when no step reports any)."""
    spent = [step.latency_ms for step in line.steps if step.latency_ms is not None]
    return float(sum(spent)) if spent else None


def _tokens(line: RunLine) -> float | None:
    counted = [
        (step.prompt_tokens or 0) + (step.completion_tokens or 0)
        for step in line.steps
        if isinstance(step, LlmStep) and (step.prompt_tokens is not None or step.completion_tokens is not None)
    ]
    return float(sum(counted)) if counted else None


def trajectory_summary(run: LoadedRun, rows: Sequence[QueryResult]) -> TrajectorySummary | None:
    """How ``run``'s paths went, counted from its rows (None when they carry no trajectory measure)."""
    if not any(TRAJECTORY_METRICS[0] in row.metrics for row in rows):
        return None
    # a question the system failed on carries the names, unscored (system_failed): its path was not measured
    measured = [row for row in rows if row.metrics.get("searches") is not None]
    coverage = [row.metrics.get("hop_coverage") for row in measured]
    hops = [value for value in coverage if value is not None]
    return TrajectorySummary(
        questions=len(measured),
        with_steps=sum(bool(run.lines[row.query_id].steps) for row in measured if row.query_id in run.lines),
        hop_questions=len(hops),
        hops_missed=sum(value < 1 for value in hops),
        dropped=sum((row.metrics.get("evidence_dropped") or 0.0) > 0 for row in measured),
        looped=sum((row.metrics.get("looped") or 0.0) > 0 for row in measured),
    )
