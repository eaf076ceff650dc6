"""The trajectory measures: hand-computed cases, and random cases against counting characters one by one."""

from __future__ import annotations

import math
import random

import pytest

from assay.metrics.trajectory import trajectory

# document a: characters 0-100 relevant (grade 2) at 10-30, irrelevant (grade 0) at 30-50; document b: 0-20 grade 1
GRADES = {"a": [(10, 30, 2), (30, 50, 0)], "b": [(0, 20, 1)]}  # N = 20 + 20 = 40 at threshold 1


def test_two_searches_each_finding_one_hop_and_an_answer_that_kept_one() -> None:
    searches = [[("a", 0, 19)], [("a", 15, 25), ("b", 0, 20)]]  # a:10-19 (9), then a:19-25 (6) and b:0-20 (20)
    final = [("b", 0, 20)]
    hops = [[("a", 10, 30)], [("b", 0, 20)]]
    got = trajectory(searches, final, GRADES, 1, hops)
    assert got.n_relevant == 40
    assert got.recall_after == (9 / 40, 35 / 40)
    assert got.recall == 35 / 40
    assert got.added == (9, 26)
    assert got.lost == (9, 10)  # a:10-19, then a:15-25: the context holds only b
    assert got.redundant == 0
    assert got.dropped == 15 / 40  # a:10-25 seen, the answer kept only b
    # hop 1 (a:10-30, 20 characters): 9 shown after search 1, 15 after search 2; hop 2 whole after search 2
    assert got.hop_found == (1, 1)


def test_a_search_that_repeats_what_was_shown_is_redundant_and_the_threshold_counts() -> None:
    searches = [[("a", 10, 30)], [("a", 12, 28)], [("a", 30, 50)]]
    got = trajectory(searches, [("a", 10, 30)], GRADES, 2)  # only document a's grade-2 text is relevant: N = 20
    assert got.n_relevant == 20
    assert got.recall_after == (1.0, 1.0, 1.0)
    assert got.added == (20, 0, 0)
    assert got.redundant == 2
    assert got.dropped == 0.0


def test_no_relevant_text_is_nan_and_no_search_scores_zero() -> None:
    nothing = trajectory([[("a", 0, 5)]], [], {"a": [(0, 5, 0)]}, 1)
    assert math.isnan(nothing.recall) and math.isnan(nothing.dropped) and math.isnan(nothing.recall_after[0])
    assert nothing.added == (0,)
    never = trajectory([], [], GRADES, 1, [[("a", 10, 30)]])
    assert never.recall == 0.0 and never.recall_after == () and never.hop_found == (None,)
    assert never.dropped == 0.0


def test_a_hop_shown_just_under_half_is_not_found_and_an_empty_hop_never_is() -> None:
    got = trajectory([[("a", 10, 19)], [("a", 19, 20)]], [], GRADES, 1, [[("a", 10, 30)], []])
    assert got.hop_found == (1, None)  # 9 of 20 after the first search, 10 of 20 after the second


@pytest.mark.parametrize("seed", range(30))
def test_against_counting_characters(seed: int) -> None:
    rng = random.Random(seed)

    def ranges(n: int) -> list[tuple[str, int, int]]:
        out = []
        for _ in range(n):
            start = rng.randrange(0, 60)
            out.append((rng.choice("ab"), start, start + rng.randrange(0, 25)))
        return out

    grades: dict[str, list[tuple[int, int, int]]] = {}
    for doc in "ab":
        at, parts = 0, []
        while at < 80:
            size = rng.randrange(1, 15)
            parts.append((at, at + size, rng.randrange(0, 4)))
            at += size
        grades[doc] = parts
    searches = [ranges(rng.randrange(0, 4)) for _ in range(rng.randrange(1, 5))]
    final, hops = ranges(3), [ranges(2) for _ in range(2)]

    def chars(rs: list[tuple[str, int, int]]) -> set[tuple[str, int]]:
        return {(doc, i) for doc, s, e in rs for i in range(s, e)}

    relevant = {(doc, i) for doc, parts in grades.items() for s, e, g in parts if g >= 2 for i in range(s, e)}
    got = trajectory(searches, final, grades, 2, hops)
    shown: set[tuple[str, int]] = set()
    for i, search in enumerate(searches):
        before = len(shown & relevant)
        shown |= chars(search)
        assert got.added[i] == len(shown & relevant) - before
        assert got.lost[i] == len((chars(search) & relevant) - chars(final))
        assert got.recall_after[i] == pytest.approx(len(shown & relevant) / len(relevant))
    assert got.dropped == pytest.approx(len((shown & relevant) - chars(final)) / len(relevant))
    for h, hop in enumerate(hops):
        target, seen, first = chars(hop), set(), None
        for i, search in enumerate(searches):
            seen |= chars(search)
            if first is None and target and len(seen & target) >= len(target) / 2:
                first = i
        assert got.hop_found[h] == first
