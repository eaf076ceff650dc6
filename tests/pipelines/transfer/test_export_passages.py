"""Exports keep the pooled spans: passages judged during an evaluation (passages.jsonl) go to BEIR as corpus entries
with their offsets and to TREC as qrels rows with a side file of offsets; a passage found in no document keeps its
text; the BEIR export imports back."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from transfer_fixture import T0, make_golden

from assay.formats.beir import read_corpus, read_qrels_tsv
from assay.formats.golden import GoldenSet
from assay.formats.trec import read_qrels
from assay.pipelines.transfer import export_golden, graded_pairs
from assay.pipelines.transfer.imports import import_beir
from assay.types import Passage, Provenance, RelevanceLabel, Unscored

NOWHERE = "A sentence some run retrieved that is in no document of the corpus."


def label(qid: str, pid: str, grade: int | None, source: str = "judge", minute: int = 0) -> RelevanceLabel:
    unscored = Unscored(reason="no JSON") if grade is None else None
    prov = Provenance(source=source, model="offline", time=T0 + timedelta(minutes=minute))  # type: ignore[arg-type]
    return RelevanceLabel(query_id=qid, chunk_id=pid, grade=grade, provenance=prov, unscored=unscored)


def with_passages() -> tuple[GoldenSet, Passage, Passage, Passage]:
    """The transfer fixture plus three judged passages: one inside a document, straddling its chunks (q0: judge 1,
    a person 3; q1: judge 0; q2: unscored), one in the document whose id holds a space (q3: 2), one found in no
    document (q1: 2)."""
    golden = make_golden()
    doc = max(golden.documents, key=lambda d: len(d.text))
    start, end = len(doc.text) // 3, len(doc.text) // 3 + 80
    inside = Passage(id=f"p:{doc.id}:{start}-{end}", text=doc.text[start:end], match="exact", doc_id=doc.id,
                     start=start, end=end, score=1.0)  # fmt: skip
    spaced = golden.document("notes with space.txt")
    opening = Passage(id=f"p:{spaced.id}:0-13", text="Opening hours", match="exact", doc_id=spaced.id, start=0,
                      end=13, score=1.0)  # fmt: skip
    nowhere = Passage(id="t:feedc0de", text=NOWHERE, match="unmatched")
    labels = [
        label("q0", inside.id, 1),
        label("q0", inside.id, 3, source="human", minute=1),
        label("q1", inside.id, 0),
        label("q2", inside.id, None),
        label("q3", opening.id, 2),
        label("q1", nowhere.id, 2),
    ]
    golden.add_passage_labels([inside, opening, nowhere], labels)
    return golden, inside, opening, nowhere


def beir_rows(folder: Path) -> set[tuple[str, str, int]]:
    return {(q.query_id, q.doc_id, q.score) for q in read_qrels_tsv(folder / "qrels" / "test.tsv")}


def test_beir_writes_each_passage_with_its_offsets_and_its_grades(tmp_path: Path) -> None:
    golden, inside, opening, nowhere = with_passages()
    summary = export_golden(golden, "beir", tmp_path / "beir")
    corpus = {d.id: d for d in read_corpus(tmp_path / "beir" / "corpus.jsonl")}
    doc = golden.document(inside.doc_id or "")
    entry = corpus[inside.id]
    assert entry.text == doc.text[inside.start : inside.end]
    assert {k: entry.metadata[k] for k in ("doc_id", "start", "end")} == {
        "doc_id": doc.id,
        "start": inside.start,
        "end": inside.end,
    }
    far = corpus[nowhere.id]
    assert far.text == NOWHERE and (far.metadata["doc_id"], far.metadata["start"], far.metadata["end"]) == (None,) * 3
    rows = beir_rows(tmp_path / "beir")
    # the person's grade stands before the judge's; the unscored pair is not a grade
    assert {r for r in rows if r[1] in (inside.id, opening.id, nowhere.id)} == {
        ("q0", inside.id, 3),
        ("q1", inside.id, 0),
        ("q3", opening.id, 2),
        ("q1", nowhere.id, 2),
    }
    assert summary.passages == 3 and summary.passage_grades == 4
    assert summary.unscored == len(golden.unscored()) + 1


def test_trec_writes_passage_rows_and_a_side_file_of_offsets(tmp_path: Path) -> None:
    golden, inside, opening, nowhere = with_passages()
    export_golden(golden, "trec", tmp_path / "trec")
    qrels = read_qrels(tmp_path / "trec" / "qrels.txt").to_dict()
    encoded = opening.id.replace(" ", "%20")  # TREC ids hold no whitespace: encoded the same in both files
    assert qrels["q0"][inside.id] == 3 and qrels["q1"][inside.id] == 0 and qrels["q3"][encoded] == 2
    assert qrels["q1"][nowhere.id] == 2 and inside.id not in qrels.get("q2", {})
    lines = (tmp_path / "trec" / "passages.jsonl").read_text(encoding="utf-8").splitlines()
    side = {row["id"]: row for row in map(json.loads, lines)}
    assert set(side) == {inside.id, encoded, nowhere.id}
    doc = golden.document(inside.doc_id or "")
    row = side[inside.id]
    assert (row["doc_id"], row["start"], row["end"]) == (doc.id, inside.start, inside.end)
    assert row["text"] == doc.text[row["start"] : row["end"]]
    assert side[encoded]["doc_id"] == "notes with space.txt"
    assert side[nowhere.id] == {"id": nowhere.id, "doc_id": None, "start": None, "end": None, "text": NOWHERE}


def test_min_grade_leaves_out_passages_without_a_grade_high_enough(tmp_path: Path) -> None:
    golden, inside, opening, nowhere = with_passages()
    summary = export_golden(golden, "trec", tmp_path / "trec", min_grade=2)
    side = [json.loads(line)["id"] for line in (tmp_path / "trec" / "passages.jsonl").read_text().splitlines()]
    assert side == [inside.id, opening.id.replace(" ", "%20"), nowhere.id]  # each keeps a grade of 2 or more
    qrels = read_qrels(tmp_path / "trec" / "qrels.txt").to_dict()
    assert inside.id in qrels["q0"] and inside.id not in qrels.get("q1", {})  # q1's 0 on it is below
    assert summary.below_min_grade == graded_pairs(golden, 2)[1] + 1


def test_the_beir_export_imports_back_with_passages_as_chunks_at_their_offsets(tmp_path: Path) -> None:
    golden, inside, _, nowhere = with_passages()
    export_golden(golden, "beir", tmp_path / "beir")
    back = import_beir(tmp_path / "beir").golden
    back.save(tmp_path / "golden")  # loads as a valid golden set
    loaded = GoldenSet.load(tmp_path / "golden")
    chunk = loaded.chunk(inside.id)
    assert (chunk.doc_id, chunk.start, chunk.end) == (inside.doc_id, inside.start, inside.end)
    assert loaded.document(chunk.doc_id).text[chunk.start : chunk.end] == chunk.text
    assert loaded.qrels_map()["q0"][inside.id] == 3
    assert loaded.chunk(nowhere.id).text == NOWHERE
    original = golden.document(inside.doc_id or "")
    assert loaded.document(original.id).text.split() == original.text.split()  # the passage did not add text


@pytest.mark.parametrize("fmt", ["ragas", "csv"])
def test_ragas_and_csv_say_that_they_leave_passages_out(tmp_path: Path, fmt: str) -> None:
    golden, *_ = with_passages()
    summary = export_golden(golden, fmt, tmp_path / fmt)
    assert any("3 judged passage(s)" in note for note in summary.notes)
