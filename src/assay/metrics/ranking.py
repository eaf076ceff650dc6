"""Ranking measures over a :class:`~assay.metrics.judged.Judged` join: one float per evaluated query.

Notation for one query: ranks r = 1..n of the run (trec_eval order, see :mod:`assay.metrics.judged`), ``rel_r``
is 1 when the document at r has grade >= t (t = 1 unless a name says ``|g>=t``; negative grades are never
relevant), ``R`` is the number of relevant documents in the qrels (retrieved or not), ``k`` a cutoff (None: the
whole run). Every measure of a query with R = 0 (or, for the graded ones, with no positive grade) is 0, as in
trec_eval. A cutoff beyond the run counts the missing ranks as non-relevant.
"""

from __future__ import annotations

import numpy as np

from assay.metrics.judged import NOT_RETRIEVED, FloatArray, IntArray, Judged

__all__ = [
    "auc_pr",
    "average_precision",
    "bpref",
    "dcg",
    "err",
    "f_beta",
    "hit",
    "interpolated_precision",
    "ndcg",
    "num_rel",
    "num_ret",
    "precision",
    "r_precision",
    "recall",
    "reciprocal_rank",
]

IPREC_LEVELS = tuple(i / 10 for i in range(11))


def _depth(k: int | None) -> int:
    return int(NOT_RETRIEVED) if k is None else k


def _sum_by(q: IntArray, weights: FloatArray, minlength: int) -> FloatArray:
    """Sum of ``weights`` per query index (numpy's bincount, typed as float)."""
    return np.asarray(np.bincount(q, weights=weights, minlength=minlength), dtype=np.float64)


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def num_rel(j: Judged, threshold: int = 1) -> FloatArray:
    """R: relevant documents in the qrels per query (trec_eval ``num_rel``)."""
    return j.count(j.relevant(threshold))


def num_ret(j: Judged) -> FloatArray:
    """Documents retrieved per query (trec_eval ``num_ret``)."""
    return j.n_ret.astype(np.float64)


def _relevant_in_top(j: Judged, k: int | None, threshold: int) -> FloatArray:
    return j.count(j.relevant(threshold) & (j.rank < _depth(k)))


def precision(j: Judged, k: int, threshold: int = 1) -> FloatArray:
    """P@k = (sum_{r<=k} rel_r) / k, divided by k even when the run is shorter (trec_eval ``P_k``)."""
    return _relevant_in_top(j, k, threshold) / k


def recall(j: Judged, k: int | None, threshold: int = 1) -> FloatArray:
    """R@k = (sum_{r<=k} rel_r) / R, with R from the qrels; 0 when R = 0 (trec_eval ``recall_k``)."""
    return _ratio(_relevant_in_top(j, k, threshold), num_rel(j, threshold))


def f_beta(j: Judged, k: int, beta: float = 1.0, threshold: int = 1) -> FloatArray:
    """F_beta@k = (1 + b^2) P@k R@k / (b^2 P@k + R@k); 0 when P@k + R@k = 0. F1: b = 1, F2: b = 2."""
    p, r = precision(j, k, threshold), recall(j, k, threshold)
    b2 = beta * beta
    return _ratio((1 + b2) * p * r, b2 * p + r)


def hit(j: Judged, k: int | None, threshold: int = 1) -> FloatArray:
    """hit@k = 1 if some rel_r = 1 with r <= k, else 0 (trec_eval ``success_k``)."""
    return (_relevant_in_top(j, k, threshold) > 0).astype(np.float64)


def _relevant_points(j: Judged, k: int | None, threshold: int) -> tuple[IntArray, IntArray, IntArray]:
    """(query, 0-based rank, i) of each relevant retrieved document with rank < k, i counting them from 1."""
    idx = np.flatnonzero(j.relevant(threshold) & (j.rank < _depth(k)))
    q, rank = j.q[idx], j.rank[idx]
    ith = np.arange(len(idx), dtype=np.int64) - np.searchsorted(q, q, side="left") + 1
    return q, rank, ith


def reciprocal_rank(j: Judged, k: int | None = None, threshold: int = 1) -> FloatArray:
    """RR@k = 1 / (rank of the first relevant document) if it is within k, else 0 (trec_eval ``recip_rank``)."""
    q, rank, ith = _relevant_points(j, k, threshold)
    first = ith == 1
    return _sum_by(q[first], 1.0 / (rank[first] + 1), j.n_queries)


def average_precision(j: Judged, k: int | None = None, threshold: int = 1) -> FloatArray:
    """AP@k = (1/R) sum_{r<=k, rel_r=1} P@r, divided by all R relevant in the qrels (trec_eval ``map``, ``map_cut_k``).

    Relevant documents the run misses (or ranks beyond k) add 0. RAGAS-style context precision, which divides by
    the relevant documents retrieved, is a different measure (``assay.metrics.rag``).
    """
    q, rank, ith = _relevant_points(j, k, threshold)
    total = _sum_by(q, ith / (rank + 1.0), j.n_queries)
    return _ratio(total, num_rel(j, threshold))


def r_precision(j: Judged, threshold: int = 1) -> FloatArray:
    """R-precision = P@R = (sum_{r<=R} rel_r) / R (trec_eval ``Rprec``)."""
    big_r = num_rel(j, threshold)
    within = j.relevant(threshold) & (j.rank < big_r[j.q])
    return _ratio(j.count(within), big_r)


