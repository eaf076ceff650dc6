"""The answer judge card's smaller promises, pinned one by one: the golden set and the runs built from the file, the
intervals and figures as the card prints them, the markdown and the headline, and the files written."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest

from assay.formats.answer_judgements import AnswerJudgements, JudgedAnswer, JudgedPair
from assay.judge.factory import make_judge
from assay.metrics.correlation import Correlation, correlation
from assay.pipelines.judgecheck import answers
from assay.pipelines.judgecheck.answers import (
    PEOPLE,
    AnswerCard,
    AnswerRow,
    Interval,
    card_rows,
    format_agreement,
    format_interval,
    headline,
    render_markdown,
    write_answer_card,
)
from assay.results import QueryResult


def _rated() -> AnswerJudgements:
    """Two systems' answers to q1 (with the passages people saw) and one to q2; the second q1 line repeats the
    question with another reference and passage, which the golden set must not take."""
    first = JudgedAnswer("q1", "How long do refunds take?", "Fourteen days.", "A", "two weeks", ("P1", "P2"), {})
    second = JudgedAnswer("q1", "other text", "other reference", "B", "a month", ("P3",), {})
    third = JudgedAnswer("q2", "Who pays postage?", "The shop.", "A", "you do", (), {})
    return AnswerJudgements("JSONL", (first, second, third), (), ("overall",))


def _paired() -> AnswerJudgements:
    pair = JudgedPair("q9", "Can I return a kettle?", "Yes, unused.", ("A", "yes"), ("B", "no"), ("K1",), {})
    again = JudgedPair("q9", "other", "other", ("A", "later"), ("C", "maybe"), ("K2",), {})
    return AnswerJudgements("JSONL", (), (pair, again), ("overall",))


def test_the_golden_rows_are_one_per_question_from_its_first_judgement() -> None:
    assert answers._golden_rows(_rated()) == [
        {
            "query_id": "q1",
            "user_input": "How long do refunds take?",
            "reference": "Fourteen days.",
            "reference_contexts": ["P1", "P2"],
        },
        {"query_id": "q2", "user_input": "Who pays postage?", "reference": "The shop.", "reference_contexts": []},
    ]
    assert answers._golden_rows(_paired()) == [
        {
            "query_id": "q9",
            "user_input": "Can I return a kettle?",
            "reference": "Yes, unused.",
            "reference_contexts": ["K1"],
        }
    ]


def test_the_golden_set_holds_the_questions_references_and_passages(tmp_path: Path) -> None:
    golden = answers._golden(_rated(), tmp_path)
    assert [(q.id, q.text, q.reference_answer) for q in golden.questions] == [
        ("q1", "How long do refunds take?", "Fourteen days."),
        ("q2", "Who pays postage?", "The shop."),
    ]
    assert sorted(c.text for c in golden.chunks) == ["P1", "P2"]
    assert json.loads((tmp_path / "testset.jsonl").read_text("utf-8").splitlines()[0])["query_id"] == "q1"


def test_each_system_is_a_run_of_its_answers_with_the_passages_people_saw() -> None:
    assert answers._runs(_rated()) == {
        "A": [
            {"query_id": "q1", "answer": "two weeks", "retrieved": [{"text": "P1"}, {"text": "P2"}]},
            {"query_id": "q2", "answer": "you do", "retrieved": []},
        ],
        "B": [{"query_id": "q1", "answer": "a month", "retrieved": [{"text": "P3"}]}],
    }
    # a pair gives each side's answer; the first answer of a system to a question is kept
    assert answers._runs(_paired()) == {
        "A": [{"query_id": "q9", "answer": "yes", "retrieved": [{"text": "K1"}]}],
        "B": [{"query_id": "q9", "answer": "no", "retrieved": [{"text": "K1"}]}],
        "C": [{"query_id": "q9", "answer": "maybe", "retrieved": [{"text": "K2"}]}],
    }


def _correlation(value: float, low: float, high: float) -> Correlation:
    return Correlation("pearson", value, low, high, 10, 5)


def test_an_interval_keeps_a_value_and_drops_each_bound_that_is_not_a_number() -> None:
    nan = math.nan
    assert answers._interval(None) == Interval(value=None, low=None, high=None)
    assert answers._interval(_correlation(nan, 0.1, 0.2)) == Interval(value=None, low=None, high=None)
    assert answers._interval(_correlation(0.5, 0.1, 0.9)) == Interval(value=0.5, low=0.1, high=0.9)
    assert answers._interval(_correlation(0.5, nan, 0.9)) == Interval(value=0.5, low=None, high=0.9)
    assert answers._interval(_correlation(0.5, 0.1, nan)) == Interval(value=0.5, low=0.1, high=None)


def test_a_correlation_that_cannot_be_computed_is_none_and_one_that_can_is_clustered() -> None:
    assert answers._safe([1.0, 2.0], [1.0, 2.0, 3.0], "pearson", ["a", "b"]) is None
    found = answers._safe([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0], "spearman", ["a", "a", "b", "c"])
    assert found is not None
    assert (found.kind, found.value, found.n, found.clusters) == ("spearman", pytest.approx(0.8), 4, 3)


def _item(*systems: str) -> answers._Item:
    return answers._Item("q", tuple((s, "q") for s in systems), {})


def test_a_value_is_the_measure_of_a_rated_answer_or_the_rounded_difference_of_a_pair() -> None:
    scores = {("A", "q"): {"m": 0.2, "n": math.nan}, ("B", "q"): {"m": 0.6, "n": 0.5}}
    assert answers._value(scores, _item("A"), "m") == 0.2
    assert answers._value(scores, _item("A", "B"), "m") == 0.4  # 0.6 - 0.2 is 0.39999999999999997 unrounded
    assert answers._value(scores, _item("B", "A"), "m") == -0.4
    assert answers._value(scores, _item("A"), "n") is None  # not a number: unscored
    assert answers._value(scores, _item("B", "A"), "n") is None
    assert answers._value(scores, _item("C"), "m") is None  # no row for the answer
    assert answers._value(scores, _item("A", "C"), "m") is None


def test_a_criterion_nobody_judged_leaves_nothing_unscored() -> None:
    pair = JudgedPair("q1", "q", "r", ("A", "a"), ("B", "b"), (), {"overall": (1.0,)})
    judgements = AnswerJudgements("JSONL", (), (pair,), ("overall", "tone"))
    rows = [
        QueryResult(run="A", query_id="q1", metrics={"claim_recall": None}),
        QueryResult(run="B", query_id="q1", metrics={"claim_recall": 0.5}),
    ]
    found = [(r.measure, r.criterion, r.n, r.unscored) for r in card_rows(judgements, rows)]
    # claim_recall is produced (B has a value) but A's is missing: the one overall pair is unscored
    assert found == [
        (PEOPLE, "overall", 0, 0.0),
        ("claim_recall", "overall", 0, 1.0),
        (PEOPLE, "tone", 0, 0.0),
        ("claim_recall", "tone", 0, 0.0),
    ]


def test_rows_follow_the_measures_order_and_skip_a_measure_never_produced() -> None:
    pair = JudgedPair("q1", "q", "r", ("A", "a"), ("B", "b"), (), {"overall": (1.0,)})
    judgements = AnswerJudgements("JSONL", (), (pair,), ("overall",))
    metrics = {"faithfulness": 0.5, "claim_recall": 0.5, "hallucination": None}
    rows = [QueryResult(run=s, query_id="q1", metrics=metrics) for s in ("A", "B")]
    assert [r.measure for r in card_rows(judgements, rows)] == [PEOPLE, "claim_recall", "faithfulness"]
    assert [r.measure for r in card_rows(judgements, rows, ("faithfulness",))] == [PEOPLE, "faithfulness"]


def test_figures_print_as_whole_percent() -> None:
    assert format_interval(Interval(value=0.456, low=0.34, high=0.561)) == "46 [34, 56]"
    assert format_interval(Interval(value=-0.2, low=None, high=0.3)) == "-20"
    assert format_interval(Interval(value=0.2, low=-0.1, high=None)) == "20"
    assert format_interval(Interval(value=None, low=0.1, high=0.3)) == "-"
    assert format_agreement(0.75, 8) == "75% of 8"
    assert format_agreement(None, 8) == "-"


def _row(measure: str, criterion: str, r: float | None, agreement: float | None = 0.5) -> AnswerRow:
    interval = Interval(value=r, low=None if r is None else r - 0.1, high=None if r is None else r + 0.1)
    return AnswerRow(
        measure=measure,
        criterion=criterion,
        pearson=interval,
        spearman=Interval(value=None, low=None, high=None),
        agreement=agreement,
        pairs=4,
        ties=1,
        n=6,
        unscored=0.25,
    )


def _card(rows: list[AnswerRow], criteria: list[str], answers_: int = 0) -> AnswerCard:
    return AnswerCard(model="m1", source="MTRAG", answers=answers_, pairs=3, questions=2, criteria=criteria, rows=rows)


def test_the_markdown_card_says_what_it_was_read_against_and_prints_each_row() -> None:
    card = _card([_row("claim_recall", "overall", 0.5), _row("faithfulness", "overall", None, None)], ["overall"])
    assert render_markdown(card) == (
        "# Answer judge card: m1\n"
        "\n"
        "Against MTRAG: 3 preference pairs on 2 questions. Pearson r and Spearman rho x 100 with 95% intervals over "
        "questions; agreement: the share of pairs people ordered that the measure orders alike (its ties apart); "
        "people: each person against the others' mean.\n"
        "\n"
        "| measure | criterion | Pearson | Spearman | agreement | ties | unscored |\n"
        "|---|---|---|---|---|---|---|\n"
        "| claim_recall | overall | 50 [40, 60] | - | 50% of 4 | 1 | 25% |\n"
        "| faithfulness | overall | - | - | - | 1 | 25% |\n"
    )
    assert "Against MTRAG: 7 rated answers on 2 questions." in render_markdown(_card([], ["overall"], 7))


def test_the_card_is_written_whole_into_a_folder_made_as_needed(tmp_path: Path) -> None:
    card = _card([_row("claim_recall", "overall", 0.5)], ["overall"])
    folder = tmp_path / "a" / "b"
    written = write_answer_card(card, folder)
    assert written == [folder / "answers.json", folder / "answers.md"]
    text = written[0].read_text("utf-8")
    assert text.startswith('{\n "model": "m1",\n "source": "MTRAG",\n') and text.endswith("}\n")
    assert AnswerCard.model_validate_json(text) == card
    assert written[1].read_text("utf-8") == render_markdown(card)
    # again into the folder that now exists: rewritten, no error
    assert write_answer_card(_card([], ["overall"]), folder) == written
    assert AnswerCard.model_validate_json(written[0].read_text("utf-8")).rows == []


def test_the_headline_names_the_strongest_measure_by_size_beside_the_people() -> None:
    rows = [
        _row(PEOPLE, "overall", 0.9),
        _row("claim_recall", "overall", 0.3),
        _row("hallucination", "overall", -0.6, None),
        _row("faithfulness", "overall", None),
        _row("claim_recall", "tone", 0.2),
        _row(PEOPLE, "style", 0.7),
    ]
    card = _card(rows, ["overall", "style", "tone"])
    assert headline(card) == [
        "overall: hallucination r = -60 [-70, -50], agreement - (people: 90 [80, 100])",
        "style: no answer measure scored",
        "tone: claim_recall r = 20 [10, 30], agreement 50% of 4 pairs",
    ]
    # a chooser of measures: only faithfulness and claim_recall may lead
    chosen = headline(card, lambda m: m in {"claim_recall", "faithfulness"})
    assert chosen[0] == "overall: claim_recall r = 30 [20, 40], agreement 50% of 4 pairs (people: 90 [80, 100])"


def _three_questions() -> tuple[AnswerJudgements, list[QueryResult]]:
    """Two systems rated on each of three questions by two people; the measure's values are hand-picked."""
    votes = {("A", "q1"): (4.0, 3.0), ("B", "q1"): (1.0, 2.0), ("A", "q2"): (2.0, 2.0), ("B", "q2"): (3.0, 4.0)}
    votes |= {("A", "q3"): (1.0, 1.0), ("B", "q3"): (4.0, 2.0)}
    judged = tuple(JudgedAnswer(q, q, "r", s, "a", (), {"overall": v}) for (s, q), v in votes.items())
    measure = {("A", "q1"): 0.9, ("B", "q1"): 0.2, ("A", "q2"): 0.3, ("B", "q2"): 0.4, ("A", "q3"): 0.6}
    measure |= {("B", "q3"): 0.5}
    rows = [QueryResult(run=s, query_id=q, metrics={"claim_recall": v}) for (s, q), v in measure.items()]
    return AnswerJudgements("JSONL", judged, (), ("overall",)), rows


