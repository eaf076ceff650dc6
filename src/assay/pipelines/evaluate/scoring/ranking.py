"""Label-based metrics of ``assay eval``: trec_eval ranking measures, RAGAS context precision, coverage recall,
judged@k, the grade histogram and the 11-point precision-recall curve.

Conventions (trec_eval's unless said otherwise; formulas in :mod:`assay.metrics.ranking` and :mod:`assay.metrics.rag`):

* relevant = grade >= ``threshold`` (default 1) for ranking measures; AP, recall and R-precision divide by every
  relevant chunk in the qrels, retrieved or not; nDCG's ideal ranking uses every judged grade (linear gain).
* a chunk without a label counts as not relevant (trec_eval); judged@k shows how complete the labels are.
* a query whose qrels have no relevant chunk is unscored on ranking measures (reason ``no_relevant_chunks``): trec_eval
  would average in a 0 there, which says nothing about the system (an unanswerable question, a question whose
  chunks were never labelled).
* with a judge, a chunk in the evaluated depth whose relevance label is unscored (a judge failure) makes the
  measures that reach it unscored (reason ``unscored_relevance_label``), instead of reading it as not relevant.
  Without a judge, such a pair is unjudged, as trec_eval would treat it.
* ``ragas_context_precision@k`` = sum_{i<=k} P@i v_i / sum_{i<=k} v_i with v_i = 1 when the i-th chunk has grade >=
  ``cp_threshold`` (default 2: the chunk at least partly answers the question, RAGAS's "useful for the answer");
  0 with no such chunk in the top k. It is computed only with a judge, beside trec_eval's ``map@k`` (grade >= 1,
  divided by all relevant chunks).
* ``coverage_recall@k`` = share of the question's nuggets whose supporting chunk set (``nuggets.jsonl``) meets the
  top k (strict); unscored (``no_nugget_support``) for questions without nugget support records. No call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from assay.formats.golden import GoldenSet
from assay.metrics import Qrels, Run, evaluate, parse_measure, rag
from assay.metrics.curves import curves
from assay.metrics.ranking import IPREC_LEVELS
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine
from assay.pipelines.evaluate.scoring.names import CURVE_FAMILIES

__all__ = [
    "Labels",
    "QueryValues",
    "grade_histogram",
    "judged_at_k",
    "rank_curves",
    "rank_run",
]

NO_RELEVANT = "no_relevant_chunks"
UNSCORED_LABEL = "unscored_relevance_label"
_NEVER = 1 << 30  # a rank past every cut-off


@dataclass
class Labels:
    """The graded qrels, the pairs whose only label is unscored, and whether judge failures make values unscored."""

    qrels: dict[str, dict[str, int]]
    unscored: set[tuple[str, str]]
    strict_unscored: bool

    @classmethod
    def of(cls, golden: GoldenSet, *, strict_unscored: bool) -> Labels:
        unscored = {(label.query_id, label.chunk_id) for label in golden.unscored()}
        return cls(golden.qrels_map(), unscored, strict_unscored)

    def grade(self, qid: str, cid: str) -> int | None:
        return self.qrels.get(qid, {}).get(cid)

    def n_relevant(self, qid: str, threshold: int) -> int:
        return sum(g >= threshold for g in self.qrels.get(qid, {}).values())


@dataclass
class QueryValues:
    """Metric values of one query (None = unscored) and the reasons for the unscored ones."""

    metrics: dict[str, float | None] = field(default_factory=dict)
    unscored: dict[str, str] = field(default_factory=dict)

    def put(self, name: str, value: float | None, reason: str = "") -> None:
        if value is None or math.isnan(value):
            self.metrics[name] = None
            self.unscored[name] = reason or "unscored"
        else:
            self.metrics[name] = float(value)


def _first_unscored(line: RunLine, labels: Labels) -> int:
    """0-based rank of the first chunk whose label is unscored; :data:`_NEVER` when there is none."""
    for rank, cid in enumerate(line.ranked):
        if (line.query_id, cid) in labels.unscored:
            return rank
    return _NEVER


def _trec_values(run: LoadedRun, labels: Labels, measures: list[str]) -> dict[str, dict[str, float]]:
    """``{qid: {measure: value}}`` from :func:`assay.metrics.evaluate` for queries with a retrieved chunk and qrels."""
    table = {qid: line.scores for qid, line in run.lines.items() if line.ranked and qid in labels.qrels}
    qrels = {qid: labels.qrels[qid] for qid in table}
    if not table:
        return {}
    result = evaluate(Qrels.from_dict(qrels), Run.from_dict(table), measures)
    out: dict[str, dict[str, float]] = {qid: {} for qid in result.query_ids}
    for name, values in result.per_query.items():
        for qid, value in zip(result.query_ids, values.tolist(), strict=True):
            out[qid][name] = float(value)
    return out


def rank_run(
    run: LoadedRun, labels: Labels, measures: list[str], *, threshold: int, depth: int
) -> dict[str, QueryValues]:
    """Ranking measures of every query of ``run`` (see the module docstring for the unscored cases)."""
    computed = _trec_values(run, labels, measures)
    cutoffs = {name: parse_measure(name).k for name in measures}
    out: dict[str, QueryValues] = {}
    for qid, line in run.lines.items():
        values = out[qid] = QueryValues()
        relevant = labels.n_relevant(qid, threshold) > 0
        first_bad = _first_unscored(line, labels) if labels.strict_unscored else _NEVER
        for name in measures:
            reach = cutoffs[name] or depth
            if not relevant:
                values.put(name, None, NO_RELEVANT)
            elif first_bad < reach:
                values.put(name, None, UNSCORED_LABEL)
            else:
                values.put(name, computed.get(qid, {}).get(name, 0.0))  # an empty list scores 0
    return out


def rank_curves(run: LoadedRun, labels: Labels, threshold: int, depth: int) -> dict[str, dict[str, float | None]]:
    """Mean metric@k for k = 1..depth per family (:func:`assay.metrics.curves.curves`), over the queries with a
    relevant chunk (an empty list counts 0 at every k), as the summaries count them."""
    qids = [qid for qid in run.lines if labels.n_relevant(qid, threshold) > 0]
    table = {qid: run.lines[qid].scores for qid in qids if run.lines[qid].ranked}
    if not qids:
        return {}
    suffix = f"|g>={threshold}" if threshold != 1 else ""
    names = [f + ("" if f in ("ndcg", "err") else suffix) for f in CURVE_FAMILIES]
    found = curves({q: labels.qrels[q] for q in table}, Run.from_dict(table), names, depth) if table else None
    out: dict[str, dict[str, float | None]] = {}
    for family, name in zip(CURVE_FAMILIES, names, strict=True):
        rows = np.zeros((len(qids), depth))
        if found is not None:
            where = {q: i for i, q in enumerate(found.query_ids)}
            for row, qid in enumerate(qids):
                if qid in where:
                    rows[row] = found.values[name][where[qid]]
        out[family] = {str(k + 1): round(float(v), 6) for k, v in enumerate(rows.mean(axis=0))}
    return out


def pr_curve(run: LoadedRun, labels: Labels, threshold: int) -> list[float]:
    """11-point interpolated precision (recall 0.0 .. 1.0), mean over the queries with a relevant chunk."""
    names = [f"iprec@{level:.1f}" + (f"|g>={threshold}" if threshold != 1 else "") for level in IPREC_LEVELS]
    computed = _trec_values(run, labels, names)
    qids = [qid for qid in run.lines if labels.n_relevant(qid, threshold) > 0]
    if not qids:
        return []
    return [round(float(np.mean([computed.get(q, {}).get(n, 0.0) for q in qids])), 6) for n in names]


def context_precision(
    run: LoadedRun, labels: Labels, k_values: Sequence[int], cp_threshold: int
) -> dict[str, QueryValues]:
    """``ragas_context_precision@k`` per query: unjudged chunks count as not relevant, unscored labels as NaN."""
    out: dict[str, QueryValues] = {}
    for qid, line in run.lines.items():
        values = out[qid] = QueryValues()
        grades = [_cp_grade(labels, qid, cid) for cid in line.top(max(k_values))]
        for k in k_values:
            value = rag.ragas_context_precision([grades], k, threshold=cp_threshold)[0]
            values.put(f"ragas_context_precision@{k}", float(value), UNSCORED_LABEL)
    return out


def _cp_grade(labels: Labels, qid: str, cid: str) -> float:
    grade = labels.grade(qid, cid)
    if grade is not None:
        return float(grade)
    return math.nan if (qid, cid) in labels.unscored else 0.0


def coverage(
    run: LoadedRun,
    golden: GoldenSet,
    k_values: Sequence[int],
    stands_for: Callable[[RunLine, str], list[str]] | None = None,
) -> dict[str, QueryValues]:
    """``coverage_recall@k`` per query from the nugget support records (strict: full support only). A retrieved
    passage that is not a golden chunk meets the nuggets of the chunks ``stands_for`` names for it (the evaluator
    names the golden chunks the passage covers at least half of)."""
    out: dict[str, QueryValues] = {}
    support = golden.nugget_support_by_query()
    for qid, line in run.lines.items():
        values = out[qid] = QueryValues()
        required = [set(chunks) for chunks in support.get(qid, {}).values()]
        for k in k_values:
            if not required:
                values.put(f"coverage_recall@{k}", None, "no_nugget_support")
                continue
            top = [cid for unit in line.top(k) for cid in _chunks_of(line, unit, golden, stands_for)]
            values.put(f"coverage_recall@{k}", float(rag.coverage_recall([required], [top])[0]))
    return out


def _chunks_of(
    line: RunLine, unit: str, golden: GoldenSet, stands_for: Callable[[RunLine, str], list[str]] | None
) -> list[str]:
    if golden.has_chunk(unit) or stands_for is None:
        return [unit]
    return stands_for(line, unit)


def judged_at_k(run: LoadedRun, labels: Labels, k_values: Sequence[int]) -> dict[str, float | None]:
    """Share of the top-k retrieved chunks (pooled over queries) that have a scored label; None when none retrieved."""
    out: dict[str, float | None] = {}
    for k in k_values:
        shown = judged = 0
        for qid, line in run.lines.items():
            top = line.top(k)
            shown += len(top)
            judged += sum(labels.grade(qid, cid) is not None for cid in top)
        out[str(k)] = round(judged / shown, 6) if shown else None
    return out


def grade_histogram(run: LoadedRun, labels: Labels, depth: int) -> dict[str, int]:
    """Grades of the retrieved chunks in the top ``depth``: "0".."3" (and "-1"), "unscored", "unjudged"."""
    counts: dict[str, int] = {str(g): 0 for g in range(4)}
    counts |= {"unscored": 0, "unjudged": 0}
    for qid, line in run.lines.items():
        for cid in line.top(depth):
            grade = labels.grade(qid, cid)
            key = str(grade) if grade is not None else ("unscored" if (qid, cid) in labels.unscored else "unjudged")
            counts[key] = counts.get(key, 0) + 1
    return counts
