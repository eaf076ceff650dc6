"""Shared wording: headline choice, unscored notes, verdict sentences, run-count notes."""

from __future__ import annotations

from assay.report import _format as fmt
from assay.results import Comparison, EvalResult, MetricSummary, RunCounts, RunResult


def _result(names: list[str], ks: list[int]) -> EvalResult:
    run = RunResult(name="a", path="a.jsonl", metrics={n: MetricSummary(mean=0.5, n_scored=1) for n in names})
    return EvalResult(assay_version="0", golden="g", judge=None, k_values=ks, runs=[run])


def test_headline_takes_k10_and_metrics_without_cutoff() -> None:
    result = _result(["ndcg@5", "ndcg@10", "map", "P@10", "faithfulness"], [5, 10])
    assert fmt.headline_metrics(result) == ["ndcg@10", "map", "P@10", "faithfulness"]


def test_headline_falls_back_to_largest_k_then_to_everything() -> None:
    assert fmt.headline_metrics(_result(["ndcg@3", "ndcg@20"], [3, 20])) == ["ndcg@20"]
    assert fmt.headline_metrics(_result(["ndcg@3"], [])) == ["ndcg@3"]


def test_unscored_note_lists_reasons_by_frequency_and_counts_the_unexplained() -> None:
    summary = MetricSummary(mean=0.4, n_scored=5, n_unscored=4, unscored_reasons={"timeout": 1, "invalid_output": 2})
    assert fmt.fmt_unscored(summary) == "4 unscored (invalid_output 2, timeout 1, unknown 1)"
    assert fmt.fmt_unscored(MetricSummary(mean=0.4, n_scored=5)) == "0 unscored"


def test_values_and_intervals() -> None:
    assert fmt.fmt_mean(MetricSummary(mean=None, n_unscored=3)) == "unscored"
    assert fmt.fmt_interval(0.1, None) == ""
    assert fmt.fmt_interval(0.12345, 0.5) == "[0.123, 0.500]"
    assert fmt.fmt_p(0.0004) == "<0.001"
    assert fmt.fmt_p(0.0456) == "0.046"


def _comparison(delta: float, significant: bool, verdict: str = "") -> Comparison:
    return Comparison(
        a="base", b="new", metric="ndcg@10", n=30, delta=delta, low=delta - 0.05, high=delta + 0.05,
        p_value=0.01, p_adjusted=0.02, significant=significant, verdict=verdict,
    )  # fmt: skip


def test_verdict_uses_the_evaluators_sentence_when_given() -> None:
    assert fmt.verdict_text(_comparison(0.1, True, "new wins.")) == "new wins."


def test_verdict_written_from_numbers_when_empty() -> None:
    assert fmt.verdict_text(_comparison(0.1, True)).startswith("new is better than base on ndcg@10 by 0.100")
    assert fmt.verdict_text(_comparison(-0.1, True)).startswith("base is better than new on ndcg@10 by 0.100")
    assert fmt.verdict_text(_comparison(0.01, False)).startswith("No reliable difference between new and base")


def test_count_notes_warn_on_problems_and_inform_on_new_labels() -> None:
    notes = fmt.count_notes(RunCounts(unknown_chunk_ids=2, empty_retrieved=1, labels_judged_now=7))
    assert [(n.label, n.value, n.warning) for n in notes] == [
        ("unknown chunk ids", 2, True),
        ("empty retrieved lists", 1, True),
        ("labels judged now", 7, False),
    ]
    assert fmt.count_notes(RunCounts()) == []


def test_judge_label_names_the_trec_eval_convention_without_judge() -> None:
    assert fmt.judge_label(_result([], [])) == fmt.NO_JUDGE
    assert "trec_eval" in fmt.NO_JUDGE


def test_fmt_value_never_shows_minus_zero() -> None:
    assert [fmt.fmt_value(v) for v in (-0.0001, -0.0, 0.0, -0.5, -10.0)] == [
        "0.000",
        "0.000",
        "0.000",
        "-0.500",
        "-10.000",
    ]


def test_by_pair_groups_comparisons_in_first_seen_order() -> None:
    ab, ba, ac = _comparison(0.1, True), _comparison(0.2, False), _comparison(0.3, False)
    ba.a, ba.b = "new", "base"
    ac.b = "other"
    ab2 = _comparison(0.4, True)
    assert fmt.by_pair([ab, ba, ab2, ac]) == [[ab, ab2], [ba], [ac]]
    assert fmt.by_pair([]) == []
