"""Projection of passages onto units (assay.metrics.projection): the rule step by step, a reference on character
sets, and hypothesis-generated re-chunkings of the same text that must project onto the same units in the same
order."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.metrics.projection import Slot, UnitIndex, project

# Document "a" cut into five units of 20 characters, document "b" into two of 30.
UNITS = [("a", 0, 20), ("a", 20, 40), ("a", 40, 60), ("a", 60, 80), ("a", 80, 100), ("b", 0, 30), ("b", 30, 60)]


def units_of(slots):
    return [(s.kind, s.at) for s in slots]


def test_a_unit_given_as_itself_projects_onto_itself_only():
    assert units_of(project([2, 0, 2, None, 5], UNITS)) == [("unit", 2), ("unit", 0), ("item", 3), ("unit", 5)]


def test_half_of_a_unit_reaches_it_and_pieces_add_up():
    # 10 of 20 characters of unit 0: reached; 9 of unit 1 at rank 0, then 1 more at rank 1: reached at rank 1
    slots = project([("a", 10, 29), ("a", 29, 30)], UNITS)
    assert slots == [Slot("unit", 0, 0), Slot("unit", 1, 1)]


def test_a_fragment_under_half_reaches_nothing_and_repeated_text_does_not_add():
    assert project([("a", 0, 9), ("a", 0, 9), ("a", 2, 9)], UNITS) == []


def test_units_reached_at_one_rank_follow_the_document():
    assert units_of(project([("a", 35, 100)], UNITS)) == [("unit", 2), ("unit", 3), ("unit", 4)]  # 5 of unit 1: no


def test_a_unit_is_counted_once():
    assert units_of(project([("a", 0, 20), 0, ("a", 0, 20)], UNITS)) == [("unit", 0)]


def test_a_passage_in_an_unknown_document_reaches_nothing():
    assert project([("z", 0, 50)], UNITS) == []


def test_share_out_of_range_is_refused():
    with pytest.raises(ValueError, match="share"):
        project([], UNITS, share=0.0)


def reference(items, units, share=0.5):
    """Character sets: after each rank, every unit whose shown characters reach the share, in document order."""
    shown: set[tuple[str, int]] = set()
    out, reached = [], set()
    for rank, item in enumerate(items):
        if item is None:
            out.append(("item", rank))
            continue
        if isinstance(item, int):
            if item not in reached:
                reached.add(item)
                out.append(("unit", item))
            continue
        doc, s, e = item
        shown |= {(doc, i) for i in range(s, e)}
        now = []
        for u, (udoc, us, ue) in enumerate(units):
            if u not in reached and sum((udoc, i) in shown for i in range(us, ue)) >= share * (ue - us):
                now.append((us, u))  # only units this passage touches can cross now
        for _, u in sorted(now):
            reached.add(u)
            out.append(("unit", u))
    return out


item = st.one_of(
    st.none(),
    st.integers(0, len(UNITS) - 1),
    st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 99), st.integers(1, 50)).map(
        lambda t: (t[0], min(t[1], 99 if t[0] == "a" else 59), min(t[1] + t[2], 100 if t[0] == "a" else 60))
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(item, max_size=12), st.sampled_from([0.25, 0.5, 0.75, 1.0]))
def test_matches_the_character_reference(items, share):
    assert units_of(project(items, UNITS, share=share)) == reference(items, UNITS, share)


located = st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 99), st.integers(1, 50)).map(
    lambda t: (t[0], min(t[1], 99 if t[0] == "a" else 59), min(t[1] + t[2], 100 if t[0] == "a" else 60))
)


def recut(passages, cuts):
    out = []
    for doc, s, e in passages:
        points = sorted({s + int((e - s) * c) for c in cuts} | {s, e})
        out += [(doc, a, b) for a, b in itertools.pairwise(points) if b > a]
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(located, max_size=10), st.lists(st.floats(0.05, 0.95), max_size=4))
def test_the_same_text_cut_differently_projects_the_same(passages, cuts):
    assert units_of(project(passages, UNITS)) == units_of(project(recut(passages, cuts), UNITS))


@settings(max_examples=200, deadline=None)
@given(st.lists(located, max_size=10))
def test_overlapping_windows_and_merged_neighbours_project_the_same(passages):
    windows = []
    for doc, s, e in passages:
        third = max(1, (e - s) // 3)
        windows += [(doc, s, min(e, s + 2 * third)), (doc, min(e - 1, s + third), e)]
    assert units_of(project(passages, UNITS)) == units_of(project(windows, UNITS))
    merged = []  # consecutive passages that continue each other in the document become one
    for doc, s, e in passages:
        if merged and merged[-1][0] == doc and merged[-1][2] == s:
            merged[-1] = (doc, merged[-1][1], e)
        else:
            merged.append((doc, s, e))
    assert units_of(project(passages, UNITS)) == units_of(project(merged, UNITS))


def test_slots_name_the_rank_that_reached_them_and_the_share_is_checked() -> None:
    units = [("d", 0, 10), ("d", 10, 20), ("d", 30, 30)]  # the last is empty: never reached
    assert project([None, 1, ("d", 0, 40)], units) == [Slot("item", 0, 0), Slot("unit", 1, 1), Slot("unit", 0, 2)]
    for share in (0.0, 1.5, 2.0):
        with pytest.raises(ValueError, match="share must be in"):
            UnitIndex(units, share=share)
    assert UnitIndex(units, share=1.0).project([("d", 0, 10)]) == [Slot("unit", 0, 0)]
