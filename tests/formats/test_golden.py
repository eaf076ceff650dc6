"""The golden-set folder: load, lookups, qrels precedence, labels added later, atomic save, clear errors."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import assay.formats.golden as golden_module
from assay.errors import DatasetError, FormatError
from assay.formats.golden import FILES, MANIFEST, GoldenSet
from assay.types import Chunk, Conversation, Document, Manifest, Provenance, RelevanceLabel, Turn, Unscored

V1 = Path(__file__).parents[1] / "fixtures" / "formats" / "v1" / "golden"
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _label(qid: str, cid: str, grade: int | None, source: str = "judge", minutes: int = 0) -> RelevanceLabel:
    unscored = Unscored(reason="bad output") if grade is None else None
    prov = Provenance(source=source, time=T0 + timedelta(minutes=minutes))  # type: ignore[arg-type]
    return RelevanceLabel(query_id=qid, chunk_id=cid, grade=grade, provenance=prov, unscored=unscored)


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Path:
    target = tmp_path / "golden"
    shutil.copytree(V1, target)
    return target


def test_version_1_fixture_loads_with_lookups() -> None:
    g = GoldenSet.load(V1)
    assert g.counts() == {
        "documents": 2,
        "chunks": 3,
        "questions": 2,
        "qrels": 5,
        "qrels_unscored": 1,
        "nuggets": 3,
    }
    assert g.chunk("policies/refunds.md#1-5e6f7a8b").heading_path == ["Refund policy", "Exceptions"]
    assert g.question("q2").nuggets[1].importance == "okay"
    assert g.document("faq.html").title == "Shipping FAQ"
    assert g.manifest.usage["judge"].cost_usd is None
    assert g.nugget_support("q2") == {"q2-n1": ["faq.html#0-9c0d1e2f"], "q2-n2": []}
    by_query = g.nugget_support_by_query()
    assert by_query["q2"] == g.nugget_support("q2")
    assert by_query == {q.id: g.nugget_support(q.id) for q in g.questions if g.nugget_support(q.id)}
    with pytest.raises(KeyError, match="no chunk with id 'nope'"):
        g.chunk("nope")


def test_qrels_map_excludes_unscored_and_prefers_human_labels() -> None:
    g = GoldenSet.load(V1)
    # refunds#0 has judge grade 1 and human grade 0: the human label wins; faq for q1 is unscored and left out.
    assert g.qrels_map() == {
        "q1": {"policies/refunds.md#1-5e6f7a8b": 3, "policies/refunds.md#0-1a2b3c4d": 0},
        "q2": {"faq.html#0-9c0d1e2f": 3},
    }
    assert g.qrels_map(source="judge") == {
        "q1": {"policies/refunds.md#1-5e6f7a8b": 3, "policies/refunds.md#0-1a2b3c4d": 1}
    }
    assert [(u.query_id, u.chunk_id) for u in g.unscored()] == [("q1", "faq.html#0-9c0d1e2f")]


def test_a_scored_label_from_any_source_beats_an_unscored_one() -> None:
    g = GoldenSet.load(V1)
    g.add_labels([_label("q1", "faq.html#0-9c0d1e2f", 0, source="generator")])
    assert g.qrels_map()["q1"]["faq.html#0-9c0d1e2f"] == 0
    assert g.unscored() == []
    assert len(g.unscored(source="judge")) == 1


def test_add_labels_keeps_the_newest_per_pair_and_source() -> None:
    g = GoldenSet.load(V1)
    n_before = len(g.qrels)
    cid = "policies/refunds.md#1-5e6f7a8b"
    old = _label("q2", cid, 1, minutes=0)
    new = _label("q2", cid, 2, minutes=5)
    assert g.add_labels([new, old]) == 1  # the older one arrives later and is ignored
    assert g.qrels_map(source="judge")["q2"][cid] == 2
    assert g.add_labels([_label("q2", cid, 0, minutes=10), _label("q2", cid, 3, source="human")]) == 2
    assert g.qrels_map(source="judge")["q2"][cid] == 0
    assert g.qrels_map()["q2"][cid] == 3  # human
    assert len(g.qrels) == n_before + 2


def test_save_load_round_trip(tmp_path: Path) -> None:
    g = GoldenSet.load(V1)
    g.save(tmp_path / "out")
    again = GoldenSet.load(tmp_path / "out")
    for part in FILES:
        assert [r.model_dump() for r in getattr(again, part)] == [r.model_dump() for r in getattr(g, part)]
    assert again.manifest.counts["qrels_unscored"] == 1
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted([MANIFEST, *FILES.values()])


def test_save_refuses_an_existing_folder_without_overwrite(tmp_path: Path, fixture_copy: Path) -> None:
    g = GoldenSet.load(fixture_copy)
    with pytest.raises(DatasetError, match=r"already exists and is not empty.*--overwrite"):
        g.save(fixture_copy)


def test_overwrite_keeps_the_audit_database(fixture_copy: Path) -> None:
    (fixture_copy / "audit.sqlite").write_bytes(b"SQLite format 3\x00 pretend")
    g = GoldenSet.load(fixture_copy)
    g.add_labels([_label("q2", "policies/refunds.md#0-1a2b3c4d", 0)])
    g.save(fixture_copy, overwrite=True)
    assert (fixture_copy / "audit.sqlite").read_bytes() == b"SQLite format 3\x00 pretend"
    assert len(GoldenSet.load(fixture_copy).qrels) == 6


def test_failure_midway_through_save_leaves_no_half_written_folder(
    tmp_path: Path, fixture_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = golden_module.write_jsonl

    def failing(path: Path, kind: str, records: object) -> int:
        if kind == "qrels":
            raise OSError("disk full")
        return real(path, kind, records)  # type: ignore[arg-type]

    monkeypatch.setattr(golden_module, "write_jsonl", failing)
    g = GoldenSet.load(fixture_copy)
    with pytest.raises(OSError, match="disk full"):
        g.save(tmp_path / "fresh")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden"]  # no "fresh", no temporary folder

    before = {p.name: p.read_bytes() for p in fixture_copy.iterdir()}
    with pytest.raises(OSError, match="disk full"):
        g.save(fixture_copy, overwrite=True)
    assert {p.name: p.read_bytes() for p in fixture_copy.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden"]


def test_overwrite_writes_the_conversations_it_holds_not_the_old_file(fixture_copy: Path) -> None:
    g = GoldenSet.load(fixture_copy)
    g.conversations = [Conversation(id="c1", turns=[Turn(question_id="q1", utterance="a gift card?")])]
    g.save(fixture_copy, overwrite=True)
    g.conversations[0].turns.append(Turn(question_id="q2", utterance="and delivery?"))
    g.save(fixture_copy, overwrite=True)  # the old conversations.jsonl is not carried over the new one
    assert [t.question_id for t in GoldenSet.load(fixture_copy).conversations[0].turns] == ["q1", "q2"]


def test_update_rewrites_only_the_named_files(fixture_copy: Path) -> None:
    docs_before = (fixture_copy / "documents.jsonl").read_bytes()
    g = GoldenSet.load(fixture_copy)
    g.add_labels([_label("q2", "policies/refunds.md#0-1a2b3c4d", 0)])
    g.update(fixture_copy, ["qrels"])
    assert (fixture_copy / "documents.jsonl").read_bytes() == docs_before
    again = GoldenSet.load(fixture_copy)
    assert again.qrels_map()["q2"]["policies/refunds.md#0-1a2b3c4d"] == 0
    assert again.manifest.counts["qrels"] == 6


def test_update_cut_short_between_its_renames_is_finished_by_the_next_load(
    fixture_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """qrels.jsonl and the manifest (whose counts follow it) are replaced together: a crash after the first rename
    leaves them disagreeing on disk, and the next load finishes the second before reading."""
    g = GoldenSet.load(fixture_copy)
    g.add_labels([_label("q2", "policies/refunds.md#0-1a2b3c4d", 0)])
    real = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name == MANIFEST and str(src).endswith(".staged"):
            raise KeyboardInterrupt  # the process stops between the two renames
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        g.update(fixture_copy, ["qrels"])
    monkeypatch.undo()
    assert "qrels" not in json.loads((fixture_copy / MANIFEST).read_text())["counts"]  # the old manifest, for now
    again = GoldenSet.load(fixture_copy)
    assert again.manifest.counts["qrels"] == len(again.qrels) == 6
    assert [p.name for p in fixture_copy.iterdir() if p.name.startswith(".")] == []


def test_update_needs_an_existing_golden_set(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not a golden set"):
        GoldenSet.load(V1).update(tmp_path)


def test_missing_folder_says_to_run_build(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"does not exist: run `assay build CORPUS -o FOLDER`"):
        GoldenSet.load(tmp_path / "nowhere")


def test_missing_file_is_named(fixture_copy: Path) -> None:
    (fixture_copy / "qrels.jsonl").unlink()
    (fixture_copy / MANIFEST).unlink()
    with pytest.raises(DatasetError, match=r"incomplete: missing manifest\.json, qrels\.jsonl\. run `assay build"):
        GoldenSet.load(fixture_copy)


def test_bad_line_in_a_golden_file_names_file_and_line(fixture_copy: Path) -> None:
    path = fixture_copy / "chunks.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + '{"id": "x", "doc_id": "d", "text": "t"}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"chunks\.jsonl:5: field 'ordinal': Field required"):
        GoldenSet.load(fixture_copy)


def test_duplicate_ids_name_both_lines(fixture_copy: Path) -> None:
    path = fixture_copy / "questions.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"questions\.jsonl:4: duplicate id 'q1' \(first on line 2\)"):
        GoldenSet.load(fixture_copy)


def test_dangling_references_are_refused(fixture_copy: Path) -> None:
    g = GoldenSet.load(fixture_copy)
    g.qrels.append(_label("q9", "ghost", 1))
    with pytest.raises(DatasetError, match=r"unknown question 'q9'.*unknown chunk 'ghost'"):
        g.save(fixture_copy, overwrite=True)
    assert len(GoldenSet.load(fixture_copy).qrels) == 5  # nothing was written


def test_a_hop_naming_no_chunk_is_refused_with_its_record(fixture_copy: Path) -> None:
    g = GoldenSet.load(fixture_copy)
    first = g.questions[0]
    first.hops = [g.chunks[0].id, "ghost"]
    with pytest.raises(DatasetError, match=rf"questions\.jsonl record 1 \({first.id!r}\) names unknown chunk "
                                           r"'ghost' among its hops"):  # fmt: skip
        g.save(fixture_copy, overwrite=True)
    first.hops = [g.chunks[0].id, g.chunks[1].id]
    g.save(fixture_copy, overwrite=True)
    assert GoldenSet.load(fixture_copy).questions[0].hops == [g.chunks[0].id, g.chunks[1].id]


def test_future_manifest_version_says_to_upgrade(fixture_copy: Path) -> None:
    path = fixture_copy / MANIFEST
    path.write_text(path.read_text().replace('"format_version": 1', '"format_version": 3'), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"format version 3 was written by assay 0\.1\.0.*pip install -U"):
        GoldenSet.load(fixture_copy)


def test_future_manifest_version_names_the_format_not_this_release(fixture_copy: Path) -> None:
    path = fixture_copy / MANIFEST
    manifest = json.loads(path.read_text())
    manifest["format_version"] = 99
    manifest["assay_version"] = "0.1.0"  # this assay: advising assay>=0.1.0 would send the user nowhere
    path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        GoldenSet.load(fixture_copy)
    assert "assay>=" not in str(caught.value)
    assert "an assay release that reads format version 99: pip install -U assay" in str(caught.value)
    del manifest["assay_version"]  # not recorded: "assay>=a newer assay" was the advice
    path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"written by a newer assay.*format version 99: pip install -U assay \("):
        GoldenSet.load(fixture_copy)


def test_a_bad_manifest_field_is_named(fixture_copy: Path) -> None:
    path = fixture_copy / MANIFEST
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["seeds"] = {"questions": "many"}
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(FormatError, match=r"manifest\.json: field 'seeds\.questions': Input should be a valid int"):
        GoldenSet.load(fixture_copy)


def test_duplicate_ids_in_memory_are_refused() -> None:
    doc = Document(id="d", source="d", text="t", content_hash="h")
    with pytest.raises(DatasetError, match="duplicate document id 'd'"):
        GoldenSet(manifest=Manifest(assay_version="0.1.0"), documents=[doc, doc])
    chunk = Chunk(id="c", doc_id="d", ordinal=0, text="t")
    with pytest.raises(DatasetError, match="duplicate chunk id 'c'"):
        GoldenSet(manifest=Manifest(assay_version="0.1.0"), chunks=[chunk, chunk])


def test_round_trip_of_a_real_ingest(tmp_path: Path) -> None:
    from assay.corpus import chunk_corpus, ingest

    result = ingest(Path(__file__).parents[1] / "fixtures" / "corpus" / "good")
    chunks = chunk_corpus(result.documents, max_tokens=60, overlap=15, min_tokens=8) + result.chunks_given
    g = GoldenSet(manifest=Manifest(assay_version="0.1.0"), documents=result.documents, chunks=chunks)
    g.save(tmp_path / "g")
    again = GoldenSet.load(tmp_path / "g")
    assert [c.model_dump() for c in again.chunks] == [c.model_dump() for c in chunks]
    assert again.chunk("manual-c1").model_extra == {"custom": "kept"}
    assert again.manifest.counts["chunks"] == len(chunks)


@pytest.mark.parametrize(
    ("sources", "origin"),
    [
        ([], "none"),
        (["human", "human"], "human"),
        (["imported"], "imported"),
        (["human", "imported"], "imported"),
        (["judge", "generator"], "judge"),
        (["human", "judge"], "mixed"),
        (["imported", "generator"], "mixed"),
    ],
)
def test_label_origin_comes_from_the_labels_provenance(sources: list[str], origin: str) -> None:
    gold = GoldenSet(
        Manifest(assay_version="0"), qrels=[_label(f"q{i}", "c", 1, source) for i, source in enumerate(sources)]
    )
    assert gold.label_origin() == origin
    assert sum(gold.label_sources().values()) == len(sources)
