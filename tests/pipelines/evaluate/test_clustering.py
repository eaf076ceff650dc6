"""The clustering summary (statistics/clustering.py) on hand-made rows: which design effect it reports."""

from __future__ import annotations

import pytest

from assay.pipelines.evaluate.statistics.clustering import clustering_summary
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
