"""How far a judge's scores follow people's: Pearson's r, Spearman's rho, and a bootstrap interval over clusters.

Used to measure answer measures against human judgements of answers (``bench/answers.py``): per answer (a rating
beside a score) or per pair of answers (a preference beside a difference of scores). Spearman's rho is Pearson's r
of the ranks, ties given their average rank, as in ``scipy.stats.spearmanr``. A constant side has no correlation:
NaN, never 0. The interval resamples clusters (the questions: two answers to one question are not independent),
percentile bootstrap with a seeded generator, so the same inputs give the same interval on any machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError

__all__ = ["Correlation", "average_ranks", "correlation", "pearson", "spearman"]

Kind = Literal["pearson", "spearman"]
FloatArray = npt.NDArray[np.float64]


def _pair(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    a, b = np.asarray(x, dtype=np.float64).reshape(-1), np.asarray(y, dtype=np.float64).reshape(-1)
    if a.shape != b.shape:
        raise MetricError(f"correlation needs two equally long lists, got {a.size} and {b.size}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise MetricError("correlation needs finite values: leave unscored items out first")
    return a, b


def pearson(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Pearson's r of two equally long lists; NaN when either is constant or has fewer than 2 values."""
    a, b = _pair(x, y)
    if a.size < 2:
        return float("nan")
    da, db = a - a.mean(), b - b.mean()
    denominator = float(np.sqrt((da * da).sum() * (db * db).sum()))
    return float((da * db).sum() / denominator) if denominator > 0 else float("nan")


def average_ranks(values: npt.ArrayLike) -> FloatArray:
    """1-based ranks, ties sharing the mean of the ranks they span (``[10, 20, 20, 30]`` -> ``[1, 2.5, 2.5, 4]``)."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(v.size, dtype=np.float64)
    sorted_v = v[order]
    start = 0
    while start < v.size:
        end = start + 1
        while end < v.size and sorted_v[end] == sorted_v[start]:
            end += 1
        ranks[order[start:end]] = (start + 1 + end) / 2  # the mean of ranks start+1 .. end
        start = end
    return ranks


def spearman(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Spearman's rho: Pearson's r of the average ranks; NaN when either side is constant."""
    a, b = _pair(x, y)
    return pearson(average_ranks(a), average_ranks(b))


_KINDS = {"pearson": pearson, "spearman": spearman}


@dataclass(frozen=True)
class Correlation:
    """A correlation, its percentile bootstrap interval over clusters, and the number of items and clusters."""

    kind: Kind
    value: float
    low: float
    high: float
    n: int
    clusters: int


def correlation(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    kind: Kind = "pearson",
    *,
    clusters: Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Correlation:
    """``kind`` correlation of ``x`` and ``y`` with a bootstrap interval that resamples whole ``clusters`` (one
    label per item; default: every item its own). Resamples where a side comes out constant are left out of the
    interval; with fewer than 2 clusters, or fewer than half the resamples usable, the interval is NaN."""
    if kind not in _KINDS:
        raise MetricError(f"unknown correlation {kind!r}: pearson or spearman")
    if not 0 < confidence < 1:
        raise MetricError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise MetricError(f"n_resamples must be at least 1, got {n_resamples}")
    a, b = _pair(x, y)
    labels = list(clusters) if clusters is not None else [str(i) for i in range(a.size)]
    if len(labels) != a.size:
        raise MetricError(f"one cluster label per item: {len(labels)} labels for {a.size} items")
    _, codes, counts = np.unique(np.array(labels, dtype=str), return_inverse=True, return_counts=True)
    members = np.split(np.argsort(codes, kind="stable"), np.cumsum(counts)[:-1])
    value = _KINDS[kind](a, b)
    low = high = float("nan")
    if len(members) >= 2:
        rng = np.random.default_rng(seed)
        replicates = []
        for _ in range(n_resamples):
            picked = np.concatenate([members[i] for i in rng.integers(0, len(members), len(members))])
            r = _KINDS[kind](a[picked], b[picked])
            if not np.isnan(r):
                replicates.append(r)
        if len(replicates) * 2 >= n_resamples:
            tail = (1 - confidence) / 2
            low, high = (float(q) for q in np.quantile(replicates, [tail, 1 - tail]))
    return Correlation(kind, value, low, high, int(a.size), len(members))
