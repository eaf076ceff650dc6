"""Tool calls against reference calls: hand-computed cases, and the multiset and subsequence counts against brute
force on random sequences."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest

from assay.metrics.tool_calls import matched, same_terms, tool_scores

ADD = ("calculator", {"expression": "1950 - 1900"})


def test_a_system_that_called_the_right_tools_in_the_wrong_order_with_one_argument_wrong() -> None:
    reference = [("search", {"q": "A founded"}), ("search", {"q": "B founded"}), ADD]
    system = [("calculator", {"expression": " 1950 -  1900"}), ("search", {"q": "a FOUNDED"}), ("lookup", {}),
              ("search", {"q": "C founded"})]  # fmt: skip
    got = tool_scores(reference, system)
    assert got.name_precision == 3 / 4 and got.name_recall == 3 / 3  # search x2 and calculator shared
    assert got.name_f1 == pytest.approx(2 * 0.75 / 1.75)
    assert got.order_f1 == pytest.approx(2 * 2 / 7)  # longest common subsequence: search, search
    assert got.args_exact == 2 / 3  # the calculator (spaces folded) and the first search (case folded)


def test_repeats_count_once_per_reference_call_and_numbers_are_numbers() -> None:
    got = tool_scores([ADD, ("convert", {"x": 2})], [ADD, ADD, ADD, ("convert", {"x": 2.0})])
    assert (got.name_precision, got.name_recall, got.args_exact) == (2 / 4, 1.0, 1.0)


def test_no_call_at_all_and_no_reference() -> None:
    none = tool_scores([ADD], [])
    assert math.isnan(none.name_precision) and none.name_recall == 0.0 and none.name_f1 == 0.0
    assert none.order_f1 == 0.0 and none.args_exact == 0.0
    assert all(math.isnan(v) for v in vars(tool_scores([], [ADD])).values())


@pytest.mark.parametrize("seed", range(40))
def test_counts_against_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    names = "abc"
    reference = [(rng.choice(names), {"v": rng.randrange(2)}) for _ in range(rng.randrange(1, 5))]
    system = [(rng.choice(names), {"v": rng.randrange(2)}) for _ in range(rng.randrange(0, 5))]
    got = tool_scores(reference, system)
    ref_names, sys_names = [n for n, _ in reference], [n for n, _ in system]
    lcs = max((k for k in range(len(ref_names) + 1) for sub in itertools.combinations(ref_names, k)
               if _is_subsequence(sub, sys_names)), default=0)  # fmt: skip
    assert got.order_f1 == pytest.approx(2 * lcs / (len(reference) + len(system)))
    free, matched = list(system), 0
    for call in reference:  # greedy one-to-one matching is exact for equality
        if call in free:
            free.remove(call)
            matched += 1
    assert got.args_exact == pytest.approx(matched / len(reference))
    left, shared = list(sys_names), 0
    for name in ref_names:
        if name in left:
            left.remove(name)
            shared += 1
    assert got.name_recall == pytest.approx(shared / len(reference))


def _is_subsequence(sub: tuple[str, ...], seq: list[str]) -> bool:
    it = iter(seq)
    return all(x in it for x in sub)


@pytest.mark.parametrize("seed", range(40))
def test_the_matching_is_maximum_against_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    pairs = [(rng.randrange(4), rng.randrange(4)) for _ in range(rng.randrange(0, 9))]
    best = 0
    for k in range(len(pairs) + 1):
        for chosen in itertools.combinations(set(pairs), k):
            if len({i for i, _ in chosen}) == k == len({j for _, j in chosen}):
                best = max(best, k)
    assert matched(pairs) == best
    assert matched(list(reversed(pairs))) == best  # whatever order the pairs come in


@pytest.mark.parametrize(
    ("reference", "made", "same"),
    [
        (("calc", {"e": "3.2+12"}), ("calc", {"e": "12 + 3.2"}), True),
        (("calc", {"e": "3.2+12"}), ("calc", {"e": "12 + 3.20"}), True),  # numbers as numbers
        (("calc", {"e": "3.2+12"}), ("calc", {"e": "3.2+13"}), False),
        (("lookup", {"item": "Brackenhow 4 tent"}), ("lookup", {"item": "tent brackenhow 4"}), True),
        (("lookup", {"item": "Brackenhow 4"}), ("find", {"item": "Brackenhow 4"}), False),  # another tool
        (("lookup", {"item": "x"}), ("lookup", {"item": "x", "limit": 3}), False),  # another argument
    ],
)
def test_the_offline_rule_of_same_terms(reference: Any, made: Any, same: bool) -> None:
    assert same_terms(reference, made) is same
