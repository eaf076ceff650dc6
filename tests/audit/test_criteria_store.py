"""The store's side of the criteria audit (assay.audit.criteria): items and verdicts queued once, people's labels
folded as a stack per annotator (label pushes, undo pops), one label per item as the lower median of annotators by
scale position, a seeded queue order that does not depend on the order given, and refusals of bad labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.audit.criteria import (
    audited_verdicts,
    criterion_items,
    current_labels,
    people_labels,
    queue_order,
    queue_verdicts,
    record_label,
    undo_label,
)
from assay.audit.store import LabelStore
from assay.errors import AuditError
from assay.judge.criteria import Criterion, parse_criterion
from assay.results import CriterionVerdictRecord, CriterionVote

SCALE = """+++
name = "tone"
version = "2"
inputs = ["answer"]
[[scale]]
label = "good"
description = "friendly and clear"
score = 1.0
[[scale]]
label = "bad"
description = "rude"
score = 0.0
[[scale]]
label = "ok"
description = "neutral"
score = 0.5
+++
How does the answer sound?
"""


def _criterion(tmp_path: Path) -> Criterion:
    return parse_criterion(SCALE.encode("utf-8"), tmp_path / "tone.md")


def _record(item: str, run: str, label: str | None, qid: str = "q1") -> CriterionVerdictRecord:
    return CriterionVerdictRecord(run=run, query_id=qid, criterion="tone", ref="tone@2", item=item, label=label,
                                  score={"good": 1.0, "ok": 0.5, "bad": 0.0}.get(label or ""),
                                  unscored=None if label else "invalid_output",
                                  votes=[CriterionVote(model="m", label=label, reason="r")])  # fmt: skip


def _store(tmp_path: Path) -> LabelStore:
    criterion = _criterion(tmp_path)
    store = LabelStore(tmp_path / "audit.sqlite")
    records = [_record("i1", "a", "good"), _record("i1", "b", "good"), _record("i2", "a", "ok", "q2"),
               _record("i3", "a", None, "q3")]  # fmt: skip
    shown = {"i1": {"answer": "hello"}, "i2": {"answer": "hm"}, "i3": {"answer": "x"}}
    assert queue_verdicts(store, [criterion], records, shown) == 3
    assert queue_verdicts(store, [criterion], records, shown) == 0  # queued once
    return store


def test_items_carry_the_scale_in_score_order_and_every_runs_verdict(tmp_path: Path) -> None:
    items = {one.item: one for one in criterion_items(_store(tmp_path))}
    assert sorted(items) == ["i1", "i2", "i3"]
    assert items["i1"].labels == ["bad", "ok", "good"]
    assert [one["score"] for one in items["i1"].about["labels"]] == [0.0, 0.5, 1.0]
    assert items["i1"].about["instructions"].strip() == "How does the answer sound?"
    assert [(v.run, v.label) for v in items["i1"].verdicts] == [("a", "good"), ("b", "good")]
    assert items["i3"].judge_label() is None and items["i3"].verdicts[0].unscored == "invalid_output"
    assert items["i2"].shown == {"answer": "hm"}


def test_labels_fold_per_annotator_and_the_item_takes_the_lower_median(tmp_path: Path) -> None:
    store = _store(tmp_path)
    record_label(store, "i1", "good", annotator="ann")
    record_label(store, "i1", "bad", annotator="bob")
    record_label(store, "i1", "ok", annotator="cy")
    record_label(store, "i2", "Good", annotator="ann")  # any case is read, the scale's is kept
    assert people_labels(store) == {"i1": "ok", "i2": "good"}  # bad < ok < good: the middle of three
    record_label(store, "i1", "bad", annotator="cy")
    assert people_labels(store)["i1"] == "bad"  # bad, bad, good
    undone = undo_label(store, "cy")
    assert undone is not None and (undone.item, undone.label) == ("i1", "ok")  # the label it restores
    assert people_labels(store)["i1"] == "ok"
    assert people_labels(store, "bob") == {"i1": "bad"}
    # two annotators: the lower of the two middle labels
    undo_label(store, "cy")
    assert current_labels(store)["i1"].keys() == {"ann", "bob"}
    assert people_labels(store)["i1"] == "bad"
    pairs = audited_verdicts(store)
    assert {(p.item, p.annotator, p.judge_label, p.human_label) for p in pairs} == {
        ("i1", "ann", "good", "good"), ("i1", "bob", "good", "bad"), ("i2", "ann", "ok", "good")}  # fmt: skip


def test_undo_takes_the_latest_label_still_in_effect(tmp_path: Path) -> None:
    store = _store(tmp_path)
    record_label(store, "i1", "good", annotator="ann")
    record_label(store, "i2", "bad", annotator="ann")
    assert undo_label(store, "ann").item == "i2"  # type: ignore[union-attr]
    assert undo_label(store, "ann").item == "i1"  # type: ignore[union-attr]
    assert undo_label(store, "ann") is None
    assert current_labels(store) == {}


def test_bad_labels_are_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(ValueError, match="one of bad, ok, good"):
        record_label(store, "i1", "great", annotator="ann")
    with pytest.raises(ValueError, match="one of"):
        record_label(store, "i1", 1, annotator="ann")
    with pytest.raises(ValueError, match="no criterion verdict 'nope'"):
        record_label(store, "nope", "good", annotator="ann")
    with pytest.raises(ValueError, match="at most 2000"):
        record_label(store, "i1", "good", annotator="ann", reason="x" * 2001)
    with pytest.raises(AuditError):
        record_label(store, "i1", "good", annotator="judge")
    assert current_labels(store) == {}


def test_the_queue_order_is_seeded_and_ignores_the_order_given() -> None:
    items = [f"item{i}" for i in range(30)]
    first = queue_order(items, seed=3)
    assert first == queue_order(list(reversed(items)), seed=3)
    assert sorted(first) == sorted(items)
    assert first != queue_order(items, seed=4)
    assert first != sorted(items)  # shuffled, not sorted
