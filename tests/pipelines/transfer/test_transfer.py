"""Export and import round trips: BEIR both ways, TREC qrels read back by pytrec_eval, RAGAS, CSV; atomic output;
imports of BEIR, TREC and RAGAS data that assay did not write (unknown ids counted, grades checked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval
from transfer_fixture import make_golden

import assay.pipelines.transfer.export as transfer
from assay.errors import FormatError, InputError
from assay.formats.beir import escape_id
from assay.formats.golden import GoldenSet
from assay.formats.topics import read_topics
from assay.pipelines.transfer import export_golden
from assay.pipelines.transfer.assembly import documents_from_chunks
from assay.pipelines.transfer.imports import import_beir, import_ragas, import_trec
from assay.types import Chunk

FIXTURES = Path(__file__).parents[2] / "fixtures" / "transfer"


def _trec_id(value: str) -> str:
    return value.replace(" ", "%20")


# ------------------------------------------------------------------------------------------------- round trips


def test_beir_round_trip_gives_the_same_questions_chunks_and_qrels(tmp_path: Path) -> None:
    golden = make_golden()
    summary = export_golden(golden, "beir", tmp_path / "beir")
    assert summary.unscored == len(golden.unscored()) > 0
    assert summary.grades == sum(len(d) for d in golden.qrels_map().values())
    back = import_beir(tmp_path / "beir").golden
    assert [q.model_dump() for q in back.questions] == [q.model_dump() for q in golden.questions]
    assert [c.model_dump() for c in back.chunks] == [c.model_dump() for c in golden.chunks]
    assert back.qrels_map() == golden.qrels_map()
    assert back.unscored() == []
    assert back.manifest.settings["source_format"] == "beir"
    back.save(tmp_path / "golden")  # a valid golden set: no dangling references
    assert GoldenSet.load(tmp_path / "golden").qrels_map() == golden.qrels_map()


def test_beir_round_trip_rebuilds_documents_around_their_chunks(tmp_path: Path) -> None:
    golden = make_golden()
    export_golden(golden, "beir", tmp_path / "beir")
    back = import_beir(tmp_path / "beir").golden
    for chunk in back.chunks:
        doc = back.document(chunk.doc_id)
        if chunk.start is not None and chunk.end is not None:
            assert doc.text[chunk.start : chunk.end] == chunk.text
    for original in golden.documents:
        rebuilt = back.document(original.id)
        assert rebuilt.title == original.title and rebuilt.metadata == original.metadata
        assert rebuilt.text.split() == original.text.split()  # the chunker covers every word of a document


def test_beir_questions_without_a_scored_label_need_all_queries(tmp_path: Path) -> None:
    golden = make_golden(every_question_scored=False)
    assert "q5" not in golden.qrels_map()
    export_golden(golden, "beir", tmp_path / "beir")
    summary = import_beir(tmp_path / "beir")
    assert [q.id for q in summary.golden.questions] == ["q0", "q1", "q2", "q3", "q4"]
    assert summary.skipped["queries_without_qrels"] == 1
    assert any("--all-queries" in w for w in summary.warnings)
    assert len(import_beir(tmp_path / "beir", all_queries=True).golden.questions) == 6


def test_trec_qrels_are_read_back_by_pytrec_eval_identically(tmp_path: Path) -> None:
    golden = make_golden()
    summary = export_golden(golden, "trec", tmp_path / "trec")
    assert summary.renamed_ids == 1  # "notes with space.txt#0-..." holds spaces
    with (tmp_path / "trec" / "qrels.txt").open() as handle:
        parsed = pytrec_eval.parse_qrel(handle)
    expected = {q: {_trec_id(c): g for c, g in docs.items()} for q, docs in golden.qrels_map().items()}
    assert parsed == expected
    topics = read_topics(tmp_path / "trec" / "topics.tsv")
    assert [(t.id, t.text) for t in topics] == [(q.id, q.text) for q in golden.questions]


def test_trec_export_with_min_grade_and_pytrec_eval_scores_agree(tmp_path: Path) -> None:
    golden = make_golden()
    summary = export_golden(golden, "trec", tmp_path / "trec", min_grade=2)
    table = golden.qrels_map()
    assert summary.below_min_grade == sum(1 for d in table.values() for g in d.values() if g < 2)
    with (tmp_path / "trec" / "qrels.txt").open() as handle:
        parsed = pytrec_eval.parse_qrel(handle)
    assert all(g >= 2 for docs in parsed.values() for g in docs.values())
    run = {q: {c: float(i) for i, c in enumerate(docs)} for q, docs in parsed.items()}
    direct = {q: {c: g for c, g in docs.items() if g >= 2} for q, docs in table.items()}
    direct = {q: {_trec_id(c): g for c, g in d.items()} for q, d in direct.items() if d}
    ours = pytrec_eval.RelevanceEvaluator(parsed, {"ndcg", "map"}).evaluate(run)
    assert ours == pytrec_eval.RelevanceEvaluator(direct, {"ndcg", "map"}).evaluate(run)


def test_trec_export_imports_back_with_the_beir_corpus(tmp_path: Path) -> None:
    golden = make_golden()
    export_golden(golden, "trec", tmp_path / "trec")
    export_golden(golden, "beir", tmp_path / "beir")
    trec = tmp_path / "trec"
    summary = import_trec(trec / "qrels.txt", trec / "topics.tsv", tmp_path / "beir" / "corpus.jsonl", source="human")
    back = summary.golden
    # The space in one id was percent-encoded in the TREC files but not in corpus.jsonl: that label is reported.
    assert summary.skipped["qrels_unknown_passage"] == 1
    assert any("'notes%20with%20space.txt#0-" in w for w in summary.warnings)
    expected = {q: {c: g for c, g in d.items() if " " not in c} for q, d in golden.qrels_map().items()}
    assert back.qrels_map() == expected
    assert {label.provenance.source for label in back.qrels} == {"human"}


def test_ragas_round_trip_keeps_ids_answers_and_relevant_contexts(tmp_path: Path) -> None:
    golden = make_golden()
    summary = export_golden(golden, "ragas", tmp_path / "ragas")
    # RAGAS's reference contexts hold the answer: by default the chunks graded 2 or 3, not the merely related 1s.
    relevant = {q: {c for c, g in d.items() if g >= 2} for q, d in golden.qrels_map().items()}
    assert summary.grades == sum(len(s) for s in relevant.values())
    assert summary.below_min_grade == sum(1 for d in golden.qrels_map().values() for g in d.values() if g < 2)
    for name in ("ragas.jsonl", "ragas.csv"):
        back = import_ragas(tmp_path / "ragas" / name, grade=3).golden
        assert [q.id for q in back.questions] == [q.id for q in golden.questions]
        assert [q.reference_answer for q in back.questions] == [q.reference_answer for q in golden.questions]
        assert {q: set(d) for q, d in back.qrels_map().items()} == {q: s for q, s in relevant.items() if s}
        assert {g for d in back.qrels_map().values() for g in d.values()} == {3}
        for chunk in back.chunks:
            assert chunk.text == golden.chunk(chunk.id).text


def test_ragas_contexts_are_ordered_by_grade(tmp_path: Path) -> None:
    golden = make_golden()
    export_golden(golden, "ragas", tmp_path / "ragas")
    rows = [json.loads(line) for line in (tmp_path / "ragas" / "ragas.jsonl").read_text().splitlines()]
    table = golden.qrels_map()
    for row in rows:
        grades = [table[row["query_id"]][cid] for cid in row["reference_context_ids"]]
        assert grades == sorted(grades, reverse=True) and all(g >= 2 for g in grades)
        assert row["reference_contexts"] == [golden.chunk(c).text for c in row["reference_context_ids"]]


def test_ragas_min_grade_one_adds_related_chunks(tmp_path: Path) -> None:
    golden = make_golden()
    table = golden.qrels_map()
    assert any(g == 1 for d in table.values() for g in d.values())  # the fixture has related-only chunks
    export_golden(golden, "ragas", tmp_path / "ragas", min_grade=1)
    rows = [json.loads(line) for line in (tmp_path / "ragas" / "ragas.jsonl").read_text().splitlines()]
    got = {row["query_id"]: set(row["reference_context_ids"]) for row in rows}
    assert got == {q.id: {c for c, g in table.get(q.id, {}).items() if g >= 1} for q in golden.questions}


# ------------------------------------------------------------------------------------------------- atomic output


def test_an_existing_output_folder_is_kept_without_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    with pytest.raises(InputError, match="pass --overwrite"):
        export_golden(make_golden(), "trec", out)
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    export_golden(make_golden(), "trec", out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["qrels.txt", "topics.tsv"]


def test_a_failure_midway_leaves_no_output_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> int:
        raise OSError("disk full")

    monkeypatch.setattr(transfer, "write_topics", broken)
    with pytest.raises(OSError, match="disk full"):
        export_golden(make_golden(), "trec", tmp_path / "out")
    assert list(tmp_path.iterdir()) == []  # neither the folder nor a temporary one


def test_unknown_format_and_bad_split(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="choose one of beir, trec, ragas, csv"):
        export_golden(make_golden(), "parquet", tmp_path / "x")
    with pytest.raises(InputError, match="cannot be a file name"):
        export_golden(make_golden(), "beir", tmp_path / "x", split="../up")


# ------------------------------------------------------------------------------------------ data assay did not write


def test_import_plain_beir_counts_what_it_cannot_use() -> None:
    summary = import_beir(FIXTURES / "beir")
    golden = summary.golden
    assert [c.id for c in golden.chunks] == ["d1", "2", "d3", "d5"]  # d4 has blank text
    assert golden.chunk("d1").heading_path == ["Refunds"] and golden.chunk("2").heading_path == []
    assert golden.document("d1").metadata == {"format": "beir", "url": "https://example.com/refunds"}
    assert golden.document("d1").source == "corpus.jsonl:1"
    assert golden.qrels_map() == {"q1": {"d1": 2, "2": 0}, "q2": {"2": 1}, "q3": {"d5": 1, "d3": 0}}
    assert [q.id for q in golden.questions] == ["q1", "q2", "q3"]
    assert golden.question("q3").type == "unknown" and golden.question("q3").metadata == {"topic": "shipping"}
    assert summary.skipped == {
        "passages_empty": 1,
        "qrels_unknown_passage": 2,  # d4 (blank, skipped) and d99
        "qrels_unknown_query": 1,
        "queries_without_qrels": 1,
    }
    assert any("1 qrels line(s) name a query" in w and "test.tsv:8" in w and "'q7'" in w for w in summary.warnings)
    assert {label.provenance.source for label in golden.qrels} == {"imported"}


def test_import_beir_grade_outside_the_scale(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"dev\.tsv:2: grade 4 is outside assay's scale") as info:
        import_beir(FIXTURES / "beir", split="dev")
    assert "--clip-grades" in str(info.value)
    summary = import_beir(FIXTURES / "beir", split="dev", clip_grades=True)
    assert summary.golden.qrels_map() == {"q9": {"d1": 3}}
    assert summary.skipped["grades_clipped"] == 1


def test_import_beir_with_a_bad_assay_metadata_line(tmp_path: Path) -> None:
    export_golden(make_golden(), "beir", tmp_path / "beir")
    corpus = tmp_path / "beir" / "corpus.jsonl"
    lines = corpus.read_text().splitlines()
    lines[2] = lines[2].replace('"ordinal": ', '"ordinal": "x", "was": ')
    corpus.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError, match=r"corpus\.jsonl:3: metadata\.assay field 'ordinal'"):
        import_beir(tmp_path / "beir")


@pytest.mark.parametrize("queries", ["topics.txt", "queries.tsv"])
def test_import_trec_with_sgml_or_tsv_topics(queries: str) -> None:
    trec = FIXTURES / "trec"
    summary = import_trec(trec / "qrels.txt", trec / queries, trec / "corpus.jsonl")
    golden = summary.golden
    assert golden.qrels_map() == {"301": {"FT911-3": 2, "FT911-5": 0}, "302": {"LA010189-7": 1, "FT911-3": 0}}
    assert summary.skipped["qrels_unknown_query"] == 1  # 303 is not a topic
    texts = {q.id: q.text for q in golden.questions}
    if queries == "topics.txt":
        assert texts == {"301": "International Organized Crime", "302": "Poliomyelitis and Post-Polio"}
    assert golden.chunk("FT911-3").heading_path == ["Mafia"]
    assert golden.chunk("FT911-3").text == golden.document("FT911-3").text


def test_import_trec_corpus_folder_and_premade_chunks(tmp_path: Path) -> None:
    good = FIXTURES.parent / "corpus" / "good"
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("301 0 policies/refunds.md 2\n301 0 manual-c2 1\n302 0 refunds 1\n")
    summary = import_trec(qrels, FIXTURES / "trec" / "queries.tsv", good)
    golden = summary.golden
    assert golden.qrels_map() == {"301": {"manual-c2": 1, "policies/refunds.md": 2}}
    assert summary.skipped["qrels_unknown_passage"] == 1  # "refunds": a folder's ids are relative paths
    assert summary.skipped["queries_without_qrels"] == 1
    assert golden.chunk("policies/refunds.md").text == golden.document("policies/refunds.md").text
    assert golden.chunk("manual-c2").doc_id == "manual"
    assert golden.document("manual").text == "Wash the jacket at 30 degrees.\n\nDo not tumble dry."
    assert summary.skipped["corpus_files_skipped"] == 0


def test_import_trec_grade_out_of_range_names_the_line(tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("301 0 FT911-3 1\n301 0 FT911-5 7\n")
    trec = FIXTURES / "trec"
    with pytest.raises(FormatError, match=r"q\.txt:2: grade 7"):
        import_trec(qrels, trec / "queries.tsv", trec / "corpus.jsonl")
    clipped = import_trec(qrels, trec / "queries.tsv", trec / "corpus.jsonl", clip_grades=True)
    assert clipped.skipped["grades_clipped"] == 1
    assert clipped.golden.qrels_map()["301"] == {"FT911-3": 1, "FT911-5": 3}  # 7 capped to the top of -1..3
    with pytest.raises(InputError, match=r"CORPUS must be a \.jsonl file"):
        import_trec(qrels, trec / "queries.tsv", trec / "queries.tsv")


def test_import_ragas_shares_equal_contexts_and_flags_run_columns() -> None:
    summary = import_ragas(FIXTURES / "ragas" / "testset.jsonl")
    golden = summary.golden
    assert len(golden.questions) == 3 and len(golden.chunks) == 3  # row 3 repeats row 1's context
    assert [q.type for q in golden.questions] == ["unknown", "multi-hop", "unknown"]
    q1, q3 = golden.questions[0], golden.questions[2]
    assert golden.qrels_map()[q1.id] == golden.qrels_map()[q3.id]
    assert {g for d in golden.qrels_map().values() for g in d.values()} == {2}
    assert q1.metadata == {"synthesizer_name": "single_hop_specifc_query_synthesizer"}
    assert summary.skipped["rows_with_run_columns"] == 1
    assert any("run, not golden data" in w for w in summary.warnings)
    again = import_ragas(FIXTURES / "ragas" / "testset.jsonl").golden
    assert [q.id for q in again.questions] == [q.id for q in golden.questions]  # ids are stable


def test_import_ragas_csv_and_conflicting_ids(tmp_path: Path) -> None:
    golden = import_ragas(FIXTURES / "ragas" / "testset.csv").golden
    assert [q.type for q in golden.questions] == ["unknown", "multi-hop"]
    assert len(golden.chunks) == 3
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"user_input": "A?", "reference_contexts": ["one"], "reference_context_ids": ["c1"]}\n'
        '{"user_input": "B?", "reference_contexts": ["two"], "reference_context_ids": ["c1"]}\n'
    )
    with pytest.raises(FormatError, match=r"bad\.jsonl:2: context id 'c1' with a text other than on line 1"):
        import_ragas(bad)
    with pytest.raises(InputError, match="must be 1, 2 or 3"):
        import_ragas(bad, grade=0)


def test_documents_from_chunks_falls_back_to_joining_when_offsets_disagree() -> None:
    a = Chunk(id="a", doc_id="d", ordinal=0, text="Hello world.", start=0, end=12)
    b = Chunk(id="b", doc_id="d", ordinal=1, text="Other text!", start=6, end=17)  # overlap disagrees
    (doc,) = documents_from_chunks([a, b], {"d": {"title": "T"}})
    assert doc.text == "Hello world.\n\nOther text!" and doc.title == "T"
    c = Chunk(id="c", doc_id="e", ordinal=0, text="abc def", start=0, end=7)
    d = Chunk(id="d", doc_id="e", ordinal=1, text="def ghi", start=4, end=11)
    f = Chunk(id="f", doc_id="e", ordinal=2, text="xyz", start=14, end=17)
    (doc2,) = documents_from_chunks([f, d, c], {})
    assert doc2.text == "abc def ghi\n\n\nxyz"
    assert escape_id("x y") == "x y"  # BEIR keeps spaces; only TREC encodes them
