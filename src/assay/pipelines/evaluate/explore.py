"""The per-question views of an evaluation, for the report's explorer: each golden question with its reference answer
and nuggets, and for each run its passages (text, grade and how the grade was found), its answer and the claims the
judge checked, with the passages that support each.

Built from what the evaluation already holds: the golden set, the runs as read, the passage rows
(:func:`~assay.pipelines.evaluate.judging.passages.passage_rows`) and the support-matrix rows. A passage's text is
the golden chunk's, else the run's own text, else the judged passage's.

A line with steps (a system that searches several times) also shows each step: a search's query and passages with
their grades (the pool's, as the context's), the recall after it and the relevant text it added and lost; a tool
call's arguments and output; a model call's tokens; then where each hop was found, each reference tool call and
whether a step made it, and the path's diagnosis
(:class:`~assay.pipelines.evaluate.scoring.trajectory.QuestionPath`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from assay.formats.golden import GoldenSet
from assay.metrics.tool_calls import exact_pairs
from assay.pipelines.evaluate.evaluated import PassageRow, SupportRow
from assay.pipelines.evaluate.runs.loaded import LineStep, LoadedRun, RunLine, Search
from assay.pipelines.evaluate.scoring.trajectory import QuestionPath
from assay.results import ClaimView, PassageView, QuestionView, RunView, StepView
from assay.types import LlmStep, ToolCall, ToolStep

__all__ = ["Paths", "question_views"]

Grade = Callable[[str, str], tuple[int | None, str]]  # (query, unit) -> the passage's grade and how it got it


@dataclass(frozen=True)
class Paths:
    """The trajectories of the lines with steps, by (run, query), and each passage's grade (the pool's)."""

    paths: Mapping[tuple[str, str], QuestionPath]
    grade: Grade


def question_views(
    gold: GoldenSet,
    runs: Sequence[LoadedRun],
    passages: Sequence[PassageRow],
    support: Sequence[SupportRow],
    paths: Paths | None = None,
) -> list[QuestionView]:
    """One view per golden question that some run answered, in the golden set's order (``paths``: the steps of the
    lines that carry them)."""
    texts = _texts(gold)
    graded = {(row.run, row.query_id, row.unit): row for row in passages}
    claims: dict[tuple[str, str], list[SupportRow]] = {}
    for row in support:
        claims.setdefault((row.run, row.query_id), []).append(row)
    views = []
    for question in gold.questions:
        sides = []
        for run in runs:
            line = run.lines.get(question.id)
            if line is not None:
                side = _run_view(run, line, graded, claims.get((run.name, question.id), []), texts)
                sides.append(_with_steps(side, line, paths, texts, question.tool_calls))
        if sides:
            nuggets = [(n.importance, n.text) for n in question.nuggets]
            views.append(QuestionView(query_id=question.id, text=question.text, type=question.type,
                                      difficulty=question.difficulty, reference_answer=question.reference_answer,
                                      nuggets=nuggets, runs=sides))  # fmt: skip
    return views


def _texts(gold: GoldenSet) -> dict[str, str]:
    """Text by unit id: the judged passages', then the golden chunks' (a chunk's own text wins)."""
    out = {p.id: p.text for p in gold.passages if p.text}
    out.update({c.id: c.text for c in gold.chunks})
    return out


def _run_view(
    run: LoadedRun,
    line: RunLine,
    graded: Mapping[tuple[str, str, str], PassageRow],
    support: Sequence[SupportRow],
    texts: Mapping[str, str],
) -> RunView:
    shown = []
    for rank, unit in enumerate(line.ranked, start=1):
        row = graded.get((run.name, line.query_id, unit))
        if row is None:  # beyond the depth the evaluation labels
            break
        text = texts.get(unit) or line.texts.get(unit) or ""
        shown.append(PassageView(rank=rank, unit=unit, text=text, grade=row.grade, how=row.labelled_by))
    rank_of = {p.unit: p.rank for p in shown}
    checked = [
        ClaimView(kind=row.kind, text=row.claim, verdict=str(row.verdict), reason=row.reason or "",
                  ranks=sorted(rank_of[u] for u, level in row.support.items() if level and u in rank_of))
        for row in support
    ]  # fmt: skip
    error = None if line.error is None else f"{line.error.kind}: {line.error.message}".rstrip(": ")
    return RunView(run=run.name, passages=shown, answer=line.answer, error=error, claims=checked)


def _with_steps(
    view: RunView, line: RunLine, paths: Paths | None, texts: Mapping[str, str], reference_calls: Sequence[ToolCall]
) -> RunView:
    """``view`` with the line's steps, hops and path diagnosis (unchanged for a line without steps)."""
    path = paths.paths.get((view.run, line.query_id)) if paths is not None else None
    if path is None or paths is None or not line.steps:
        return view
    got = path.measured
    searches = iter(range(len(got.recall_after)))
    steps, found_at = [], {}
    for number, step in enumerate(line.steps, start=1):
        i = next(searches) if isinstance(step, Search) else None
        if i is not None:
            found_at.update({h: number for h, at in enumerate(got.hop_found) if at == i})
        steps.append(_step_view(number, step, line, i, path, paths.grade, texts))
    hops = [(cid, found_at.get(h)) for h, cid in enumerate(path.hops)]
    reference = [(call.name, call.arguments) for call in reference_calls]
    made = {
        i for i, _ in exact_pairs(reference, [(s.name, s.arguments) for s in line.steps if isinstance(s, ToolStep)])
    }
    references = [(f"{name}({json.dumps(arguments, sort_keys=True)})", i in made)
                  for i, (name, arguments) in enumerate(reference)]  # fmt: skip
    return view.model_copy(update={"steps": steps, "path": path.notes(), "hops": hops, "references": references})


def _step_view(  # noqa: PLR0917
    number: int, step: LineStep, line: RunLine, i: int | None, path: QuestionPath, grade: Grade,
    texts: Mapping[str, str],
) -> StepView:  # fmt: skip
    if isinstance(step, ToolStep):
        arguments = json.dumps(step.arguments, sort_keys=True)
        return StepView(number=number, kind="tool", name=step.name, arguments=arguments, output=step.output,
                        error=step.error)  # fmt: skip
    if isinstance(step, LlmStep):
        counted = step.prompt_tokens is not None or step.completion_tokens is not None
        tokens = (step.prompt_tokens or 0) + (step.completion_tokens or 0) if counted else None
        return StepView(number=number, kind="llm", model=step.model, tokens=tokens)
    got, shown = path.measured, []
    for rank, unit in enumerate(step.units, start=1):
        found = line.found(unit)
        text = texts.get(unit) or (found.text if found is not None else None) or ""
        value, how = grade(line.query_id, unit)
        shown.append(PassageView(rank=rank, unit=unit, text=text, grade=value, how=how))
    at = i if i is not None else 0
    recall = got.recall_after[at]
    return StepView(number=number, kind="retrieval", query=step.query, passages=shown,
                    recall=None if math.isnan(recall) else recall, added=got.added[at], lost=got.lost[at])  # fmt: skip
