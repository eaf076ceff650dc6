"""Tool calls against reference calls: hand-computed cases, and the multiset and subsequence counts against brute
force on random sequences."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from assay.metrics.tool_calls import tool_scores

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
