"""Pins of pipelines/transfer/imports.py: what each importer records (manifest settings, document sources, question
types and provenance, skip counts and warnings) and each refusal's whole message, on small hand-written inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import FormatError, InputError
from assay.pipelines.transfer.imports import import_beir, import_conversations, import_ragas, import_trec


def _lines(path: Path, *rows: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _beir(tmp_path: Path, corpus: list[dict[str, Any]], queries: list[dict[str, Any]], qrels: str) -> Path:
    base = tmp_path / "beir"
    _lines(base / "corpus.jsonl", *corpus)
    _lines(base / "queries.jsonl", *queries)
    (base / "qrels").mkdir()
    (base / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels, encoding="utf-8")
    return base


# ---------------------------------------------------------------------------------------------------- BEIR


def test_beir_plain_entries_become_documents_named_by_file_and_line(tmp_path: Path) -> None:
    base = _beir(
        tmp_path,
        [{"_id": "d1", "title": "Fees", "text": "A fee of $5."}, {"_id": "d2", "title": "", "text": " "},
         {"_id": "d3", "text": ""}, {"_id": "d4", "title": "", "text": "Open daily."}],
        [{"_id": "q1", "text": "What fee?"}, {"_id": "q2", "text": "When open?"}],
        "q1\td1\t2\nq2\td4\t1\n",
    )  # fmt: skip
    summary = import_beir(base, source="human")
    golden = summary.golden
    assert [(d.id, d.source, d.title, d.metadata) for d in golden.documents] == [
        ("d1", "corpus.jsonl:1", "Fees", {"format": "beir"}),
        ("d4", "corpus.jsonl:4", None, {"format": "beir"}),
    ]
    assert summary.skipped["passages_empty"] == 2
    assert [(q.id, q.type, q.provenance.source) for q in golden.questions] == [
        ("q1", "unknown", "human"),
        ("q2", "unknown", "human"),
    ]
    assert golden.manifest.settings == {
        "source_format": "beir",
        "import": {
            "files": {"corpus": str(base / "corpus.jsonl"), "queries": str(base / "queries.jsonl"),
                      "qrels": str(base / "qrels" / "test.tsv")},
            "split": "test",
            "label_source": "human",
        },
    }  # fmt: skip


def test_beir_assay_chunks_without_a_document_record_are_named_by_file_and_line(tmp_path: Path) -> None:
    assay = {"doc_id": "doc", "ordinal": 0}
    base = _beir(tmp_path, [{"_id": "c1", "text": "One.", "metadata": {"assay": assay}}],
                 [{"_id": "q1", "text": "Q?"}], "q1\tc1\t1\n")  # fmt: skip
    assert [(d.id, d.source) for d in import_beir(base).golden.documents] == [("doc", "corpus.jsonl:1")]


def test_beir_refusals_name_the_folder_or_the_query_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        import_beir(tmp_path / "nothing")
    assert str(caught.value) == (
        f"{tmp_path / 'nothing'} is not a folder: give the BEIR dataset folder (with corpus.jsonl and queries.jsonl)"
    )
    base = _beir(tmp_path, [{"_id": "d1", "text": "x"}],
                 [{"_id": "q1", "text": "Q?"}, {"_id": "q2", "text": "R?", "metadata": {"assay": {"type": 5}}}],
                 "q1\td1\t1\n")  # fmt: skip
    with pytest.raises(FormatError) as bad:
        import_beir(base)
    assert (bad.value.path, bad.value.line) == (str(base / "queries.jsonl"), 2)


# ---------------------------------------------------------------------------------------------------- TREC


def _trec(tmp_path: Path, qrels: bytes) -> tuple[Path, Path, Path]:
    (tmp_path / "qrels.txt").write_bytes(qrels)
    (tmp_path / "topics.tsv").write_text("q1\tWhat fee?\nq2\tWhen open?\n", encoding="utf-8")
    _lines(tmp_path / "corpus.jsonl", {"id": "d1", "text": "A fee of $5."}, {"id": "d2", "text": "Open daily."})
    return tmp_path / "qrels.txt", tmp_path / "topics.tsv", tmp_path / "corpus.jsonl"


def test_trec_questions_settings_and_kept_queries(tmp_path: Path) -> None:
    qrels, topics, corpus = _trec(tmp_path, b"q1 0 d1 3\nq1 0 d2 -1\nq1 0 gone 1\n")
    summary = import_trec(qrels, topics, corpus, source="human", all_queries=True)
    golden = summary.golden
    assert [(q.id, q.type, q.provenance.source) for q in golden.questions] == [
        ("q1", "unknown", "human"),
        ("q2", "unknown", "human"),  # kept without qrels: all_queries
    ]
    assert sorted((lab.chunk_id, lab.grade) for lab in golden.qrels) == [("d1", 3), ("d2", -1)]
    assert golden.manifest.settings == {
        "source_format": "trec",
        "import": {"files": {"qrels": str(qrels), "queries": str(topics), "corpus": str(corpus)},
                   "label_source": "human"},
    }  # fmt: skip
    assert summary.warnings == [
        "1 qrels line(s) name a passage that is not in the files and were not imported "
        f"(first: {qrels}: query 'q1', passage 'gone'); check that ids match."
    ]


def test_trec_an_out_of_scale_grade_is_named_by_its_line_even_after_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    qrels, topics, corpus = _trec(tmp_path, b"q1 0 d\xe91 1\nq1 0 d1 1\nq1 0 d2 7\n")
    with pytest.raises(FormatError) as caught:
        import_trec(qrels, topics, corpus)
    assert (caught.value.path, caught.value.line) == (str(qrels), 3)


# --------------------------------------------------------------------------------------------------- RAGAS


def test_ragas_questions_passages_and_manifest(tmp_path: Path) -> None:
    path = _lines(
        tmp_path / "set.jsonl",
        {"user_input": "Same?", "reference_contexts": ["Alpha."], "synthesizer_name": "my-multi-hop-one",
         "note": "kept", "tags": ["dropped"], "response": "a run column"},
        {"user_input": "Same?", "reference_contexts": ["Beta.", "Alpha."], "response": ""},
        {"user_input": "Third", "retrieved_contexts": ["x"]},
    )  # fmt: skip
    summary = import_ragas(path, grade=1, source="human")
    golden = summary.golden
    qids = [q.id for q in golden.questions]
    assert qids[0].startswith("q-") and len(qids[0]) == 2 + 12  # "q-" and a 6-byte hex digest
    assert qids[1] == qids[0] + "-2"  # the same text again: the line tells them apart
    assert [(q.type, q.metadata, q.provenance.source) for q in golden.questions] == [
        ("multi-hop", {"synthesizer_name": "my-multi-hop-one", "note": "kept"}, "human"),
        ("unknown", {}, "human"),
        ("unknown", {}, "human"),
    ]
    assert all(c.id.startswith("ctx-") for c in golden.chunks)
    assert [(d.source, d.text) for d in golden.documents] == [("set.jsonl:1", "Alpha."), ("set.jsonl:2", "Beta.")]
    assert {lab.grade for lab in golden.qrels} == {1}
    assert summary.skipped["rows_with_run_columns"] == 2  # the empty response is not a run column
    assert summary.warnings == [
        "2 row(s) carry retrieved contexts or responses: those are a run, not golden data, and were not imported "
        "(evaluate them with `assay eval`)."
    ]
    assert golden.manifest.settings == {
        "source_format": "ragas",
        "import": {"files": {"testset": str(path)}, "schema": "ragas 0.3 SingleTurnSample", "grade": 1,
                   "label_source": "human"},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ([{"user_input": "a", "query_id": "q1"}, {"user_input": "b", "query_id": "q1"}],
         "2: query_id 'q1' again (first on line 1) (expected unique ids)"),
        ([{"user_input": "a"}, {"user_input": "b", "reference_contexts": [" "]}],
         "2: an empty reference context (expected the text of each reference context)"),
        ([{"user_input": "a", "reference_contexts": ["x"], "reference_context_ids": ["c"]},
          {"user_input": "b", "reference_contexts": ["y"], "reference_context_ids": ["c"]}],
         "2: context id 'c' with a text other than on line 1 (expected one text per id)"),
    ],
)  # fmt: skip
def test_ragas_refusals_name_the_file_and_line(tmp_path: Path, rows: list[dict[str, Any]], said: str) -> None:
    path = _lines(tmp_path / "set.jsonl", *rows)
    with pytest.raises(FormatError) as caught:
        import_ragas(path)
    assert str(caught.value) == f"{path}:{said}"


# ------------------------------------------------------------------------------------------- conversations


def _deepeval(tmp_path: Path, *cases: dict[str, Any]) -> Path:
    path = tmp_path / "d.json"
    path.write_text(json.dumps(list(cases)), encoding="utf-8")
    return path


_TURNS = [
    {"role": "user", "content": "What does the Ranger cost?"},
    {"role": "assistant", "content": "$40.", "retrieval_context": ["The Ranger costs $40 a year."]},
]


def test_conversations_default_grade_sources_warning_and_manifest(tmp_path: Path) -> None:
    path = _deepeval(tmp_path, {"name": "c1", "turns": _TURNS})
    summary = import_conversations(path, "deepeval")
    golden = summary.golden
    assert [lab.grade for lab in golden.qrels] == [2]
    assert [d.source for d in golden.documents] == ["d.json"]
    assert summary.warnings == [
        "1 turn(s) have no standalone rewrite in the file: their text is the utterance (flags.rewrite_missing); "
        "write the rewrites in assay audit"
    ]
    assert golden.manifest.settings == {
        "source_format": "deepeval",
        "import": {"files": {"deepeval": str(path)}, "grade": 2, "label_source": "imported"},
    }
    assert [lab.grade for lab in import_conversations(path, "deepeval", grade=1).golden.qrels] == [1]


def test_conversations_refusals(tmp_path: Path) -> None:
    path = _deepeval(tmp_path, {"name": "c1", "turns": _TURNS})
    with pytest.raises(InputError) as caught:
        import_conversations(path, "deepeval", grade=0)
    assert str(caught.value) == "--grade 0: a retrieval context is relevant, so its grade must be 1, 2 or 3"
    twice = _deepeval(tmp_path, {"name": "c1", "turns": _TURNS}, {"name": "c1", "turns": _TURNS})
    with pytest.raises(FormatError) as again:
        import_conversations(twice, "deepeval")
    assert again.value.path == str(twice)
