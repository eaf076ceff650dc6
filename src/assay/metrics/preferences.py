"""Pairwise preferences: a Bradley-Terry model of systems from judged comparisons, with ties, and cluster-bootstrap
intervals.

A comparison is (i, j, s): systems i and j on one question, ``s`` = 1 when i is preferred, 0 when j is, 0.5 for a
tie. **Ties count half a win for each side** (the treatment Chatbot Arena's leaderboard uses), so the model is the
plain Bradley-Terry model P(i preferred to j) = pi_i / (pi_i + pi_j) fitted to fractional wins; Davidson's or
Rao-Kupper's tie parameter is not estimated. Strengths are log(pi), centred to mean 0 over the systems.

The fit is the minorization-maximization iteration of Hunter (2004), pi_i <- W_i / sum_j N_ij / (pi_i + pi_j) with
W_i the wins of i and N_ij the comparisons of i and j, run to convergence. A **prior of ``PRIOR`` wins each way for
every pair of systems** (one tie) keeps the strengths finite when a system wins nothing and links systems never
compared directly (a baseline design); it pulls strengths slightly towards each other, by one comparison's worth.

:func:`preference_intervals` resamples clusters of comparisons (the questions of one document move together, as in
:mod:`assay.metrics.clusters`): each resample draws the clusters with replacement, refits the model (all resamples
at once, vectorised), and gives percentile intervals of each strength and of each pair's preference probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError

__all__ = ["PRIOR", "Fitted", "bradley_terry", "preference_intervals", "win_matrix"]

FloatArray = npt.NDArray[np.float64]
PRIOR = 0.5  # wins added each way for every pair of systems: one tie
_TOL = 1e-10
_MAX_ITER = 10_000


def win_matrix(first: Sequence[int], second: Sequence[int], score: Sequence[float], m: int,
               weights: npt.ArrayLike | None = None) -> FloatArray:  # fmt: skip
    """``W[i, j]``: the (weighted) wins of system i over system j, a tie half a win each; no prior."""
    i, j = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    s = np.asarray(score, dtype=np.float64)
    if not (len(i) == len(j) == len(s)):
        raise MetricError("first, second and score must have one entry per comparison")
    if len(s) and (np.any((s < 0) | (s > 1)) or np.any(i == j) or i.min() < 0 or j.min() < 0 or max(i.max(), j.max())
                   >= m):  # fmt: skip
        raise MetricError("a comparison needs two different systems in 0..m-1 and a score in [0, 1]")
    w = np.ones(len(s)) if weights is None else np.asarray(weights, dtype=np.float64)
    wins = np.zeros((m, m))
    np.add.at(wins, (i, j), w * s)
    np.add.at(wins, (j, i), w * (1.0 - s))
    return wins


def _fit(wins: FloatArray) -> FloatArray:
    """Log-strengths, mean 0 per row, of win matrices ``wins`` (shape (R, m, m)), the prior added (module doc)."""
    m = wins.shape[-1]
    w = wins + PRIOR * (1.0 - np.eye(m))
    n = w + np.swapaxes(w, -1, -2)
    total = w.sum(axis=-1)
    pi = np.ones(wins.shape[:-1])
    for _ in range(_MAX_ITER):
        denom = (n / (pi[..., :, None] + pi[..., None, :])).sum(axis=-1)
        new = total / denom
        new /= np.exp(np.log(new).mean(axis=-1, keepdims=True))
        done = np.max(np.abs(np.log(new) - np.log(pi))) < _TOL
        pi = new
        if done:
            break
    log_pi: FloatArray = np.log(pi)
    centred: FloatArray = log_pi - log_pi.mean(axis=-1, keepdims=True)
    return centred


def bradley_terry(first: Sequence[int], second: Sequence[int], score: Sequence[float], m: int) -> FloatArray:
    """The systems' log-strengths (mean 0) from comparisons (module doc)."""
    if m < 2:
        raise MetricError("Bradley-Terry needs at least two systems")
    fitted: FloatArray = _fit(win_matrix(first, second, score, m)[None])[0]
    return fitted


@dataclass(frozen=True)
class Fitted:
    """Strengths and their intervals; ``prob[i, j]``: P(i preferred to j) under the model, with ``prob_low`` and
    ``prob_high`` its interval (the diagonal is 0.5)."""

    strength: FloatArray
    low: FloatArray
    high: FloatArray
    prob: FloatArray
    prob_low: FloatArray
    prob_high: FloatArray
    clusters: int


def _prob(strength: FloatArray) -> FloatArray:
    out: FloatArray = 1.0 / (1.0 + np.exp(-(strength[..., :, None] - strength[..., None, :])))
    return out


def preference_intervals(
    first: Sequence[int], second: Sequence[int], score: Sequence[float], clusters: Sequence[str], m: int, *,
    confidence: float = 0.95, pair_confidence: float | None = None, n_resamples: int = 2000, seed: int = 0,
) -> Fitted:  # fmt: skip
    """The fit with percentile intervals over ``n_resamples`` cluster resamples (module doc): ``confidence`` for the
    strengths, ``pair_confidence`` (default the same) for the pairs' probabilities."""
    if len(clusters) != len(score):
        raise MetricError("clusters must give one label per comparison")
    if not 0 < confidence < 1 or n_resamples < 1:
        raise MetricError("confidence must be in (0, 1) and n_resamples at least 1")
    keys = sorted(set(clusters))
    index = {key: k for k, key in enumerate(keys)}
    cluster = np.array([index[c] for c in clusters], dtype=np.int64)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(keys), size=(n_resamples, len(keys))) if keys else np.zeros((n_resamples, 0), int)
    counts = np.zeros((n_resamples, len(keys)))
    for r in range(n_resamples):
        np.add.at(counts[r], draws[r], 1.0)
    per = np.stack([win_matrix(first, second, score, m, weights=counts[r, cluster]) for r in range(n_resamples)])
    replicates = _fit(per)
    strength = bradley_terry(first, second, score, m)
    alpha = 1.0 - confidence
    pair_alpha = 1.0 - (pair_confidence if pair_confidence is not None else confidence)
    probs = _prob(replicates)
    return Fitted(
        strength=strength,
        low=np.quantile(replicates, alpha / 2, axis=0),
        high=np.quantile(replicates, 1 - alpha / 2, axis=0),
        prob=_prob(strength),
        prob_low=np.quantile(probs, pair_alpha / 2, axis=0),
        prob_high=np.quantile(probs, 1 - pair_alpha / 2, axis=0),
        clusters=len(keys),
    )
