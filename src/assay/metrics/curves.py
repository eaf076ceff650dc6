"""Metric@k curves: a measure's value at every cutoff k = 1..K for every query, in one pass.

The join is laid out as a dense ``[n_queries, K]`` grade matrix (0 where a rank holds an unjudged document or lies
beyond the run), and each curve is a few cumulative sums along the rank axis. Every point equals the measure of the
same name with ``@k`` (``curves(..., ["ndcg"], 20).values["ndcg"][:, 9]`` is ``ndcg@10``), with the conventions of
:mod:`assay.metrics.ranking`. Families with a cutoff: P, recall, f1/f2/fbeta, hit, rr/mrr, map, ndcg, ndcg_exp, dcg,
dcg_exp, err; options (``|g>=2``, ``|gmax=4``, ``|beta=0.5``) as in the registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from assay.metric_names import MetricName
from assay.metrics._errors import MetricError
from assay.metrics.judged import FloatArray, IntArray, Judged, Qrels, Run, join
from assay.metrics.ranking import _gain, _ratio, ideal_positions, num_rel
from assay.metrics.registry import Measure, _as_qrels, _as_run, parse_measure

__all__ = ["Curves", "curves"]

_CURVED = {"P", "recall", "f", "hit", "rr", "ap", "ndcg", "ndcg_exp", "dcg", "dcg_exp", "err"}


@dataclass(frozen=True)
class Curves:
    """``values[name]`` is ``[len(query_ids), len(ks)]``; column j is the measure at cutoff ``ks[j]``."""

    query_ids: list[str]
    ks: IntArray
    values: dict[str, FloatArray]

    def mean(self, name: str) -> FloatArray:
        """Mean over queries at each k (NaN when no query was evaluated)."""
        if name not in self.values:
            raise MetricError(f"no curve {name!r}; computed: {', '.join(self.values)}")
        v = self.values[name]
        return v.mean(axis=0) if len(v) else np.full(len(self.ks), np.nan)


def _parse(name: str) -> Measure:
    parsed = MetricName.parse(name)
    if parsed.cut is not None:
        raise MetricError(f"curve {name!r}: give the measure without @k (the curve spans every k), e.g. ndcg")
    measure = parse_measure(f"{parsed.word}@1{parsed.suffix}")
    if measure.family not in _CURVED:
        raise MetricError(f"curve {name!r}: {measure.family} has no cutoff; curves: {', '.join(sorted(_CURVED))}")
    return Measure(name, measure.family, None, measure.threshold, measure.gmax, measure.beta)


def _matrix(j: Judged, depth: int, cells: tuple[IntArray, IntArray, IntArray]) -> IntArray:
    """``[n_queries, depth]`` grades from ``(query, 0-based rank, grade)`` cells; 0 elsewhere (ranks >= depth too)."""
    q, rank, grade = cells
    grades = np.zeros((j.n_queries, depth), dtype=np.int64)
    inside = rank < depth
    grades[q[inside], rank[inside]] = grade[inside]
    return grades


def _dcg(grades: IntArray, ranks: FloatArray, exponential: bool) -> FloatArray:
    """DCG at every k of each row of ``grades`` (grades in rank order)."""
    return np.cumsum(_gain(grades, exponential) / np.log2(ranks + 1.0), axis=1)


def _curve(m: Measure, j: Judged, grades: IntArray, ranks: FloatArray) -> FloatArray:
    t = max(m.threshold, 1)
    rel = (grades >= t).astype(np.float64)
    hits = np.cumsum(rel, axis=1)
    big_r = num_rel(j, t)[:, None]
    family = m.family
    if family in ("P", "recall", "f", "hit"):
        p, r = hits / ranks, _ratio(hits, big_r)
        if family == "f":
            b2 = m.beta * m.beta
            return _ratio((1 + b2) * p * r, b2 * p + r)
        return {"P": p, "recall": r, "hit": (hits > 0).astype(np.float64)}[family]
    if family == "ap":
        return _ratio(np.cumsum(rel * hits / ranks, axis=1), big_r)
    if family == "rr":
        first = np.where(hits > 0, np.argmax(rel > 0, axis=1)[:, None] + 1.0, np.inf)
        return 1.0 / first
    if family == "err":
        sat = (np.exp2(np.clip(grades, 0, m.gmax).astype(np.float64)) - 1.0) / 2.0**m.gmax
        before = np.cumprod(np.concatenate([np.ones((len(sat), 1)), 1.0 - sat[:, :-1]], axis=1), axis=1)
        return np.cumsum(sat * before / ranks, axis=1)
    exponential = family.endswith("_exp")
    dcg = _dcg(grades, ranks, exponential)
    if family.startswith("dcg"):
        return dcg
    return _ratio(dcg, _dcg(_matrix(j, grades.shape[1], ideal_positions(j)), ranks, exponential))


def curves(
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Mapping[str, float]],
    measures: Sequence[str],
    max_k: int,
    *,
    complete: bool = False,
) -> Curves:
    """Curves of ``measures`` (names without ``@k``) for k = 1..max_k, per evaluated query (as :func:`evaluate`)."""
    if max_k < 1:
        raise MetricError(f"max_k must be >= 1, got {max_k}")
    parsed = [_parse(name) for name in measures]
    judged = join(_as_qrels(qrels), _as_run(run), complete=complete, positive_only=True)  # no curve reads grade <= 0
    grades = _matrix(judged, max_k, (judged.q, judged.rank, judged.grade))
    ranks = np.arange(1, max_k + 1, dtype=np.float64)[None, :]
    values = {m.name: _curve(m, judged, grades, ranks) for m in parsed}
    return Curves(judged.query_ids, np.arange(1, max_k + 1, dtype=np.int64), values)
