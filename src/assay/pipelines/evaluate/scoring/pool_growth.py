"""What other runs' passages did to a run's score: the one way its score can differ from evaluating it alone.

Character grades are a property of text (:mod:`~..runs.painting`), so judging one run's fragments changes no other
run's scores. What can change them is new text: another run retrieved text no label covered, the judge read it, and
found something relevant the run missed (its recall denominator and ideal DCG grow), as TREC pools judgements across
runs. This module says where that happened and by how much, per run, on the primary metric:

1. **New labels**: the labels this evaluation added to the pool (golden chunks and passages judged now).
2. **A run's own reach**: the golden chunks in its projection's top ``depth`` and the text of its top ``depth``
   passages (a new label whose span that text overlaps is one the run would have brought to the judge alone).
3. **Foreign labels**: new labels graded 1 or more that the run's reach does not touch (a label graded 0 changes no
   ranking or budget measure: unjudged text counts as not relevant too).
4. **The shift**: the run's value on each question with a foreign label, scored again without the foreign labels;
   ``together - alone`` per question and the run's mean without them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from assay.corpus.align import Span
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.carry import SpanIndex
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.budget import SpanPool, budget_values
from assay.pipelines.evaluate.scoring.names import kind_of
from assay.results import PoolShift, QueryResult

__all__ = ["LabelKeys", "label_keys", "pool_shifts"]

LabelKeys = set[tuple[str, str]]  # (query_id, chunk or passage id) with a standing label


def label_keys(gold: GoldenSet) -> LabelKeys:
    """The pairs with a standing label, chunk or passage (step 1 compares them before and after judging)."""
    return set(gold.standing_qrels()) | set(gold.passage_labels())


def _spans(gold: GoldenSet, resolver: Resolver) -> dict[tuple[str, str], Span]:
    """The span of every new-label candidate: golden chunks by their place, passages by their offsets."""
    out: dict[tuple[str, str], Span] = {}
    for passage in gold.passages:
        if passage.doc_id is not None and passage.start is not None and passage.end is not None:
            for label in passage.labels:
                out[(label.query_id, passage.id)] = Span(passage.doc_id, passage.start, passage.end, "offsets", 1.0)
    return out


def _reaches(runs: tuple[LoadedRun, LoadedRun], qid: str, span: Span | None, unit: str, *, depth: int) -> bool:
    """Step 2: whether the run's (or its projection's) own top ``depth`` holds ``unit`` or overlaps ``span``."""
    run, unit_run = runs
    if unit in unit_run.lines[qid].top(depth) or unit in run.lines[qid].top(depth):
        return True
    if span is None:
        return False
    line = run.lines[qid]
    for item in line.top(depth):
        found = line.located.get(item)
        s = found.span if found is not None else None
        if s is not None and s.doc_id == span.doc_id and s.start < span.end and span.start < s.end:
            return True
    return False


def _foreign(
    gold: GoldenSet, new: LabelKeys, runs: tuple[LoadedRun, LoadedRun], resolver: Resolver, *, depth: int
) -> LabelKeys:
    """Step 3 for one run and its projection."""
    run = runs[0]
    grades = {key: label.grade for key, label in (gold.standing_qrels() | gold.passage_labels()).items()}
    passage_spans = _spans(gold, resolver)
    out: LabelKeys = set()
    for qid, unit in new:
        if (grades.get((qid, unit)) or 0) < 1 or qid not in run.lines:
            continue
        span = resolver.chunk_span(unit) if gold.has_chunk(unit) else passage_spans.get((qid, unit))
        if not _reaches(runs, qid, span, unit, depth=depth):
            out.add((qid, unit))
    return out


def _without(gold: GoldenSet, foreign: LabelKeys) -> GoldenSet:
    qrels = [label for label in gold.qrels if (label.query_id, label.chunk_id) not in foreign]
    passages = [
        passage.model_copy(
            update={"labels": [lab for lab in passage.labels if (lab.query_id, passage.id) not in foreign]}
        )
        for passage in gold.passages
    ]
    return replace(gold, qrels=qrels, passages=passages)


def _values(
    gold: GoldenSet, resolver: Resolver, run: LoadedRun, unit_run: LoadedRun, metric: str, *, threshold: int,
    depth: int, strict: bool,
) -> dict[str, float | None]:  # fmt: skip
    if kind_of(metric) == "budget":
        got = budget_values(run, SpanPool(SpanIndex(gold, resolver)), [metric], threshold)
    else:
        got = er.rank_run(unit_run, er.Labels.of(gold, strict_unscored=strict), [metric], threshold=threshold,
                          depth=depth)  # fmt: skip
    return {qid: values.metrics.get(metric) for qid, values in got.items()}


def pool_shifts(
    gold: GoldenSet,
    resolver: Resolver,
    before: LabelKeys,
    runs: Sequence[tuple[LoadedRun, LoadedRun]],
    together: Mapping[str, Mapping[str, QueryResult]],
    *,
    metric: str | None,
    threshold: int,
    depth: int,
    strict: bool,
) -> list[PoolShift]:
    """Step 4 for each ``(run, projection)`` of ``runs``: ``before``: :func:`label_keys` before this evaluation
    judged anything; ``together``: each run's rows as evaluated; runs no foreign label touched are left out."""
    new = label_keys(gold) - before
    if not new or len(runs) < 2 or metric is None or kind_of(metric) not in ("budget", "ranking"):
        return []
    out = []
    for run, unit_run in runs:
        foreign = _foreign(gold, new, (run, unit_run), resolver, depth=depth)
        if not foreign:
            continue
        alone = _values(_without(gold, foreign), resolver, run, unit_run, metric, threshold=threshold, depth=depth,
                        strict=strict)  # fmt: skip
        mine = {qid: row.metrics.get(metric) for qid, row in together.get(run.name, {}).items()}
        moved = {qid for qid, _ in foreign}
        deltas = {q: mine[q] - alone[q] for q in sorted(moved) if _both(mine.get(q), alone.get(q))}  # type: ignore[operator]
        shown = [v for v in alone.values() if v is not None and not math.isnan(v)]
        out.append(PoolShift(run=run.name, metric=metric, questions=sorted(moved), deltas=deltas,
                             alone_mean=sum(shown) / len(shown) if shown else None))  # fmt: skip
    return out


def _both(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and not math.isnan(a) and not math.isnan(b)
