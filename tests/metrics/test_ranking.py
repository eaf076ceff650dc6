"""Hand-computed cases for trec_eval's conventions (each checked against pytrec_eval where it can run)."""

from __future__ import annotations

import math

import pytest
import pytrec_eval

from assay.metrics import MetricError, Qrels, Run, evaluate
from assay.metrics import ranking as rk
from assay.metrics.judged import join


def one(qrels: dict, run: dict, name: str, **kw: object) -> float:
    return float(evaluate(qrels, run, [name], **kw).per_query[name][0])  # type: ignore[arg-type]


def test_ties_break_by_docid_descending_in_string_order() -> None:
    # Equal scores: trec_eval orders d9 > d2 > d10 (strings, descending), so the relevant d10 is third: RR = 1/3.
    qrels = {"q": {"d10": 1}}
    run = {"q": {"d10": 1.0, "d9": 1.0, "d2": 1.0}}
    assert one(qrels, run, "mrr") == pytest.approx(1 / 3, abs=1e-15)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"]
    assert ref == pytest.approx(1 / 3, abs=1e-15)


def test_scores_compare_in_single_precision() -> None:
    # 1.00000001 and 1.0 are the same float32, so they tie and docid "b" > "a" goes first: RR of "a" is 1/2.
    assert one({"q": {"a": 1}}, {"q": {"a": 1.00000001, "b": 1.0}}, "mrr") == 0.5
    assert one({"q": {"a": 1}}, {"q": {"a": 1.0000002, "b": 1.0}}, "mrr") == 1.0


def test_precision_divides_by_k_when_the_run_is_shorter() -> None:
    assert one({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, "P@10") == 0.2


def test_recall_and_ap_divide_by_all_relevant_in_the_qrels() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}
    assert one(qrels, run, "recall@10") == 0.5
    assert one(qrels, run, "map") == pytest.approx((1 / 1 + 2 / 3) / 4, abs=1e-15)
    assert one(qrels, run, "map@2") == pytest.approx((1 / 1) / 4, abs=1e-15)  # map_cut still divides by R


