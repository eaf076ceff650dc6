"""Query logs for ``assay build --queries``: text, CSV, JSONL and a traces run file; bad lines name file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import FormatError, InputError
from assay.formats.queries import read_queries


def test_plain_text_one_question_per_line(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text("How do I reset my password?\n  Where is my   parcel? \n", encoding="utf-8")
    got = read_queries(path)
    assert [(q.text, q.line, q.count) for q in got] == [
        ("How do I reset my password?", 1, 1),
        ("Where is my   parcel?", 2, 1),
    ]


def test_blank_line_in_text_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text("one?\n\ntwo?\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"log\.txt:2: an empty line"):
        read_queries(path)


def test_csv_with_id_count_and_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text('id,question,count,timestamp\na1,How to pay?,3,2024-01-01\na2,"Refund, please?",,\n')
    got = read_queries(path)
    assert [(q.id, q.text, q.count, q.timestamp) for q in got] == [
        ("a1", "How to pay?", 3, "2024-01-01"),
        ("a2", "Refund, please?", 1, None),
    ]


def test_jsonl_and_traces_run_header(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    lines = [
        {"assay": "runs", "version": 1},
        {"query_id": "t-1", "question": "What is the fee?", "trace_id": "abc", "retrieved": []},
        {"question": "Opening hours?", "count": 7},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    got = read_queries(path)
    assert [(q.id, q.text, q.count, q.line) for q in got] == [
        ("t-1", "What is the fee?", 1, 2),
        (None, "Opening hours?", 7, 3),
    ]


@pytest.mark.parametrize(
    ("name", "text", "error", "message"),
    [
        ("log.csv", "id,prompt\n1,hello\n", FormatError, r"log\.csv:1: no question column"),
        ("log.csv", "question,count\nHow?,0\n", FormatError, r"log\.csv:2: count '0'"),
        ("log.jsonl", '{"question": "ok?"}\n{"id": 3}\n', FormatError, r"log\.jsonl:2: no question"),
        ("log.txt", "", InputError, "holds no question"),
    ],
)
def test_bad_input_names_file_and_line(
    tmp_path: Path, name: str, text: str, error: type[Exception], message: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(error, match=message):
        read_queries(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # the id cell's quote never closes: the rest of the file would be one id
        ('question,id\nHow long do refunds take?,"1\nWhat is the warranty?,2\nthird?,3\n',
         r"log\.csv:2: a quote opened on this line is never closed \(the file ends inside it\)"),
        # a stray quote closed by another two lines down: line 3 would vanish into line 2's question
        ('question,id\n"How long do refunds take?,1\nWhat is the warranty?,2\nthird?",3\n',
         r"log\.csv:2: a quoted cell opened on this line runs over line 3, which reads as a row of its own"),
    ],
)  # fmt: skip
def test_csv_quote_that_swallows_rows_is_an_error_at_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "log.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=message):
        read_queries(path)


def test_csv_multiline_cell_is_one_question_and_later_lines_keep_their_numbers(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text('question,id\n"How long\ndo refunds take?",1\nWhat is the warranty?,2\n', encoding="utf-8")
    got = [(q.text, q.line, q.id) for q in read_queries(path)]
    assert got == [("How long do refunds take?", 2, "1"), ("What is the warranty?", 4, "2")]
