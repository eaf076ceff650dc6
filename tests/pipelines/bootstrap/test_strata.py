"""Seed documents drawn by stratified systematic sampling (pipelines/bootstrap/strata.py)."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from assay.pipelines.bootstrap.strata import draw_documents, source_group


def test_source_group_is_the_file_of_a_record_or_the_folder_of_a_file() -> None:
    assert source_group("kb/export.jsonl:12") == "kb/export.jsonl"
    assert source_group("docs/faq/returns.md") == "docs/faq"
    assert source_group("returns.md") == "."
    assert source_group("notes:v2.md") == "."  # a colon not followed by a line number is part of the name


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n", [1, 7, 50, 199])
def test_every_group_gets_its_proportional_share_rounded_either_way(seed: int, n: int) -> None:
    groups = ["a"] * 500 + ["b"] * 300 + ["c"] * 150 + ["d"] * 50
    sizes = [(i * 37) % 1000 for i in range(len(groups))]
    drawn = draw_documents(groups, sizes, n, seed)
    assert len(drawn) == len(set(drawn)) == n and drawn == sorted(drawn)
    per_group = Counter(groups[i] for i in drawn)
    for group, size in Counter(groups).items():
        share = n * size / len(groups)
        assert math.floor(share) <= per_group[group] <= math.ceil(share)


def test_draws_spread_over_the_sizes_of_a_group() -> None:
    sizes = list(range(1000))  # one group; ten size deciles of 100 documents each
    drawn = draw_documents(["."] * 1000, sizes, 20, seed=1)
    assert Counter(sizes[i] // 100 for i in drawn) == dict.fromkeys(range(10), 2)


def test_the_draw_is_seeded() -> None:
    groups, sizes = ["."] * 100, [5] * 100  # all tied: only the seed decides
    assert draw_documents(groups, sizes, 10, 4) == draw_documents(groups, sizes, 10, 4)
    assert draw_documents(groups, sizes, 10, 4) != draw_documents(groups, sizes, 10, 5)
    assert draw_documents(groups, sizes, 100, 4) == list(range(100))
