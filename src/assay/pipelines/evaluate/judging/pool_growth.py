"""What other runs' passages did to a run's scores: the one way a run's score can differ from evaluating it alone.

Character grades are a property of text (:mod:`~..runs.painting`), so judging one run's fragments changes no other
run's scores. What can change them is new text: another run retrieved text no label covered, the judge read it and
found something relevant the run missed (its recall denominator and ideal DCG grow), as TREC pools judgements across
runs. This module says where that happened and by how much, per run:

1. **New labels**: the pairs (question, chunk or passage) that got a label in this evaluation.
2. **What the run alone would have judged**: the same steps an evaluation of the run alone takes, on the golden set
   as it was before this evaluation, with the labels now known standing in for the judge's answers (a label is per
   question and text, cached, so the judge would have given the same): the golden chunks its undecided passages
   reach, then its passages still undecided, then the unlabelled golden chunks in its projection's top ``depth``.
3. **Foreign labels**: new labels graded 1 or more that the run alone would not have asked for (a label graded 0
   changes no ranking or budget measure: unjudged text counts as not relevant too).
4. **The shift**: the run scored again without its foreign labels, which is what it scores evaluated alone: per
   question where a foreign label stands, the primary metric ``together - alone``; and the mean of every ranking
   and budget measure alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.judging.calls import unlabelled_pairs
from assay.pipelines.evaluate.runs.carry import Carried, SpanIndex, carry_labels
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.budget import SpanPool, budget_values
from assay.pipelines.evaluate.scoring.names import kind_of
from assay.pipelines.evaluate.scoring.scored import ScoredRun
from assay.results import PoolShift, QueryResult
from assay.types import RelevanceLabel

__all__ = ["Before", "pool_shifts", "quotes_note"]

LabelKeys = set[tuple[str, str]]  # (query_id, chunk or passage id)


class Before:
    """The golden set's labels before this evaluation judged anything (the qrels and passage lists, shallow copies:
    labels are only ever added)."""

    def __init__(self, gold: GoldenSet) -> None:
        self.qrels = list(gold.qrels)
        self.passages = [p.model_copy(update={"labels": list(p.labels)}) for p in gold.passages]
        self.keys = _keys(gold)
        self.size = _pool_size(gold)

    def growth_note(self, gold: GoldenSet, projected: Sequence[LoadedRun], carried: Carried) -> list[str]:
        """One sentence on how much this evaluation grew the pool of labels, and from which runs."""
        grown = _pool_size(gold) - self.size
        if grown <= 0 or len(projected) < 2:
            return []
        by_run = ", ".join(f"{run.name} {run.counts.labels_judged_now}" for run in projected)
        judged = sum(how == "judged" for how in carried.how.values())
        passages = f", {judged} of them passages judged as passages" if judged else ""
        return [f"This evaluation added {grown} labels to the pool{passages} (chunks judged in each run's top: "
                f"{by_run}); every run is scored against the grown pool."]  # fmt: skip

    def new_labels(self, gold: GoldenSet) -> list[RelevanceLabel]:
        """The standing labels of pairs that had none before (chunk and passage labels)."""
        standing = _standing(gold)
        return [standing[key] for key in sorted(set(standing) - self.keys)]

    def golden(self, gold: GoldenSet) -> GoldenSet:
        return replace(gold, qrels=list(self.qrels), passages=[p.model_copy() for p in self.passages])


def _pool_size(gold: GoldenSet) -> int:
    """Labels in the pool: chunk labels and judged passage labels."""
    return len(gold.qrels) + sum(len(p.labels) for p in gold.passages)


def quotes_note(labels: Sequence[RelevanceLabel]) -> list[str]:
    """One sentence on the quotes the judge gave that are not in their passage (dropped, never trusted)."""
    dropped = sum(label.quotes_dropped for label in labels)
    if not dropped:
        return []
    held = sum(1 for label in labels if label.quotes_dropped)
    return [f"The judge gave {dropped} quote(s) that are not in their passage (paraphrases) on {held} label(s): "
            "dropped and never trusted; a label left with no quote counts its whole text at its grade."]  # fmt: skip


def _standing(gold: GoldenSet) -> dict[tuple[str, str], RelevanceLabel]:
    """The label that stands for each pair, chunk or passage."""
    return gold.standing_qrels() | gold.passage_labels()


def _keys(gold: GoldenSet) -> LabelKeys:
    return set(_standing(gold))


def _alone_asks(before: GoldenSet, now: GoldenSet, runs: tuple[LoadedRun, LoadedRun], resolver: Resolver,
                depth: int) -> LabelKeys:  # fmt: skip
    """Step 2: the pairs an evaluation of the run alone would send to the judge."""
    run, unit_run = runs
    first = carry_labels(before, [run], SpanIndex(before, resolver), depth)
    asked = {(p.query_id, p.chunk_id) for p in first.pool}
    standing = now.standing_qrels()
    before.qrels.extend(standing[key] for key in sorted(asked) if key in standing)
    second = carry_labels(before, [run], SpanIndex(before, resolver), depth)
    asked |= {(p.query_id, p.chunk_id) for p in second.pending}
    asked |= {(p.query_id, p.chunk_id) for p in unlabelled_pairs(before, [unit_run], depth)}
    return asked


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
    gold: GoldenSet, resolver: Resolver, runs: tuple[LoadedRun, LoadedRun], measures: Sequence[str], *,
    threshold: int, depth: int, strict: bool,
) -> dict[str, dict[str, float | None]]:  # fmt: skip
    """``{measure: {query_id: value}}`` of the run on ``gold``: budget measures on its passages, ranking measures on
    its projection."""
    run, unit_run = runs
    budget = [m for m in measures if kind_of(m) == "budget"]
    ranking = [m for m in measures if kind_of(m) == "ranking"]
    parts = []
    if budget:
        parts.append(budget_values(run, SpanPool(SpanIndex(gold, resolver)), budget, threshold))
    if ranking:
        labels = er.Labels.of(gold, strict_unscored=strict)
        parts.append(er.rank_run(unit_run, labels, ranking, threshold=threshold, depth=depth))
    out: dict[str, dict[str, float | None]] = {m: {} for m in (*budget, *ranking)}
    for part in parts:
        for qid, values in part.items():
            for name, per_query in out.items():
                if name in values.metrics:
                    per_query[qid] = values.metrics[name]
    return out


def pool_shifts(
    gold: GoldenSet,
    resolver: Resolver,
    before: Before,
    runs: Sequence[ScoredRun],
    *,
    metric: str | None,
    measures: Sequence[str],
    threshold: int,
    depth: int,
    strict: bool,
) -> list[PoolShift]:
    """Steps 1-4 for each of ``runs`` (its rows: as evaluated together); ``measures``: the ranking and budget
    measures to give alone. Runs no foreign label touched are left out."""
    standing = _standing(gold)
    new = set(standing) - before.keys
    if not new or len(runs) < 2:
        return []
    relevant = {key for key in new if (standing[key].grade or 0) >= 1}
    out = []
    for one in runs:
        pair = (one.run, one.projected)
        mine = {key for key in relevant if key[0] in one.run.lines}
        foreign = mine - _alone_asks(before.golden(gold), gold, pair, resolver, depth) if mine else mine
        if not foreign:
            continue
        alone = _values(_without(gold, foreign), resolver, pair, measures, threshold=threshold, depth=depth,
                        strict=strict)  # fmt: skip
        out.append(_shift(one.name, foreign, alone, one.rows, metric))
    return out


def _shift(
    name: str, foreign: LabelKeys, alone: Mapping[str, Mapping[str, float | None]],
    rows: Mapping[str, QueryResult], metric: str | None,
) -> PoolShift:  # fmt: skip
    moved = sorted({qid for qid, _ in foreign})
    deltas: dict[str, float] = {}
    if metric is not None and metric in alone:
        for qid in moved:
            was, now = alone[metric].get(qid), rows[qid].metrics.get(metric) if qid in rows else None
            if _number(was) and _number(now):
                deltas[qid] = now - was  # type: ignore[operator]
    means = {name: _mean(values.values()) for name, values in alone.items()}  # rounded as the reported means
    return PoolShift(run=name, metric=metric or "", questions=moved, deltas=deltas,
                     alone_mean=means.get(metric) if metric else None,
                     alone_means={k: v for k, v in means.items() if v is not None})  # fmt: skip


def _number(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def _mean(values: object) -> float | None:
    shown = [v for v in values if _number(v)]  # type: ignore[attr-defined]
    return round(sum(shown) / len(shown), 6) if shown else None
