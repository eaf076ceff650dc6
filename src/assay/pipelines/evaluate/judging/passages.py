"""The passages of runs that are not golden chunks, in an evaluation: their labels (carried over by span, the golden
chunks they reach judged first, then the passages still undecided; :mod:`~assay.pipelines.evaluate.runs.carry` has the
rule), and what the reports say about them (how each passage was matched and labelled). Their labels join the pool
of labelled spans every run's budget measures are scored against (:mod:`~assay.pipelines.evaluate.scoring.budget`).
"""

from __future__ import annotations

from pathlib import Path

from assay.formats.golden import GoldenSet
from assay.judge.panel import Grader
from assay.pipelines.evaluate.evaluated import PassageRow
from assay.pipelines.evaluate.judging.asking import JudgingSettings
from assay.pipelines.evaluate.judging.drive import Progress, judge_pool
from assay.pipelines.evaluate.runs.carry import Carried, SpanIndex, carry_labels
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.scoring import ranking as er

__all__ = ["label_passages", "passage_grade", "passage_rows"]


def label_passages(
    gold: GoldenSet,
    index: SpanIndex,
    *,
    folder: Path | None,
    loaded: list[LoadedRun],
    judge: Grader | None,
    asking: JudgingSettings,
    progress: Progress | None = None,
) -> Carried:
    """Labels of the runs' own passages (:mod:`~assay.pipelines.evaluate.runs.carry`); with a judge, the golden chunks
    that undecided passages reach are graded first, added to ``gold`` (``index`` reads them) and the rule applied
    again."""
    carried = carry_labels(gold, loaded, index, asking.depth)
    if judge is None or not carried.pool:
        return carried
    pooled = judge_pool(judge, gold, folder, carried.pool, asking=asking, progress=progress)
    index.relabelled()
    carried = carry_labels(gold, loaded, index, asking.depth)
    carried.pooled = pooled
    return carried


def passage_rows(run: LoadedRun, labels: er.Labels, carried: Carried, depth: int) -> tuple[PassageRow, ...]:
    """One row per passage of the run's top ``depth`` (see :meth:`Evaluated.write_passages`); ``labelled_by`` is how
    it got its label: ``chunk`` (a golden chunk: its own label), ``rule`` (carried over by span), ``stored`` (judged in
    an earlier evaluation), ``judged`` (now) or ``unlabelled``. An asking of a repeated run gives the run's own name
    and its ``repeat``."""
    name, repeat = (run.name, None) if run.repeat_of is None else (run.repeat_of, run.repeat)
    rows = []
    for qid, line in run.lines.items():
        for rank, unit in enumerate(line.top(depth), start=1):
            found = line.located[unit]
            span = found.span
            rows.append(PassageRow(
                run=name, query_id=qid, rank=rank, unit=unit, match=found.match,
                doc_id=span.doc_id if span else None, start=span.start if span else None,
                end=span.end if span else None, score=span.score if span else None,
                grade=passage_grade(labels, carried, qid, unit), labelled_by=carried.how.get((qid, unit), "chunk"),
                repeat=repeat,
            ))  # fmt: skip
    return tuple(rows)


def passage_grade(labels: er.Labels, carried: Carried, qid: str, unit: str) -> int | None:
    """A golden chunk's label, else the passage's own (carried over, stored or judged)."""
    grade = labels.grade(qid, unit)
    return grade if grade is not None else carried.grades.get((qid, unit))