def test_intervals_resample_whole_questions() -> None:
    judgements, per_query = _three_questions()
    people, recall = card_rows(judgements, per_query)
    x, y = [0.9, 0.2, 0.3, 0.4, 0.6, 0.5], [3.5, 1.5, 2.0, 3.5, 1.0, 3.0]
    questions = ["q1", "q1", "q2", "q2", "q3", "q3"]
    for kind, interval in (("pearson", recall.pearson), ("spearman", recall.spearman)):
        by_question = correlation(x, y, kind, clusters=questions)
        by_answer = correlation(x, y, kind)
        assert (by_question.low, by_question.high) != (by_answer.low, by_answer.high)
        assert (interval.low, interval.high) == (by_question.low, by_question.high)
    # people: each vote against the other's, in the six answers' order; clustered by question, so bounds exist
    votes = [4, 3, 1, 2, 2, 2, 3, 4, 1, 1, 4, 2]
    others = [3, 4, 2, 1, 2, 2, 4, 3, 1, 1, 2, 4]
    by_question = correlation(votes, others, "pearson", clusters=[q for q in questions for _ in range(2)])
    assert (people.pearson.low, people.pearson.high) == (by_question.low, by_question.high)
    assert people.pearson.low is not None


def test_rated_answers_to_one_question_pair_up_by_their_difference() -> None:
    rated = {("A", "q1"): 4.0, ("B", "q1"): 2.0}
    judged = tuple(JudgedAnswer(q, q, "r", s, "a", (), {"overall": (v,)}) for (s, q), v in rated.items())
    per_query = [
        QueryResult(run="A", query_id="q1", metrics={"claim_recall": 0.9}),
        QueryResult(run="B", query_id="q1", metrics={"claim_recall": 0.1}),
    ]
    recall = card_rows(AnswerJudgements("JSONL", judged, (), ("overall",)), per_query)[1]
    # B - A: the measure -0.8, people -2: ordered alike (a sum 1.0 would not be)
    assert (recall.pairs, recall.ties, recall.agreement) == (1, 0, 1.0)


