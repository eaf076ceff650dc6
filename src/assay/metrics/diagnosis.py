"""Diagnostic RAG metrics from claim-level entailment, after RAGChecker (Ru et al., 2024): they say whether the
retriever missed the facts, the generator ignored them, or the generator invented or copied wrong ones.

Per query, four inputs (``n`` answer claims, ``m`` reference claims, ``k`` retrieved chunks):

* ``correct`` (n,): answer claim i is entailed by the reference answer (1.0), not entailed (0.0), unscored (NaN);
* ``recalled`` (m,): reference claim j is entailed by the answer;
* ``answer_support`` (n, k): chunk c entails answer claim i;
* ``reference_support`` (m, k): chunk c entails reference claim j.

Entailment is strict: only 1.0 counts (a partial 0.5 does not), as RAGChecker counts only "entailment" and not
"neutral". Derived sets: a claim is *in the context* when some chunk entails it (any over its row); a chunk is
*relevant* when it entails at least one reference claim (any over its column), else *irrelevant*.

``NaN`` in an output means "cannot be scored": an input the metric needs holds NaN, or its denominator is empty
(no answer claims, no reference claims, no chunk, no reference claim in the context). Each function says which.
The five shares over answer claims partition them when every value is scored: correct and in the context, relevant
noise, irrelevant noise, hallucination, self-knowledge sum to 1 (incorrect claims in the context are either relevant
or irrelevant noise, never both), and faithfulness = 1 - hallucination - self-knowledge.

Against RAGChecker's own code the numerators, denominators, strict entailment, the noise-sensitivity exclusivity and
the per-query F1 are the same; two conventions differ:

* empty cases: where a denominator is empty (no answer claims, no chunk, no reference claims, no reference claim in
  the context) RAGChecker scores 0 and keeps the query in its mean; here the query is NaN and left out (so a weak
  retriever does not pull ``context_utilization`` down with zeros, and with nothing retrieved ``hallucination`` is
  the share of incorrect claims, 1 - precision, where RAGChecker reports 0);
* names: :func:`claim_recall` is RAGChecker's overall ``recall`` (reference claims the answer entails); RAGChecker's
  own ``claim_recall`` is the retriever metric, :func:`retriever_claim_recall` here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from assay.metric_names import LOWER_IS_BETTER, NO_DIRECTION
from assay.metrics._errors import MetricError

__all__ = [
    "DIAGNOSIS_METRICS",
    "LOWER_IS_BETTER",
    "NO_DIRECTION",
    "SHARED_NAMES",
    "claim_f1",
    "claim_precision",
    "claim_recall",
    "context_utilization",
    "diagnose",
    "faithfulness",
    "hallucination",
    "noise_sensitivity",
    "retriever_claim_recall",
    "retriever_context_precision",
    "self_knowledge",
]

FloatArray = npt.NDArray[np.float64]
Vectors = Sequence[npt.ArrayLike]
Matrices = Sequence[npt.ArrayLike]
NoiseMode = Literal["relevant", "irrelevant"]

DIAGNOSIS_METRICS: dict[str, tuple[str, ...]] = {
    "overall": ("claim_precision", "claim_recall", "claim_f1"),
    "retriever": ("retriever_claim_recall", "retriever_context_precision"),
    "generator": (
        "context_utilization",
        "noise_sensitivity_relevant",
        "noise_sensitivity_irrelevant",
        "hallucination",
        "self_knowledge",
        "faithfulness",
    ),
}


# LOWER_IS_BETTER and NO_DIRECTION: the measures where less is better and those with no better side, kept with the
# grammar (assay.metric_names)
# diagnosis metrics that assay's one-call metrics already compute, under the one-call names (RAGChecker's -> ours)
SHARED_NAMES = {"retriever_claim_recall": "context_recall", "faithfulness": "faithfulness"}


def _vector(values: npt.ArrayLike) -> FloatArray:
    return np.asarray(values, dtype=np.float64).reshape(-1)


def _matrix(values: npt.ArrayLike, rows: int | None, what: str) -> FloatArray:
    out = np.asarray(values, dtype=np.float64)
    if out.ndim != 2 or (rows is not None and out.shape[0] != rows):
        want = f"{rows} rows (one per claim)" if rows is not None else "2 dimensions (claims x chunks)"
        raise MetricError(f"{what} must be a claims x chunks matrix with {want}; got shape {out.shape}")
    return out


def _check_len(*lists: Sequence[object]) -> int:
    lengths = {len(x) for x in lists}
    if len(lengths) > 1:
        raise MetricError(f"per-query inputs must have one entry per query each; got lengths {sorted(lengths)}")
    return lengths.pop() if lengths else 0


def _share(mask: npt.ArrayLike, scored: bool) -> float:
    """Share of True in ``mask``; NaN when the mask is empty or an input was unscored."""
    values = np.asarray(mask, dtype=np.float64)
    return float(values.mean()) if scored and values.size else float("nan")


def _entailed(values: FloatArray) -> npt.NDArray[np.bool_]:
    return values >= 1.0


def claim_precision(correct: Vectors) -> FloatArray:
    """Overall precision: |answer claims entailed by the reference| / |answer claims|.

    NaN when the answer has no claims or a claim is unscored."""
    out = []
    for values in correct:
        v = _vector(values)
        out.append(_share(_entailed(v), not np.isnan(v).any()))
    return np.asarray(out, dtype=np.float64)


def claim_recall(recalled: Vectors) -> FloatArray:
    """Overall recall: |reference claims entailed by the answer| / |reference claims|.

    NaN when there are no reference claims or one is unscored."""
    return claim_precision(recalled)


def claim_f1(correct: Vectors, recalled: Vectors) -> FloatArray:
    """Overall F1 = 2PR / (P + R) of :func:`claim_precision` and :func:`claim_recall`; 0 when P = R = 0, NaN when
    either is NaN."""
    _check_len(correct, recalled)
    p, r = claim_precision(correct), claim_recall(recalled)
    total = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(total > 0, 2 * p * r / np.where(total > 0, total, 1.0), 0.0)
    return np.where(np.isnan(total), np.nan, f1)


def retriever_claim_recall(reference_support: Matrices) -> FloatArray:
    """Retriever claim recall: |reference claims entailed by some retrieved chunk| / |reference claims|.

    A query with no chunk retrieved scores 0 (nothing entails anything); NaN when there are no reference claims or
    a cell is unscored."""
    out = []
    for values in reference_support:
        s = _matrix(values, None, "reference_support")
        out.append(_share(_entailed(s).any(axis=1), not np.isnan(s).any()))
    return np.asarray(out, dtype=np.float64)


def retriever_context_precision(reference_support: Matrices) -> FloatArray:
    """Retriever context precision: |retrieved chunks that entail at least one reference claim| / |retrieved chunks|.

    NaN when no chunk was retrieved (k = 0), when there are no reference claims (nothing defines relevance), or a
    cell is unscored."""
    out = []
    for values in reference_support:
        s = _matrix(values, None, "reference_support")
        relevant = _entailed(s).any(axis=0)
        out.append(_share(relevant, s.shape[0] > 0 and not np.isnan(s).any()))
    return np.asarray(out, dtype=np.float64)


def context_utilization(reference_support: Matrices, recalled: Vectors) -> FloatArray:
    """Context utilization: |reference claims entailed by some chunk and by the answer| / |reference claims entailed
    by some chunk|: how much of the relevant information the retriever found the generator used.

    NaN when no reference claim is in the context, or a value it needs is unscored."""
    _check_len(reference_support, recalled)
    out = []
    for support, values in zip(reference_support, recalled, strict=True):
        v = _vector(values)
        s = _matrix(support, v.size, "reference_support")
        in_context = _entailed(s).any(axis=1)
        scored = not (np.isnan(s).any() or np.isnan(v).any())
        out.append(_share(_entailed(v)[in_context], scored))
    return np.asarray(out, dtype=np.float64)


def _answer_parts(
    correct: npt.ArrayLike, answer_support: npt.ArrayLike
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], bool]:
    """(correct mask, answer claim x chunk entailment mask, all scored) of one query."""
    c = _vector(correct)
    a = _matrix(answer_support, c.size, "answer_support")
    return _entailed(c), _entailed(a), not (np.isnan(c).any() or np.isnan(a).any())


def noise_sensitivity(
    correct: Vectors, answer_support: Matrices, reference_support: Matrices, mode: NoiseMode = "relevant"
) -> FloatArray:
    """Noise sensitivity: |incorrect answer claims entailed by a relevant (or irrelevant) chunk| / |answer claims|.

    Relevant chunks entail at least one reference claim. ``"relevant"``: an incorrect claim some relevant chunk
    entails (the generator copied a wrong detail from a useful chunk). ``"irrelevant"``: an incorrect claim some
    irrelevant chunk entails and no relevant chunk does (as RAGChecker's implementation counts it, so the two modes
    never count one claim twice). Lower is better. NaN when the answer has no claims or a value is unscored."""
    if mode not in ("relevant", "irrelevant"):
        raise MetricError(f"unknown noise mode {mode!r}; use 'relevant' or 'irrelevant'")
    _check_len(correct, answer_support, reference_support)
    out = []
    for c_values, a_values, r_values in zip(correct, answer_support, reference_support, strict=True):
        ok, entails, scored = _answer_parts(c_values, a_values)
        ref = _matrix(r_values, None, "reference_support")
        if ref.shape[1] != entails.shape[1]:
            raise MetricError(f"answer_support has {entails.shape[1]} chunks but reference_support {ref.shape[1]}")
        relevant = _entailed(ref).any(axis=0)
        from_relevant = entails[:, relevant].any(axis=1)
        from_irrelevant = entails[:, ~relevant].any(axis=1) & ~from_relevant
        picked = from_relevant if mode == "relevant" else from_irrelevant
        out.append(_share(~ok & picked, scored and not np.isnan(ref).any()))
    return np.asarray(out, dtype=np.float64)


def _by_context(correct: Vectors, answer_support: Matrices, want_correct: bool | None) -> FloatArray:
    _check_len(correct, answer_support)
    out = []
    for c_values, a_values in zip(correct, answer_support, strict=True):
        ok, entails, scored = _answer_parts(c_values, a_values)
        outside = ~entails.any(axis=1)
        if want_correct is None:
            out.append(_share(~outside, scored))
        else:
            out.append(_share(outside & (ok if want_correct else ~ok), scored))
    return np.asarray(out, dtype=np.float64)


def hallucination(correct: Vectors, answer_support: Matrices) -> FloatArray:
    """Hallucination: |incorrect answer claims entailed by no chunk| / |answer claims| (invented and wrong). Lower is
    better. NaN when the answer has no claims or a value is unscored."""
    return _by_context(correct, answer_support, want_correct=False)


def self_knowledge(correct: Vectors, answer_support: Matrices) -> FloatArray:
    """Self-knowledge: |correct answer claims entailed by no chunk| / |answer claims| (right, but from the model's own
    knowledge rather than the context). NaN when the answer has no claims or a value is unscored."""
    return _by_context(correct, answer_support, want_correct=True)


def faithfulness(answer_support: Matrices) -> FloatArray:
    """Faithfulness: |answer claims entailed by some chunk| / |answer claims|, correct or not. NaN when the answer has
    no claims or a cell is unscored. Equals 1 - hallucination - self-knowledge when every value is scored."""
    matrices = [_matrix(a, None, "answer_support") for a in answer_support]
    return _by_context([np.zeros(a.shape[0]) for a in matrices], matrices, want_correct=None)


def diagnose(
    correct: Vectors, recalled: Vectors, answer_support: Matrices, reference_support: Matrices
) -> dict[str, FloatArray]:
    """Every metric of :data:`DIAGNOSIS_METRICS` per query, by name."""
    _check_len(correct, recalled, answer_support, reference_support)
    return {
        "claim_precision": claim_precision(correct),
        "claim_recall": claim_recall(recalled),
        "claim_f1": claim_f1(correct, recalled),
        "retriever_claim_recall": retriever_claim_recall(reference_support),
        "retriever_context_precision": retriever_context_precision(reference_support),
        "context_utilization": context_utilization(reference_support, recalled),
        "noise_sensitivity_relevant": noise_sensitivity(correct, answer_support, reference_support, "relevant"),
        "noise_sensitivity_irrelevant": noise_sensitivity(correct, answer_support, reference_support, "irrelevant"),
        "hallucination": hallucination(correct, answer_support),
        "self_knowledge": self_knowledge(correct, answer_support),
        "faithfulness": faithfulness(answer_support),
    }
