"""Span labels (passages judged during an evaluation) in the audit: listed like chunk labels, shown as a span marked
inside its document, and a person's grade stored with provenance and written into passages.jsonl, where the pool
reads it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from audit_fixtures import GUIDE, NOWHERE, SPAN, add_spans, build_golden, span_id
from click.testing import CliRunner
from starlette.testclient import TestClient

from assay.audit.access import open_store
from assay.audit.app import create_app
from assay.audit.pool import join_pool
from assay.audit.store import LabelStore
from assay.cli import main
from assay.formats.golden import GoldenSet

BASE = "http://127.0.0.1:8765"


@pytest.fixture
def spans_dir(tmp_path: Path) -> Path:
    return add_spans(build_golden(tmp_path / "golden"))


def client_for(golden_dir: Path, annotator: str = "ann") -> tuple[TestClient, dict[str, str]]:
    app = create_app(golden_dir, annotator=annotator)
    return TestClient(app, base_url=BASE), {"X-Assay-Token": app.state.token, "Origin": BASE}


def index_of(client: TestClient, query_id: str, item_id: str) -> int:
    rows = client.get("/api/queue").json()["items"]
    return next(row["i"] for row in rows if (row["query_id"], row["chunk_id"]) == (query_id, item_id))


def standing(golden_dir: Path, query_id: str, item_id: str) -> tuple[int | None, str, str | None, str | None]:
    label = GoldenSet.load(golden_dir).passage_labels()[(query_id, item_id)]
    prov = label.provenance
    return label.grade, prov.source, prov.annotator, prov.rationale


def test_span_labels_are_in_the_queue_beside_chunk_labels(spans_dir: Path) -> None:
    client, _ = client_for(spans_dir)
    rows = client.get("/api/queue").json()["items"]
    spans = {(row["query_id"], row["chunk_id"]) for row in rows if row["kind"] == "span"}
    assert spans == {("q1", span_id()), ("q2", span_id()), ("q1", "t:0123abcd")}
    assert {row["kind"] for row in rows if row["chunk_id"].startswith("c")} == {"chunk"}


def test_a_located_span_is_shown_marked_inside_its_document(spans_dir: Path) -> None:
    client, _ = client_for(spans_dir)
    view = client.get(f"/api/item?i={index_of(client, 'q1', span_id())}").json()
    span = view["span"]
    assert view["kind"] == "span" and view["question"] == "What is the refund window?"
    assert span["located"] and span["doc_id"] == "guide" and span["doc_title"] == "Refund guide"
    assert span["text"] == SPAN == GUIDE[span["start"] : span["end"]]
    shown = span["before"] + span["text"] + span["after"]
    assert GUIDE[span["start"] - len(span["before"]) : span["end"] + len(span["after"])] == shown
    assert "how refunds work" in span["before"] and "store credit" in span["after"]
    assert [j["grade"] for j in view["judges"]] == [1]


def test_a_passage_found_in_no_document_shows_its_own_text_and_says_so(spans_dir: Path) -> None:
    client, _ = client_for(spans_dir)
    span = client.get(f"/api/item?i={index_of(client, 'q1', 't:0123abcd')}").json()["span"]
    assert span["located"] is False and span["text"] == NOWHERE
    assert "no golden document" in span["note"]


def test_a_human_grade_of_a_span_is_stored_with_provenance_and_joins_the_pool(spans_dir: Path) -> None:
    client, headers = client_for(spans_dir)
    i = index_of(client, "q1", span_id())
    answer = client.post("/api/label", json={"i": i, "grade": 3, "reason": "gives the 30 days"}, headers=headers)
    assert answer.status_code == 200, answer.text
    events = [e for e in LabelStore.in_folder(spans_dir).history("q1", span_id()) if e.source == "human"]
    assert [(e.grade, e.annotator, e.reason) for e in events] == [(3, "ann", "gives the 30 days")]
    # the pool reads passages.jsonl: the person's grade stands before the judge's, which is kept beside it
    assert standing(spans_dir, "q1", span_id()) == (3, "human", "ann", "gives the 30 days")
    passage = next(p for p in GoldenSet.load(spans_dir).passages if p.id == span_id())
    assert sorted((lab.query_id, lab.provenance.source, lab.grade) for lab in passage.labels) == [
        ("q1", "human", 3),
        ("q1", "judge", 1),
        ("q2", "judge", 0),
    ]
    client.post("/api/undo", json={}, headers=headers)
    assert standing(spans_dir, "q1", span_id())[:2] == (1, "judge")


def test_several_annotators_give_the_lower_median_and_a_regrade_replaces(spans_dir: Path) -> None:
    for name, grade in (("ann", 3), ("bob", 2), ("cy", 0)):
        client, headers = client_for(spans_dir, name)
        client.post("/api/label", json={"i": index_of(client, "q2", span_id()), "grade": grade}, headers=headers)
    grade, source, annotator, _ = standing(spans_dir, "q2", span_id())
    assert (grade, source, annotator) == (2, "human", "consensus of ann, bob, cy")
    client, headers = client_for(spans_dir, "cy")
    client.post("/api/label", json={"i": index_of(client, "q2", span_id()), "grade": 3}, headers=headers)
    assert standing(spans_dir, "q2", span_id())[0] == 3
    humans = [lab for p in GoldenSet.load(spans_dir).passages for lab in p.labels if lab.provenance.source == "human"]
    assert len(humans) == 1


def test_agreement_counts_span_labels(spans_dir: Path) -> None:
    client, headers = client_for(spans_dir)
    client.post("/api/label", json={"i": index_of(client, "q1", span_id()), "grade": 3}, headers=headers)
    store, golden = open_store(spans_dir)
    pairs = store.audited_pairs(golden.questions)
    assert [(p.query_id, p.chunk_id, p.judge_grade, p.human_grade) for p in pairs] == [("q1", span_id(), 1, 3)]
    result = CliRunner().invoke(main, ["agreement", str(spans_dir), "--format", "json", "--resamples", "100"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["n_items"] == 1 and report["overall"]["confusion_matrix"][1][3] == 1


def test_opening_twice_imports_span_labels_once_and_an_old_store_keeps_loading(tmp_path: Path) -> None:
    folder = build_golden(tmp_path / "golden")
    store, _ = open_store(folder)  # a store made before the golden set had passages
    chunk_items, migrations = store.items(), store.migrations()
    add_spans(folder)
    store, _ = open_store(folder)
    events = len(store.events())
    store, _ = open_store(folder)
    assert len(store.events()) == events and store.migrations() == migrations
    assert store.items()[: len(chunk_items)] == chunk_items
    assert store.items()[len(chunk_items) :] == [("q1", span_id()), ("q2", span_id()), ("q1", "t:0123abcd")]


def test_a_csv_grade_of_a_span_joins_the_pool_and_exports_with_the_passage_text(spans_dir: Path) -> None:
    sheet = spans_dir.parent / "sheet.csv"
    sheet.write_text(f"query_id,chunk_id,grade,reason\nq1,{span_id()},2,partly\nq1,t:0123abcd,0,\n")
    runner = CliRunner()
    result = runner.invoke(main, ["labels", "import", str(spans_dir), str(sheet), "--annotator", "dee"])
    assert result.exit_code == 0, result.output
    assert standing(spans_dir, "q1", span_id()) == (2, "human", "dee", "partly")
    assert standing(spans_dir, "q1", "t:0123abcd")[:2] == (0, "human")
    out = spans_dir.parent / "labels.csv"
    assert runner.invoke(main, ["labels", "export", str(spans_dir), "-o", str(out)]).exit_code == 0
    rows = {row["chunk_id"]: row for row in csv.DictReader(out.open())}
    assert rows["t:0123abcd"]["chunk_text"] == NOWHERE and rows[span_id()]["judge_grade"] == "1"


def test_a_human_label_the_file_lost_comes_back_and_a_deleted_store_removes_nothing(spans_dir: Path) -> None:
    client, headers = client_for(spans_dir)
    client.post("/api/label", json={"i": index_of(client, "q1", span_id()), "grade": 3}, headers=headers)
    kept = (spans_dir / "passages.jsonl").read_text()
    golden = GoldenSet.load(spans_dir)  # an evaluation that loaded the set before the grade rewrites the file
    for passage in golden.passages:
        passage.labels[:] = [lab for lab in passage.labels if lab.provenance.source != "human"]
    golden.update(spans_dir, ("passages",))
    assert standing(spans_dir, "q1", span_id())[1] == "judge"
    assert join_pool(LabelStore.in_folder(spans_dir), spans_dir) == 1
    assert standing(spans_dir, "q1", span_id())[:2] == (3, "human")
    for path in spans_dir.glob("audit.sqlite*"):
        path.unlink()
    assert join_pool(LabelStore.in_folder(spans_dir), spans_dir) == 0
    assert (spans_dir / "passages.jsonl").read_text() == kept
