"""Pins of the judge card's source: which labels of a golden set become items (and with which people's grade and
relevance), the seeded draw of questions, a SMART collection's BM25 pool, and the folder kinds `--labels` accepts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from smart_fixture import TOPICS, relevant_docs, write_collection

from assay.errors import InputError
from assay.formats.golden import GoldenSet
from assay.pipelines.judgecheck.source import SMART_POOL_DEPTH, ProbeItem, load_source, pool_smart, sample_golden
from assay.types import Chunk, Document, Manifest, Provenance, Question, RelevanceLabel

TIME = datetime(2026, 1, 2, tzinfo=UTC)


def _label(qid: str, chunk: str, grade: int | None, source: str) -> RelevanceLabel:
    return RelevanceLabel(query_id=qid, chunk_id=chunk, grade=grade, provenance=Provenance(source=source, time=TIME))  # type: ignore[arg-type]


def _golden(questions: int = 6, *, lost: bool = True) -> GoldenSet:
    doc = Document(id="d", source="d.md", text="x", content_hash="d")
    chunks = [Chunk(id=f"c{k}", doc_id="d", ordinal=k, text=f"passage {k}") for k in range(max(8, questions))]
    qs = [Question(id=f"q{n}", text=f"question {n}?") for n in range(questions)]
    qrels = [
        _label("q0", "c0", 3, "human"),
        _label("q0", "c1", 1, "human"),
        _label("q0", "c2", 0, "human"),
        _label("q0", "c3", 2, "judge"),
        _label("q0", "c4", 1, "judge"),
        _label("q0", "c5", 0, "judge"),
        _label("q0", "c6", None, "judge"),  # unscored: never an item
    ]
    if lost:
        qrels.append(_label("gone", "c0", 3, "human"))  # a question the set no longer has
    qrels += [_label(f"q{n}", f"c{n}", 1, "human") for n in range(1, questions)]
    return GoldenSet(Manifest(assay_version="test"), [doc], chunks, qs, qrels, [])


def test_a_golden_set_gives_its_scored_labels_with_the_people_grade_and_relevance() -> None:
    source = sample_golden(_golden(), "gold/set", queries=10, seed=0)
    assert (source.kind, source.path, source.human_graded) == ("golden", "gold/set", True)
    q0 = {item.chunk_id: item for item in source.items if item.query_id == "q0"}
    assert sorted(q0) == ["c0", "c1", "c2", "c3", "c4", "c5"]  # the unscored label and the lost question left out
    assert q0["c0"] == ProbeItem("q0", "question 0?", "c0", "passage 0", 3, True)
    # people's labels: their grade, relevant from grade 1
    assert (q0["c1"].human, q0["c1"].relevant) == (1, True)
    assert (q0["c2"].human, q0["c2"].relevant) == (0, False)
    # a judge's label is no people's grade: relevant at 2 or more, irrelevant at 0, unknown at 1
    assert (q0["c3"].human, q0["c3"].relevant) == (None, True)
    assert (q0["c4"].human, q0["c4"].relevant) == (None, None)
    assert (q0["c5"].human, q0["c5"].relevant) == (None, False)
    assert {item.query_id for item in source.items} == {f"q{n}" for n in range(6)}
    assert [item.chunk_id for item in source.labelled if item.query_id == "q0"] == ["c0", "c1", "c2"]
    assert all(item.text == f"passage {item.chunk_id[1:]}" for item in source.items)


def test_people_who_only_said_relevant_or_not_are_not_graded() -> None:
    golden = _golden()
    golden.qrels = [label for label in golden.qrels if label.grade in (0, 1) or label.provenance.source != "human"]
    assert sample_golden(golden, "p", queries=10, seed=0).human_graded is False
    golden.qrels.append(_label("q2", "c7", 2, "human"))
    assert sample_golden(golden, "p", queries=10, seed=0).human_graded is True


def test_a_judge_only_golden_set_has_no_people_grades() -> None:
    golden = _golden()
    golden.qrels = [label for label in golden.qrels if label.provenance.source == "judge"]
    source = sample_golden(golden, "p", queries=10, seed=0)
    assert source.items and source.labelled == [] and source.human_graded is False


def test_the_draw_takes_the_asked_number_of_questions_by_seed_and_is_reproducible() -> None:
    golden = _golden(questions=30)
    drawn = {
        seed: sorted({i.query_id for i in sample_golden(golden, "p", queries=5, seed=seed).items}) for seed in range(6)
    }
    assert all(len(ids) == 5 for ids in drawn.values())
    assert len({tuple(ids) for ids in drawn.values()}) > 1  # seeds draw different questions
    again = sorted({i.query_id for i in sample_golden(golden, "p", queries=5, seed=3).items})
    assert again == drawn[3]
    # the draw depends on the question ids, not on the order the labels come in
    golden.qrels.reverse()
    assert sorted({i.query_id for i in sample_golden(golden, "p", queries=5, seed=3).items}) == drawn[3]
    # a question with only unscored labels is never drawn (it would leave the card a question short)
    golden.qrels = [_label(label.query_id, label.chunk_id, None, "human") if label.query_id != "q0" else label
                    for label in golden.qrels]  # fmt: skip
    assert {i.query_id for i in sample_golden(golden, "p", queries=1, seed=3).items} == {"q0"}


def test_a_smart_collection_is_pooled_by_bm25_with_the_people_list_as_grade_1(tmp_path: Path) -> None:
    folder = write_collection(tmp_path / "toy")
    source = pool_smart(folder, queries=2, seed=4)
    assert (source.kind, source.path, source.human_graded) == ("smart", str(folder), False)
    qids = sorted({item.query_id for item in source.items})
    assert len(qids) == 2
    for qid in qids:
        pooled = [item for item in source.items if item.query_id == qid]
        assert len(pooled) == SMART_POOL_DEPTH == 10
        own = {doc_id for doc_id, _ in relevant_docs(qid)}
        assert {item.chunk_id for item in pooled if item.human == 1} == own
        assert all((item.human == 1) is (item.relevant is True) for item in pooled)
        assert all(item.human in (0, 1) and item.question.startswith("Library ") for item in pooled)
    first = next(item for item in source.items if item.chunk_id == f"{qids[0]}0")
    assert first.text.startswith(f"Doc {qids[0]}0\nThe library keeps")
    assert sorted({i.query_id for i in pool_smart(folder, queries=2, seed=4).items}) == qids
    assert len({tuple(sorted({i.query_id for i in pool_smart(folder, queries=2, seed=s).items})) for s in range(8)}) > 1


def test_a_smart_pool_skips_empty_documents_and_queries_without_text(tmp_path: Path) -> None:
    folder = write_collection(tmp_path / "toy")
    extra = ".I 80\n.T\nLibrary maps atlas cartography title only\n.W\n\n.I 81\n.T\n\n.W\n\n"
    with (folder / "TOY.ALL").open("a") as f:
        f.write(extra)
    with (folder / "TOY.REL").open("a") as f:
        f.write("7 10 0 0.0\n")  # a query the people judged but whose text the queries file lacks
    source = pool_smart(folder, queries=len(TOPICS) + 1, seed=0)
    assert {item.query_id for item in source.items} == set(TOPICS)
    pooled = {item.chunk_id for item in source.items}
    assert "80" in pooled  # a document with a title and no body is still a passage
    assert "81" not in pooled


def test_load_source_tells_a_golden_set_from_a_smart_folder_from_anything_else(tmp_path: Path) -> None:
    _golden(lost=False).save(tmp_path / "gold")
    golden = load_source(tmp_path / "gold", queries=2, seed=1)
    expected = sample_golden(GoldenSet.load(tmp_path / "gold"), str(tmp_path / "gold"), queries=2, seed=1)
    assert golden == expected and golden.kind == "golden" and len({i.query_id for i in golden.items}) == 2
    assert golden.path == str(tmp_path / "gold")
    assert load_source(tmp_path / "gold", queries=2, seed=2) == sample_golden(
        GoldenSet.load(tmp_path / "gold"), str(tmp_path / "gold"), queries=2, seed=2
    )
    smart = load_source(write_collection(tmp_path / "toy"), queries=3, seed=5)
    assert smart == pool_smart(tmp_path / "toy", queries=3, seed=5) and smart.kind == "smart"
    assert load_source(tmp_path / "toy", queries=1, seed=6) == pool_smart(tmp_path / "toy", queries=1, seed=6)
    (tmp_path / "other").mkdir()
    with pytest.raises(InputError) as caught:
        load_source(tmp_path / "other", queries=2, seed=0)
    message = str(caught.value)
    assert message.startswith(f"--labels {tmp_path / 'other'}: neither a golden set (manifest.json) nor a SMART")
    assert "for TREC or BEIR qrels make a golden set first with `assay import trec|beir ... --source human`" in message
