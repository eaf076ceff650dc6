"""The criteria view's state (assay.audit.criteria_page) without the web app: the queue (each criterion in turn, a
seeded order within it, built once), item numbers read strictly, what an item shows (the judge hidden in blind mode
until the annotator labelled it, other people's labels), labels taken from the judge, and undo."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_criteria_store import TREE, _store, _walk_record

from assay.audit.criteria import criterion_items, current_labels, queue_order, queue_verdicts, record_label
from assay.audit.criteria_page import CriteriaState
from assay.audit.store import LabelStore
from assay.judge.criteria import parse_criterion
from assay.results import CriterionVote


def _two_criteria(tmp_path: Path) -> LabelStore:
    """tone's items i1 (judge good, twice), i2 (ok), i3 (unscored); walk's w1 (judge none, by m)."""
    store = _store(tmp_path)
    walk = parse_criterion(TREE.encode("utf-8"), tmp_path / "walk.md")
    queue_verdicts(store, [walk], [_walk_record("w1", [CriterionVote(model="m", label="none", reason="no")])],
                   {"w1": {"answer": "x"}})  # fmt: skip
    return store


def test_the_queue_takes_each_criterion_in_turn_in_a_seeded_order_and_never_moves(tmp_path: Path) -> None:
    store = _two_criteria(tmp_path)
    state = CriteriaState(store, blind=False, seed=3)
    order = state.order()
    assert order == [*queue_order(["i1", "i2", "i3"], 3), "w1"]  # tone before walk
    walk = parse_criterion(TREE.encode("utf-8"), tmp_path / "walk.md")
    queue_verdicts(store, [walk], [_walk_record("a0", [CriterionVote(model="m", label="none")])],
                   {"a0": {"answer": "y"}})  # fmt: skip
    assert state.order() == order  # built once: a position never moves
    assert CriteriaState(store, blind=False, seed=3, criterion="walk").order() == queue_order(["a0", "w1"], 3)
    assert CriteriaState(store, blind=False, seed=3, criterion="tone").order() == order[:3]


@pytest.mark.parametrize("raw", [True, False, 1.0, None, "-1", "1a", "", [0]])
def test_an_item_number_is_a_whole_number_in_the_queue(tmp_path: Path, raw: object) -> None:
    state = CriteriaState(_two_criteria(tmp_path), blind=False, seed=0)
    with pytest.raises(ValueError, match="i must be an item number"):
        state.item_at(raw)


def test_item_numbers_inside_the_queue_are_read_as_text_or_number(tmp_path: Path) -> None:
    state = CriteriaState(_two_criteria(tmp_path), blind=False, seed=0)
    order = state.order()
    assert state.item_at(0) == (0, order[0])
    assert state.item_at("3") == (3, order[3])
    with pytest.raises(ValueError, match="item 4 is outside the queue of 4 items"):
        state.item_at(4)


def test_the_queue_view_and_progress_show_the_annotators_own_labels(tmp_path: Path) -> None:
    store = _two_criteria(tmp_path)
    state = CriteriaState(store, blind=True, seed=5)
    order = state.order()
    record_label(store, "w1", "none", annotator="ann")
    record_label(store, "i2", "bad", annotator="bob")
    view = state.queue_view("ann")
    assert (view["annotator"], view["seed"], view["blind"]) == ("ann", 5, True)
    assert view["progress"] == {"done": 1, "total": 4}
    queries = {"i1": "q1", "i2": "q2", "i3": "q3", "w1": "q9"}
    assert view["items"] == [
        {"i": i, "item": item, "criterion": "walk" if item == "w1" else "tone", "query_id": queries[item],
         "label": "none" if item == "w1" else None}
        for i, item in enumerate(order)
    ]  # fmt: skip
    assert state.progress("bob") == {"done": 1, "total": 4}
    assert state.progress("cy") == {"done": 0, "total": 4}


def test_an_item_shows_the_judge_and_other_people_unless_blind_mode_hides_them(tmp_path: Path) -> None:
    store = _two_criteria(tmp_path)
    record_label(store, "i1", "bad", annotator="bob", reason="too curt")
    about = criterion_items(store, "tone")[0].about
    for blind in (False, True):
        view = CriteriaState(store, blind=blind, seed=0).item_view("ann", 7, "i1")
        head = (view["i"], view["item"], view["criterion"], view["ref"], view["query_id"])
        assert head == (7, "i1", "tone", "tone@2", "q1")
        assert view["about"] == about and view["shown"] == {"answer": "hello"} and view["mine"] is None
        assert view["judge_hidden"] is blind
        if blind:
            assert view["verdicts"] == [] and view["others"] == []
        else:
            assert [(v["run"], v["judge"], v["label"], v["unscored"]) for v in view["verdicts"]] == [
                ("a", "m", "good", None), ("b", "m", "good", None)]  # fmt: skip
            assert view["verdicts"][0]["votes"][0]["reason"] == "r"
            assert view["others"] == [{"annotator": "bob", "label": "bad", "reason": "too curt"}]
    seen = CriteriaState(store, blind=True, seed=0).item_view("bob", 0, "i1")
    assert seen["judge_hidden"] is False and len(seen["verdicts"]) == 2 and seen["others"] == []
    assert seen["mine"]["label"] == "bad" and seen["mine"]["reason"] == "too curt" and seen["mine"]["time"]


def test_accepting_the_judges_label_and_undoing_it(tmp_path: Path) -> None:
    store = _two_criteria(tmp_path)
    state = CriteriaState(store, blind=False, seed=2)
    order = state.order()
    at = order.index("i1")
    done = state.label("ann", {"i": at, "accept_judge": True, "label": "bad"})
    assert done["item"]["mine"]["label"] == "good" and done["progress"] == {"done": 1, "total": 4}
    own = state.label("ann", {"i": at, "accept_judge": "yes", "label": "ok", "reason": "meh"})  # only true accepts
    assert (own["item"]["mine"]["label"], own["item"]["mine"]["reason"]) == ("ok", "meh")
    with pytest.raises(ValueError, match="judge left this item unscored"):
        state.label("ann", {"i": order.index("i3"), "accept_judge": True})
    assert current_labels(store)["i1"]["ann"].session == "page:criteria:2"
    undone = state.undo("ann")
    assert undone == {"undone": True, "i": at, "progress": {"done": 1, "total": 4}}
    assert current_labels(store)["i1"]["ann"].label == "good"
    assert state.undo("ann")["i"] == at
    assert state.undo("ann") == {"undone": False, "i": None, "progress": {"done": 0, "total": 4}}


def test_blind_mode_accepts_the_judge_only_after_the_annotators_own_label(tmp_path: Path) -> None:
    store = _two_criteria(tmp_path)
    state = CriteriaState(store, blind=True, seed=0)
    at = state.order().index("w1")
    with pytest.raises(ValueError, match="blind mode"):
        state.label("ann", {"i": at, "accept_judge": True})
    state.label("ann", {"i": at, "label": "yes_all"})
    assert state.label("ann", {"i": at, "accept_judge": True})["item"]["mine"]["label"] == "none"
    record_label(store, "w1", "yes_all", annotator="bob")
    with pytest.raises(ValueError, match="blind mode"):
        state.label("cy", {"i": at, "accept_judge": True})
