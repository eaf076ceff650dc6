"""BEIR files: reading the fixture, strict errors with file:line, writing and reading back, id escaping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import FormatError, InputError
from assay.formats.beir import (
    BeirDoc,
    BeirQrel,
    BeirQuery,
    escape_id,
    find_qrels,
    read_corpus,
    read_qrels_tsv,
    read_queries,
    write_beir,
)

BEIR = Path(__file__).parents[1] / "fixtures" / "transfer" / "beir"


def test_reads_the_fixture_with_integer_ids_header_and_space_separated_line() -> None:
    corpus = read_corpus(BEIR / "corpus.jsonl")
    assert [d.id for d in corpus] == ["d1", "2", "d3", "d4", "d5"]
    assert corpus[0].metadata == {"url": "https://example.com/refunds"}
    assert (corpus[1].title, corpus[1].line) == ("", 2)
    queries = read_queries(BEIR / "queries.jsonl")
    assert [(q.id, q.line) for q in queries] == [("q1", 1), ("q2", 2), ("q3", 3), ("q9", 4)]
    qrels = read_qrels_tsv(BEIR / "qrels" / "test.tsv")
    assert qrels[0] == BeirQrel(2, "q1", "d1", 2)  # line 1 is the header
    assert qrels[2] == BeirQrel(4, "q2", "2", 1)  # "q2 2 1" split by spaces
    assert len(qrels) == 8


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('{"_id": "a", "text": "x"}\n{"_id": "b", "text": "y"\n', 2, "invalid JSON"),
        ('{"_id": "a", "text": "x"}\n\n{"text": "y"}\n', 3, "no '_id'"),
        ('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n', 2, r"_id 'a' again \(first on line 1\)"),
        ('{"_id": "a", "text": 5}\n', 1, "'text' is a JSON int"),
        ('{"_id": "a", "text": "x", "metadata": [1]}\n', 1, "'metadata' is a JSON list"),
        ('{"_id": true, "text": "x"}\n', 1, "no '_id'"),
        ('["a", "x"]\n', 1, "a JSON list where a record belongs"),
    ],
)
def test_corpus_errors_name_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = _write(tmp_path / "corpus.jsonl", text)
    with pytest.raises(FormatError, match=message) as info:
        read_corpus(path)
    assert info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("query-id\tcorpus-id\tscore\nq1\td1\n", 2, "2 fields"),
        ("q1\td1\t1\nq1\td2\thigh\n", 2, "score 'high' is not an integer"),
        ("q1\td1\t1.0\n", 1, "score '1.0' is not an integer"),
        ("q1\td1\t1\n\nq1\td1\t2\n", 3, "pair 'q1' 'd1' again \\(first on line 1\\)"),
        ("q1\td1\t1\tx\n", 1, "4 fields"),
        ("q1\td1\t1\nquery-id\tcorpus-id\tscore\n", 2, "score 'score' is not an integer"),  # a header only on line 1
    ],
)
def test_qrels_errors_name_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = _write(tmp_path / "test.tsv", text)
    with pytest.raises(FormatError, match=message) as info:
        read_qrels_tsv(path)
    assert info.value.line == line


def test_qrels_without_header_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    path.write_bytes("\ufeffq1\td1\t3\r\nq1\td2\t-1\r\n".encode())
    assert read_qrels_tsv(path) == [BeirQrel(1, "q1", "d1", 3), BeirQrel(2, "q1", "d2", -1)]


def test_find_qrels_lists_the_splits_a_folder_has() -> None:
    assert find_qrels(BEIR, "dev") == BEIR / "qrels" / "dev.tsv"
    with pytest.raises(InputError, match="it has dev, test"):
        find_qrels(BEIR, "train")


def test_write_then_read_gives_the_same_records(tmp_path: Path) -> None:
    corpus = [BeirDoc(0, "c1", "Text one.", "Title", {"k": [1, 2]}), BeirDoc(0, "c2", "Zwei – ß.", "", {})]
    queries = [BeirQuery(0, "q1", "Was?", {"lang": "de"})]
    qrels = [BeirQrel(0, "q1", "c2", 3), BeirQrel(0, "q1", "c1", 0)]
    counts = write_beir(tmp_path, corpus, queries, qrels, split="dev")
    assert counts == {"corpus.jsonl": 2, "queries.jsonl": 1, "qrels/dev.tsv": 2}
    lines = (tmp_path / "qrels" / "dev.tsv").read_text().splitlines()
    assert lines == ["query-id\tcorpus-id\tscore", "q1\tc2\t3", "q1\tc1\t0"]
    assert json.loads((tmp_path / "corpus.jsonl").read_text().splitlines()[1])["text"] == "Zwei – ß."
    back = read_corpus(tmp_path / "corpus.jsonl")
    assert [(d.id, d.text, d.title, d.metadata) for d in back] == [(d.id, d.text, d.title, d.metadata) for d in corpus]
    assert [(q.id, q.text, q.metadata) for q in read_queries(tmp_path / "queries.jsonl")] == [
        ("q1", "Was?", {"lang": "de"})
    ]
    assert [(r.query_id, r.doc_id, r.score) for r in read_qrels_tsv(tmp_path / "qrels" / "dev.tsv")] == [
        ("q1", "c2", 3),
        ("q1", "c1", 0),
    ]


def test_escape_id_percent_encodes_only_unsafe_characters() -> None:
    assert escape_id("a\tb\nc d") == "a%09b%0Ac d"
    assert escape_id("plain/id#0-ab") == "plain/id#0-ab"
