"""assay.formats.answer_judgements, pinned further: the defaults a JSONL line may leave out, each error's whole
message (file, line or record, problem, fix), and what tells the three formats apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import InputError
from assay.formats import answer_judgements
from assay.formats.answer_judgements import read_answer_judgements


def _jsonl(tmp_path: Path, *lines: dict[str, Any], name: str = "judged.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        read_answer_judgements(path)
    return str(caught.value)


RATED = {"question": "q", "reference": "r", "answer": "a", "ratings": {"c": 1}}
PAIR = {"question": "q", "reference": "r", "answer_a": "a", "answer_b": "b", "preference": {"c": [1, -2.5]}}


def test_a_jsonl_line_without_ids_systems_or_contexts_takes_the_defaults(tmp_path: Path) -> None:
    got = read_answer_judgements(_jsonl(tmp_path, RATED, PAIR, {**RATED, "question_id": "", "contexts": None}))
    assert got.source == "JSONL" and got.criteria == ("c",)
    first, third = got.answers
    assert (first.question_id, first.system, first.passages, dict(first.ratings)) == (
        "line-1",
        "system",
        (),
        {"c": (1.0,)},
    )
    assert (first.question, first.reference, first.answer) == ("q", "r", "a")
    assert third.question_id == "line-3" and third.passages == ()
    [pair] = got.pairs
    assert (pair.question_id, pair.question, pair.reference) == ("line-2", "q", "r")
    assert (pair.first, pair.second, pair.passages) == (("a", "a"), ("b", "b"), ())
    assert dict(pair.preferences) == {"c": (1.0, -2.5)}
    assert all(isinstance(v, float) for v in pair.preferences["c"])


def test_an_uppercase_jsonl_suffix_is_read_as_jsonl(tmp_path: Path) -> None:
    assert read_answer_judgements(_jsonl(tmp_path, RATED, name="judged.JSONL")).source == "JSONL"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            {**RATED, "question": 3},
            "judged.jsonl:1: 'question' is int (expected 'question' as a string)",
        ),
        (
            {**RATED, "answer": None},
            "judged.jsonl:1: 'answer' is missing (expected 'answer' as a string)",
        ),
        (
            {**RATED, "ratings": {"c": True}},
            "judged.jsonl:1: ratings.c is True (expected ratings.c as a number or a list of numbers)",
        ),
        (
            {**RATED, "ratings": {"c": []}},
            "judged.jsonl:1: ratings.c is [] (expected ratings.c as a number or a list of numbers)",
        ),
        (
            {**RATED, "ratings": {"c": [1, "2"]}},
            "judged.jsonl:1: ratings.c is [1, '2'] (expected ratings.c as a number or a list of numbers)",
        ),
        (
            {**RATED, "ratings": [1]},
            "judged.jsonl:1: 'ratings' is missing or empty (expected \"ratings\": {criterion: value or [values]})",
        ),
        (
            {**PAIR, "preference": {}},
            "judged.jsonl:1: 'preference' is missing or empty "
            '(expected "preference": {criterion: value or [values]})',
        ),
        (
            {**RATED, "contexts": ["p", 2]},
            'judged.jsonl:1: \'contexts\' is not a list of strings (expected "contexts": ["passage text", ...])',
        ),
        (
            {**PAIR, "system_a": "s", "system_b": "s"},
            "judged.jsonl:1: both answers are system 's' (expected two different systems)",
        ),
        (
            {"question": "q", "reference": "r"},
            "judged.jsonl:1: neither 'ratings' nor 'preference' (expected a rated answer {\"answer\", \"ratings\"} "
            'or a pair {"answer_a", "answer_b", "preference"})',
        ),
    ],
)
def test_each_bad_jsonl_line_says_what_was_expected(tmp_path: Path, line: dict[str, Any], message: str) -> None:
    path = _jsonl(tmp_path, line)
    assert _error(path) == f"{tmp_path}/{message}"


def test_a_pair_naming_one_system_as_the_others_default_is_refused(tmp_path: Path) -> None:
    # system_b left out is "b": a pair whose system_a is "b" holds one system twice
    message = _error(_jsonl(tmp_path, {**PAIR, "system_a": "b"}))
    assert message == f"{tmp_path}/judged.jsonl:1: both answers are system 'b' (expected two different systems)"


def test_missing_and_empty_files_are_refused_with_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    assert _error(missing) == (
        f"{missing}: no such file; give the human judgements of answers (MTRAG, RAGChecker or JSONL)"
    )
    empty = _jsonl(tmp_path, name="empty.jsonl")
    assert _error(empty) == (
        f"{empty}: no judgement in the file; give one JSON object per line (module assay.formats.answer_judgements)"
    )


def test_a_json_document_over_the_bound_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.json"
    path.write_text("[" + " " * 40 + "]", encoding="utf-8")  # 42 bytes
    monkeypatch.setattr(answer_judgements, "MAX_JSON_BYTES", 41)
    assert _error(path) == f"{path}: a JSON document over 0 MB is read whole; write it as JSONL"
    monkeypatch.setattr(answer_judgements, "MAX_JSON_BYTES", 42)  # at the bound: read, then refused as neither format
    assert "neither MTRAG's evaluations nor RAGChecker's pairs" in _error(path)


def test_broken_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n"tasks": [}\n', encoding="utf-8")
    message = _error(path)
    assert message.startswith(f"{path}:2: not JSON: ") and message.endswith("(expected a JSON document)")


def _ragchecker(instance: int, query_id: str, **extra: Any) -> dict[str, Any]:
    row = {
        "instance_id": instance,
        "dataset": "kiwi",
        "query_id": query_id,
        "query": f"question {query_id}",
        "gt_answer": "ref",
        "model1": {"model_name": "m1", "response": "one"},
        "model2": {"model_name": "m2", "response": "two"},
        "correctness_label": 1,
        "completeness_label": 0,
        "overall_label": -1,
    }
    return row | extra


def test_ragchecker_pairs_are_one_per_instance_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "labelled.json"
    rows = [_ragchecker(3, "b"), _ragchecker(1, "a"), _ragchecker(3, "b", overall_label=2)]
    path.write_text(json.dumps(rows), encoding="utf-8")
    got = read_answer_judgements(path)
    assert got.criteria == ("correctness", "completeness", "overall")
    assert [(p.question_id, p.question, p.reference, p.passages) for p in got.pairs] == [
        ("kiwi-b", "question b", "ref", ()),
        ("kiwi-a", "question a", "ref", ()),
    ]
    assert dict(got.pairs[0].preferences)["overall"] == (-1.0, 2.0)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({k: v for k, v in _ragchecker(5, "a").items() if k != "query"}, "instance 5: KeyError 'query'"),
        (_ragchecker(5, "a", overall_label="high"), "instance 5: ValueError could not convert string to float: 'high'"),
        (_ragchecker(5, "a", model1="m1"), "instance 5: TypeError string indices must be integers, not 'str'"),
    ],
)
def test_a_bad_ragchecker_record_names_its_instance(tmp_path: Path, row: dict[str, Any], problem: str) -> None:
    path = tmp_path / "labelled.json"
    path.write_text(json.dumps([row]), encoding="utf-8")
    assert _error(path) == f"{path}: {problem} (expected a RAGChecker human-labelled pair)"


def test_a_list_with_one_record_that_is_not_a_pair_is_neither_format(tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    for document in ([_ragchecker(1, "a"), {"model1": {}}], [_ragchecker(1, "a"), {"model2": {}}], {}):
        path.write_text(json.dumps(document), encoding="utf-8")
        assert "neither MTRAG's evaluations nor RAGChecker's pairs" in _error(path)
    path.write_text(json.dumps([]), encoding="utf-8")
    assert _error(path) == (
        f"{path}: neither MTRAG's evaluations nor RAGChecker's pairs (expected an MTRAG human-evaluation file, "
        "RAGChecker's human_labeled_data.json, or JSONL)"
    )


def _mtrag(**evaluation: Any) -> dict[str, Any]:
    return {
        "documents": [{"document_id": "d1", "text": "D one."}, {"document_id": "d2", "text": "D two."}],
        "tasks": [
            {
                "task_id": "t1",
                "input": [{"text": "Q?"}],
                "contexts": [{"document_id": "d2"}],
                "targets": [{"text": "R"}],
            },
            {
                "task_id": "t2",
                "input": [{"text": "Hi"}, {"text": "Hello"}, {"text": "Q2?"}],
                "targets": [{"text": "R2"}, {"text": "other"}],
            },
        ],
        "evaluations": [
            {
                "task_id": "t2",
                "model_id": "m",
                "model_response": "A2",
                "annotations": {"naturalness": {"x": {"value": 1}}},
            },
            {"task_id": "t1", "model_id": "m", "model_response": "A", "annotations": {}} | evaluation,
        ],
    }


def test_mtrag_takes_every_criterion_a_task_without_contexts_and_the_first_target(tmp_path: Path) -> None:
    path = tmp_path / "mtrag.json"
    notes = {c: {"p": {"value": "3"}} for c in ("appropriateness", "naturalness", "completeness", "faithfulness")}
    path.write_text(json.dumps(_mtrag(annotations=notes)), encoding="utf-8")
    got = read_answer_judgements(path)
    assert got.criteria == ("completeness", "faithfulness", "appropriateness", "naturalness")
    first, second = got.answers
    assert (first.question_id, first.question, first.reference, first.passages) == ("t2", "Q2?", "R2", ())
    assert dict(first.ratings) == {"naturalness": (1.0,)}
    assert second.passages == ("D two.",)
    assert list(second.ratings) == ["completeness", "faithfulness", "appropriateness", "naturalness"]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"model_response": None} | {"task_id": "t9"}, "evaluation 2: KeyError 't9'"),
        ({"annotations": {"completeness": {"p": {"value": "good"}}}}, "evaluation 2: ValueError could not convert "),
        ({"annotations": {"completeness": {"p": 4}}}, "evaluation 2: TypeError "),
        ({"annotations": None}, "evaluation 2: TypeError "),
    ],
)
def test_a_bad_mtrag_evaluation_is_named_by_its_number(tmp_path: Path, change: dict[str, Any], problem: str) -> None:
    path = tmp_path / "mtrag.json"
    path.write_text(json.dumps(_mtrag(**change)), encoding="utf-8")
    message = _error(path)
    assert message.startswith(f"{path}: {problem}") and message.endswith("(expected an MTRAG evaluation)")


def test_an_mtrag_task_with_no_target_is_an_index_error_named_by_number(tmp_path: Path) -> None:
    data = _mtrag()
    data["tasks"][0]["targets"] = []
    path = tmp_path / "mtrag.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert _error(path) == f"{path}: evaluation 2: IndexError list index out of range (expected an MTRAG evaluation)"


def test_an_mtrag_file_without_document_ids_says_what_it_lacks(tmp_path: Path) -> None:
    data = _mtrag()
    data["documents"] = [{"text": "no id"}]
    path = tmp_path / "mtrag.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert _error(path) == (
        f"{path}: an MTRAG file without 'document_id' (expected documents with document_id and text)"
    )
    data["documents"] = None
    path.write_text(json.dumps(data), encoding="utf-8")
    assert _error(path).startswith(f"{path}: an MTRAG file without 'NoneType' object is not iterable")
