"""The measure registry pinned further (found by the mutation habit): the catalogue of names a misspelt one is
compared with, each refusal's words, the close-name hint, and the bounds of the recall level and of the options."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from assay.metrics import MetricError, parse_measure
from assay.metrics.registry import Measure, evaluate, known_measures, measure_catalogue, measure_names


def _refusal(name: str) -> str:
    with pytest.raises(MetricError) as caught:
        parse_measure(name)
    return str(caught.value)


def test_the_catalogue_names_one_word_per_family_bare_and_at_each_cut() -> None:
    # bare where the cut-off is optional or none (not rr, f1, f2); at each cut (sorted, once) where one is taken
    # (not mrr)
    assert measure_catalogue((10, 5, 10)) == [
        "P@5", "P@10", "recall", "recall@5", "recall@10", "f1@5", "f1@10", "f2@5", "f2@10", "hit", "hit@5", "hit@10",
        "mrr", "rr@5", "rr@10", "map", "map@5", "map@10", "rprec", "bpref", "auc_pr", "ndcg", "ndcg@5", "ndcg@10",
        "ndcg_exp", "ndcg_exp@5", "ndcg_exp@10", "dcg", "dcg@5", "dcg@10", "dcg_exp", "dcg_exp@5", "dcg_exp@10",
        "err", "err@5", "err@10", "num_rel", "num_ret",
    ]  # fmt: skip


def test_a_measure_built_without_its_cutoff_or_level_is_refused_when_computed() -> None:
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(MetricError) as caught:
        evaluate(qrels, run, [Measure("P", "P")])
    assert str(caught.value) == "measure 'P' needs a cutoff, e.g. P@10"
    with pytest.raises(MetricError) as caught:
        evaluate(qrels, run, [Measure("iprec", "iprec")])
    assert str(caught.value) == "measure 'iprec' needs a recall level in [0, 1], e.g. iprec@0.5"


def test_an_unknown_name_lists_the_families_and_the_close_names_when_there_are_any() -> None:
    assert known_measures().startswith("P@5; recall@100; f1@10, f2@10, fbeta@10|beta=0.5; hit@5")
    far = _refusal("zzzzzzzz")
    assert far == (
        f"unknown measure 'zzzzzzzz' (no family 'zzzzzzzz'); known: {known_measures()}; option: |g>=2 threshold"
    )
    near = _refusal("ncg@10")
    assert near == (
        "unknown measure 'ncg@10' (no family 'ncg'); close names: dcg@10, ndcg@10; "
        f"known: {known_measures()}; option: |g>=2 threshold"
    )


def test_a_recall_level_is_needed_and_may_be_zero() -> None:
    assert _refusal("iprec") == "measure 'iprec' needs a recall level in [0, 1], e.g. iprec@0.5"
    assert parse_measure("iprec@0").level == 0.0
    assert _refusal("f1") == "measure 'f1' needs a cutoff, e.g. f1@10"


def test_the_options_at_their_bounds() -> None:
    assert parse_measure("P@5|g>=1").threshold == 1
    assert parse_measure("err@10|gmax=1").gmax == 1
    assert parse_measure("err@10|gmax=0").gmax == 1
    assert "unknown option 'gmax=3'" in _refusal("f1@10|gmax=3")
    assert "unknown option 'beta=0'" in _refusal("fbeta@10|beta=0")


def test_an_evaluation_keeps_its_options_and_float_values() -> None:
    with pytest.raises(MetricError) as caught:
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [])
    assert str(caught.value) == "no measure given; for example map, mrr, ndcg@10"
    ev = evaluate(
        {"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, ["P@1", "num_ret"], complete=True
    )
    assert ev.complete is True and ev.measures == {"P@1": parse_measure("P@1"), "num_ret": parse_measure("num_ret")}
    assert ev.per_query["num_ret"].dtype == np.float64 and ev.per_query["num_ret"].tolist() == [1.0, 1.0]
    # P@1 is 1 then 0: mean 0.5, sample standard deviation sqrt(0.5), standard error sqrt(0.5) / sqrt(2) = 0.5
    assert (ev.mean("P@1"), ev.stderr("P@1")) == (0.5, pytest.approx(0.5))
    with pytest.raises(MetricError) as caught:
        ev.mean("map")
    assert str(caught.value) == "measure 'map' was not evaluated; evaluated: P@1, num_ret"


def test_means_and_standard_errors_without_enough_queries_are_nan_without_a_warning() -> None:
    one = evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1"])
    none = evaluate({"q": {"a": 1}}, {"other": {"a": 1.0}}, ["P@1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(one.stderr("P@1")) and one.mean("P@1") == 1.0
        assert math.isnan(none.mean("P@1")) and math.isnan(none.stderr("P@1"))


def test_measure_names_checks_every_name_and_gives_them_back_unchanged() -> None:
    given = ("P@5", "ndcg", "map")
    assert measure_names(given) == ["P@5", "ndcg", "map"]
    assert measure_names([]) == []
    with pytest.raises(MetricError, match="ndgc"):
        measure_names(["P@5", "ndgc"])
