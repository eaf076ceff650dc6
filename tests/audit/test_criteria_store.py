"""The store's side of the criteria audit (assay.audit.criteria): items and verdicts queued once, people's labels
folded as a stack per annotator (label pushes, undo pops), one label per item as the lower median of annotators by
scale position, a seeded queue order that does not depend on the order given, and refusals of bad labels."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from assay.audit.criteria import (
    CriterionItem,
    agreement_report,
    audited_verdicts,
    criterion_item,
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


def test_the_queue_order_keeps_its_rule_across_releases() -> None:
    """A queue half audited keeps its order after an upgrade: items by the 8-byte blake2b digest of "SEED:ITEM"."""
    items = [f"item{i}" for i in range(30)]
    digest = {item: hashlib.blake2b(f"3:{item}".encode(), digest_size=8).hexdigest() for item in items}
    assert queue_order(items, seed=3) == sorted(items, key=digest.__getitem__)


TREE = """+++
name = "walk"
version = "1"
description = "Walks to a label"
inputs = ["answer"]
[[scale]]
label = "yes_all"
description = "both"
score = 1.0
[[scale]]
label = "none"
description = "neither"
score = 0.0
[[tree]]
id = "a"
question = "First?"
yes = "yes_all"
no = "none"
+++
Walk it.
"""


def _walk_record(item: str, votes: list[CriterionVote], run: str = "a") -> CriterionVerdictRecord:
    return CriterionVerdictRecord(run=run, query_id="q9", criterion="walk", ref="walk@1", item=item,
                                  label=votes[0].label if votes else None, votes=votes)  # fmt: skip


def test_only_verdicts_it_can_show_are_queued_and_a_panel_is_named_by_its_judges(tmp_path: Path) -> None:
    walk = parse_criterion(TREE.encode("utf-8"), tmp_path / "walk.md")
    store = LabelStore(tmp_path / "audit.sqlite")
    vote = CriterionVote(model="m1", label="none", reason="no")
    records = [
        _walk_record("w1", [vote, CriterionVote(model="m2", label="none")]),
        _walk_record("w2", []),
        _walk_record("w3", [vote]),  # not in shown
        CriterionVerdictRecord(run="a", query_id="q9", criterion="walk", ref="walk@1", item=None, votes=[vote]),
        CriterionVerdictRecord(run="a", query_id="q9", criterion="walk", ref="walk@7", item="w4", votes=[vote]),
    ]
    shown = {key: {"answer": key} for key in ("w1", "w2", "w4")}
    assert queue_verdicts(store, [walk, _criterion(tmp_path)], records, shown) == 2
    items = {one.item: one for one in criterion_items(store)}
    assert sorted(items) == ["w1", "w2"]
    assert items["w1"].about == {
        "description": "Walks to a label",
        "instructions": "Walk it.",
        "steps": [],
        "tree": [{"id": "a", "question": "First?", "yes": "yes_all", "no": "none"}],
        "labels": [{"label": "none", "score": 0.0, "description": "neither"},
                   {"label": "yes_all", "score": 1.0, "description": "both"}],
    }  # fmt: skip
    assert items["w1"].query_id == "q9" and items["w1"].ref == "walk@1" and items["w1"].criterion == "walk"
    [panel] = items["w1"].verdicts
    assert (panel.run, panel.judge, panel.label, panel.unscored) == ("a", "m1+m2", "none", None)
    assert [v["model"] for v in panel.votes] == ["m1", "m2"] and panel.votes[0]["reason"] == "no"
    assert items["w2"].verdicts[0].judge == "judge"  # no vote to name it by
    assert items["w2"].judge_label() is None
    # a second run's verdict on a queued item is added to it, the item is not new
    assert queue_verdicts(store, [walk], [_walk_record("w1", [vote], run="b")], shown) == 0
    assert [v.run for v in criterion_items(store, "walk")[0].verdicts] == ["a", "b"]


def test_items_are_listed_per_criterion_when_one_is_named(tmp_path: Path) -> None:
    store = _store(tmp_path)
    walk = parse_criterion(TREE.encode("utf-8"), tmp_path / "walk.md")
    queue_verdicts(store, [walk], [_walk_record("w1", [CriterionVote(model="m", label="none")])],
                   {"w1": {"answer": "x"}})  # fmt: skip
    assert [one.item for one in criterion_items(store, "walk")] == ["w1"]
    assert [one.item for one in criterion_items(store, "tone")] == ["i1", "i2", "i3"]
    assert [one.item for one in criterion_items(store)] == ["i1", "i2", "i3", "w1"]  # criterion, then item
    record_label(store, "w1", "none", annotator="ann")
    record_label(store, "i1", "bad", annotator="ann")
    record_label(store, "i2", "ok", annotator="bob")
    assert [p.item for p in audited_verdicts(store, criterion="walk")] == ["w1"]
    assert [(p.item, p.annotator) for p in audited_verdicts(store, annotator="bob")] == [("i2", "bob")]
    [one] = audited_verdicts(store, criterion="walk")
    assert (one.criterion, one.ref, one.labels, one.judge, one.judge_label, one.human_label) == (
        "walk", "walk@1", ("none", "yes_all"), "m", "none", "none")  # fmt: skip


def test_a_label_keeps_its_reason_and_session_and_an_undo_names_what_it_undoes(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = record_label(store, "i1", "OK", annotator="ann", reason="fair enough", session="s1")
    assert (first.kind, first.item, first.label, first.reason, first.annotator, first.session, first.undoes) == (
        "label", "i1", "ok", "fair enough", "ann", "s1", None)  # fmt: skip
    assert first.time
    assert record_label(store, "i2", "good", annotator="ann", reason="").reason is None  # no reason: nothing kept
    with pytest.raises(ValueError, match="reason must be text"):
        record_label(store, "i1", "good", annotator="ann", reason=5)
    assert record_label(store, "i1", "good", annotator="ann", reason="x" * 2000).reason == "x" * 2000
    undo_label(store, "ann")  # the 2000-character label
    undo_label(store, "ann", session="s2")  # i2's: the latest label still in effect
    undone = undo_label(store, "ann", session="s3")
    assert undone is not None
    assert (undone.kind, undone.item, undone.label, undone.undoes, undone.session) == ("undo", "i1", None, first.id,
                                                                                       "s3")  # fmt: skip
    assert current_labels(store) == {}
    assert people_labels(store) == {}


def test_one_annotators_labels_and_the_others_untouched(tmp_path: Path) -> None:
    store = _store(tmp_path)
    record_label(store, "i1", "good", annotator="ann")
    record_label(store, "i1", "bad", annotator="bob")
    assert undo_label(store, "bob") is not None
    assert current_labels(store, "ann")["i1"]["ann"].label == "good"
    assert "bob" not in current_labels(store).get("i1", {})
    assert current_labels(store, "bob") == {}
    assert people_labels(store, "bob") == {}


def test_the_agreement_report_compares_the_first_verdict_with_people(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert agreement_report(store) == []  # nobody audited anything
    # i1: judge good, person good; i2: judge ok, person bad; i3: judge unscored, person ok
    record_label(store, "i1", "good", annotator="ann")
    record_label(store, "i2", "bad", annotator="ann")
    record_label(store, "i3", "ok", annotator="ann")
    [row] = agreement_report(store, n_resamples=200)
    assert (row["criterion"], row["ref"], row["labels"], row["judges"]) == ("tone", "tone@2", ["bad", "ok", "good"],
                                                                            ["m"])  # fmt: skip
    assert (row["n"], row["judge_unscored"], row["statistic"]) == (2, 1, "weighted_kappa")
    # rows the judge (bad, ok, good), columns people
    assert row["confusion"] == [[0, 0, 0], [1, 0, 0], [0, 0, 1]]
    assert row["percent"]["value"] == 0.5
    assert row["percent"]["low"] <= 0.5 <= row["percent"]["high"]
    # quadratic weights over positions 0..2: disagreement ok/bad costs (1/2)^2 = 1/4, observed mean 1/8; expected from
    # the marginals (judge ok, good; people bad, good): pairs (ok,bad) 1/4, (ok,good) 1/4, (good,bad) 1, (good,good)
    # 0, each with weight 1/4: 3/8; kappa 1 - (1/8) / (3/8) = 2/3
    assert row["kappa"]["value"] == round(2 / 3, 6)
    assert agreement_report(store, criterion="walk") == []
    assert agreement_report(store, annotator="bob") == []


def test_an_agreement_with_nothing_compared_has_no_value_rather_than_nan(tmp_path: Path) -> None:
    store = _store(tmp_path)
    record_label(store, "i3", "ok", annotator="ann")  # the judge left i3 unscored
    [row] = agreement_report(store, n_resamples=50)
    assert (row["n"], row["judge_unscored"]) == (0, 1)
    assert row["kappa"] == {"value": None, "low": None, "high": None}
    assert row["percent"] == {"value": None, "low": None, "high": None}
    assert row["confusion"] == [[0, 0, 0], [0, 0, 0], [0, 0, 0]]


def test_the_agreement_reports_interval_is_drawn_with_2000_resamples_from_seed_0(tmp_path: Path) -> None:
    """The default, as ``assay agreement --criteria`` states it: the same interval as asked for in full."""
    store = LabelStore(tmp_path / "audit.sqlite")
    judge = ["good", "ok", "bad", "good", "ok", "bad", "good", "good", "ok", "bad", "ok", "good", "bad", "ok"]
    people = ["good", "bad", "bad", "ok", "ok", "good", "good", "bad", "ok", "ok", "ok", "good", "bad", "good"]
    items = [f"k{i:02d}" for i in range(len(judge))]
    records = [_record(item, "a", label, f"q{i}") for i, (item, label) in enumerate(zip(items, judge, strict=True))]
    queue_verdicts(store, [_criterion(tmp_path)], records, {item: {"answer": item} for item in items})
    for item, label in zip(items, people, strict=True):
        record_label(store, item, label, annotator="ann")
    [default] = agreement_report(store)
    assert default == agreement_report(store, n_resamples=2000, seed=0)[0]
    assert default["kappa"] != agreement_report(store, n_resamples=2001, seed=0)[0]["kappa"]
    assert default["kappa"] != agreement_report(store, n_resamples=2000, seed=1)[0]["kappa"]


def test_one_item_is_read_with_its_verdicts_in_the_order_stored(tmp_path: Path) -> None:
    store = _store(tmp_path)
    one = criterion_item(store, "i1")
    assert (one.item, one.criterion, one.ref, one.query_id, one.shown) == ("i1", "tone", "tone@2", "q1",
                                                                          {"answer": "hello"})  # fmt: skip
    assert one.labels == ["bad", "ok", "good"]
    assert [(v.run, v.judge, v.label, v.unscored) for v in one.verdicts] == [("a", "m", "good", None),
                                                                             ("b", "m", "good", None)]  # fmt: skip
    assert one.verdicts[0].votes == [{"model": "m", "label": "good", "reason": "r", "steps": [], "unscored": None,
                                      "expected": None, "coverage": None, "expected_unscored": None}]  # fmt: skip
    assert one == next(every for every in criterion_items(store) if every.item == "i1")
    unscored = criterion_item(store, "i3")
    assert [(v.label, v.unscored) for v in unscored.verdicts] == [(None, "invalid_output")]
    with pytest.raises(ValueError, match="no criterion verdict 'i9' is queued in this golden set"):
        criterion_item(store, "i9")


def test_the_labels_of_one_item_and_of_one_person_on_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    record_label(store, "i1", "ok", annotator="bob")
    record_label(store, "i1", "good", annotator="ann")
    record_label(store, "i1", "bad", annotator="ann")
    record_label(store, "i2", "ok", annotator="ann")
    one = current_labels(store, item="i1")
    assert {(key, who, e.label) for key, people in one.items() for who, e in people.items()} == {
        ("i1", "ann", "bad"), ("i1", "bob", "ok")}  # fmt: skip
    assert {key: {who: e.label for who, e in people.items()} for key, people in current_labels(store, "ann",
            item="i1").items()} == {"i1": {"ann": "bad"}}  # fmt: skip
    assert current_labels(store, "cy", item="i1") == {} and current_labels(store, item="i3") == {}
    # the annotators of an item in name order, not in the order they labelled it
    assert list(current_labels(store)["i1"]) == ["ann", "bob"]


def test_an_item_without_a_verdict_has_no_judge_label() -> None:
    about = {"labels": [{"label": "bad", "score": 0.0, "description": ""}]}
    assert CriterionItem("i", "tone", "tone@2", "q1", about, {}, ()).judge_label() is None


def test_a_verdict_it_cannot_show_is_skipped_and_the_ones_after_it_are_queued(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "audit.sqlite")
    records = [_record("i1", "a", "good"), _record("i2", "a", "ok", "q2"), _record("i3", "a", "bad", "q3")]
    # i1 is not in shown: skipped, i2 and i3 still queued
    assert queue_verdicts(store, [_criterion(tmp_path)], records, {"i2": {"answer": "b"}, "i3": {"answer": "c"}}) == 2
    assert [one.item for one in criterion_items(store)] == ["i2", "i3"]
