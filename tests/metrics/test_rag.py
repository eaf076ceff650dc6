"""RAG metrics: the seeds' worked examples (corrected), hand cases, and trec_eval AP as a reference."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import pytrec_eval

from assay.metrics import MetricError
from assay.metrics.rag import (
    attribution_from_support,
    attribution_rate,
    claim_support,
    context_recall,
    coverage_recall,
    faithfulness,
    nugget_recall,
    ragas_context_precision,
)

nan = np.nan
TEN = [f"c{i}" for i in range(1, 11)]


def test_context_precision_seed_004_bad_order() -> None:
    # Ranking [c2, c4, c1, c3, c5], relevant c1, c3, c5: precision at the relevant ranks 3, 4, 5 is 1/3, 2/4, 3/5;
    # RAGAS divides by the 3 relevant retrieved: (0.3333 + 0.5 + 0.6)/3 = 0.4778 (the seed's 0.533 is wrong).
    got = ragas_context_precision([[0, 0, 1, 1, 1]])
    assert got[0] == pytest.approx(0.4778, abs=1e-4)
    # trec_eval AP divides by all 4 relevant in the qrels (c8 too): 1.4333/4 = 0.3583.
    qrels = {"q": {"c1": 1, "c3": 1, "c5": 1, "c8": 1}}
    run = {"q": {doc: 5.0 - i for i, doc in enumerate(["c2", "c4", "c1", "c3", "c5"])}}
    ap = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)["q"]["map"]
    assert ap == pytest.approx(0.3583, abs=1e-4)


@pytest.mark.parametrize("seed", range(5))
def test_context_precision_relates_to_trec_eval_ap(seed: int) -> None:
    # CP * (relevant retrieved) / (relevant in qrels) = AP, since both share the numerator sum P@i * v_i.
    rng = np.random.default_rng(seed)
    labels = (rng.random(15) < 0.4).astype(int)
    extra_relevant = int(rng.integers(1, 4))  # relevant in the qrels but never retrieved
    qrels = {"q": {f"d{i}": int(v) for i, v in enumerate(labels)} | {f"x{i}": 1 for i in range(extra_relevant)}}
    run = {"q": {f"d{i}": 100.0 - i for i in range(15)}}
    ap = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)["q"]["map"]
    cp = ragas_context_precision([labels.tolist()])[0]
    total = labels.sum() + extra_relevant
    assert cp * labels.sum() / total == pytest.approx(ap, abs=1e-12)


def test_context_precision_edge_cases_and_cutoff() -> None:
    got = ragas_context_precision([[1, 1, 1], [0, 0], [], [1, nan, 0], [True, False, True]])
    # [1, 0, 1]: (1/1 + 2/3) / 2 = 0.8333.
    np.testing.assert_allclose(got, [1.0, 0.0, 0.0, nan, (1 + 2 / 3) / 2])
    # Cut-off: [0, 1 | 1] at k=2 is P@2 = 1/2 over one relevant; a NaN past the cut-off does not matter.
    np.testing.assert_allclose(ragas_context_precision([[0, 1, 1], [1, 0, nan]], k=2), [0.5, 1.0])
    # Graded labels with a threshold: grades [3, 1, 2] at >= 2 -> relevant at ranks 1 and 3: (1 + 2/3)/2.
    assert ragas_context_precision([[3, 1, 2]], threshold=2)[0] == pytest.approx((1 + 2 / 3) / 2)
    with pytest.raises(MetricError, match="positive cut-off"):
        ragas_context_precision([[1]], k=0)


def test_claim_support_from_matrix() -> None:
    matrix = [
        [0.0, 1.0, nan],  # supported by chunk 2: the unscored chunk 3 cannot change that -> 1
        [0.5, 0.0, 0.0],  # partial -> 0.5
        [0.0, 0.5, nan],  # best is partial, chunk 3 unscored might have supported it -> NaN
        [0.0, 0.0, 0.0],  # -> 0
    ]
    np.testing.assert_allclose(claim_support(matrix), [1.0, 0.5, nan, 0.0])
    # At k=2 the unscored third chunk is outside the cut-off.
    np.testing.assert_allclose(claim_support(matrix, k=2), [1.0, 0.5, 0.5, 0.0])
    np.testing.assert_allclose(claim_support(np.zeros((2, 0))), [0.0, 0.0])


def test_context_recall_and_faithfulness_strict_lenient() -> None:
    verdicts = [[1.0, 0.5, 0.0, 1.0], [], [1.0, nan], [0.5, 0.5]]
    # Strict: partial counts 0 -> 2/4; lenient: 2.5/4. No claims and an unscored claim give NaN, never 0.
    np.testing.assert_allclose(context_recall(verdicts), [0.5, nan, nan, 0.0])
    np.testing.assert_allclose(context_recall(verdicts, "lenient"), [0.625, nan, nan, 0.5])
    np.testing.assert_allclose(faithfulness(verdicts, "lenient"), [0.625, nan, nan, 0.5])
    with pytest.raises(MetricError, match=r"1\.0, 0\.5, 0\.0 or NaN"):
        faithfulness([[0.7]])
    with pytest.raises(MetricError, match="mode"):
        context_recall([[1.0]], "loose")  # type: ignore[arg-type]


def test_nugget_recall_trec_rag_2024_variants() -> None:
    importance = [["vital", "vital", "okay", "okay"]]
    assignment = [["support", "partial_support", "support", "not_support"]]
    # Scores s = (1, 0.5, 1, 0) lenient, (1, 0, 1, 0) strict.
    # A strict = 2/4; A lenient = 2.5/4; V strict = 1/2; V lenient = 1.5/2;
    # W lenient = (1*1 + 1*0.5 + 0.5*1 + 0.5*0) / (1 + 1 + 0.5 + 0.5) = 2/3; W strict = 1.5/3.
    expected = {
        ("all", "strict"): 0.5,
        ("all", "lenient"): 0.625,
        ("vital", "strict"): 0.5,
        ("vital", "lenient"): 0.75,
        ("weighted", "strict"): 0.5,
        ("weighted", "lenient"): 2 / 3,
    }
    for (subset, mode), value in expected.items():
        got = nugget_recall(importance, assignment, subset=subset, mode=mode)  # type: ignore[arg-type]
        assert got[0] == pytest.approx(value), (subset, mode)


def test_nugget_recall_unscorable_and_bad_labels() -> None:
    importance = [["okay", "okay"], ["vital", "okay"], []]
    assignment = [["support", "support"], ["support", None], []]
    # No vital nugget -> V is NaN; an unscored okay nugget only spoils the subsets that contain it; no nuggets -> NaN.
    np.testing.assert_allclose(nugget_recall(importance, assignment, subset="vital"), [nan, 1.0, nan])
    np.testing.assert_allclose(nugget_recall(importance, assignment, subset="all"), [1.0, nan, nan])
    with pytest.raises(MetricError, match="partial_support"):
        nugget_recall([["vital"]], [["supported"]])
    with pytest.raises(MetricError, match="one assignment"):
        nugget_recall([["vital", "okay"]], [["support"]])


def test_coverage_recall_seed_004_corrected() -> None:
    facets = [[{"c1", "c2"}, {"c3", "c5"}, {"c8", "c9"}, {"c6", "c7"}]]
    # Top 5 = c1..c5 covers construction and design only: 2/4 (the seed's 3/4 counts c8, which is rank 8).
    assert coverage_recall(facets, [TEN], k=5)[0] == pytest.approx(0.5)
    assert coverage_recall(facets, [TEN], k=8)[0] == pytest.approx(1.0)
    # The seed's nugget example: {c1,c2}, {c3}, {c8} retrieved in c1..c10, {c11} not: 3/4.
    nuggets = [[{"c1", "c2"}, {"c3"}, {"c8"}, {"c11"}]]
    assert coverage_recall(nuggets, [TEN])[0] == pytest.approx(0.75)


def test_coverage_recall_partial_and_edge_cases() -> None:
    required = [[{"a"}, {"b"}, set()], [], [{"a"}]]
    partial = [[set(), {"x"}, {"y"}], [], [set()]]
    retrieved = [["x", "a", "y"], ["a"], []]
    # Query 0: facet 1 fully by a; facet 2 only partially by x; facet 3 has no full chunk, partial y.
    # strict: 1/3; lenient: (1 + 0.5 + 0.5)/3. Query 1: no facets -> NaN. Query 2: nothing retrieved -> 0.
    np.testing.assert_allclose(coverage_recall(required, retrieved), [1 / 3, nan, 0.0])
    np.testing.assert_allclose(coverage_recall(required, retrieved, partial=partial, mode="lenient"), [2 / 3, nan, 0.0])
    with pytest.raises(MetricError, match="same queries"):
        coverage_recall(required, retrieved[:2])


def test_attribution_rate_seed_and_edges() -> None:
    # Seed 004: retrieved c1..c10, cited {c1, c3, c5}: 3/10.
    assert attribution_rate([TEN], [{"c1", "c3", "c5"}])[0] == pytest.approx(0.3)
    # At k = 5: 3/5. Duplicates count once: [a, a, b] with a cited -> 1/2. Empty retrieved -> NaN.
    assert attribution_rate([TEN], [{"c1", "c3", "c5"}], k=5)[0] == pytest.approx(0.6)
    np.testing.assert_allclose(attribution_rate([["a", "a", "b"], []], [{"a", "zzz"}, {"a"}]), [0.5, nan])


def test_attribution_from_support_matrix() -> None:
    support = np.array(
        [
            [1.0, 0.0, 0.5, 0.0],
            [0.0, 0.0, 0.0, nan],
        ]
    )
    # Strict: chunk 1 used; chunk 4 unused by scored cells but has an unscored cell -> NaN for the answer.
    assert math.isnan(attribution_from_support([support])[0])
    # At k = 3: strict uses chunk 1 only (1/3); lenient also chunk 3 (2/3).
    assert attribution_from_support([support], k=3)[0] == pytest.approx(1 / 3)
    assert attribution_from_support([support], k=3, mode="lenient")[0] == pytest.approx(2 / 3)
    # An answer without claims uses nothing: 0.0; no retrieved chunk: NaN.
    np.testing.assert_allclose(attribution_from_support([np.zeros((0, 3)), np.zeros((2, 0))]), [0.0, nan])


def test_a_cutoff_of_one_is_allowed_and_zero_refused_everywhere() -> None:
    assert ragas_context_precision([[0, 1]], k=1)[0] == 0.0
    np.testing.assert_allclose(claim_support([[0.0, 1.0]], k=1), [0.0])
    assert attribution_rate([["a", "b"]], [{"b"}], k=1)[0] == 0.0
    assert attribution_from_support([[[0.0, 1.0]]], k=1)[0] == 0.0
    assert coverage_recall([[{"b"}]], [["a", "b"]], k=1)[0] == 0.0
    calls = [
        lambda: ragas_context_precision([[1]], k=0),
        lambda: claim_support([[1.0]], k=0),
        lambda: attribution_rate([["a"]], [{"a"}], k=0),
        lambda: attribution_from_support([[[1.0]]], k=0),
        lambda: coverage_recall([[{"a"}]], [["a"]], k=0),
    ]
    for call in calls:
        with pytest.raises(MetricError, match="positive cut-off"):
            call()


def test_none_reads_as_unscored_like_nan() -> None:
    # Verdicts and labels read from JSON carry null for "not scored": the same as NaN.
    assert math.isnan(ragas_context_precision([[1, None]])[0])
    np.testing.assert_allclose(claim_support([[0.5, None], [1.0, None]]), [nan, 1.0])
    assert math.isnan(context_recall([[1.0, None]])[0])
    assert math.isnan(attribution_from_support([[[0.0, None]]])[0])


def test_one_claim_and_empty_questions_give_values_without_numpy_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN for "nothing to score" is decided, not a mean of nothing
        np.testing.assert_allclose(context_recall([[1.0], [0.5], []]), [1.0, 0.0, nan])
        np.testing.assert_allclose(faithfulness([[0.5], [nan]], "lenient"), [0.5, nan])
        np.testing.assert_allclose(coverage_recall([[], [{"a"}]], [["a"], ["a"]]), [nan, 1.0])


def test_attribution_reads_unscored_cells_per_chunk() -> None:
    # Chunk 1 is used (a 1.0) though another claim left it unscored; chunk 2 is unused and fully scored: 1/2.
    assert attribution_from_support([[[1.0, 0.0], [nan, 0.0]]])[0] == 0.5
    assert attribution_from_support([[[1.0]], [[0.0], [0.5]]])[0] == 1.0  # one chunk is enough to score
    assert attribution_from_support([[[0.0], [0.5]]], mode="lenient")[0] == 1.0


def test_strict_coverage_ignores_partial_chunks_and_lenient_needs_none() -> None:
    required, partial, retrieved = [[{"a"}, {"b"}]], [[set(), {"x"}]], [["a", "x"]]
    assert coverage_recall(required, retrieved, partial=partial)[0] == 0.5
    assert coverage_recall(required, retrieved, partial=partial, mode="lenient")[0] == 0.75
    assert coverage_recall(required, retrieved, mode="lenient")[0] == 0.5  # lenient without partial chunks


def test_errors_say_what_is_wrong() -> None:
    cases = [
        (lambda: claim_support([1.0, 0.0]), r"support matrix must be claims x chunks \(2-d\)"),
        (lambda: attribution_from_support([[1.0]]), r"query 0: a support matrix must be claims x chunks"),
        (lambda: attribution_rate([["a"]], []), r"retrieved and used must list the same queries: 1 vs 0"),
        (lambda: coverage_recall([[{"a"}]], []), r"^required, retrieved \(and partial\) must list the same queries"),
        (
            lambda: coverage_recall([[{"a"}, {"b"}]], [["a"]], partial=[[set()]], mode="lenient"),
            r"query 0: 2 required sets but 1 partial sets",
        ),
        (lambda: nugget_recall([["vital"]], [["support"]], subset="most"), r"unknown nugget subset 'most'"),  # type: ignore[arg-type]
        (lambda: nugget_recall([["vital"]], []), r"importance and assignment must list the same queries: 1 vs 0"),
    ]
    for call, message in cases:
        with pytest.raises(MetricError, match=message):
            call()
