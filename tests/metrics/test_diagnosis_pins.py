"""Pins of the diagnostic metrics found by the mutation habit: strict entailment, unscored cells, empty sides and the
messages of bad shapes, each on a case counted by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.metrics import MetricError
from assay.metrics import diagnosis as d

NAN = math.nan


def test_entailment_is_strictly_one() -> None:
    # 0.999 is not entailment: of two answer claims only the first (1.0) is correct
    assert d.claim_precision([[1.0, 0.999]]).tolist() == [0.5]
    assert d.claim_recall([[0.999, 0.0, 1.0, 1.0]]).tolist() == [0.5]


def test_f1_is_nan_when_either_side_is_unscored() -> None:
    assert math.isnan(d.claim_f1([[1.0, NAN]], [[1.0]])[0])
    assert math.isnan(d.claim_f1([[1.0]], [[NAN]])[0])
    # P = 1, R = 1/2: F1 = 2 * 1 * 0.5 / 1.5 = 2/3
    assert d.claim_f1([[1.0]], [[1.0, 0.0]])[0] == pytest.approx(2 / 3)


def test_retriever_measures_with_an_unscored_cell_are_nan() -> None:
    support = [np.array([[1.0, NAN], [0.0, 0.0]])]
    assert math.isnan(d.retriever_claim_recall(support)[0])
    assert math.isnan(d.retriever_context_precision(support)[0])


def test_context_precision_counts_chunks_that_entail_some_reference_claim() -> None:
    # three chunks; c1 entails r1, c3 entails r2 (c2 partially, 0.5): 2 relevant chunks of 3
    support = [np.array([[1.0, 0.5, 0.0], [0.0, 0.0, 1.0]])]
    assert d.retriever_context_precision(support)[0] == pytest.approx(2 / 3)
    assert d.retriever_claim_recall(support)[0] == 1.0
    # chunks retrieved but no reference claim: nothing defines relevance
    assert math.isnan(d.retriever_context_precision([np.zeros((0, 3))])[0])


def test_context_utilization_needs_scored_recall() -> None:
    support = [np.array([[1.0], [1.0]])]
    assert d.context_utilization(support, [[1.0, 0.0]]).tolist() == [0.5]
    assert math.isnan(d.context_utilization(support, [[1.0, NAN]])[0])
    assert math.isnan(d.context_utilization([np.array([[1.0], [NAN]])], [[1.0, 0.0]])[0])


def test_noise_sensitivity_with_an_unscored_reference_cell_is_nan() -> None:
    correct, answer = [[0.0]], [np.array([[1.0, 0.0]])]
    assert d.noise_sensitivity(correct, answer, [np.array([[1.0, 0.0]])]).tolist() == [1.0]
    assert math.isnan(d.noise_sensitivity(correct, answer, [np.array([[1.0, NAN]])])[0])
    assert math.isnan(d.noise_sensitivity(correct, answer, [np.array([[1.0, NAN]])], "irrelevant")[0])


def test_noise_modes_split_incorrect_claims_by_chunk() -> None:
    # chunks c1 (relevant: entails r1) and c2 (irrelevant); answer claims: a1 incorrect from c2 only, a2 incorrect
    # from c1 and c2 (relevant only), a3 correct from c2 (not noise), a4 incorrect from nothing (hallucination)
    correct = [[0.0, 0.0, 1.0, 0.0]]
    answer = [np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]])]
    reference = [np.array([[1.0, 0.0]])]
    assert d.noise_sensitivity(correct, answer, reference, "relevant").tolist() == [0.25]
    assert d.noise_sensitivity(correct, answer, reference, "irrelevant").tolist() == [0.25]
    assert d.hallucination(correct, answer).tolist() == [0.25]
    assert d.self_knowledge(correct, answer).tolist() == [0.0]
    assert d.faithfulness(answer).tolist() == [0.75]


def test_faithfulness_with_an_unscored_cell_is_nan() -> None:
    assert math.isnan(d.faithfulness([np.array([[1.0, NAN]])])[0])
    assert math.isnan(d.hallucination([[0.0]], [np.array([[NAN]])])[0])


def test_bad_inputs_are_named() -> None:
    with pytest.raises(MetricError, match="2 dimensions"):
        d.retriever_claim_recall([np.zeros(3)])
    with pytest.raises(MetricError, match=r"1 rows \(one per claim\)"):
        d.context_utilization([np.zeros((2, 1))], [[1.0]])
    with pytest.raises(MetricError, match="answer_support has 2 chunks but reference_support 3"):
        d.noise_sensitivity([[0.0]], [np.zeros((1, 2))], [np.zeros((1, 3))])
    with pytest.raises(MetricError, match=r"got lengths \[1, 2\]"):
        d.diagnose([[1.0]], [[1.0]], [np.zeros((1, 1))], [np.zeros((1, 1)), np.zeros((1, 1))])


def test_no_queries_give_empty_results() -> None:
    got = d.diagnose([], [], [], [])
    assert all(values.shape == (0,) for values in got.values())


def test_f1_of_a_small_precision_and_recall() -> None:
    # P = 1/4 (one of four claims correct), R = 1/2: P + R = 3/4 < 1, F1 = 2 (1/8) / (3/4) = 1/3
    assert d.claim_f1([[1.0, 0.0, 0.0, 0.0]], [[1.0, 0.0]])[0] == pytest.approx(1 / 3)


def test_one_dimensional_support_names_its_argument() -> None:
    with pytest.raises(MetricError, match="reference_support must be"):
        d.retriever_context_precision([np.zeros(3)])
    with pytest.raises(MetricError, match="answer_support must be"):
        d.faithfulness([np.zeros(2)])


@pytest.mark.parametrize("longest", range(4))
def test_diagnose_checks_every_input_length(longest: int) -> None:
    # one input has 3 queries, the next 2, the others 1: the message lists all three lengths
    lengths = [1, 1, 1, 1]
    lengths[longest], lengths[(longest + 1) % 4] = 3, 2
    correct, recalled = [[1.0]] * lengths[0], [[1.0]] * lengths[1]
    answer, reference = [np.ones((1, 1))] * lengths[2], [np.ones((1, 1))] * lengths[3]
    with pytest.raises(MetricError, match=r"got lengths \[1, 2, 3\]"):
        d.diagnose(correct, recalled, answer, reference)


def test_diagnose_reports_both_noise_modes() -> None:
    # one incorrect answer claim, entailed only by chunk c2, which entails no reference claim: irrelevant noise
    got = d.diagnose([[0.0]], [[1.0]], [np.array([[0.0, 1.0]])], [np.array([[1.0, 0.0]])])
    assert got["noise_sensitivity_relevant"].tolist() == [0.0]
    assert got["noise_sensitivity_irrelevant"].tolist() == [1.0]


_ONE = {"correct": [[0.0]], "recalled": [[1.0]], "answer": [np.ones((1, 1))], "reference": [np.ones((1, 1))]}
_CALLS = {
    "context_utilization": (d.context_utilization, ("reference", "recalled")),
    "noise_sensitivity": (d.noise_sensitivity, ("correct", "answer", "reference")),
    "hallucination": (d.hallucination, ("correct", "answer")),
    "self_knowledge": (d.self_knowledge, ("correct", "answer")),
}


@pytest.mark.parametrize(("name", "longer"), [(n, a) for n, (_, args) in _CALLS.items() for a in args])
def test_each_function_checks_its_input_lengths(name: str, longer: str) -> None:
    # one argument with a query more than the others: a MetricError naming the lengths, not a bare ValueError
    function, args = _CALLS[name]
    values = [_ONE[a] * (2 if a == longer else 1) for a in args]
    with pytest.raises(MetricError, match=r"one entry per query each; got lengths \[1, 2\]"):
        function(*values)


def test_every_support_error_names_reference_support() -> None:
    with pytest.raises(MetricError, match="reference_support must be"):
        d.retriever_claim_recall([np.zeros(3)])
    with pytest.raises(MetricError, match="reference_support must be"):
        d.context_utilization([np.zeros(3)], [[1.0, 0.0, 0.0]])
    with pytest.raises(MetricError, match="reference_support must be"):
        d.noise_sensitivity([[0.0]], [np.zeros((1, 3))], [np.zeros(3)])
