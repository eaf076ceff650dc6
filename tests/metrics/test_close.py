"""Close names: the real names nearest a typo, by edit distance (one row per rule of the module docstring)."""

from __future__ import annotations

import pytest

from assay.metrics.close import close_names, edit_distance

CATALOGUE = ["ndcg", "ndcg@1", "ndcg@5", "ndcg@10", "ndcg@20", "map", "map@10", "P@10", "P@1", "mrr"]


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("", "", 0), ("map", "map", 0), ("map", "mapp", 1), ("ndgc", "ndcg", 1), ("ndcg@1O", "ndcg@10", 1),
     ("P@5", "P@50", 1), ("abc", "", 3), ("kitten", "sitting", 3)],
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
