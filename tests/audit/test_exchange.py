"""Labels out as JSONL and CSV, and a spreadsheet CSV back in: round trip, bad rows named, all or nothing."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from audit_fixtures import build_golden

from assay.audit.access import open_store
from assay.audit.exchange import export_csv, export_jsonl, import_csv
from assay.errors import AuditError
from assay.types import LabelEvent


def label(qid: str, cid: str, grade: int, who: str, reason: str | None = None) -> LabelEvent:
    return LabelEvent(query_id=qid, chunk_id=cid, grade=grade, reason=reason, source="human", annotator=who)


def write_csv(path: Path, rows: list[list[str]], delimiter: str = ",", bom: bool = False) -> Path:
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        csv.writer(handle, delimiter=delimiter).writerows(rows)
    return path


HEADER = ["query_id", "chunk_id", "grade", "reason", "annotator"]


def test_csv_round_trip_into_a_fresh_store(golden_dir: Path, tmp_path: Path) -> None:
    store, golden = open_store(golden_dir)
    store.record(label("q1", "c02", 3, "ann", reason='says "30 days", exactly;\nsecond line'))
    store.record(label("q2", "c07", 0, "bob"))
    store.record(label("q2", "c07", 1, "bob", reason="=SUM(A1)"))
    out = tmp_path / "labels.csv"
    assert export_csv(store, out, golden) == 2
    fresh_dir = build_golden(tmp_path / "fresh")
    fresh, fresh_golden = open_store(fresh_dir)
    result = import_csv(fresh, out, fresh_golden)
    assert (result.added, result.blank, result.unchanged) == (2, 0, 0)

    def key(s: object) -> list[tuple[object, ...]]:
        return [(lab.item, lab.annotator, lab.grade, lab.reason) for lab in s.current_labels(role="human")]  # type: ignore[attr-defined]

    assert key(fresh) == key(store)
    assert {lab.source for lab in fresh.current_labels(role="human")} == {"imported"}
    again = import_csv(fresh, out, fresh_golden)
    assert (again.added, again.unchanged) == (0, 2)


def test_export_sheet_to_fill_and_context_columns(golden_dir: Path, tmp_path: Path) -> None:
    store, golden = open_store(golden_dir)
    store.record(label("q1", "c02", 3, "ann"))
    out = tmp_path / "sheet.csv"
    assert export_csv(store, out, golden, annotator="ann", include_unlabelled=True) == 24
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    filled = [r for r in rows if r["grade"]]
    assert [(r["query_id"], r["chunk_id"], r["grade"]) for r in filled] == [("q1", "c02", "3")]
    c05 = next(r for r in rows if (r["query_id"], r["chunk_id"]) == ("q1", "c05"))
    assert c05["judge_grade"] == "unscored"
    assert next(r for r in rows if r["chunk_id"] == "c00")["question"] == "What is the refund window?"
    with pytest.raises(AuditError, match="annotator"):
        export_csv(store, out, golden, include_unlabelled=True)


def test_formula_cells_from_the_corpus_are_inert(tmp_path: Path) -> None:
    golden_dir = build_golden(tmp_path / "g")
    chunks = golden_dir / "chunks.jsonl"
    chunks.write_text(chunks.read_text().replace("Chunk 0 about refunds.", "=HYPERLINK(1)"))
    store, golden = open_store(golden_dir)
    store.record(label("q1", "c00", 1, "ann"))
    out = tmp_path / "x.csv"
    export_csv(store, out, golden)
    assert next(csv.DictReader(out.open()))["chunk_text"] == "'=HYPERLINK(1)"


def test_jsonl_export_has_header_and_every_event(golden_dir: Path, tmp_path: Path) -> None:
    store, _ = open_store(golden_dir)
    store.record(label("q1", "c02", 3, "ann"))
    store.undo("ann")
    out = tmp_path / "events.jsonl"
    assert export_jsonl(store, out) == 27
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0] == {"assay": "label-events", "version": 1}
    assert [row["kind"] for row in lines[-2:]] == ["label", "undo"]
    assert lines[-1]["undoes"] == lines[-2]["id"]


def test_bad_rows_are_named_and_nothing_is_written(golden_dir: Path, tmp_path: Path) -> None:
    store, golden = open_store(golden_dir)
    before = len(store.events())
    rows = [
        HEADER,
        ["q1", "c01", "2", "fine", "ann"],
        ["q9", "c01", "2", "", "ann"],
        ["q1", "c99", "1", "", "ann"],
        ["q1", "c02", "high", "", "ann"],
        ["q1", "c03", "4", "", "ann"],
        ["q1", "c04", "1", "", ""],
        ["q1", "c01", "3", "", "ann"],
        ["q1", "c06", "1", "x" * 2001, "ann"],
        ["q1", "c07", "1", "", "judge"],
    ]
    path = write_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(AuditError) as info:
        import_csv(store, path, golden)
    message = str(info.value)
    assert "8 bad row(s), nothing imported" in message
    for row, text in [
        (3, "query_id 'q9'"),
        (4, "chunk_id 'c99'"),
        (5, "grade 'high' is not 0, 1, 2 or 3"),
        (6, "grade '4'"),
        (7, "annotator is empty"),
        (8, "same item and annotator as row 2"),
        (9, "reason has 2001 characters; shorten it to at most 2000"),
        (10, "annotator name 'judge'"),
    ]:
        assert f"{path}:{row}: {text}" in message
    assert len(store.events()) == before


def test_blank_grades_skip_and_spreadsheet_dialects(golden_dir: Path, tmp_path: Path) -> None:
    store, golden = open_store(golden_dir)
    rows = [["query_id", "chunk_id", "grade", "reason"], ["q1", "c01", "2,0", ""], ["q1", "c02", "", ""]]
    path = write_csv(tmp_path / "semi.csv", rows, delimiter=";", bom=True)
    result = import_csv(store, path, golden, annotator="eve")
    assert (result.added, result.blank) == (1, 1)
    assert [(lab.chunk_id, lab.grade, lab.annotator) for lab in store.current_labels(role="human")] == [
        ("c01", 2, "eve")
    ]


def test_header_and_encoding_problems(golden_dir: Path, tmp_path: Path) -> None:
    store, golden = open_store(golden_dir)
    no_grade = write_csv(tmp_path / "h.csv", [["query_id", "chunk_id", "annotator"], ["q1", "c01", "ann"]])
    with pytest.raises(AuditError, match=r"h.csv:1: the header lacks grade"):
        import_csv(store, no_grade, golden)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("query_id,chunk_id,grade,reason,annotator\nq1,c01,1,caf\xe9,ann\n".encode("latin-1"))
    with pytest.raises(AuditError, match="CSV UTF-8"):
        import_csv(store, latin, golden)
    with pytest.raises(AuditError, match="no such file"):
        import_csv(store, tmp_path / "missing.csv", golden)


def test_golden_rebuild_keeps_the_store(golden_dir: Path, tmp_path: Path) -> None:
    store, _ = open_store(golden_dir)
    store.record(label("q1", "c01", 2, "ann"))
    copy = tmp_path / "copy"
    shutil.copytree(golden_dir, copy)
    again, _ = open_store(copy)
    assert [lab.grade for lab in again.current_labels(annotator="ann")] == [2]


def test_an_unterminated_quote_is_an_error_at_its_line_and_nothing_is_written(golden_dir: Path, tmp_path: Path) -> None:
    store, golden = open_store(golden_dir)
    before = len(store.events())
    path = tmp_path / "q.csv"
    path.write_text('query_id,chunk_id,grade,reason,annotator\nq1,c01,2,"too long,ann\nq1,c02,1,,ann\n')
    with pytest.raises(AuditError, match=r"q\.csv:2: a quote opened on this line is never closed"):
        import_csv(store, path, golden)
    assert len(store.events()) == before
