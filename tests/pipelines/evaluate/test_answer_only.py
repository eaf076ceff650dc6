"""Answers read on their own: runs with no passages, empty and missing answers, retrieval-only runs and failed calls.

The golden set is evaluate_fixture's first four questions (q00..q03), each with one reference claim ("The X warranty
lasts N days from the date of purchase.") and two nuggets, vital "The X warranty lasts N days." and okay "The
warranty starts at the date of purchase.". The offline judge supports a statement when the answer holds every
content term and number of it, so the expected values below follow from the answers' words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import PRODUCTS, answer_id, make_golden, qid

from assay.judge import make_judge
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.pipelines.evaluate.called import evaluate as called_evaluate
from assay.report.verdict import build_verdict
from assay.results import EvalResult, QueryResult

N = 4
NO_PASSAGES = "no passages in this run"
RANKING = ("ndcg@10", "P@5", "recall@10", "map", "mrr")
PASSAGE_BOUND = ("faithfulness", "attribution_rate", "context_recall", "hallucination", "context_utilization")


def _full(i: int) -> str:
    """An answer holding both nuggets and the reference claim."""
    name, thing, days = PRODUCTS[i]
    return f"The {name} {thing} warranty lasts {days} days. The warranty starts at the date of purchase."


def _vital_only(i: int) -> str:
    name, thing, days = PRODUCTS[i]
    return f"The {name} {thing} warranty lasts {days} days."


def _evaluate(*runs: tuple[str, list[dict[str, Any]]], **settings: Any) -> tuple[EvalResult, list[QueryResult]]:
    return evaluate(make_golden(n=N), list(runs), judge=make_judge("offline"),
                    settings=EvalSettings(n_boot=200, **settings))  # fmt: skip


def _rows(rows: list[QueryResult], run: str) -> dict[str, QueryResult]:
    return {row.query_id: row for row in rows if row.run == run}


GOOD = [{"query_id": qid(i), "answer": _full(i)} for i in range(N)]
# q00 empty, q01 the vital nugget only, q02 only whitespace, q03 an answer that holds no nugget
WEAK = [
    {"query_id": qid(0), "retrieved": [], "answer": ""},
    {"query_id": qid(1), "retrieved": [], "answer": _vital_only(1)},
    {"query_id": qid(2), "answer": " \n\t"},
    {"query_id": qid(3), "answer": "It is sold in stores."},
]


def test_a_run_with_answers_and_no_passages_is_scored_on_its_answers() -> None:
    result, _ = _evaluate(("good", GOOD), ("weak", WEAK))
    good, weak = result.runs
    for run in (good, weak):
        for name in (*RANKING, *PASSAGE_BOUND, "ragas_context_precision@10"):  # no text: no span or budget
            summary = run.metrics[name]
            assert summary.mean is None and summary.n_scored == 0, (run.name, name)
            assert summary.unscored_reasons == {NO_PASSAGES: N}, (run.name, name)
        assert run.curves == {}
    # good holds both nuggets everywhere: 2/2; weak: 0 (empty), 1/2, 0 (whitespace), 0 -> 0.5 / 4
    assert good.metrics["nugget_recall_all_strict"].mean == 1.0
    assert weak.metrics["nugget_recall_all_strict"].mean == 0.125
    assert weak.metrics["nugget_recall_vital_strict"].mean == 0.25  # 1 of 4 vital nuggets
    # the reference's one claim (the warranty lasts N days from the date of purchase): the vital-only answer holds
    # more than half its terms and its number, which the offline judge calls entailed: 0, 1, 0, 0 -> 0.25
    assert good.metrics["claim_recall"].mean == 1.0 and weak.metrics["claim_recall"].mean == 0.25
    assert good.metrics["answer_relevance"].n_scored == N


def test_the_primary_is_an_answer_measure_and_the_verdict_leads_on_it() -> None:
    result, _ = _evaluate(("good", GOOD), ("weak", WEAK))
    assert result.primary_metric == "nugget_recall_all_strict"
    verdict = build_verdict(result)
    assert verdict.metric == "nugget_recall_all_strict"
    assert verdict.places[0].run == "good"
    assert verdict.headline.startswith("good leads on nugget_recall_all_strict with 1.000")
    rule = [w for w in result.warnings if w.startswith("The primary metric is nugget_recall_all_strict")]
    assert len(rule) == 1 and "else claim recall, else answer relevance" in rule[0]
    assert sum(w.startswith("good: no passages in this run") for w in result.warnings) == 1


def test_without_nuggets_claim_recall_leads_and_a_named_primary_stands() -> None:
    golden = make_golden(n=N)
    for question in golden.questions:
        question.nuggets = []
    result, _ = evaluate(golden, [("good", GOOD), ("weak", WEAK)], judge=make_judge("offline"),
                         settings=EvalSettings(n_boot=200))  # fmt: skip
    assert result.primary_metric == "claim_recall"
    result, _ = _evaluate(("good", GOOD), ("weak", WEAK), primary="answer_relevance")
    assert result.primary_metric == "answer_relevance"
    assert not any(w.startswith("The primary metric is") for w in result.warnings)


def test_one_answer_only_run_is_reported_on_the_answer_primary() -> None:
    result, _ = _evaluate(("good", GOOD))
    assert result.primary_metric == "nugget_recall_all_strict"
    assert build_verdict(result).headline.startswith("good: nugget_recall_all_strict 1.000")


def test_empty_answers_score_0_on_recall_and_stay_out_of_precision_means() -> None:
    result, rows = _evaluate(("weak", WEAK))
    weak = _rows(rows, "weak")
    for q in (qid(0), qid(2)):  # "" and only whitespace
        assert weak[q].metrics["nugget_recall_all_strict"] == 0.0 and weak[q].metrics["claim_recall"] == 0.0
        assert weak[q].metrics["claim_f1"] == 0.0
        for name in ("answer_relevance", "claim_precision"):
            assert weak[q].metrics[name] is None and weak[q].unscored[name] == "empty answer"
    run = result.runs[0]
    assert run.counts.empty_answers == 2 and run.counts.with_answer == 2
    relevance = run.metrics["answer_relevance"]
    assert relevance.n_scored == 2 and relevance.unscored_reasons == {"empty answer": 2}
    assert run.metrics["claim_recall"].n_scored == N  # the empty ones are in the mean, as 0
    said = [w for w in result.warnings if "empty answer(s)" in w]
    assert said == [
        'weak: 2 empty answer(s) ("" or only whitespace, or none on the line): 0 on the recall-type answer measures '
        '(nugget recall, claim recall, claim F1), unscored ("empty answer") on the others.'
    ]


def test_a_line_without_an_answer_in_a_run_that_answers_is_an_empty_answer() -> None:
    lines = [dict(line) for line in GOOD]
    del lines[1]["answer"]
    result, rows = _evaluate(("gappy", lines))
    assert result.runs[0].counts.empty_answers == 1
    row = _rows(rows, "gappy")[qid(1)]
    assert row.metrics["nugget_recall_all_strict"] == 0.0 and row.unscored["answer_relevance"] == "empty answer"
    assert result.runs[0].metrics["nugget_recall_all_strict"].mean == 0.75  # 1, 0, 1, 1


def test_a_run_with_passages_on_some_lines_scores_an_empty_list_0() -> None:
    lines = [{"query_id": qid(i), "retrieved": [answer_id(i)] if i else [], "answer": _full(i)} for i in range(N)]
    result, rows = _evaluate(("some", lines))
    mine = _rows(rows, "some")
    assert mine[qid(0)].metrics["P@1"] == 0.0 and mine[qid(1)].metrics["P@1"] == 1.0
    assert result.runs[0].metrics["P@1"].mean == 0.75
    assert result.runs[0].counts.empty_retrieved == 1
    assert not any(NO_PASSAGES in w for w in result.warnings) and result.primary_metric is None


def test_a_retrieval_only_run_has_its_answer_measures_unscored_and_said_once() -> None:
    retrieval = [{"query_id": qid(i), "retrieved": [answer_id(i)]} for i in range(N)]
    answered = [{"query_id": qid(i), "retrieved": [answer_id(i)], "answer": _full(i)} for i in range(N)]
    result, _ = _evaluate(("retrieval", retrieval), ("rag", answered))
    run = result.runs[0]
    for name in ("answer_relevance", "faithfulness", "nugget_recall_all_strict", "claim_recall"):
        assert run.metrics[name].unscored_reasons == {"no answers in this run": N}, name
    assert run.counts.empty_answers == 0 and run.metrics["P@1"].mean == 1.0
    said = [w for w in result.warnings if "retrieval-only" in w]
    assert said == ['retrieval: no line has an answer: a retrieval-only run, its answer measures are unscored ("no '
                    'answers in this run").']  # fmt: skip
    assert not any("empty answer(s)" in w for w in result.warnings)


@pytest.mark.parametrize("passages", [True, False])
def test_a_failed_call_scores_0_on_recall_and_retrieval_and_is_unscored_elsewhere(passages: bool) -> None:
    lines: list[dict[str, Any]] = [
        {"query_id": qid(i), "retrieved": [answer_id(i)] if passages else [], "answer": _full(i)} for i in range(N)
    ]
    lines[0] = {"query_id": qid(0), "error": {"kind": "timeout", "message": "no answer in 30 s"}}
    result, rows = _evaluate(("flaky", lines))
    row = _rows(rows, "flaky")[qid(0)]
    for name in ("nugget_recall_all_strict", "nugget_recall_vital_strict", "claim_recall", "claim_f1"):
        assert row.metrics[name] == 0.0, name
    for name in ("answer_relevance", "claim_precision"):
        assert row.metrics[name] is None and row.unscored[name] == "system_failed", name
    assert row.metrics["ndcg@10"] == (0.0 if passages else None)  # it retrieved nothing; a passage-free run: unscored
    if not passages:
        assert row.unscored["ndcg@10"] == "no passages in this run"
    run = result.runs[0]
    assert run.counts.failed == 1 and run.counts.empty_answers == 0
    if passages:  # the failed question is in the ranking mean as 0; the others each retrieve their one answer chunk
        assert run.metrics["ndcg@10"].n_scored == N and run.metrics["ndcg@10"].mean < 1.0
    assert run.metrics["nugget_recall_all_strict"].mean == 0.75  # 0, 1, 1, 1
    assert any("the system failed on 1 question(s) (0 on the recall-type answer measures" in w for w in result.warnings)


def test_a_target_that_fails_on_a_question_is_scored_as_the_system_s_failure(tmp_path: Path) -> None:
    """The failure written by asking a system (a function target here, as ``assay eval --target`` asks one)."""
    golden = make_golden(n=N)
    by_text = {q.text: i for i, q in enumerate(golden.questions)}

    def app(question: str) -> dict[str, Any]:
        i = by_text[question]
        if i == 2:
            raise ValueError("the model server is down")
        return {"answer": _full(i), "retrieved": []}

    result, rows = called_evaluate(golden, {"app": app}, judge=make_judge("offline"), n_boot=200,
                                   run_dir=tmp_path / "runs")  # fmt: skip
    run = result.runs[0]
    assert run.counts.failed == 1 and run.system is not None and run.system.failures == {"exception": 1}
    row = _rows(rows, "app")[qid(2)]
    assert row.metrics["nugget_recall_all_strict"] == 0.0 and row.unscored["answer_relevance"] == "system_failed"
    assert run.metrics["nugget_recall_all_strict"].mean == 0.75  # 1, 1, 0, 1
    assert result.primary_metric == "nugget_recall_all_strict"  # the other lines have no passages