def test_a_mean_is_the_sum_over_the_count() -> None:
    assert answers._mean([1.0, 2.0, 6.0]) == 3.0
    assert answers._mean([5.0]) == 5.0


def test_equal_differences_of_large_values_tie() -> None:
    scores = {("A", "q"): {"m": 3000.2}, ("B", "q"): {"m": 3000.6}}
    # 3000.6 - 3000.2 is 0.40000000000009095 in floating point: rounded to 12 places it is 0.4
    assert answers._value(scores, _item("A", "B"), "m") == 0.4


def test_a_measure_with_no_correlation_at_all_does_not_lead() -> None:
    card = _card([_row("claim_recall", "overall", 0.0), _row("faithfulness", "overall", 0.1)], ["overall"])
    assert headline(card) == ["overall: faithfulness r = 10 [0, 20], agreement 50% of 4 pairs"]


def test_a_dry_run_counts_the_drafts_then_the_evaluation_of_every_answer(tmp_path: Path) -> None:
    reference = "Refunds go to the card within 14 days."
    pair = JudgedPair("q1", "How are refunds paid?", reference, ("A", "To the card."), ("B", "Cash."), (), {})
    judgements = AnswerJudgements("JSONL", (), (pair,), ("overall",))
    estimate = answers.estimate_answers(judgements, make_judge("offline", cache_dir=tmp_path))
    assert list(estimate)[:2] == ["draft claims", "draft nuggets"]
    # one question: one draft of claims and one of nuggets; two systems' answers to it: two answer calls
    assert (estimate["draft claims"].calls, estimate["draft nuggets"].calls, estimate["answer"].calls) == (1, 1, 2)
    assert estimate["draft claims"].prompt_tokens > 0 and "relevance" in estimate


def test_the_golden_set_is_written_in_utf8_whatever_the_locales_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file opened without an encoding takes the locale's (cp1252 on many Windows machines): the test set of the
    judgements' questions must be written in UTF-8, the encoding it is read back in."""
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "cp1252")
    asked = JudgedAnswer("q1", "Où est le café ? À 5 €", "Près de la gare.", "A", "là", (), {})
    golden = answers._golden(AnswerJudgements("JSONL", (asked,), (), ("overall",)), tmp_path)
    assert [(q.text, q.reference_answer) for q in golden.questions] == [("Où est le café ? À 5 €", "Près de la gare.")]
