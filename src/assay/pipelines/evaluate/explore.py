"""The per-question views of an evaluation, for the report's explorer: each golden question with its reference answer
and nuggets, and for each run its passages (text, grade and how the grade was found), its answer and the claims the
judge checked, with the passages that support each.

Built from what the evaluation already holds: the golden set, the runs as read, the passage rows
(:func:`~assay.pipelines.evaluate.judging.passages.passage_rows`) and the support-matrix rows. A passage's text is
the golden chunk's, else the run's own text, else the judged passage's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.evaluated import PassageRow, SupportRow
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.results import ClaimView, PassageView, QuestionView, RunView

__all__ = ["question_views"]


def question_views(
    gold: GoldenSet,
    runs: Sequence[LoadedRun],
    passages: Sequence[PassageRow],
    support: Sequence[SupportRow],
) -> list[QuestionView]:
    """One view per golden question that some run answered, in the golden set's order."""
    texts = _texts(gold)
    graded = {(row.run, row.query_id, row.unit): row for row in passages}
    claims: dict[tuple[str, str], list[SupportRow]] = {}
    for row in support:
        claims.setdefault((row.run, row.query_id), []).append(row)
    views = []
    for question in gold.questions:
        sides = [
            _run_view(run, line, graded, claims.get((run.name, question.id), []), texts)
            for run in runs
            if (line := run.lines.get(question.id)) is not None
        ]
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
