"""Spreadsheet CSV: the standing label per pair matches qrels_map, unscored pairs listed without a grade, formula
cells neutralized, hand-counted question rows; and the query-file readers used by `assay import trec`."""

from __future__ import annotations

import csv
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from assay.errors import FormatError
from assay.formats.golden import SOURCE_PRECEDENCE, GoldenSet
from assay.formats.tabular import (
    LABEL_COLUMNS,
    QUESTION_COLUMNS,
    label_rows,
    neutralize,
    question_rows,
    standing_labels,
    write_csv,
)
from assay.formats.topics import read_topics, write_topics
from assay.types import Chunk, Document, Manifest, Provenance, Question, RelevanceLabel, Unscored

V1 = Path(__file__).parents[1] / "fixtures" / "formats" / "v1" / "golden"
TREC = Path(__file__).parents[1] / "fixtures" / "transfer" / "trec"
T0 = datetime(2025, 2, 1, tzinfo=UTC)


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_v1_fixture_labels_by_hand(tmp_path: Path) -> None:
    golden = GoldenSet.load(V1)
    rows = label_rows(golden)
    assert (rows.scored, rows.unscored, rows.below_min_grade) == (3, 1, 0)
    write_csv(tmp_path / "labels.csv", LABEL_COLUMNS, rows.rows)
    got = [(r["query_id"], r["chunk_id"], r["grade"], r["source"]) for r in _read(tmp_path / "labels.csv")]
    # q1: refunds#1 judge 3; refunds#0 judge 1 overridden by human 0; faq unscored (listed last, no grade).
    assert got == [
        ("q1", "policies/refunds.md#1-5e6f7a8b", "3", "judge"),
        ("q1", "policies/refunds.md#0-1a2b3c4d", "0", "human"),
        ("q1", "faq.html#0-9c0d1e2f", "", "judge"),
        ("q2", "faq.html#0-9c0d1e2f", "3", "generator"),
    ]
    first = _read(tmp_path / "labels.csv")[2]
    assert first["unscored_reason"] == "output did not match the schema"
    assert first["heading_path"] == "Shipping" and first["doc_title"] == "Shipping FAQ"
    kept = label_rows(golden, min_grade=1)
    assert [(r["query_id"], r["grade"]) for r in kept.rows] == [("q1", 3), ("q2", 3)]
    assert kept.below_min_grade == 1  # the human 0; the unscored pair is counted as unscored, not as below


def test_v1_fixture_question_rows_by_hand() -> None:
    rows = question_rows(GoldenSet.load(V1))
    assert [(r["query_id"], r["labels"], r["relevant"], r["unscored"]) for r in rows] == [
        ("q1", 2, 1, 1),
        ("q2", 1, 1, 0),
    ]
    assert rows[0]["difficulty"] == "easy" and rows[1]["difficulty"] == ""
    assert [r["relevant"] for r in question_rows(GoldenSet.load(V1), min_grade=0)] == [2, 1]


def _random_golden(seed: int) -> GoldenSet:
    rng = random.Random(seed)
    docs = [Document(id="d", source="d", text="x", content_hash="0")]
    chunks = [Chunk(id=f"c{i}", doc_id="d", ordinal=i, text=f"text {i}") for i in range(4)]
    questions = [Question(id=f"q{i}", text=f"question {i}") for i in range(3)]
    labels = []
    for _ in range(40):
        grade = rng.choice([None, -1, 0, 1, 2, 3])
        prov = Provenance(
            source=rng.choice(["generator", "judge", "human", "imported"]),
            time=T0 + timedelta(minutes=rng.randint(0, 5)),
        )
        labels.append(
            RelevanceLabel(
                query_id=rng.choice(questions).id,
                chunk_id=rng.choice(chunks).id,
                grade=grade,
                provenance=prov,
                unscored=Unscored(reason="x") if grade is None else None,
            )
        )
    return GoldenSet(Manifest(assay_version="0"), docs, chunks, questions, labels)


