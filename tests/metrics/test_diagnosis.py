"""RAGChecker-style diagnostic metrics on cases computed by hand (see each comment for the counting)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.metrics import MetricError
from assay.metrics import diagnosis as d

# Query 1: answer claims a1..a4, reference claims r1..r3, chunks c1..c3.
#   a1 correct, entailed by c1 (relevant)         -> correct and in the context
#   a2 incorrect, entailed by c1 (relevant), c2   -> relevant noise
#   a3 incorrect, entailed by c3 (irrelevant)     -> irrelevant noise
#   a4 correct, entailed by no chunk              -> self-knowledge
#   r1 entailed by c1; r2 by nothing; r3 only partly by c2 (0.5 does not count) -> only c1 is relevant
Q1 = {
    "correct": [1.0, 0.0, 0.0, 1.0],
    "recalled": [1.0, 0.0, 1.0],
    "answer": [[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]],
    "reference": [[1, 0, 0], [0, 0, 0], [0, 0.5, 0]],
}
# Query 2: one incorrect claim entailed by no chunk (a hallucination); one reference claim, entailed by c2 only and
# not by the answer.
Q2 = {"correct": [0.0], "recalled": [0.0], "answer": [[0, 0]], "reference": [[0, 1]]}


def _all(*queries: dict[str, list]) -> dict[str, np.ndarray]:
    return d.diagnose(
        [q["correct"] for q in queries],
        [q["recalled"] for q in queries],
        [np.asarray(q["answer"], dtype=float) for q in queries],
        [np.asarray(q["reference"], dtype=float) for q in queries],
    )


def test_hand_computed_values() -> None:
    got = _all(Q1, Q2)
    want = {
        "claim_precision": [2 / 4, 0.0],  # a1, a4 correct of 4 | 0 of 1
        "claim_recall": [2 / 3, 0.0],  # r1, r3 in the answer | none
        "claim_f1": [2 * 0.5 * (2 / 3) / (0.5 + 2 / 3), 0.0],  # = 4/7 | P = R = 0 -> 0
        "retriever_claim_recall": [1 / 3, 1.0],  # r1 only (r3 is partial) | r1 by c2
        "retriever_context_precision": [1 / 3, 1 / 2],  # c1 of 3 | c2 of 2
        "context_utilization": [1.0, 0.0],  # r1 in context and answer / r1 | r1 in context, not in answer
        "noise_sensitivity_relevant": [1 / 4, 0.0],  # a2
        "noise_sensitivity_irrelevant": [1 / 4, 0.0],  # a3 (a2 counts as relevant only)
        "hallucination": [0.0, 1.0],  # no incorrect claim outside the context | a1
        "self_knowledge": [1 / 4, 0.0],  # a4
        "faithfulness": [3 / 4, 0.0],  # a1, a2, a3 in the context
    }
    assert set(got) == set(want) == {n for names in d.DIAGNOSIS_METRICS.values() for n in names}
    for name, values in want.items():
        assert got[name] == pytest.approx(values), name


def test_answer_claims_are_partitioned() -> None:
    got = _all(Q1, Q2)
    correct_in_context = np.array([1 / 4, 0.0])  # a1 | none
    parts = ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "hallucination", "self_knowledge"]
    assert sum(got[p] for p in parts) + correct_in_context == pytest.approx([1.0, 1.0])
    assert got["faithfulness"] == pytest.approx(1 - got["hallucination"] - got["self_knowledge"])


def test_empty_denominators_are_nan_not_zero() -> None:
    no_claims = {"correct": [], "recalled": [], "answer": np.zeros((0, 2)), "reference": np.zeros((0, 2))}
    got = _all(no_claims)
    for name in ("claim_precision", "claim_recall", "claim_f1", "faithfulness", "hallucination", "self_knowledge",
                 "noise_sensitivity_relevant", "retriever_claim_recall", "retriever_context_precision",
                 "context_utilization"):  # fmt: skip
        assert math.isnan(got[name][0]), name


def test_nothing_retrieved() -> None:
    # two reference claims, no chunk: the retriever found nothing (recall 0), precision has no chunks (NaN)
    got = _all({"correct": [1.0], "recalled": [1.0, 0.0], "answer": np.zeros((1, 0)), "reference": np.zeros((2, 0))})
    assert got["retriever_claim_recall"][0] == 0.0
    assert math.isnan(got["retriever_context_precision"][0])
    assert math.isnan(got["context_utilization"][0])  # no reference claim in the context
    assert got["self_knowledge"][0] == 1.0 and got["faithfulness"][0] == 0.0


def test_unscored_value_makes_the_query_unscored() -> None:
    q = {**Q1, "correct": [1.0, np.nan, 0.0, 1.0]}
    got = _all(q)
    assert math.isnan(got["claim_precision"][0]) and math.isnan(got["hallucination"][0])
    assert got["claim_recall"][0] == pytest.approx(2 / 3)  # the reference side is fully scored
    assert got["faithfulness"][0] == pytest.approx(3 / 4)  # needs only the support matrix


def test_bad_shapes_are_named() -> None:
    with pytest.raises(MetricError, match="claims x chunks"):
        d.hallucination([[1.0, 0.0]], [np.zeros((3, 2))])
    with pytest.raises(MetricError, match="one entry per query"):
        d.claim_f1([[1.0]], [[1.0], [0.0]])
    with pytest.raises(MetricError, match="noise mode"):
        d.noise_sensitivity([[1.0]], [np.zeros((1, 1))], [np.zeros((1, 1))], mode="other")  # type: ignore[arg-type]
