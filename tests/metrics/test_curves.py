"""metric@k curves: every point equals the @k measure (itself checked against pytrec_eval), and spot checks."""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval
from test_ranking_diff import make_case

from assay.metrics import MetricError, evaluate
from assay.metrics.curves import curves

NAMES = ["P", "recall|g>=2", "f1", "fbeta|beta=0.5", "hit", "mrr", "map", "ndcg", "ndcg_exp", "dcg", "err|gmax=4"]


def test_every_point_equals_the_cutoff_measure() -> None:
    qrels, run = make_case(21)
    result = curves(qrels, run, NAMES, 25)
    for k in (1, 2, 5, 13, 25):
        at_k = [n.replace("|", f"@{k}|", 1) if "|" in n else f"{n}@{k}" for n in NAMES]
        ev = evaluate(qrels, run, at_k)
        assert ev.query_ids == result.query_ids
        for name, named_at_k in zip(NAMES, at_k, strict=True):
            np.testing.assert_allclose(result.values[name][:, k - 1], ev.per_query[named_at_k], atol=1e-12)


def test_against_pytrec_eval_directly() -> None:
    qrels, run = make_case(22)
    result = curves(qrels, run, ["P", "ndcg"], 10)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"P.3", "ndcg_cut.10"}).evaluate(run)
    np.testing.assert_allclose(result.values["P"][:, 2], [ref[q]["P_3"] for q in result.query_ids], atol=1e-12)
    expected = [ref[q]["ndcg_cut_10"] for q in result.query_ids]
    np.testing.assert_allclose(result.values["ndcg"][:, 9], expected, atol=1e-12)


def test_hand_curve_and_mean() -> None:
    result = curves({"q": {"b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["P", "hit"], 3)
    assert result.values["P"].tolist() == [[0.0, 0.5, 1 / 3]]
    assert result.mean("hit").tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize(("name", "message"), [("ndcg@10", "without @k"), ("bpref", "no cutoff")])
def test_bad_curve_names(name: str, message: str) -> None:
    with pytest.raises(MetricError, match=message):
        curves({"q": {"a": 1}}, {"q": {"a": 1.0}}, [name], 5)
