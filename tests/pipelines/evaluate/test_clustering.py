"""Clusters of questions (statistics/clustering.py): the labels by a field and their errors, and the summary on
hand-made rows: which design effect it reports, the method and the note by the number and sizes of clusters."""

from __future__ import annotations

from pathlib import Path

import pytest
from evaluate_fixture import make_golden

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.statistics.clustering import clustering_summary, question_clusters
from assay.results import Comparison, QueryResult


def _rows(run: str, values: list[float], labels: list[str | None]) -> dict[str, QueryResult]:
    return {
        f"q{i}": QueryResult(run=run, query_id=f"q{i}", metrics={"m": v}, cluster=label)
        for i, (v, label) in enumerate(zip(values, labels, strict=True))
    }


def _comparison(metric: str, deff: float, *, primary: bool) -> Comparison:
    return Comparison(a="a", b="b", metric=metric, n=4, delta=0.1, low=0.0, high=0.2, p_value=0.5, p_adjusted=0.5,
                      significant=False, verdict="tie", primary=primary, clusters=2, design_effect=deff)  # fmt: skip


def test_the_largest_design_effect_of_the_runs_scores_is_reported() -> None:
    # a: clusters {1, 3} and {5, 7}: deff 2.4 (tests/metrics/test_clusters.py works it out);
    # b: clusters {1, 5} and {3, 7}: mean 4, s^2 / n = 5/3, residual sums 6 - 8 and 10 - 8, clustered 2 * 8 / 16 = 1,
    #    deff 1 / (5/3) = 0.6. The summary reports the larger: the evidence lost in the worse-clustered run.
    labels: list[str | None] = ["x", "x", "y", "y"]
    per_run = {"a": _rows("a", [1.0, 3.0, 5.0, 7.0], labels), "b": _rows("b", [1.0, 5.0, 3.0, 7.0], labels)}
    for order in (per_run, dict(reversed(per_run.items()))):
        summary = clustering_summary("doc", order, [], "m")
        assert summary is not None
        assert summary.design_effect == pytest.approx(2.4)
        assert (summary.questions, summary.clusters, summary.max_size) == (4, 2, 2)


def test_the_largest_design_effect_of_the_primary_pairs_is_reported() -> None:
    per_run = {"a": _rows("a", [1.0, 3.0, 5.0, 7.0], ["x", "x", "y", "y"])}
    pairs = [_comparison("m", 1.5, primary=True), _comparison("m", 3.0, primary=True),
             _comparison("other", 9.0, primary=False)]  # fmt: skip
    for order in (pairs, pairs[::-1]):
        summary = clustering_summary("doc", per_run, order, "m")
        assert summary is not None and summary.design_effect == 3.0


def test_no_design_effect_when_every_question_is_its_own_cluster() -> None:
    """Nothing is lost to clusters there: no figure, rather than a 1.0 that reads as a measured one."""
    summary = clustering_summary("none", {"a": _rows("a", [1.0, 3.0, 5.0, 7.0], [None] * 4)}, [], "m")
    assert summary is not None
    assert summary.design_effect is None
    assert (summary.clusters, summary.questions) == (4, 4)
    assert summary.method == "questions resampled as independent (each its own cluster)" and summary.note is None


def _gold_with(field: str, values: list[object]) -> GoldenSet:
    gold = make_golden()
    for question, value in zip(gold.questions, values, strict=False):
        if value is not None:
            question.metadata[field] = value
    return gold


def test_a_field_holding_lists_or_objects_is_named_with_the_first_such_question() -> None:
    long = [f"product-{i}" for i in range(12)]  # its text is cut at 60 characters in the message
    gold = _gold_with("products", [None, long, ["b"], *["x"] * 9])
    with pytest.raises(ConfigError) as caught:
        question_clusters(gold, "products", Path("gold"))
    assert str(caught.value) == (
        "--cluster-by products: 2 of 12 questions hold a list in 'products', not one value (e.g. q01 in "
        f"{Path('gold') / 'questions.jsonl'}: {str(long)[:60]}); a cluster needs one value per question: store one "
        "products per question (e.g. the first of the list, or the list joined into one label) in its metadata, or "
        "use --cluster-by doc (questions sharing a source document together) or --cluster-by none"
    )
    with pytest.raises(ConfigError) as caught:
        question_clusters(_gold_with("shop", [{"a": 1}, *["x"] * 11]), "shop")  # no folder: no file named
    assert str(caught.value).startswith(
        "--cluster-by shop: 1 of 12 questions hold an object in 'shop', not one value (e.g. q00: {'a': 1}); "
    )


