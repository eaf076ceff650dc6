"""Queues: stratified by judge grade, disagreement first, uncertainty first; seeded, recorded, resumable."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from assay.audit.access import open_store
from assay.audit.queues import confirm_first, order, queue_for
from assay.errors import AuditError
from assay.types import LabelEvent


def human(qid: str, cid: str, grade: int, who: str) -> LabelEvent:
    return LabelEvent(query_id=qid, chunk_id=cid, grade=grade, source="human", annotator=who)


def first_grades(golden_dir: Path, items: list[tuple[str, str]]) -> list[str]:
    store, _ = open_store(golden_dir)
    grade = {}
    for lab in sorted(store.current_labels(role="judge"), key=lambda lab: -lab.event_id):
        grade[lab.item] = "u" if lab.grade is None else str(lab.grade)
    return [grade[item] for item in items]


def test_stratified_gives_equal_share_per_grade_in_every_round(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    items = order("stratified", store.current_labels(), seed=7)
    assert sorted(items) == sorted(store.items()) and len(items) == 24
    grades = first_grades(golden_dir, items)
    # judge grades: 0..3 six times each minus one 1 turned unscored: counts 0:6, 1:5, 2:6, 3:6, u:1
    assert Counter(grades) == {"0": 6, "1": 5, "2": 6, "3": 6, "u": 1}
    first_round = grades[:5]
    assert sorted(first_round) == ["0", "1", "2", "3", "u"]
    for start in range(5, 21, 4):  # after the unscored pool runs out, rounds of four hold one of each grade
        assert sorted(grades[start : start + 4]) == ["0", "1", "2", "3"]


def test_queues_are_seeded(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    labels = store.current_labels()
    for name in ("stratified", "disagreement", "uncertainty"):
        assert order(name, labels, 3) == order(name, labels, 3)
    assert order("stratified", labels, 3) != order("stratified", labels, 4)
    with pytest.raises(AuditError, match="choose one of: stratified, disagreement, uncertainty"):
        order("random", labels, 0)


def test_disagreement_first(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    store.record(human("q2", "c09", 0, "ann"))
    store.record(human("q2", "c09", 3, "bob"))
    store.record(human("q2", "c10", 1, "ann"))
    store.record(human("q2", "c10", 1, "bob"))  # agree: not first
    items = order("disagreement", store.current_labels(), seed=1)
    # q1/c01: pointwise 1 vs listwise 3; q2/c09: ann 0 vs bob 3
    assert sorted(items[:2]) == [("q1", "c01"), ("q2", "c09")]
    assert len(items) == 24 and len(set(items)) == 24


def test_uncertainty_first(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    items = order("uncertainty", store.current_labels(), seed=1)
    # spread 2 (1 vs 3) before the unscored label (counts as spread 1)
    assert items[:2] == [("q1", "c01"), ("q1", "c05")]


def test_queue_is_recorded_and_resumes_in_the_same_order(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    first = queue_for(store, "ann", "disagreement", 5)
    store.record(human("q2", "c09", 0, "ann"))
    store.record(human("q2", "c09", 3, "bob"))  # would move q2/c09 to the front of a fresh queue
    assert order("disagreement", store.current_labels(), 5) != first
    assert queue_for(store, "ann", "disagreement", 5) == first
    assert store.saved_queue("ann", "disagreement", 5) == first
    assert store.saved_queue("bob", "disagreement", 5) is None


def test_drafted_and_unanswerable_questions_lead_the_queue(golden_dir: Path) -> None:
    store, _ = open_store(golden_dir)
    first = confirm_first({"q1": {}, "q2": {"drafted": True}, "q3": {"unanswerable_from_corpus": True}})
    assert first == {"q2", "q3"}
    items = queue_for(store, "ann", "stratified", 2, first)
    plain = order("stratified", store.current_labels(), 2)
    lead = [i for i in plain if i[0] in first]
    assert items[: len(lead)] == lead and sorted(items) == sorted(plain)
    assert all(i[0] not in first for i in items[len(lead) :])