def bpref(j: Judged, threshold: int = 1) -> FloatArray:
    """bpref = (1/R) sum_{retrieved relevant d} (1 - min(n_d, R) / min(N, R)), as trec_eval computes it.

    n_d counts judged non-relevant documents (grade 0 <= g < t) ranked above d and N all judged non-relevant ones
    in the qrels; a term with n_d = 0 is 1. Documents with a negative grade count neither as relevant nor as judged
    non-relevant (trec_eval reads negative grades as unjudged), and unjudged documents are skipped.
    """
    t = max(threshold, 1)
    nonrel = (j.grade >= 0) & (j.grade < t)
    big_n = j.count(nonrel)
    big_r = num_rel(j, threshold)
    seen = np.concatenate([[0], np.cumsum(nonrel & (j.rank < NOT_RETRIEVED))])
    idx = np.flatnonzero(j.relevant(threshold) & (j.rank < NOT_RETRIEVED))
    q = j.q[idx]
    above = (seen[idx] - seen[np.searchsorted(j.q, q, side="left")]).astype(np.float64)
    cap = np.minimum(big_n, big_r)[q]
    term = 1.0 - _ratio(np.minimum(above, big_r[q]), cap)
    return _ratio(_sum_by(q, term, j.n_queries), big_r)


def interpolated_precision(j: Judged, level: float, threshold: int = 1) -> FloatArray:
    """iprec(x) = max { P@r : rel_r = 1 and at least n(x) relevant within r }, 0 if none (``iprec_at_recall_x``).

    n(x) = floor(x R + 0.9): trec_eval's rounding of "recall >= x", checked against pytrec_eval (with R = 3,
    x = 0.7 needs 2 relevant documents, although 2/3 < 0.7).
    """
    q, rank, ith = _relevant_points(j, None, threshold)
    big_r = num_rel(j, threshold)
    prec = ith / (rank + 1.0)
    ok = ith >= np.floor(level * big_r[q] + 0.9)
    out = np.zeros(j.n_queries)
    np.maximum.at(out, q[ok], prec[ok])
    return out


def auc_pr(j: Judged, threshold: int = 1) -> FloatArray:
    """Area under the interpolated precision-recall curve, as the 11-point rule: (1/11) sum_{x=0,0.1..1} iprec(x).

    This is trec_eval's ``11pt_avg`` (pytrec_eval agrees to 1e-15); a trapezoid under the step curve would differ.
    """
    points = [interpolated_precision(j, x, threshold) for x in IPREC_LEVELS]
    return np.asarray(np.mean(points, axis=0), dtype=np.float64)


def _gain(grades: IntArray, exponential: bool) -> FloatArray:
    positive = np.maximum(grades, 0).astype(np.float64)
    return np.exp2(positive) - 1.0 if exponential else positive


def dcg(j: Judged, k: int | None, exponential: bool = False) -> FloatArray:
    """DCG@k = sum_{r<=k} gain(g_r) / log2(r + 1); gain(g) = max(g, 0), or 2^g - 1 for the exponential variant.

    Raw grades, whatever the relevance threshold; negative grades gain 0 (trec_eval's ``ndcg`` does the same).
    """
    mask = (j.grade > 0) & (j.rank < _depth(k))
    return j.per_query(_gain(j.grade, exponential) / np.log2(j.rank + 2.0), mask)


def ideal_positions(j: Judged) -> tuple[IntArray, IntArray, IntArray]:
    """(query, 0-based position, grade) of every positive judged grade, each query's grades in descending order."""
    idx = np.flatnonzero(j.grade > 0)
    q, g = j.q[idx], j.grade[idx]
    order = np.lexsort((-g, q))
    q, g = q[order], g[order]
    return q, np.arange(len(q), dtype=np.int64) - np.searchsorted(q, q, side="left"), g


def ideal_dcg(j: Judged, k: int | None, exponential: bool = False) -> FloatArray:
    """IDCG@k: DCG@k of every positive judged grade of the query in descending order, retrieved or not."""
    q, pos, g = ideal_positions(j)
    keep = pos < _depth(k)
    disc = _gain(g[keep], exponential) / np.log2(pos[keep] + 2.0)
    return _sum_by(q[keep], disc, j.n_queries)


def ndcg(j: Judged, k: int | None, exponential: bool = False) -> FloatArray:
    """nDCG@k = DCG@k / IDCG@k (trec_eval ``ndcg_cut_k``; ``ndcg`` with k = None); 0 when IDCG@k = 0."""
    return _ratio(dcg(j, k, exponential), ideal_dcg(j, k, exponential))


def err(j: Judged, k: int | None, gmax: int = 3) -> FloatArray:
    """ERR@k = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i), R = (2^g - 1) / 2^gmax (Chapelle et al. 2009).

    Grades are clipped to [0, gmax] (a grade above gmax would make R > 1); unjudged documents have R = 0. Only
    documents with R > 0 change the sum or the product, so it runs over them, the product as exp(cumsum(log1p(-R))).
    """
    idx = np.flatnonzero((j.grade > 0) & (j.rank < _depth(k)))
    q, rank = j.q[idx], j.rank[idx]
    sat = (np.exp2(np.minimum(j.grade[idx], gmax).astype(np.float64)) - 1.0) / 2.0**gmax
    logs = np.log1p(-sat)
    cum = np.concatenate([[0.0], np.cumsum(logs)])
    first = np.searchsorted(q, q, side="left")
    before = np.exp(cum[np.arange(len(idx))] - cum[first])
    return _sum_by(q, sat * before / (rank + 1.0), j.n_queries)
