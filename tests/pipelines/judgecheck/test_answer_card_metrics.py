"""``measure_answers(..., metrics=...)``: only the named measures' calls are made (a slow judge asks fewer), with
the offline judge on a hand-made pair of rated answers."""

from __future__ import annotations

from assay.formats.answer_judgements import AnswerJudgements, JudgedAnswer
from assay.judge.factory import make_judge
from assay.pipelines.judgecheck.answers import PEOPLE, card_rows, measure_answers
from assay.results import QueryResult

REFERENCE = "The Eiffel Tower is 330 metres tall. It was completed in 1889 for the World's Fair."


def _judgements() -> AnswerJudgements:
    answers = (
        JudgedAnswer(
            "q1",
            "How tall is the Eiffel Tower?",
            REFERENCE,
            "A",
            "It is 330 metres tall, finished in 1889.",
            (),
            {"overall": (4.0, 3.0)},
        ),
        JudgedAnswer(
            "q1",
            "How tall is the Eiffel Tower?",
            REFERENCE,
            "B",
            "Paris has many museums.",
            (),
            {"overall": (1.0, 2.0)},
        ),
    )
    return AnswerJudgements("JSONL", answers, (), ("overall",))


def test_every_answer_measure_without_a_selection_and_only_the_named_family_with_one() -> None:
    judge = make_judge("offline")
    everything = {r.measure for r in measure_answers(_judgements(), judge, "offline").rows} - {PEOPLE}
    claims_only = {r.measure for r in measure_answers(_judgements(), judge, "offline", metrics=["claim_recall"]).rows}
    assert {"nugget_recall_all_strict", "claim_recall", "answer_relevance"} <= everything
    assert "claim_recall" in claims_only
    assert not any(m.startswith("nugget_recall") for m in claims_only)
    assert "faithfulness" not in claims_only  # no passages: the faithfulness family was not asked for


def test_a_diagnosis_measure_leads_when_no_two_runs_share_two_questions() -> None:
    # Without nuggets the answer-only lead is claim_recall, a diagnosis measure compared in its own family; with one
    # question no pair of runs is compared, and the lead used to be looked up among the other families only (a
    # ConfigError "not a compared metric").
    card = measure_answers(_judgements(), make_judge("offline"), "offline", metrics=["claim_f1"])
    assert {r.measure for r in card.rows} >= {"claim_f1", "claim_recall"}


def test_a_measure_the_judge_never_scored_is_shown_unscored_and_one_the_data_cannot_give_is_left_off() -> None:
    rows = [
        QueryResult(
            run=system,
            query_id="q1",
            metrics={"claim_recall": None, "faithfulness": None},
            unscored={"claim_recall": "loop", "faithfulness": "no passages in this run"},
        )
        for system in ("A", "B")
    ]
    card = {r.measure: r for r in card_rows(_judgements(), rows)}
    assert card["claim_recall"].unscored == 1.0
    assert card["claim_recall"].n == 0
    assert "faithfulness" not in card
