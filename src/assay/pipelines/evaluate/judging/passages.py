"""The passages of runs that are not golden chunks, in an evaluation: their labels (carried over by span, the golden
chunks they reach judged first, then the passages still undecided; :mod:`~assay.pipelines.evaluate.runs.carry` has the
rule), the labels each run is scored against, and what the reports say about them (how each passage was matched and
labelled, their lengths).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.formats.golden import GoldenSet
from assay.judge.panel import Grader
from assay.pipelines.evaluate.judging.drive import Progress, judge_pool
from assay.pipelines.evaluate.runs.carry import Carried, SpanIndex, carry_labels
from assay.pipelines.evaluate.runs.read import LoadedRun
from assay.pipelines.evaluate.scoring import ranking as er
from assay.results import RunResult

__all__ = ["label_passages", "labels_with_passages", "length_note", "passage_rows"]


def label_passages(
    gold: GoldenSet,
    index: SpanIndex,
    *,
    folder: Path | None,
    loaded: list[LoadedRun],
    judge: Grader | None,
    depth: int,
    listwise: int | None,
    seed: int,
    add_labels: bool,
    progress: Progress | None,
) -> Carried:
    """Labels of the runs' own passages (:mod:`~assay.pipelines.evaluate.runs.carry`); with a judge, the golden chunks
    that undecided passages reach are graded first, added to ``gold`` (``index`` reads them) and the rule applied
    again."""
    carried = carry_labels(gold, loaded, index, depth)
    if judge is None or not carried.pool:
        return carried
    pooled = judge_pool(judge, gold, folder, carried.pool, listwise=listwise, seed=seed, add_labels=add_labels,
                        progress=progress)  # fmt: skip
    index.relabelled()
    carried = carry_labels(gold, loaded, index, depth)
    carried.pooled = pooled
    return carried


def labels_with_passages(base: er.Labels, run: LoadedRun, carried: Carried) -> er.Labels:
    """The golden labels plus the labels of this run's own passages (see :mod:`~assay.pipelines.evaluate.runs.carry`):
    each run is scored against the golden chunks and its own passages, so its figures do not depend on the other runs
    evaluated."""
    qrels = {qid: dict(grades) for qid, grades in base.qrels.items()}
    unscored = set(base.unscored)
    for qid, line in run.lines.items():
        for unit in line.ranked:
            key = (qid, unit)
            if key in carried.grades:
                qrels.setdefault(qid, {})[unit] = carried.grades[key]
            elif key in carried.unscored:
                unscored.add(key)
    return er.Labels(qrels, unscored, base.strict_unscored)


def passage_rows(
    runs: Sequence[LoadedRun], labels: Mapping[str, er.Labels], carried: Carried, depth: int
) -> list[dict[str, Any]]:
    """One row per passage of each run's top ``depth`` (see :meth:`Evaluated.write_passages`); ``labelled_by`` is how
    it got its label: ``chunk`` (a golden chunk: its own label), ``rule`` (carried over by span), ``stored`` (judged in
    an earlier evaluation), ``judged`` (now) or ``unlabelled``."""
    rows = []
    for run in runs:
        for qid, line in run.lines.items():
            for rank, unit in enumerate(line.top(depth), start=1):
                found = line.located[unit]
                span = found.span
                rows.append({
                    "run": run.name, "query_id": qid, "rank": rank, "unit": unit, "match": found.match,
                    "doc_id": span.doc_id if span else None, "start": span.start if span else None,
                    "end": span.end if span else None, "score": span.score if span else None,
                    "grade": labels[run.name].grade(qid, unit), "labelled_by": carried.how.get((qid, unit), "chunk"),
                })  # fmt: skip
    return rows


def length_note(results: Sequence[RunResult]) -> list[str]:
    """A plain note when the runs' passages differ in length: ranking measures then compare chunkings, not
    retrieval; span metrics stay comparable."""
    medians = {r.name: r.passage_lengths["median"] for r in results if r.passage_lengths}
    if len(medians) < 2 or max(medians.values()) < 1.5 * max(1.0, min(medians.values())):
        return []
    shown = ", ".join(f"{name} {median:.0f}" for name, median in medians.items())
    return [f"the runs' passages differ in length (median characters: {shown}): ranking measures are not comparable "
            "across them (longer passages hold relevant text more often); span metrics (span_recall@k, "
            "span_precision@k, span_iou@k) are"]  # fmt: skip
