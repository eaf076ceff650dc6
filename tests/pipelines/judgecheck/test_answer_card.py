"""The answer judge card: agreement, correlation and unscored shares by hand from given per-query rows, and
``assay judge-check --answers`` end to end with the offline judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from scipy import stats

from assay.cli import main
from assay.formats.answer_judgements import AnswerJudgements, JudgedAnswer, JudgedPair
from assay.pipelines.judgecheck.answers import PEOPLE, AnswerCard, card_rows
from assay.results import QueryResult


def _pairs() -> AnswerJudgements:
    votes = {"q1": (2.0, 1.0), "q2": (-1.0, -1.0), "q3": (0.0, 0.0), "q4": (1.0, 0.0)}
    pairs = tuple(
        JudgedPair(q, q, "ref", ("A", f"a-{q}"), ("B", f"b-{q}"), (), {"overall": v}) for q, v in votes.items()
    )
    return AnswerJudgements("JSONL", (), pairs, ("overall",))


def _rows(values: dict[tuple[str, str], dict[str, float | None]]) -> list[QueryResult]:
    return [QueryResult(run=run, query_id=q, metrics=m) for (run, q), m in values.items()]


PER_QUERY = _rows(
    {
        ("A", "q1"): {"claim_recall": 0.2, "hallucination": 0.5},
        ("B", "q1"): {"claim_recall": 0.6, "hallucination": 0.2},
        ("A", "q2"): {"claim_recall": 0.8, "hallucination": 0.1},
        ("B", "q2"): {"claim_recall": 0.4, "hallucination": 0.6},
        ("A", "q3"): {"claim_recall": 0.5, "hallucination": 0.1},
        ("B", "q3"): {"claim_recall": 0.9, "hallucination": 0.1},
        ("A", "q4"): {"claim_recall": 0.5, "hallucination": 0.3},
        ("B", "q4"): {"claim_recall": 0.5, "hallucination": None},
    }
)


def test_pairs_second_minus_first_beside_the_mean_preference() -> None:
    rows = {r.measure: r for r in card_rows(_pairs(), PER_QUERY)}
    recall = rows["claim_recall"]
    # differences B - A: +0.4, -0.4, +0.4, 0; mean preferences 1.5, -1, 0, 0.5. People ordered q1, q2, q4 (q3 even);
    # the measure ties q4 and orders q1 and q2 as people do.
    assert (recall.pairs, recall.ties, recall.agreement, recall.n, recall.unscored) == (3, 1, 1.0, 4, 0.0)
    x, y = [0.4, -0.4, 0.4, 0.0], [1.5, -1.0, 0.0, 0.5]
    assert recall.pearson.value == pytest.approx(stats.pearsonr(x, y)[0])
    assert recall.spearman.value == pytest.approx(stats.spearmanr(x, y)[0])


def test_a_lower_is_better_measure_agrees_in_its_own_direction_and_unscored_is_counted() -> None:
    halluc = {r.measure: r for r in card_rows(_pairs(), PER_QUERY)}["hallucination"]
    # B - A: -0.3 (q1), +0.5 (q2), 0 (q3); q4 unscored for B: left out. Lower is better, so q1's drop agrees with
    # people preferring B, q2's rise with people preferring A.
    assert (halluc.pairs, halluc.ties, halluc.agreement, halluc.n, halluc.unscored) == (2, 0, 1.0, 3, 0.25)
    assert halluc.pearson.value == pytest.approx(stats.pearsonr([-0.3, 0.5, 0.0], [1.5, -1.0, 0.0])[0])


def test_people_each_against_the_other() -> None:
    people = next(r for r in card_rows(_pairs(), PER_QUERY) if r.measure == PEOPLE)
    # (vote, other): q1 (2, 1) (1, 2); q2 (-1, -1) twice; q3 (0, 0) twice; q4 (1, 0) (0, 1). Ordered by the other
    # person: 5 (not q3, not q4's first); q4's second is a tie of the vote; the other 4 agree.
    assert (people.n, people.pairs, people.ties, people.agreement) == (8, 5, 1, 1.0)
    x, y = [2, 1, -1, -1, 0, 0, 1, 0], [1, 2, -1, -1, 0, 0, 0, 1]
    assert people.pearson.value == pytest.approx(stats.pearsonr(x, y)[0])


def test_ratings_pair_up_the_answers_to_one_question() -> None:
    ratings = {("A", "q1"): 4.0, ("B", "q1"): 2.0, ("A", "q2"): 1.0, ("B", "q2"): 3.0}
    answers = tuple(JudgedAnswer(q, q, "ref", s, "answer", (), {"complete": (v,)}) for (s, q), v in ratings.items())
    judgements = AnswerJudgements("JSONL", answers, (), ("complete",))
    per_query = _rows(
        {
            ("A", "q1"): {"claim_recall": 0.9},
            ("B", "q1"): {"claim_recall": 0.1},
            ("A", "q2"): {"claim_recall": 0.5},
            ("B", "q2"): {"claim_recall": 0.2},
        }
    )
    recall = {r.measure: r for r in card_rows(judgements, per_query)}["claim_recall"]
    # q1: the measure and people both put A first; q2: people put B first, the measure A: one of two alike
    assert (recall.pairs, recall.ties, recall.agreement) == (2, 0, 0.5)
    assert recall.pearson.value == pytest.approx(stats.pearsonr([0.9, 0.1, 0.5, 0.2], [4, 2, 1, 3])[0])


def test_judge_check_answers_writes_the_card_with_the_offline_judge(tmp_path: Path) -> None:
    reference = "Refunds are paid to the original card within 14 days of the return."
    lines = [
        {
            "question_id": f"q{i}",
            "question": f"How are refunds paid, case {i}?",
            "reference": reference,
            "answer_a": "Our shop sells blenders and kettles in three colours.",
            "answer_b": reference,
            "system_a": "weak",
            "system_b": "good",
            "preference": {"overall": [2, 2]},
        }
        for i in range(4)
    ]
    path = tmp_path / "judged.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    args = [
        "judge-check",
        "--judge",
        "offline",
        "--answers",
        str(path),
        "-o",
        str(tmp_path / "card"),
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    card = AnswerCard.model_validate_json((tmp_path / "card" / "answers.json").read_text("utf-8"))
    recall = next(r for r in card.rows if r.measure == "claim_recall")
    # the good answer is the reference (every claim recalled), the weak one shares nothing with it: the measure
    # orders all four pairs as the two people do
    assert (card.pairs, card.questions, recall.pairs, recall.agreement, recall.unscored) == (4, 4, 4, 1.0, 0.0)
    assert "| claim_recall | overall |" in (tmp_path / "card" / "answers.md").read_text("utf-8")
    assert "wrote" in result.output and "answers.json" in result.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "give --labels (graded passages: a relevance card) or --answers"),
        (["--answers", "X", "--queries", "5"], "--queries tune(s) the relevance probes of --labels"),
    ],
)
def test_judge_check_needs_one_source_and_no_probe_options_with_answers(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    path = tmp_path / "judged.jsonl"
    path.write_text(json.dumps({"question": "q", "reference": "r", "answer": "a", "ratings": {"c": 1}}) + "\n")
    extra = [str(path) if e == "X" else e for e in extra]
    result = CliRunner().invoke(main, ["judge-check", "--judge", "offline", "-o", str(tmp_path / "card"), *extra])
    assert result.exit_code == 1 and message in result.output
    assert not (tmp_path / "card").exists()
