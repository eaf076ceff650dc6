"""The label store: migrations, judge import, the fold (latest wins, undo), history, audited pairs, concurrency."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest

from assay.audit.access import audited_pairs, open_store
from assay.audit.store import LabelStore
from assay.errors import AuditError
from assay.types import LabelEvent


def human(qid: str, cid: str, grade: int | None, who: str = "ann", reason: str | None = None) -> LabelEvent:
    return LabelEvent(query_id=qid, chunk_id=cid, grade=grade, reason=reason, source="human", annotator=who)


def test_migrations_are_named_and_applied_once(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    again, _ = open_store(golden_dir)
    assert (
        store.migrations()
        == again.migrations()
        == ["001_events", "002_queues", "003_rewrites", "004_quotes", "005_criteria"]
    )
    with sqlite3.connect(golden_dir / "audit.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_judge_labels_imported_once(golden_dir: Path) -> None:
    store, golden = open_store(golden_dir)
    open_store(golden_dir)
    events = store.events()
    assert len(events) == len(golden.qrels) == 25
    assert {e.source for e in events} == {"judge"}
    unscored = [e for e in events if e.grade is None]
    assert [(e.query_id, e.chunk_id, e.reason) for e in unscored] == [("q1", "c05", "no JSON in the reply")]
    assert store.import_judge_labels(golden.qrels) == 0


def test_latest_label_wins_and_history_is_kept(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    store.record(human("q1", "c02", 3, reason="exact"))
    store.record(human("q1", "c02", 1))
    store.record(human("q1", "c02", 2, who="bob"))
    mine = store.current_labels(annotator="ann")
    assert [(lab.chunk_id, lab.grade, lab.reason) for lab in mine] == [("c02", 1, None)]
    assert [lab.grade for lab in store.current_labels(annotator="bob")] == [2]
    history = store.history("q1", "c02")
    assert [(e.source, e.grade) for e in history] == [("judge", 2), ("human", 3), ("human", 1), ("human", 2)]


def test_undo_restores_previous_grade_and_walks_back(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    store.record(human("q1", "c02", 3))
    store.record(human("q1", "c02", 1))
    store.record(human("q1", "c04", 0))
    store.record(human("q1", "c04", 2, who="bob"))
    undone = store.undo("ann")
    assert undone is not None and (undone.kind, undone.chunk_id, undone.grade) == ("undo", "c04", None)
    assert [(lab.chunk_id, lab.grade) for lab in store.current_labels(annotator="ann")] == [("c02", 1)]
    second = store.undo("ann")
    assert second is not None and second.grade == 3  # the restored grade is recorded on the undo event
    assert [(lab.chunk_id, lab.grade) for lab in store.current_labels(annotator="ann")] == [("c02", 3)]
    store.undo("ann")
    assert store.current_labels(annotator="ann") == []
    assert store.undo("ann") is None
    assert [lab.grade for lab in store.current_labels(annotator="bob")] == [2]  # bob untouched
    kinds = [e.kind for e in store.history("q1", "c02") if e.annotator == "ann"]
    assert kinds == ["label", "label", "undo", "undo"]


def test_relabel_after_undo_then_undo_again(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    store.record(human("q1", "c02", 3))
    store.undo("ann")
    store.record(human("q1", "c02", 0))
    store.undo("ann")
    assert store.current_labels(annotator="ann") == []


def test_judge_source_cannot_be_recorded(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    event = LabelEvent(query_id="q1", chunk_id="c01", grade=1, source="judge", annotator="x")
    with pytest.raises(AuditError, match="qrels"):
        store.record(event)


def test_judge_prompts_keep_separate_current_labels(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    judges = [lab for lab in store.current_labels(role="judge") if lab.item == ("q1", "c01")]
    assert sorted((lab.prompt, lab.grade) for lab in judges) == [("relevance-listwise@1", 3), ("relevance@1", 1)]


def test_audited_pairs_carry_judge_grade_and_strata(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    store.record(human("q1", "c01", 2))
    store.record(human("q1", "c05", 1))  # judge left it unscored
    store.record(human("q2", "c00", 0, who="bob"))
    store.record(human("q2", "c00", 2, who="cy"))
    store.record(human("q2", "c00", 3, who="dee"))
    store.record(human("q2", "c02", None))  # a cleared grade is not an audit
    pairs = audited_pairs(golden_dir)
    rows = [(p.query_id, p.chunk_id, p.annotator, p.judge_grade, p.human_grade) for p in pairs]
    # judge grade of q1/c01 is the first imported (pointwise) label; q2/c00 judge grade (0 + 1) % 4 = 1
    assert rows == [
        ("q1", "c01", "ann", 1, 2),
        ("q1", "c05", "ann", None, 1),
        ("q2", "c00", "bob", 1, 0),
        ("q2", "c00", "cy", 1, 2),
        ("q2", "c00", "dee", 1, 3),
    ]
    assert pairs[0].strata == {"judge_grade": "1", "type": "factoid", "difficulty": "easy"}
    assert pairs[1].strata["judge_grade"] == "unscored"
    listwise = audited_pairs(golden_dir, judge_prompt="relevance-listwise@1")
    assert [(p.chunk_id, p.judge_grade) for p in listwise] == [("c01", 3)]
    merged = audited_pairs(golden_dir, one_per_item=True)
    assert [(p.chunk_id, p.annotator, p.human_grade) for p in merged if p.query_id == "q2"] == [("c00", "consensus", 2)]
    assert [p.annotator for p in audited_pairs(golden_dir, annotator="cy")] == ["cy"]


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AuditError, match="no such folder"):
        LabelStore(tmp_path / "nope" / "audit.sqlite")


def _write_labels(path: str, who: str, count: int) -> None:
    store = LabelStore(path)
    for i in range(count):
        store.record(human(f"q{i % 2 + 1}", f"c{i % 12:02d}", i % 4, who=who, reason=f"{who}-{i}"))


def test_threads_lose_no_label(golden_dir: Path) -> None:
    open_store(golden_dir)
    path = str(golden_dir / "audit.sqlite")
    threads = [threading.Thread(target=_write_labels, args=(path, f"t{n}", 30)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    humans = [e for e in LabelStore(path).events() if e.source == "human"]
    assert len(humans) == 180
    assert {e.reason for e in humans} == {f"t{n}-{i}" for n in range(6) for i in range(30)}


def test_processes_lose_no_label(golden_dir: Path) -> None:
    open_store(golden_dir)
    path = str(golden_dir / "audit.sqlite")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_labels, args=(path, f"p{n}", 40)) for n in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0, 0]
    humans = [e for e in LabelStore(path).events() if e.source == "human"]
    assert sorted(e.reason or "" for e in humans) == sorted(f"p{n}-{i}" for n in range(2) for i in range(40))
