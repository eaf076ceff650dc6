"""Pins of formats/ragas.py: each refusal's whole message, the CSV's edges (a byte-order mark, an empty file, short
rows, empty cells), the tool-call argument rules, RAGAS evaluation rows and the exact bytes the writers produce."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import FormatError, InputError
from assay.formats.progress import reporting
from assay.formats.ragas import read_ragas, read_ragas_run, write_ragas_csv, write_ragas_jsonl

_SHAPE = '{"user_input": "...", "reference": "...", "reference_contexts": ["..."]}'
_CALLS = '[{"name": "calculator", "args": {"expression": "2 + 2"}}]'


def _jsonl(tmp_path: Path, *rows: dict[str, Any], name: str = "set.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _refusal(path: Path, reader: Any = read_ragas) -> str:
    with pytest.raises(FormatError) as caught:
        reader(path)
    return str(caught.value)


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ({"user_input": " "}, f"no question in 'user_input' (a non-empty string) (expected {_SHAPE})"),
        ({"user_input": "q", "reference": 3}, "'reference' is a int (expected a string answer)"),
        ({"user_input": "q", "reference_contexts": 7}, "'reference_contexts' is a int (expected a list of strings)"),
        ({"user_input": "q", "reference_contexts": ["a"], "reference_context_ids": {"x": 1}},
         "'reference_context_ids' is a dict (expected a list of strings)"),
        ({"user_input": "q", "reference_contexts": ["a", None]},
         "'reference_contexts' holds a NoneType (expected a list of strings)"),
        ({"user_input": "q", "reference_contexts": ["a"], "reference_context_ids": ["c1", "c2"]},
         "2 reference_context_ids for 1 reference_contexts (expected one id per context, in the same order)"),
        ({"user_input": "q", "reference_tool_calls": "{not json"},
         f"'reference_tool_calls' is not JSON (expected {_CALLS})"),
        ({"user_input": "q", "reference_tool_calls": {"name": "calculator"}},
         f"'reference_tool_calls' is a dict (expected {_CALLS})"),
        ({"user_input": "q", "reference_tool_calls": [{"name": "a"}, {"args": {}}]},
         f"reference tool call 2 has no name (expected {_CALLS})"),
        ({"user_input": "q", "reference_tool_calls": [{"name": "calc", "args": [1]}]},
         f"the arguments of reference tool call 1 (calc) are not a JSON object (expected {_CALLS})"),
    ],
)  # fmt: skip
def test_each_refusal_names_the_file_the_line_and_the_fix(tmp_path: Path, row: dict[str, Any], said: str) -> None:
    path = _jsonl(tmp_path, {"user_input": "fine"}, row)
    assert _refusal(path) == f"{path}:2: {said}"


def test_a_refusal_in_a_csv_names_the_csv_and_the_row_line(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    path.write_text('user_input,reference_contexts\nfine,a\n"",b\n', encoding="utf-8")
    assert _refusal(path) == f"{path}:3: no question in 'user_input' (a non-empty string) (expected {_SHAPE})"


def test_a_csv_with_more_cells_than_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    path.write_text("user_input\nq,extra\n", encoding="utf-8")
    assert _refusal(path) == f"{path}:2: more cells than header columns (expected one cell per column)"


def test_a_csv_that_is_not_utf8_or_not_a_file_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    path.write_bytes(b"user_input\nca\xe9\n")
    assert _refusal(path) == f"{path}: bytes that are not UTF-8 at byte 13 (expected a UTF-8 CSV file)"
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    assert _refusal(folder) == f"{folder}: cannot read: Is a directory (expected a readable CSV file)"


def test_csv_edges_bom_empty_file_short_rows_and_empty_cells(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    path.write_text("\ufeffquery_id,user_input,reference_contexts,reference_context_ids\nq1,Q one,a\n,Q two,b,\n",
                    encoding="utf-8")  # fmt: skip
    rows = read_ragas(path)
    assert [(r.query_id, r.user_input, r.reference_contexts, r.reference_context_ids) for r in rows] == [
        ("q1", "Q one", ["a"], None),  # the mark is not part of the first column's name; a short row: cells absent
        (None, "Q two", ["b"], None),  # an empty id cell: no ids (not one empty id)
    ]
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    assert read_ragas(empty) == []


def test_a_json_suffix_reads_as_lines_and_an_unknown_suffix_is_named(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"id": 7, "question": "Q"}, name="set.json")
    assert [(r.query_id, r.user_input) for r in read_ragas(path)] == [("7", "Q")]
    bare = tmp_path / "testset"
    bare.write_text("", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_ragas(bare)
    assert str(caught.value) == f"{bare}: unknown RAGAS file type (none); give a .jsonl or .csv file"


def test_tool_call_arguments_missing_blank_null_or_not_json(tmp_path: Path) -> None:
    calls = [
        {"name": "now"},
        {"name": "ping", "arguments": "  "},
        {"function": {"name": "add", "arguments": '{"a": 1}'}},
    ]
    path = _jsonl(tmp_path, {"user_input": "q", "reference_tool_calls": calls})
    assert read_ragas(path)[0].reference_tool_calls == [("now", {}), ("ping", {}), ("add", {"a": 1})]
    for bad in ({"name": "calc", "args": None}, {"name": "calc", "arguments": "{oops"}):
        path = _jsonl(tmp_path, {"user_input": "q", "reference_tool_calls": [bad]})
        said = f"the arguments of reference tool call 1 (calc) are not a JSON object (expected {_CALLS})"
        assert _refusal(path) == f"{path}:1: {said}"


@pytest.mark.parametrize("call", ["calculator", {"function": "calculator"}])
def test_a_tool_call_that_is_not_an_object_has_no_name(tmp_path: Path, call: Any) -> None:
    path = _jsonl(tmp_path, {"user_input": "q", "reference_tool_calls": [call]})
    assert _refusal(path) == f"{path}:1: reference tool call 1 has no name (expected {_CALLS})"


def test_evaluation_rows_pair_contexts_with_ids_and_keep_the_answer(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path,
        {"user_input": "Q1", "retrieved_contexts": ["a", "b"], "retrieved_context_ids": ["d1", "d2"], "response": "yes",
         "reference": "ref", "query_id": "q1"},
        {"user_input": "Q2", "retrieved_contexts": ["c"], "response": ""},
        {"user_input": "Q3"},
    )  # fmt: skip
    rows = read_ragas_run(path)
    assert [(r.line, r.user_input, r.contexts, r.context_ids, r.response, r.reference, r.query_id) for r in rows] == [
        (1, "Q1", ["a", "b"], ["d1", "d2"], "yes", "ref", "q1"),
        (2, "Q2", ["c"], [None], None, None, None),
        (3, "Q3", [], [], None, None, None),
    ]


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ({"user_input": "q", "retrieved_contexts": ["a"], "retrieved_context_ids": ["d1", "d2"]},
         "2 retrieved_context_ids for 1 retrieved_contexts (expected one id per context, in the same order)"),
        ({"user_input": "q", "retrieved_contexts": "x", "retrieved_context_ids": 4},
         "'retrieved_context_ids' is a int (expected a list of strings)"),
        ({"user_input": "q", "retrieved_contexts": 4}, "'retrieved_contexts' is a int (expected a list of strings)"),
        ({"user_input": "q", "response": ["yes"]}, "'response' is a list (expected the answer as a string)"),
    ],
)  # fmt: skip
def test_evaluation_rows_refusals_name_the_line(tmp_path: Path, row: dict[str, Any], said: str) -> None:
    path = _jsonl(tmp_path, {"user_input": "fine"}, row)
    assert _refusal(path, read_ragas_run) == f"{path}:2: {said}"


def test_the_writers_bytes_keep_non_ascii_text_and_add_calls_only_when_some(tmp_path: Path) -> None:
    plain = {"query_id": "q1", "user_input": "Où?", "reference": None, "reference_contexts": ["café"],
             "reference_context_ids": ["c1"], "synthesizer_name": "assay_factoid"}  # fmt: skip
    seen: list[tuple[str, int, int]] = []
    with reporting(lambda what, done, total: seen.append((what, done, total))):
        assert write_ragas_csv(tmp_path / "a.csv", [plain]) == 1
        assert write_ragas_jsonl(tmp_path / "a.jsonl", [plain]) == 1
    assert seen == [("writing a.csv", 1, 1), ("writing a.jsonl", 1, 1)]
    assert (tmp_path / "a.csv").read_bytes().decode("utf-8") == (  # bytes: a "\r\n" line end would show
        "query_id,user_input,reference,reference_contexts,reference_context_ids,synthesizer_name\n"
        'q1,Où?,,"[""café""]","[""c1""]",assay_factoid\n'
    )
    assert (tmp_path / "a.jsonl").read_text(encoding="utf-8") == (
        '{"query_id": "q1", "user_input": "Où?", "reference": null, "reference_contexts": ["café"], '
        '"reference_context_ids": ["c1"], "synthesizer_name": "assay_factoid"}\n'
    )
