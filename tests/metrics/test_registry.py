"""The measure-name mini-language."""

from __future__ import annotations

import pytest

from assay.metrics import MetricError, parse_measure


@pytest.mark.parametrize(
    ("name", "family", "k", "threshold"),
    [
        ("ndcg@10", "ndcg", 10, 1),
        ("ndcg_cut_10", "ndcg", 10, 1),
        ("ndcg", "ndcg", None, 1),
        ("ndcg_exp@10", "ndcg_exp", 10, 1),
        ("P@5", "P", 5, 1),
        ("P_5", "P", 5, 1),
        ("recall@100", "recall", 100, 1),
        ("recall_100", "recall", 100, 1),
        ("recall@5|g>=2", "recall", 5, 2),
        ("map", "ap", None, 1),
        ("map@10", "ap", 10, 1),
        ("map_cut_10", "ap", 10, 1),
        ("mrr", "rr", None, 1),
        ("rr@10", "rr", 10, 1),
        ("recip_rank", "rr", None, 1),
        ("hit@5", "hit", 5, 1),
        ("success_1", "hit", 1, 1),
        ("Rprec", "rprec", None, 1),
        ("bpref", "bpref", None, 1),
        ("auc_pr", "auc_pr", None, 1),
        ("err@20", "err", 20, 1),
    ],
)
def test_names(name: str, family: str, k: int | None, threshold: int) -> None:
    m = parse_measure(name)
    assert (m.name, m.family, m.k, m.threshold) == (name, family, k, threshold)


def test_options() -> None:
    assert parse_measure("err@20|gmax=4").gmax == 4
    assert parse_measure("f1@10").beta == 1.0
    assert parse_measure("f2@10").beta == 2.0
    assert parse_measure("fbeta@10|beta=0.5").beta == 0.5
    assert parse_measure("iprec@0.5").level == 0.5
    assert parse_measure("iprec_at_recall_0.50").level == 0.5


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("foo@3", "unknown measure 'foo@3'.*ndcg@10"),
        ("P", "needs a cutoff"),
        ("P@0", "whole number >= 1"),
        ("bpref@3", "takes no cutoff"),
        ("ndcg@10|g>=2", "raw grades"),
        ("map|g>=0", "threshold must be >= 1"),
        ("map|gmax=4", "unknown option"),
        ("iprec@1.5", "recall level in"),
    ],
)
def test_bad_names_say_what_works(name: str, message: str) -> None:
    with pytest.raises(MetricError, match=message):
        parse_measure(name)
