"""Close names: the real names nearest a typo, by edit distance (one row per rule of the module docstring)."""

from __future__ import annotations

import pytest

from assay.metrics.close import close_names, edit_distance

CATALOGUE = ["ndcg", "ndcg@1", "ndcg@5", "ndcg@10", "ndcg@20", "map", "map@10", "P@10", "P@1", "mrr"]


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("", "", 0), ("map", "map", 0), ("map", "mapp", 1), ("ndgc", "ndcg", 1), ("ndcg@1O", "ndcg@10", 1),
     ("P@5", "P@50", 1), ("abc", "", 3), ("kitten", "sitting", 3),
     ("ab", "ba", 1),  # a swap of the first two characters
     ("ab", "ab", 0),  # a first character equal to the other's first, a last equal to its second: no swap there
     ("aaa", "a", 2)],  # two deletions; a swap needs two characters of each string
)  # fmt: skip
def test_edit_distance_counts_inserts_deletes_replacements_and_swaps(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance == edit_distance(b, a)


@pytest.mark.parametrize(
    ("name", "close"),
    [
        ("ndcg@1O", ["ndcg@10", "ndcg@1"]),  # equal distance: the name as long as the one given first
        ("ndgc@10", ["ndcg@10"]),  # a swap is one edit; farther names are not offered
        ("MAP", ["map"]),  # case ignored
        ("p@1O", ["P@10", "P@1"]),
        ("ndcg", []),  # the name itself is never offered
        ("completely_else", []),  # nothing within reach
    ],
)
def test_close_names_are_the_nearest_real_names(name: str, close: list[str]) -> None:
    assert close_names(name, CATALOGUE) == close


def test_the_name_itself_is_skipped_and_the_names_after_it_still_offered() -> None:
    assert close_names("ndcg@1", ["ndcg@1", "ndcg@5"]) == ["ndcg@5"]


def test_reach_is_a_third_of_the_name_rounded_down() -> None:
    # "mrr@10" has 6 characters: names 2 edits away are offered, 3 edits away are not.
    assert edit_distance("mrr@10", "map@10") == 2
    assert close_names("mrr@10", ["map@10"]) == ["map@10"]
    assert edit_distance("mrr@10", "xyz@10") == 3
    assert close_names("mrr@10", ["xyz@10"]) == []
    # 5 characters: one edit only ("ndcg5" -> "ndcg@5" is one, "ndcg@50" two).
    assert close_names("ndcg5", ["ndcg@50", "ndcg@5"]) == ["ndcg@5"]


def test_at_most_three_names_are_offered_by_default() -> None:
    names = ["map@1", "map@2", "map@3", "map@4", "map@5"]
    assert close_names("map@0", names) == ["map@1", "map@2", "map@3"]
    assert close_names("map@0", names, most=5) == names