@pytest.mark.parametrize("seed", range(25))
def test_standing_labels_agree_with_qrels_map_and_unscored(seed: int) -> None:
    golden = _random_golden(seed)
    standing = standing_labels(golden)
    scored = {(s.query_id, s.chunk_id): s.grade for s in standing if s.grade is not None}
    expected = {(q, c): g for q, docs in golden.qrels_map().items() for c, g in docs.items()}
    assert scored == expected
    assert [s for s in standing if s.grade is None] == golden.unscored()
    # The standing label of a pair is the one qrels_map would take for that label's own source.
    for label in standing:
        if label.grade is not None:
            same_source = golden.qrels_map(source=label.provenance.source)
            assert same_source[label.query_id][label.chunk_id] == label.grade
    # Independently of GoldenSet: per pair, among its scored labels (all of them when none is scored), the best
    # source in SOURCE_PRECEDENCE, then the newest, then the last in file order; scored pairs listed first.
    rank = {name: i for i, name in enumerate(SOURCE_PRECEDENCE)}
    by_pair: dict[tuple[str, str], list[tuple[int, RelevanceLabel]]] = {}
    for index, label in enumerate(golden.qrels):
        by_pair.setdefault((label.query_id, label.chunk_id), []).append((index, label))
    expected_label = {}
    for pair, entries in by_pair.items():
        pool = [e for e in entries if e[1].grade is not None] or entries
        best = max(pool, key=lambda e: (-rank[e[1].provenance.source], e[1].provenance.time, e[0]))
        expected_label[pair] = best[1]
    assert {(s.query_id, s.chunk_id): s for s in standing} == expected_label
    assert len(standing) == len(expected_label)
    grades = [s.grade for s in standing]
    assert grades == sorted(grades, key=lambda g: g is None)


def test_formula_cells_are_neutralized_only_in_text_columns(tmp_path: Path) -> None:
    assert neutralize("=1+1") == "'=1+1" and neutralize("@cmd") == "'@cmd" and neutralize("plain") == "plain"
    rows = [{"query_id": "-q1", "question": '=HYPERLINK("x")', "chunk_text": "+42", "grade": -1, "rationale": "-ok"}]
    write_csv(tmp_path / "l.csv", LABEL_COLUMNS, rows)
    (row,) = _read(tmp_path / "l.csv")
    assert row["question"] == '\'=HYPERLINK("x")' and row["chunk_text"] == "'+42" and row["rationale"] == "'-ok"
    assert row["query_id"] == "-q1" and row["grade"] == "-1"  # ids and grades unchanged
    write_csv(tmp_path / "q.csv", QUESTION_COLUMNS, [{"query_id": "q", "reference_answer": "=2"}])
    assert _read(tmp_path / "q.csv")[0]["reference_answer"] == "'=2"


# ------------------------------------------------------------------------------------------------ query files


def test_sgml_topics_use_num_and_title() -> None:
    topics = read_topics(TREC / "topics.txt")
    assert [(t.id, t.text, t.line) for t in topics] == [
        ("301", "International Organized Crime", 1),
        ("302", "Poliomyelitis and Post-Polio", 12),
    ]


def test_tsv_jsonl_topics_and_write_back(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"_id": 1, "text": "first  query"}\n{"query_id": "b", "query": "second"}\n')
    assert [(t.id, t.text) for t in read_topics(path)] == [("1", "first query"), ("b", "second")]
    write_topics(tmp_path / "t.tsv", [("q1", "multi\nline\tquestion"), ("q 2", "x")])
    assert (tmp_path / "t.tsv").read_text() == "q1\tmulti line question\nq 2\tx\n"
    assert [(t.id, t.text) for t in read_topics(tmp_path / "t.tsv")] == [("q1", "multi line question"), ("q 2", "x")]
    space = tmp_path / "space.txt"
    space.write_text("301 what is it\n\n302  another one\n")
    assert [(t.id, t.text, t.line) for t in read_topics(space)] == [("301", "what is it", 1), ("302", "another one", 3)]


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        ("a.tsv", "q1\tfine\nq2\n", 2, "a query id without text"),
        ("a.tsv", "q1\tfine\nq1\tagain\n", 2, r"query id 'q1' again \(first on line 1\)"),
        ("a.jsonl", '{"_id": "q1", "text": "x"}\n{"_id": "q2"}\n', 2, "no query id or no query text"),
        ("a.txt", "<top>\n<num> Number: 9\n</top>\n", 1, "without <num> or <title>"),
    ],
)
def test_topic_errors_name_file_and_line(tmp_path: Path, name: str, text: str, line: int, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(FormatError, match=message) as info:
        read_topics(path)
    assert info.value.line == line
