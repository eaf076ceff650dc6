"""The grammar of a metric name (``assay.metric_names``) and how each layer reads a name through it.

One table of names, written by hand: every family of the ranking registry (and a trec_eval alias), budget
measures, span metrics and the judged (LLM) metrics, each with its parts, the evaluator's kind and family, the
report's group and the ranking registry's family and cut-off; then names that are not metrics, each with the error
it gets.
"""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.metric_names import MetricName
from assay.metrics import MetricError, parse_measure
from assay.pipelines.evaluate.scoring import names
from assay.results import headline_metrics, metric_group

# name: (word, cut, options, family, k, budget)
PARTS = {
    "ndcg@10": ("ndcg", "10", (), "ndcg", 10, None),
    "ndcg": ("ndcg", None, (), "ndcg", None, None),
    "P@5": ("P", "5", (), "P", 5, None),
    "recall@5|g>=2": ("recall", "5", ("g>=2",), "recall", 5, None),
    "err@20|gmax=4": ("err", "20", ("gmax=4",), "err", 20, None),
    "fbeta@10|beta=0.5": ("fbeta", "10", ("beta=0.5",), "fbeta", 10, None),
    "iprec@0.5": ("iprec", "0.5", (), "iprec", None, None),
    "map|g>=2|x": ("map", None, ("g>=2", "x"), "map", None, None),
    "ndcg@1000t": ("ndcg", "1000t", (), "ndcg", None, "1000t"),
    "P@4000c|g>=2": ("P", "4000c", ("g>=2",), "P", None, "4000c"),
    "span_iou@10|g>=2": ("span_iou", "10", ("g>=2",), "span_iou", 10, None),
    "nugget_recall_vital_strict": ("nugget_recall_vital_strict", None, (), "nugget_recall", None, None),
    "ragas_context_precision@5": ("ragas_context_precision", "5", (), "ragas_context_precision", 5, None),
    "ndcg@": ("ndcg", "", (), "ndcg", None, None),
    "ndcg@1O": ("ndcg", "1O", (), "ndcg", None, None),
    "ndcg@t": ("ndcg", "t", (), "ndcg", None, None),
    "a|b@5": ("a", None, ("b@5",), "a", None, None),
    "": ("", None, (), "", None, None),
}


@pytest.mark.parametrize("text", list(PARTS))
def test_a_name_splits_into_its_parts_and_back(text: str) -> None:
    name = MetricName.parse(text)
    word, cut, options = PARTS[text][:3]
    assert (name.word, name.cut, name.options, name.family, name.k, name.budget) == PARTS[text]
    assert str(name) == text
    assert MetricName(word, cut, options) == name


def test_head_and_suffix_are_the_name_without_and_with_only_its_options() -> None:
    name = MetricName.parse("recall@5|g>=2|x")
    assert (name.head, name.suffix) == ("recall@5", "|g>=2|x")
    assert (MetricName.parse("map").head, MetricName.parse("map").suffix) == ("map", "")


@pytest.mark.parametrize(("cut", "mistyped"), [("1O", True), ("10", False), ("x", False), ("", False), ("1000t", True)])
def test_a_mistyped_cut_mixes_digits_with_other_characters(cut: str, mistyped: bool) -> None:
    assert MetricName("span_recall", cut).mistyped_cut is mistyped


# name: (kind in assay eval, family in assay eval, report group, cut-off it adds to the k values)
READINGS = {
    # the ranking registry: one name per family (and trec_eval's P_5)
    "P@5": ("ranking", "P", "ranking", 5),
    "P_5": ("ranking", "P_5", "ranking", 5),
    "recall@100": ("ranking", "recall", "ranking", 100),
    "f1@10": ("ranking", "f1", "ranking", 10),
    "hit@5": ("ranking", "hit", "ranking", 5),
    "mrr": ("ranking", "mrr", "ranking", None),
    "map@10|g>=2": ("ranking", "map", "ranking", 10),
    "rprec": ("ranking", "rprec", "ranking", None),
    "bpref": ("ranking", "bpref", "ranking", None),
    "iprec@0.5": ("ranking", "iprec", "ranking", None),
    "auc_pr": ("ranking", "auc_pr", "ranking", None),
    "ndcg@10": ("ranking", "ndcg", "ranking", 10),
    "ndcg_exp@10": ("ranking", "ndcg_exp", "ranking", 10),
    "dcg@10": ("ranking", "dcg", "ranking", 10),
    "dcg_exp@10": ("ranking", "dcg_exp", "ranking", 10),
    "err@20|gmax=4": ("ranking", "err", "ranking", 20),
    "num_rel": ("ranking", "num_rel", "ranking", None),
    "num_ret": ("ranking", "num_ret", "ranking", None),
    # budgets of text
    "ndcg@1000t": ("budget", "ndcg", "budget", None),
    "recall@4000c|g>=2": ("budget", "recall", "budget", None),
    "span_recall@1000t": ("budget", "span_recall", "budget", None),
    # spans
    "span_recall@5": ("span", "span_recall", "span", 5),
    "span_iou@10|g>=2": ("span", "span_iou", "span", 10),
    # judged
    "ragas_context_precision@5": ("llm", "ragas_context_precision", "context", 5),
    "coverage_recall@3": ("llm", "coverage_recall", "context", 3),
    "context_recall": ("llm", "context_recall", "context", None),
    "faithfulness": ("llm", "faithfulness", "answer", None),
    "nugget_recall_all_lenient": ("llm", "nugget_recall", "nuggets", None),
    "nugget_recall": ("llm", "nugget_recall", "nuggets", None),
    "claim_recall": ("llm", "claim_recall", "diagnosis", None),
    "contradiction": ("llm", "contradiction", "ranking", None),
}


