"""The headline-k rule, held once in ``results``: what summaries show and what strata and comparisons use."""

from __future__ import annotations

from assay.pipelines.evaluate import EvalSettings
from assay.results import headline_k, headline_metrics


def test_headline_k_is_10_when_evaluated_else_the_largest() -> None:
    assert headline_k([1, 3, 5, 10, 20]) == 10
    assert headline_k([3, 20, 5]) == 20
    assert headline_k([]) is None
    assert EvalSettings(k_values=(5, 100)).k_head == 100


def test_headline_metrics_keep_order_suffixes_and_fall_back_to_all() -> None:
    names = ["ndcg@5", "ndcg@10", "recall@10|g>=2", "map|g>=2", "P@100", "faithfulness", "nugget_recall_vital_strict"]
    assert headline_metrics(names, [5, 10]) == [
        "ndcg@10", "recall@10|g>=2", "map|g>=2", "faithfulness", "nugget_recall_vital_strict"
    ]  # fmt: skip
    assert headline_metrics(["ndcg@5", "P@100"], [5, 100]) == ["P@100"]
    assert headline_metrics(["ndcg@5"], [5, 10]) == ["ndcg@5"]  # nothing at 10: everything, not nothing
