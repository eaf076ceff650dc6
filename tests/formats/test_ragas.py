"""RAGAS test sets: RAGAS 0.3 column names, JSONL and CSV (pandas-style list cells), legacy names, errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import FormatError, InputError
from assay.formats.ragas import COLUMNS, read_ragas, write_ragas_csv, write_ragas_jsonl

RAGAS = Path(__file__).parents[1] / "fixtures" / "transfer" / "ragas"

# The field names of ragas's SingleTurnSample that a golden test set fills (ragas 0.4 dataset_schema), and the one
# field a Testset row adds (testset_schema.TestsetSample).
SINGLE_TURN_TESTSET_FIELDS = {"user_input", "reference", "reference_contexts", "reference_context_ids"}


def test_columns_are_ragas_names_plus_query_id() -> None:
    assert set(COLUMNS) == SINGLE_TURN_TESTSET_FIELDS | {"synthesizer_name", "query_id"}


def test_reads_jsonl_keeping_other_columns_as_extra() -> None:
    rows = read_ragas(RAGAS / "testset.jsonl")
    assert [r.line for r in rows] == [1, 2, 3]
    assert rows[1].reference_contexts[1].startswith("Express delivery")
    assert rows[1].reference_context_ids is None
    assert rows[1].extra["synthesizer_name"] == "multi_hop_abstract_query_synthesizer"
    assert rows[2].extra["retrieved_contexts"] == ["Gift cards cannot be refunded."]


def test_reads_pandas_style_csv_with_multiline_cells_and_python_list_literals() -> None:
    rows = read_ragas(RAGAS / "testset.csv")
    assert [r.line for r in rows] == [2, 3]  # physical line where each row starts (header is line 1)
    assert rows[1].user_input == "Which delivery is fastest,\nand when must I order?"
    assert rows[1].reference_contexts == [
        "Standard delivery takes 2 to 4 business days.",
        "Express delivery arrives the next business day when ordered before noon.",
    ]


def test_legacy_names_and_id(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"id": 7, "question": "Q?", "ground_truth": "A.", "reference_contexts": ["c"]}) + "\n")
    (row,) = read_ragas(path)
    assert (row.query_id, row.user_input, row.reference, row.reference_contexts) == ("7", "Q?", "A.", ["c"])


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"reference": "A"}, "no question in 'user_input'"),
        ({"user_input": "  "}, "no question in 'user_input'"),
        ({"user_input": "Q", "reference": 3}, "'reference' is a int"),
        (
            {"user_input": "Q", "reference_contexts": "abc", "reference_context_ids": ["a", "b"]},
            "2 reference_context_ids for 1",
        ),
        ({"user_input": "Q", "reference_contexts": [{"t": 1}]}, "holds a dict"),
        ({"user_input": "Q", "reference_contexts": 5}, "'reference_contexts' is a int"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, obj: dict[str, object], message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"user_input": "fine"}) + "\n\n" + json.dumps(obj) + "\n")
    with pytest.raises(FormatError, match=message) as info:
        read_ragas(path)
    assert info.value.line == 3


def test_csv_row_with_too_many_cells_and_unknown_suffix(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("user_input,reference\nQ1,A1\nQ2,A2,extra\n")
    with pytest.raises(FormatError, match="more cells than header columns") as info:
        read_ragas(path)
    assert info.value.line == 3
    with pytest.raises(InputError, match=r"give a \.jsonl or \.csv file"):
        read_ragas(tmp_path / "t.parquet")


def test_write_jsonl_and_csv_read_back_the_same(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"query_id": "q1", "user_input": "Q, \"quoted\"?", "reference": "A\nB", "reference_contexts": ["c1", "[c2]"],
         "reference_context_ids": ["id1", "id2"]},
        {"query_id": "q2", "user_input": "Unanswerable?", "reference": None, "reference_contexts": [],
         "reference_context_ids": []},
    ]  # fmt: skip
    assert write_ragas_jsonl(tmp_path / "r.jsonl", rows) == 2
    assert write_ragas_csv(tmp_path / "r.csv", rows) == 2
    first = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    assert list(first) == list(COLUMNS)
    with (tmp_path / "r.csv").open(newline="") as handle:
        cells = list(csv.DictReader(handle))
    assert json.loads(cells[0]["reference_contexts"]) == ["c1", "[c2]"]
    for name in ("r.jsonl", "r.csv"):
        back = read_ragas(tmp_path / name)
        got = [(r.query_id, r.user_input, r.reference, r.reference_contexts, r.reference_context_ids) for r in back]
        assert got == [
            ("q1", 'Q, "quoted"?', "A\nB", ["c1", "[c2]"], ["id1", "id2"]),
            ("q2", "Unanswerable?", None, [], []),
        ], name


def test_csv_unterminated_quote_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text('user_input,response\nWhat is X?,"X is\nWhat is Y?,Y\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"t\.csv:2: a quote opened on this line is never closed"):
        read_ragas(path)