@pytest.mark.parametrize("text", list(READINGS))
def test_each_layer_reads_a_name_the_same_way(text: str) -> None:
    kind, family, group, cut = READINGS[text]
    assert (names.kind_of(text), names.family(text), metric_group(text)) == (kind, family, group)
    assert names.check_names([text]) == ({cut} if cut is not None else set())


@pytest.mark.parametrize(
    ("text", "family", "k"),
    [("ndcg@10", "ndcg", 10), ("P_5", "P", 5), ("map@10|g>=2", "ap", 10), ("mrr", "rr", None), ("f2@5", "f", 5)],
)
def test_the_registry_reads_the_same_grammar(text: str, family: str, k: int | None) -> None:
    assert (parse_measure(text).family, parse_measure(text).k) == (family, k)


def test_the_headline_keeps_the_uncut_the_headline_cut_off_and_the_budgets() -> None:
    given = ["ndcg@5", "ndcg@10", "ndcg@010", "map", "ndcg@1000t", "recall@10|g>=2", "P@5"]
    assert headline_metrics(given, [5, 10]) == ["ndcg@10", "map", "ndcg@1000t", "recall@10|g>=2"]
    assert headline_metrics(given, [5, 10], named=["P@5"]) == ["ndcg@10", "map", "ndcg@1000t", "recall@10|g>=2", "P@5"]


# names that are no metric, and the start of the error each gets (the close names come from the catalogue)
REFUSED = {
    "ndgc@10": "unknown metric 'ndgc@10'; close names: ndcg@10",
    "span_recall@1O": "unknown metric 'span_recall@1O'; close names: span_recall@10",
    "span_recall@x": "metric 'span_recall@x': write span_recall@K with K a whole number >= 1",
    "span_recall@5|g>=9": "metric 'span_recall@5|g>=9': the variant is |g>=G with G in 0..3",
    "coverage_recall@0": "metric 'coverage_recall@0': write coverage_recall@K with K a whole number >= 1",
    "coverage_recall@1O": "unknown metric 'coverage_recall@1O'; close names: coverage_recall@10",
    "faithfulness@5": "unknown metric 'faithfulness@5'",
    "ndcg@0t": "budget '0t': a budget is at least 1 character",
    "ndcg@1000t|g>=2": "metric 'ndcg@1000t|g>=2': |g>=G (G in 0..3) goes with recall, P and map at a budget",
    "mrr@1000t": "metric 'mrr@1000t': a budget measure is one of ndcg@1000t, recall@1000t",
    "P": "metric 'P': measure 'P' needs a cutoff, e.g. P@5",
    "bpref@5": "metric 'bpref@5': measure 'bpref@5' takes no cutoff; write it without @5",
    "iprec@1.5": "metric 'iprec@1.5': measure 'iprec@1.5' needs a recall level in [0, 1]",
    "ndcg|g>=2": "metric 'ndcg|g>=2': measure 'ndcg|g>=2': ndcg uses the raw grades; drop |g>=2",
    "map|gmax=4": "metric 'map|gmax=4': measure 'map|gmax=4': unknown option 'gmax=4'",
    "ndcg@10@5": "unknown metric 'ndcg@10@5'",
    # a cut of digits that are not decimal (a ValueError traceback before the grammar)
    "span_iou@\u00b2": "metric 'span_iou@\u00b2': write span_iou@K with K a whole number >= 1",
    "coverage_recall@\u00b2": "metric 'coverage_recall@\u00b2': write coverage_recall@K with K a whole number >= 1",
    "": "unknown metric ''",
}


@pytest.mark.parametrize("text", list(REFUSED))
def test_a_name_that_is_no_metric_is_refused_with_its_fix(text: str) -> None:
    with pytest.raises(ConfigError) as refused:
        names.check_names([text], [5, 10])
    assert str(refused.value).startswith(REFUSED[text])


def test_the_registry_refuses_a_word_outside_its_grammar() -> None:
    with pytest.raises(MetricError, match=r"unknown measure 'nd cg@10' \(not of the form family@k\)"):
        parse_measure("nd cg@10")
