"""Pins of metric@k curves found by the mutation habit, each on a hand-made case."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from assay.metrics import MetricError
from assay.metrics.curves import curves


def test_cutoffs_run_from_one_to_max_k_and_one_is_allowed() -> None:
    result = curves({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P"], 3)
    assert result.ks.tolist() == [1, 2, 3] and result.ks.dtype == np.int64
    single = curves({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P"], 1)
    assert single.ks.tolist() == [1] and single.values["P"].tolist() == [[1.0]]
    with pytest.raises(MetricError, match=r"^max_k must be >= 1, got 0$"):
        curves({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P"], 0)


def test_complete_evaluates_a_query_missing_from_the_run_as_empty() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    assert curves(qrels, run, ["recall"], 2).query_ids == ["q1"]
    complete = curves(qrels, run, ["recall"], 2, complete=True)
    assert complete.query_ids == ["q1", "q2"] and complete.values["recall"].tolist() == [[1.0, 1.0], [0.0, 0.0]]


def test_mean_of_no_query_is_nan_at_every_k_and_unknown_curves_are_named() -> None:
    empty = curves({"q": {"a": 1}}, {"other": {"a": 1.0}}, ["P"], 2)
    mean = empty.mean("P")
    assert mean.shape == (2,) and all(math.isnan(v) for v in mean)
    with pytest.raises(MetricError, match=re.escape("no curve 'ndcg'; computed: P, hit") + "$"):
        curves({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P", "hit"], 2).mean("ndcg")


def test_err_caps_grades_at_gmax_and_reads_negative_grades_as_zero() -> None:
    # gmax 2: satisfaction (2^min(g, 2) - 1) / 4 is 3/4 for a (grade 3) and 1/4 for b (grade 1).
    result = curves({"q": {"a": 3, "b": 1, "c": -2}}, {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}, ["err|gmax=2"], 3)
    # c (grade -2) first: no satisfaction; then a and b as above, one rank later.
    assert result.values["err|gmax=2"][0].tolist() == pytest.approx([0.0, 3 / 8, 3 / 8 + (1 / 4) * (1 / 4) / 3])
