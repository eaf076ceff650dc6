"""assay.formats.answer_judgements: the three formats of people's judgements of answers, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import FormatError, InputError
from assay.formats.answer_judgements import read_answer_judgements


def _mtrag(tmp_path: Path) -> Path:
    data = {
        "documents": [{"document_id": "d1", "text": "Refunds take 14 days."}],
        "tasks": [
            {
                "task_id": "t1",
                "input": [{"speaker": "user", "text": "Hi"}, {"speaker": "user", "text": "How long?"}],
                "contexts": [{"document_id": "d1"}],
                "targets": [{"speaker": "agent", "text": "14 days."}],
            }
        ],
        "evaluations": [
            {"task_id": "t1", "model_id": "reference", "model_response": "14 days.", "annotations": {}},
            {
                "task_id": "t1",
                "model_id": "gpt",
                "model_response": "Two weeks.",
                "annotations": {
                    "completeness": {"a1": {"value": "4"}, "a2": {"value": "3"}},
                    "faithfulness": {"a1": {"value": "2"}},
                    "RougeL": {"system": {"value": 0.1}},
                },
            },
        ],
    }
    path = tmp_path / "mtrag.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_mtrag_rated_answers_skip_the_reference_model_and_keep_every_rating(tmp_path: Path) -> None:
    got = read_answer_judgements(_mtrag(tmp_path))
    assert got.source == "MTRAG" and got.pairs == ()
    [answer] = got.answers
    assert (answer.question_id, answer.question, answer.reference, answer.system, answer.answer) == (
        "t1",
        "How long?",
        "14 days.",
        "gpt",
        "Two weeks.",
    )
    assert answer.passages == ("Refunds take 14 days.",)
    assert dict(answer.ratings) == {"completeness": (4.0, 3.0), "faithfulness": (2.0,)}


def test_ragchecker_pairs_join_the_two_annotators_of_an_instance(tmp_path: Path) -> None:
    row = {
        "instance_id": 7,
        "dataset": "kiwi",
        "query_id": "41",
        "query": "q?",
        "gt_answer": "ref",
        "model1": {"model_name": "m1", "response": "one"},
        "model2": {"model_name": "m2", "response": "two"},
    }
    labels = [
        {"correctness_label": 1, "completeness_label": -2, "overall_label": 0},
        {"correctness_label": 2, "completeness_label": -1, "overall_label": 1},
    ]
    path = tmp_path / "human_labeled_data.json"
    path.write_text(json.dumps([{**row, **labels[0]}, {**row, **labels[1]}]), encoding="utf-8")
    got = read_answer_judgements(path)
    [pair] = got.pairs
    assert got.source == "RAGChecker" and got.answers == ()
    assert (pair.question_id, pair.first, pair.second) == ("kiwi-41", ("m1", "one"), ("m2", "two"))
    assert dict(pair.preferences) == {"correctness": (1.0, 2.0), "completeness": (-2.0, -1.0), "overall": (0.0, 1.0)}


def test_jsonl_holds_ratings_and_pairs_with_criteria_in_order(tmp_path: Path) -> None:
    path = tmp_path / "judged.jsonl"
    lines = [
        {
            "question": "q1",
            "reference": "r1",
            "answer": "a",
            "system": "s",
            "ratings": {"correct": 3, "complete": [1, 2]},
        },
        {
            "question_id": "x",
            "question": "q2",
            "reference": "r2",
            "answer_a": "a",
            "answer_b": "b",
            "system_a": "old",
            "system_b": "new",
            "contexts": ["p"],
            "preference": {"overall": -1},
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    got = read_answer_judgements(path)
    assert got.criteria == ("correct", "complete", "overall")
    assert got.answers[0].question_id == "line-1" and dict(got.answers[0].ratings)["complete"] == (1.0, 2.0)
    assert got.pairs[0].first == ("old", "a") and got.pairs[0].passages == ("p",)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"question": "q", "answer": "a", "ratings": {"c": 1}}, "judged.jsonl:1: 'reference' is missing"),
        ({"question": "q", "reference": "r", "answer": "a", "ratings": {"c": "good"}}, "ratings.c is 'good'"),
        ({"question": "q", "reference": "r", "answer": "a", "ratings": {}}, "'ratings' is missing or empty"),
        ({"question": "q", "reference": "r", "answer": "a"}, "neither 'ratings' nor 'preference'"),
        (
            {
                "question": "q",
                "reference": "r",
                "answer_a": "a",
                "answer_b": "b",
                "system_a": "s",
                "system_b": "s",
                "preference": {"c": 1},
            },
            "both answers are system 's'",
        ),
        ({"question": "q", "reference": "r", "answer": "a", "contexts": "p", "ratings": {"c": 1}}, "'contexts'"),
    ],
)
def test_a_bad_jsonl_line_is_named_with_the_fix(tmp_path: Path, line: dict[str, object], message: str) -> None:
    path = tmp_path / "judged.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match="expected") as caught:
        read_answer_judgements(path)
    assert message in str(caught.value)


def test_other_json_and_empty_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"rows": []}), encoding="utf-8")
    with pytest.raises(FormatError, match="neither MTRAG's evaluations nor RAGChecker's pairs"):
        read_answer_judgements(other)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="no judgement in the file"):
        read_answer_judgements(empty)
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(FormatError, match="not JSON"):
        read_answer_judgements(broken)