def test_negative_grades_in_ndcg_gain_zero() -> None:
    # a:-2 ranked first gains 0 (not -2); DCG = 1/log2(3) + 2/log2(4); IDCG = 2 + 1/log2(3).
    qrels = {"q": {"a": -2, "b": 1, "c": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    expected = (1 / math.log2(3) + 2 / 2) / (2 + 1 / math.log2(3))
    assert one(qrels, run, "ndcg") == pytest.approx(expected, abs=1e-15)


def test_negative_grades_are_neither_relevant_nor_judged_nonrelevant_for_bpref() -> None:
    # R = 2 (b, z), N = 1 (c only; n:-2 is read as unjudged). b has no judged non-relevant above it: term 1.
    qrels = {"q": {"n": -2, "b": 1, "c": 0, "z": 1}}
    run = {"q": {"n": 3.0, "b": 2.0, "c": 1.0}}
    assert one(qrels, run, "bpref") == 0.5
    # With n:0 instead, N = 2 and b has one non-relevant above: (1 - 1/2) / 2.
    assert one({"q": {"n": 0, "b": 1, "c": 0, "z": 1}}, run, "bpref") == 0.25


def test_query_without_relevant_documents_scores_zero_and_counts() -> None:
    ev = evaluate({"q1": {"a": 0}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"b": 1.0}}, ["map", "ndcg@5", "bpref"])
    assert ev.query_ids == ["q1", "q2"]
    assert ev.means() == {"map": 0.5, "ndcg@5": 0.5, "bpref": 0.5}


def test_queries_only_in_the_run_are_ignored_and_missing_ones_need_complete() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q9": {"z": 1.0}}
    ev = evaluate(qrels, run, ["map"])
    assert (ev.query_ids, ev.mean("map"), ev.n_missing) == (["q1"], 1.0, 1)
    ev = evaluate(qrels, run, ["map"], complete=True)
    assert (ev.query_ids, ev.mean("map")) == (["q1", "q2"], 0.5)


def test_ranked_lists_keep_their_order() -> None:
    run = Run.from_ranked_lists({"q": ["z", "a", "m"]})
    assert one({"q": {"m": 1}}, run, "mrr") == pytest.approx(1 / 3, abs=1e-15)
    with pytest.raises(MetricError, match="twice"):
        Run.from_ranked_lists({"q": ["a", "a"]})


def test_duplicates_and_nan_are_errors() -> None:
    with pytest.raises(MetricError, match="twice for query 'q'"):
        Run.from_arrays(["q", "q"], ["a", "a"], [1.0, 2.0])
    with pytest.raises(MetricError, match="twice"):
        Qrels.from_arrays(["q", "q"], ["a", "a"], [1, 0])
    with pytest.raises(MetricError, match="NaN"):
        Run.from_dict({"q": {"a": float("nan")}})


def test_err_by_hand() -> None:
    # grades 3, 0, 1 with gmax 3: R = 7/8, 0, 1/8; ERR = 7/8 + (1/8)(1)(1/8)/3.
    qrels = {"q": {"a": 3, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert one(qrels, run, "err@10") == pytest.approx(7 / 8 + (1 / 8) * (1 / 8) / 3, abs=1e-15)
    assert one(qrels, run, "err@1") == 7 / 8


def test_mean_and_stderr() -> None:
    ev = evaluate({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {}})
    values = ev.per_query["hit@10"].tolist()
    assert values == [1.0, 0.0, 0.0]
    assert ev.stderr("hit@10") == pytest.approx(math.sqrt(1 / 3) / math.sqrt(3), abs=1e-15)
    empty = evaluate({"q1": {"a": 1}}, {"q2": {"a": 1.0}}, ["map"])
    assert math.isnan(empty.mean("map")) and math.isnan(empty.stderr("map"))


# One query for the functions called directly, with their defaults. The run ranks x, b, c, a, y (scores 5..1); the
# qrels grade a 2, b 1, c 0 and d 1 (d not retrieved); x and y are unjudged. At threshold 1 the relevant are b
# (rank 2), a (rank 4) and d, R = 3; at threshold 2 only a, R = 1.
DEFAULTS_QRELS = {"q": {"a": 2, "b": 1, "c": 0, "d": 1}}
DEFAULTS_RUN = {"q": {"x": 5.0, "b": 4.0, "c": 3.0, "a": 2.0, "y": 1.0}}
LOG3, LOG5 = math.log2(3), math.log2(5)
DEFAULT_VALUES = {
    # name: (call with the defaults, its value by hand, the pytrec_eval measure (asked, key) that agrees, or None)
    "num_rel": (rk.num_rel, 3.0, ("num_rel", "num_rel")),
    "P@5": (lambda j: rk.precision(j, 5), 2 / 5, ("P.5", "P_5")),
    "recall@5": (lambda j: rk.recall(j, 5), 2 / 3, ("recall.5", "recall_5")),
    "f1@5": (lambda j: rk.f_beta(j, 5), 2 * (2 / 5) * (2 / 3) / (2 / 5 + 2 / 3), None),  # = 1/2
    "hit@1": (lambda j: rk.hit(j, 1), 0.0, ("success.1,2", "success_1")),
    "hit@2": (lambda j: rk.hit(j, 2), 1.0, ("success.1,2", "success_2")),
    "mrr": (rk.reciprocal_rank, 1 / 2, ("recip_rank", "recip_rank")),
    "map": (rk.average_precision, (1 / 2 + 2 / 4) / 3, ("map", "map")),
    "Rprec": (rk.r_precision, 1 / 3, ("Rprec", "Rprec")),
    # b has no judged non-relevant above it (term 1), a has c above it (1 - 1/min(1, 3) = 0): (1 + 0) / 3
    "bpref": (rk.bpref, 1 / 3, ("bpref", "bpref")),
    # n(0.5) = floor(1.5 + 0.9) = 2: the second relevant, at rank 4, P@4 = 1/2
    "iprec@0.5": (lambda j: rk.interpolated_precision(j, 0.5), 1 / 2, ("iprec_at_recall", "iprec_at_recall_0.50")),
    # n(x) <= 2 for x <= 0.7 (8 levels, each 1/2), 3 from 0.8 on (3 levels, 0): 4/11
    "auc_pr": (rk.auc_pr, 4 / 11, ("11pt_avg", "11pt_avg")),
    "dcg": (lambda j: rk.dcg(j, None), 1 / LOG3 + 2 / LOG5, None),  # linear gain
    "idcg": (lambda j: rk.ideal_dcg(j, None), 2 + 1 / LOG3 + 1 / 2, None),  # grades 2, 1, 1 in order
    "ndcg": (lambda j: rk.ndcg(j, None), (1 / LOG3 + 2 / LOG5) / (2 + 1 / LOG3 + 1 / 2), ("ndcg", "ndcg")),
    # gmax 3: R_b = 1/8 at rank 2, R_a = 3/8 at rank 4: (1/2)(1/8) + (1/4)(3/8)(7/8) = 37/256
    "err": (lambda j: rk.err(j, None), 37 / 256, None),
}


@pytest.mark.parametrize("name", list(DEFAULT_VALUES))
def test_measures_called_with_their_defaults(name: str) -> None:
    # Defaults: threshold 1, beta 1, the whole run for RR and AP, linear gain, gmax 3.
    call, expected, reference = DEFAULT_VALUES[name]
    judged = join(Qrels.from_dict(DEFAULTS_QRELS), Run.from_dict(DEFAULTS_RUN))
    assert float(call(judged)[0]) == pytest.approx(expected, abs=1e-15)
    if reference is not None:
        asked, key = reference
        evaluator = pytrec_eval.RelevanceEvaluator(DEFAULTS_QRELS, {asked})
        assert evaluator.evaluate(DEFAULTS_RUN)["q"][key] == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ndcg_exp", (1 / LOG3 + 3 / LOG5) / (3 + 1 / LOG3 + 1 / 2)),  # gains 2^g - 1: a 3, b 1, d 1
        ("dcg_exp@10", 1 / LOG3 + 3 / LOG5),
        ("dcg_exp@3", 1 / LOG3),
        ("ndcg@3", (1 / LOG3) / (2 + 1 / LOG3 + 1 / 2)),
        ("rr@1", 0.0),  # the first relevant is at rank 2
        ("rr@2", 1 / 2),
        ("mrr|g>=2", 1 / 4),
        ("f1@5|g>=2", 2 * (1 / 5) * 1 / (1 / 5 + 1)),  # P@5 = 1/5, R@5 = 1: 1/3
        ("f2@5", 5 * (2 / 5) * (2 / 3) / (4 * (2 / 5) + 2 / 3)),
        ("auc_pr|g>=2", 1 / 4),  # R = 1: every level needs the one relevant, P@4 = 1/4
        ("bpref|g>=2", 0.0),  # a has b and c (judged non-relevant at 2) above it
        ("err@10|gmax=4", (1 / 2) * (1 / 16) + (1 / 4) * (3 / 16) * (15 / 16)),
    ],
)
def test_named_variants_by_hand(name: str, expected: float) -> None:
    assert one(DEFAULTS_QRELS, DEFAULTS_RUN, name) == pytest.approx(expected, abs=1e-15)


def test_threshold_two_agrees_with_pytrec_eval_on_the_hand_case() -> None:
    ref = pytrec_eval.RelevanceEvaluator(DEFAULTS_QRELS, {"11pt_avg", "recip_rank", "bpref"}, relevance_level=2)
    values = ref.evaluate(DEFAULTS_RUN)["q"]
    assert (values["11pt_avg"], values["recip_rank"], values["bpref"]) == (1 / 4, 1 / 4, 0.0)