def test_a_field_some_questions_lack_or_leave_empty_is_named_with_the_first_of_them() -> None:
    gold = _gold_with("region", ["eu", "", "us", None, *["eu"] * 8])
    with pytest.raises(ConfigError) as caught:
        question_clusters(gold, "region", Path("gold"))
    assert str(caught.value) == (
        f"--cluster-by region: 2 of 12 questions have no field 'region' (e.g. q01 in {Path('gold') / 'questions.jsonl'}"
        "); add it to every question's metadata, or use --cluster-by doc (questions of one source document together) "
        "or --cluster-by none"
    )
    with pytest.raises(ConfigError) as caught:
        question_clusters(gold, "region")
    assert "(e.g. q01); add it" in str(caught.value)


def test_a_field_is_read_from_the_metadata_first_then_the_question_itself() -> None:
    gold = make_golden()
    gold.questions[0].type, gold.questions[2].type = "comparison", "factoid"
    gold.questions[1].metadata["type"] = "listed"  # the metadata wins over the question's own type
    found = question_clusters(gold, "type")
    assert found["q00"] == "type:comparison" and found["q01"] == "type:listed" and found["q02"] == "type:factoid"
    assert question_clusters(gold, "none") == dict.fromkeys((q.id for q in gold.questions), None)


def _clustered(sizes: list[int]) -> dict[str, dict[str, QueryResult]]:
    labels: list[str | None] = [f"c{c}" for c, size in enumerate(sizes) for _ in range(size)]
    return {"a": _rows("a", [float(i % 3) for i in range(len(labels))], labels)}


@pytest.mark.parametrize(
    ("by", "sizes", "method", "note"),
    [
        ("doc", [2] * 5, "every interval", "Only 5 documents hold the 10 questions: no test can reach 95% confidence, "
         "so no difference can be called significant; build questions from more documents."),
        ("product", [2] * 6, "every interval", "Only 6 values of product hold the 12 questions: intervals and tests "
         "rest on 6 independent units, so they are wide; build questions from more documents to narrow them."),
        ("none", [2] * 19, "every interval", "Only 19 questions hold the 38 questions: intervals and tests rest on 19 "
         "independent units, so they are wide; build questions from more documents to narrow them."),
        ("doc", [1] * 20, None, None),
        ("doc", [20] + [1] * 19, "every interval", "One cluster holds 20 of the 39 questions: it dominates every mean, "
         "and the intervals rest mostly on the other 19 clusters."),
        ("doc", [20] + [1] * 20, "every interval", None),  # 20 of 40: half, not most
        ("doc", [14] + [1] * 19, "every interval", None),  # 14 of 33: over a third, under half
        ("doc", [2] * 49, "every interval", None),
        ("doc", [2] * 50, "bootstrap", None),
    ],
)  # fmt: skip
def test_method_and_note_by_the_number_and_sizes_of_clusters(
    by: str, sizes: list[int], method: str | None, note: str | None
) -> None:
    summary = clustering_summary(by, _clustered(sizes), [], None)
    assert summary is not None
    assert (summary.questions, summary.clusters, summary.max_size) == (sum(sizes), len(sizes), max(sizes))
    expected = {
        None: "questions resampled as independent (each its own cluster)",
        "every interval": "cluster sign flips for tests and every interval (too few clusters for a cluster bootstrap)",
        "bootstrap": "cluster sign flips for tests and their intervals, cluster bootstrap for the means' intervals",
    }
    assert summary.method == expected[method]
    assert summary.note == note


def test_mean_cluster_size_is_kept_to_three_decimals() -> None:
    summary = clustering_summary("doc", _clustered([4, 3, 3]), [], None)
    assert summary is not None and summary.mean_size == 3.333
