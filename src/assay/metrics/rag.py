"""RAG metrics from labels: context precision (RAGAS), context recall, faithfulness, nugget recall, coverage
recall and chunk attribution. Inputs are plain per-query lists; outputs are per-query float arrays.

``NaN`` in an output means "cannot be scored" (no claims, no nuggets of the asked kind, an unscored judge
verdict, nothing retrieved where the metric needs something); the caller counts those as unscored and never
averages them in as 0. Each function documents which cases give ``NaN`` and which give a real 0.

Verdict scales used here:

* claim verdicts (context recall, faithfulness, support matrices): 1.0 supported, 0.5 partially supported,
  0.0 not supported, ``NaN`` unscored. ``strict`` counts only 1.0 as support; ``lenient`` counts 0.5 as half.
* nugget assignments (TREC RAG 2024): the strings ``"support"``, ``"partial_support"``, ``"not_support"``, or
  ``None`` when unscored; importance ``"vital"`` or ``"okay"``.

Hit rate lives in :mod:`assay.metrics.ranking`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError

__all__ = [
    "NUGGET_SCORES",
    "attribution_from_support",
    "attribution_rate",
    "claim_support",
    "context_recall",
    "coverage_recall",
    "faithfulness",
    "nugget_recall",
    "ragas_context_precision",
]

FloatArray = npt.NDArray[np.float64]
Mode = Literal["strict", "lenient"]
NuggetSubset = Literal["all", "vital", "weighted"]
NUGGET_SCORES: dict[str, float] = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
_IMPORTANCE_WEIGHT: dict[str, float] = {"vital": 1.0, "okay": 0.5}


def _check_k(k: int | None) -> None:
    if k is not None and k < 1:
        raise MetricError(f"k must be a positive cut-off such as 5 or 10, or None for the whole list; got {k}")


def _check_mode(mode: str) -> None:
    if mode not in ("strict", "lenient"):
        raise MetricError(f"unknown mode {mode!r}; use 'strict' (only full support counts) or 'lenient'")


def _credit(verdicts: FloatArray, mode: Mode) -> FloatArray:
    """Verdict -> credit: strict keeps 1.0 and sends 0.5 to 0; lenient keeps 1.0, 0.5 and 0.0 as they are."""
    scored = verdicts[~np.isnan(verdicts)]
    if np.any((scored != 0.0) & (scored != 0.5) & (scored != 1.0)):
        raise MetricError(f"claim verdicts must be 1.0, 0.5, 0.0 or NaN (unscored), got {sorted(set(scored.tolist()))}")
    return verdicts if mode == "lenient" else np.where(verdicts == 1.0, 1.0, np.where(np.isnan(verdicts), np.nan, 0.0))


def ragas_context_precision(
    relevance: Sequence[Sequence[float]], k: int | None = None, *, threshold: float = 1.0
) -> FloatArray:
    """Context precision as RAGAS defines it, per query, over the top ``k`` retrieved chunks (all when None).

    With v_i = 1 when the i-th retrieved chunk is relevant (label >= ``threshold``; ``True`` counts as 1):

        CP@k = sum_{i<=k} P@i * v_i / sum_{i<=k} v_i,   P@i = (sum_{j<=i} v_j) / i

    Difference from trec_eval AP: AP divides the same sum by *all* relevant chunks in the qrels, retrieved or not,
    so it also punishes relevant chunks the system missed; CP divides by the relevant chunks it retrieved, so it
    measures only their order. Example (seed 004): ranking [c2, c4, c1, c3, c5] with c1, c3, c5 relevant (and c8
    relevant but not retrieved): CP = (1/3 + 2/4 + 3/5) / 3 = 0.4778, AP = (1/3 + 2/4 + 3/5) / 4 = 0.3583.
    Edge cases: no relevant chunk in the top k (or nothing retrieved) gives 0.0; a NaN label in the top k (an
    unscored relevance verdict) gives NaN.
    """
    _check_k(k)
    out = np.empty(len(relevance))
    for index, labels in enumerate(relevance):
        top = np.asarray(labels, dtype=np.float64)[:k]
        if np.isnan(top).any():
            out[index] = math.nan
            continue
        hits = (top >= threshold).astype(np.float64)
        found = hits.sum()
        precision = np.cumsum(hits) / np.arange(1, hits.size + 1)
        out[index] = float(np.sum(precision * hits) / found) if found else 0.0
    return out


def claim_support(support: npt.ArrayLike, k: int | None = None) -> FloatArray:
    """Per-claim verdicts from a claims x chunks support matrix (columns in retrieved order, first ``k`` used).

    A claim's verdict is the best support any of the first k chunks gives it (1.0 > 0.5 > 0.0). A NaN cell
    (unscored pair) only matters when no scored cell reaches 1.0: then the claim's verdict is NaN, because the
    unscored chunk might have supported it. With no chunk (k columns absent) every claim is 0.0.
    """
    _check_k(k)
    matrix = np.asarray(support, dtype=np.float64)
    if matrix.ndim != 2:
        raise MetricError(f"a support matrix must be claims x chunks (2-d), got shape {matrix.shape}")
    matrix = matrix[:, :k]
    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0])
    best = np.max(np.where(np.isnan(matrix), -1.0, matrix), axis=1)
    unknown = np.isnan(matrix).any(axis=1) & (best < 1.0)
    result: FloatArray = np.where(unknown, np.nan, np.maximum(best, 0.0))
    return result


def _claim_share(verdicts: Sequence[Sequence[float]], mode: Mode) -> FloatArray:
    _check_mode(mode)
    out = np.empty(len(verdicts))
    for index, claims in enumerate(verdicts):
        credit = _credit(np.asarray(claims, dtype=np.float64).ravel(), mode)
        out[index] = math.nan if credit.size == 0 or np.isnan(credit).any() else float(credit.mean())
    return out


def context_recall(verdicts: Sequence[Sequence[float]], mode: Mode = "strict") -> FloatArray:
    """Share of each question's reference claims supported by the retrieved context.

    ``verdicts[q]`` holds one verdict per reference claim (e.g. from :func:`claim_support` on the claims x
    retrieved-chunks matrix). recall = sum credit_i / #claims, credit per ``mode`` (strict: supported = 1, partial
    = 0; lenient: partial = 0.5). NaN when the question has no claims or any claim's verdict is unscored.
    """
    return _claim_share(verdicts, mode)


def faithfulness(verdicts: Sequence[Sequence[float]], mode: Mode = "strict") -> FloatArray:
    """Share of each answer's claims supported by the retrieved context (the answer is grounded).

    ``verdicts[q]`` holds one verdict per claim extracted from the answer. faithfulness = sum credit_i / #claims,
    credit as in :func:`context_recall`. NaN when the answer has no claims (an empty or refusing answer is not
    scored as 0 or 1: count it) or any verdict is unscored.
    """
    return _claim_share(verdicts, mode)


def _nugget_score(
    importance: Sequence[str], assignment: Sequence[str | None], subset: NuggetSubset, mode: Mode
) -> float:
    if len(importance) != len(assignment):
        raise MetricError(f"each nugget needs one assignment: got {len(importance)} nuggets, {len(assignment)} labels")
    unknown = [label for label in assignment if label is not None and label not in NUGGET_SCORES]
    bad = [level for level in importance if level not in _IMPORTANCE_WEIGHT]
    if unknown or bad:
        raise MetricError(
            f"nugget labels must be {sorted(NUGGET_SCORES)} or None and importance 'vital' or 'okay'; got "
            f"{sorted(set(map(str, unknown)))} {sorted(set(bad))}"
        )
    keep = [i for i, level in enumerate(importance) if subset != "vital" or level == "vital"]
    if not keep or any(assignment[i] is None for i in keep):
        return math.nan
    scores = np.array([NUGGET_SCORES[str(assignment[i])] for i in keep])
    if mode == "strict":
        scores = (scores == 1.0).astype(np.float64)
    weights = np.array([_IMPORTANCE_WEIGHT[importance[i]] if subset == "weighted" else 1.0 for i in keep])
    return float(np.sum(weights * scores) / np.sum(weights))


def nugget_recall(
    importance: Sequence[Sequence[str]],
    assignment: Sequence[Sequence[str | None]],
    *,
    subset: NuggetSubset = "all",
    mode: Mode = "strict",
) -> FloatArray:
    """Nugget scores of TREC RAG 2024 (Pradeep et al. 2024, AutoNuggetizer, section on scoring), per answer.

    Each nugget i of the question has importance vital/okay and an assignment to the answer: s_i = 1 for
    ``support``, 0.5 for ``partial_support`` (lenient; 0 in strict), 0 for ``not_support``.

        all (A)       = sum_i s_i / #nuggets
        vital (V)     = sum_{i vital} s_i / #vital nuggets
        weighted (W)  = sum_i w_i s_i / sum_i w_i,   w = 1 for vital, 0.5 for okay

    The track's headline measure is V strict. The assignment may be to an answer (as in the track) or to the
    retrieved context (nugget recall of retrieval); this function does not care. NaN when the question has no
    nugget in the subset, or a nugget in the subset is unscored (``None``).
    """
    if subset not in ("all", "vital", "weighted"):
        raise MetricError(f"unknown nugget subset {subset!r}; use 'all', 'vital' or 'weighted'")
    _check_mode(mode)
    if len(importance) != len(assignment):
        raise MetricError(
            f"importance and assignment must list the same queries: {len(importance)} vs {len(assignment)}"
        )
    return np.array([_nugget_score(imp, asg, subset, mode) for imp, asg in zip(importance, assignment, strict=True)])


def _top_ids(ranked: Sequence[str], k: int | None) -> set[str]:
    return set(ranked[:k])


def coverage_recall(
    required: Sequence[Sequence[Collection[str]]],
    retrieved: Sequence[Sequence[str]],
    k: int | None = None,
    *,
    partial: Sequence[Sequence[Collection[str]]] | None = None,
    mode: Mode = "strict",
) -> FloatArray:
    """Share of a question's required chunk sets (facets, nuggets) covered by the top ``k`` retrieved chunks.

    ``required[q][f]`` is the set of chunk ids any one of which covers facet f. coverage@k =
    #{f : required[q][f] meets top-k} / #facets. With ``partial`` (chunks that cover a facet only in part, same
    shape) and ``mode='lenient'``, a facet met only by a partial chunk counts 0.5; strict ignores ``partial``.
    A facet with an empty set can never be covered and still counts in the denominator (filter such facets
    out beforehand if that is not wanted). NaN when the question has no facets; an empty retrieved list gives 0.0.
    Example (seed 004, corrected): facets {c1,c2}, {c3,c5}, {c8,c9}, {c6,c7} and ranking c1..c10: coverage@5 = 2/4.
    """
    _check_k(k)
    _check_mode(mode)
    if len(required) != len(retrieved) or (partial is not None and len(partial) != len(required)):
        raise MetricError("required, retrieved (and partial) must list the same queries in the same order")
    out = np.empty(len(required))
    for index, facets in enumerate(required):
        top = _top_ids(retrieved[index], k)
        halves = partial[index] if partial is not None and mode == "lenient" else [()] * len(facets)
        if len(halves) != len(facets):
            raise MetricError(f"query {index}: {len(facets)} required sets but {len(halves)} partial sets")
        credit = [
            1.0 if top & set(full) else (0.5 if top & set(half) else 0.0)
            for full, half in zip(facets, halves, strict=True)
        ]
        out[index] = float(np.mean(credit)) if credit else math.nan
    return out


def attribution_rate(
    retrieved: Sequence[Sequence[str]], used: Sequence[Collection[str]], k: int | None = None
) -> FloatArray:
    """Share of the top ``k`` retrieved chunks that the answer cites or uses.

    rate@k = |distinct top-k ids ∩ used| / |distinct top-k ids| (a duplicated id counts once). ``used[q]`` is the
    set of chunk ids the answer cites (run ``citations``) or that support one of its claims. NaN when nothing was
    retrieved. Example (seed 004): ranking c1..c10, cited {c1, c3, c5}: 3/10.
    """
    _check_k(k)
    if len(retrieved) != len(used):
        raise MetricError(f"retrieved and used must list the same queries: {len(retrieved)} vs {len(used)}")
    out = np.empty(len(retrieved))
    for index, ranked in enumerate(retrieved):
        top = _top_ids(ranked, k)
        out[index] = len(top & set(used[index])) / len(top) if top else math.nan
    return out


def attribution_from_support(
    supports: Sequence[npt.ArrayLike], k: int | None = None, mode: Mode = "strict"
) -> FloatArray:
    """Attribution rate from each answer's claims x retrieved-chunks support matrix (columns in retrieved order).

    A chunk is used when it supports at least one answer claim (strict: a cell equal to 1.0; lenient: >= 0.5).
    rate@k = #used among the first k columns / #columns kept. NaN when there is no column, or when a chunk is not
    used by any scored cell but has an unscored (NaN) cell. An answer with no claims uses no chunk: 0.0.
    """
    _check_k(k)
    _check_mode(mode)
    cut = 1.0 if mode == "strict" else 0.5
    out = np.empty(len(supports))
    for index, support in enumerate(supports):
        matrix = np.asarray(support, dtype=np.float64)
        if matrix.ndim != 2:
            raise MetricError(f"query {index}: a support matrix must be claims x chunks (2-d), got {matrix.shape}")
        matrix = matrix[:, :k]
        used = np.any(matrix >= cut, axis=0)
        unknown = ~used & np.isnan(matrix).any(axis=0)
        out[index] = math.nan if matrix.shape[1] == 0 or unknown.any() else float(used.mean())
    return out
