"""Sampling a query log: near-duplicates merged with counts kept, every cluster represented, seeded."""

from __future__ import annotations

import math
import random
import zlib

import numpy as np
import pytest

from assay.pipelines.bootstrap.query_sampling import (
    QueryGroup,
    _allocate,
    _choose,
    _kmeans,
    _signatures,
    _tfidf,
    sample_queries,
)
from assay.text import query_log_key


def _log() -> list[str]:
    rng = random.Random(3)
    common = ["How do I reset my password?", "Where is my parcel?", "How can I cancel my subscription?"]
    texts = [rng.choice(common) for _ in range(300)]
    texts += ["how do i reset my password", "How do I reset my pasword?"]  # case, punctuation, a typo
    texts += [f"What is the warranty on the {w} model?" for w in ("kettle", "toaster", "blender", "mixer", "grill")]
    texts += ["Is the museum open on bank holidays in Scotland?"]  # a rare intent
    rng.shuffle(texts)
    return texts


def test_near_duplicates_merge_with_counts() -> None:
    texts = _log()
    out = sample_queries(texts, [1] * len(texts), 100, seed=0)
    by_key = {query_log_key(g.text): g for g in out.chosen}
    reset = by_key["how do i reset my password"]
    assert reset.count == texts.count("How do I reset my password?") + 2
    assert reset.variants == 2  # one normalised wording (case, punctuation) and the typo
    assert sum(g.count for g in out.chosen) == len(texts)


def test_sample_keeps_frequent_and_rare_and_is_seeded() -> None:
    texts = _log()
    counts = [1] * len(texts)
    first = sample_queries(texts, counts, 4, seed=7)
    again = sample_queries(texts, counts, 4, seed=7)
    assert [g.text for g in first.chosen] == [g.text for g in again.chosen]
    assert len(first.chosen) == 4
    assert first.counts["log_clusters"] == 1 and first.counts["log_groups"] == 9
    # the single cluster's most frequent group always comes first
    assert max(g.count for g in first.chosen) == max(texts.count(t) for t in set(texts))


def test_every_cluster_gets_one() -> None:
    texts = [f"refund for order number {i}" for i in range(200)]
    texts += [f"opening hours of shop in {c}" for c in ("paris", "rome", "oslo", "lima", "kyiv", "bern", "riga")]
    texts += ["quantum entanglement telescope lens"]
    out = sample_queries(texts, [5] * 200 + [1] * 8, 8, seed=1)
    assert len(out.chosen) == 8
    assert out.counts["log_clusters"] == 2
    assert {g.cluster for g in out.chosen} == {0, 1}


def _clusters(*sizes_and_counts: tuple[int, int]) -> list[QueryGroup]:
    """Groups already clustered: for cluster j, ``size`` groups each asked ``count`` times (line numbers in order)."""
    groups, line = [], 0
    for cluster, (size, count) in enumerate(sizes_and_counts):
        for _ in range(size):
            groups.append(QueryGroup(text=f"q{line}", count=count, members=[line], cluster=cluster))
            line += 1
    return groups


def _taken(chosen: list[QueryGroup], clusters: int) -> list[int]:
    return [sum(g.cluster == j for g in chosen) for j in range(clusters)]


def test_questions_are_allocated_by_the_square_root_of_each_clusters_traffic() -> None:
    # traffic 100 and 4: one each, then the 6 left in proportion to sqrt 10 : sqrt 4 = 5 : 1. By traffic itself it
    # would be 7 : 1 (shares 5.77 and 0.23); by groups (sqrt 10 : sqrt 4, the counts ignored) 5 : 3.
    chosen = _choose(_clusters((10, 10), (4, 1)), 2, 8, seed=0)
    assert _taken(chosen, 2) == [6, 2]


def test_a_cluster_gets_no_more_questions_than_it_has_groups() -> None:
    # two groups asked 500 times each: of the 6 left after one each, their share is 6 * sqrt 1000 / (sqrt 1000 +
    # sqrt 10) = 5.45, but the cluster has one group left; the other cluster takes the rest, so the sample is still N
    chosen = _choose(_clusters((10, 1), (2, 500)), 2, 8, seed=0)
    assert _taken(chosen, 2) == [6, 2] and len({g.text for g in chosen}) == 8


def test_a_groups_count_and_wording_come_from_the_log_counts() -> None:
    texts = ["How do I reset my password?", "How do I reset my pasword?", "how do i reset my password", "Hi"]
    out = sample_queries(texts, [2, 9, 3, 1], 5, seed=0)
    reset = next(g for g in out.chosen if g.variants == 2)
    assert (reset.text, reset.count, reset.members) == ("How do I reset my pasword?", 2 + 9 + 3, [0, 1, 2])
    assert out.counts["log_asked"] == 15 and out.counts["log_lines"] == 4


def test_the_counts_say_what_the_log_held() -> None:
    texts = ["Where is my parcel?", "where is my parcel", "How do I get a refund?"]
    out = sample_queries(texts, [4, 1, 2], 2, seed=0)  # two groups for two questions: every group kept, no clusters
    assert out.counts == {"log_lines": 3, "log_asked": 7, "log_groups": 2, "log_clusters": 0}
    assert [(g.text, g.count, g.members) for g in out.chosen] == [
        ("Where is my parcel?", 5, [0, 1]),
        ("How do I get a refund?", 2, [2]),
    ]


def test_the_same_seed_gives_the_same_clusters_and_sample() -> None:
    texts = [f"opening hours of the {s} shop in {c}" for s in ("shoe", "book") for c in ("paris", "rome", "oslo")]
    texts += [f"refund for my {thing} order" for thing in ("lamp", "sofa", "desk", "chair", "rug", "bed")]
    texts += [f"{w} entanglement telescope lens" for w in ("quantum", "optical", "solar")]
    runs = [sample_queries(texts, [1] * len(texts), 8, seed=5) for _ in range(6)]
    shown = {tuple((g.text, g.cluster) for g in run.chosen) for run in runs}
    assert len(shown) == 1 and runs[0].counts["log_clusters"] == 2


def _partition(labels: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(labels == label).tolist()) for label in set(labels.tolist())}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_kmeans_finds_small_far_clusters_by_squared_distance(seed: int) -> None:
    # 50 rows at A = (1, 1), B = (1.1, 1) and C = (1, 1.1): the k-means++ start picks each next centre by squared
    # distance to those taken (however small), so B and C get centres of their own where a uniform pick would
    # almost always land on A
    x = np.ones((52, 2))
    x[50], x[51] = (1.1, 1.0), (1.0, 1.1)
    assert _partition(_kmeans(x, 3, seed)) == {frozenset(range(50)), frozenset({50}), frozenset({51})}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_kmeans_puts_a_row_with_the_nearer_centre(seed: int) -> None:
    # ten rows at 0 and one at 0.045 (centre 0.045 / 11 = 0.0041), ten at 0.1: the row at 0.045 is 0.041 from the
    # first centre and 0.055 from the second
    x = np.array([[0.0]] * 10 + [[0.045]] + [[0.1]] * 10)
    assert _partition(_kmeans(x, 2, seed)) == {frozenset(range(11)), frozenset(range(11, 21))}


def test_kmeans_of_identical_rows_is_one_cluster() -> None:
    # no distance left to pick the second centre by: it is drawn uniformly, and every row stays with the first
    assert _kmeans(np.ones((4, 3)), 2, seed=0).tolist() == [0, 0, 0, 0]


def test_tfidf_rows_are_unit_length_with_the_smooth_idf() -> None:
    # df: mu 2, zeta 2, alpha 1 -> columns by df then word: mu, zeta, alpha; idf = ln((1 + 4) / (1 + df)) + 1
    rows = _tfidf(["Zeta alpha", "zeta mu", "?!", "mu?"])
    low, high = math.log(5 / 3) + 1, math.log(5 / 2) + 1
    half = math.sqrt(0.5)
    expected = [[0.0, low, high] / np.hypot(low, high), [half, half, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    np.testing.assert_allclose(rows, expected, rtol=1e-12)


def test_minhash_signatures_are_minima_of_the_seeded_linear_hashes_of_4_gram_shingles() -> None:
    # the module's hash p is (a_p * crc32(shingle) + b_p) mod (2^31 - 1): two keys of one shingle each (" ab ",
    # " cd ") give a_p and b_p, and every other key's signature must be the minimum over its own shingles
    prime = (1 << 31) - 1
    keys = ["ab", "cd", "x", "abcd", "how do i reset my password", "ab cd"]
    sig = _signatures(keys, seed=3).tolist()
    h1, h2 = zlib.crc32(b" ab "), zlib.crc32(b" cd ")
    a = [(s1 - s2) * pow(h1 - h2, -1, prime) % prime for s1, s2 in zip(sig[0], sig[1], strict=True)]
    b = [(s1 - ap * h1) % prime for s1, ap in zip(sig[0], a, strict=True)]
    for key, row in zip(keys, sig, strict=True):
        padded = f" {key} "
        grams = {padded[i : i + 4] for i in range(len(padded) - 3)} or {padded}
        hashes = [zlib.crc32(g.encode()) for g in grams]
        assert row == [min((ap * h + bp) % prime for h in hashes) for ap, bp in zip(a, b, strict=True)], key
    assert _signatures(keys[3:4], seed=3).tolist() == [sig[3]]  # a key's signature does not depend on the others


def test_every_near_duplicate_pair_in_a_long_log_merges() -> None:
    words = (
        "parcel refund invoice password warranty delivery account voucher battery kettle garden ladder "
        "window pillow carpet bottle helmet jacket mirror candle basket wallet ticket socket cable"
    ).split()
    rng = random.Random(11)
    texts = [" ".join(rng.sample(words, 6)) for _ in range(45)]  # any two share little but single words
    typos = [text[:-1] + "x" for text in texts]  # one letter changed at the end
    out = sample_queries(texts + typos, [1] * (2 * len(texts)), 100, seed=0)
    assert out.counts["log_groups"] == len(texts)
    assert sorted((g.members, g.variants) for g in out.chosen) == [([i, i + 45], 2) for i in range(45)]


def test_a_clusters_most_asked_group_comes_first_and_an_empty_cluster_is_passed_over() -> None:
    groups = _clusters((4, 1), (0, 1), (3, 1))
    for group, count in zip(groups, [1, 5, 5, 2, 1, 7, 3], strict=True):
        group.count = count
    # one each, then the 3 left by sqrt 13 : sqrt 11 (shares 1.56 and 1.44: one each, the last by remainder)
    chosen = _choose(groups, 3, 5, seed=0)
    assert chosen[0].text == "q1"  # counts 5 and 5: the first in the log
    assert chosen[3].text == "q5" and chosen[4].text in {"q4", "q6"}
    assert _taken(chosen, 3) == [3, 0, 2]


def test_the_rest_of_a_cluster_is_drawn_by_the_square_root_of_its_counts() -> None:
    # after the head, one group asked 10,000 times (weight 100) against twenty asked once (weight 1 each): it is
    # drawn first with probability 100 / 120 per seed; a uniform draw would give it 1 / 21
    groups = _clusters((22, 1))
    groups[0].count, groups[1].count = 20_000, 10_000
    second = [_choose(groups, 1, 2, seed)[1].text for seed in range(40)]
    assert second.count("q1") >= 25
    assert len(set(second)) >= 3  # the others are drawn too, by the seed


def test_allocation_by_largest_remainder_capped_by_size() -> None:
    # one left over, shares 0.5 and 0.5: the tie goes to the first cluster
    assert _allocate([1.0, 1.0], [3, 3], 3) == [2, 1]
    # two left, shares 4/3 and 2/3: floors 1 and 0, the last by the larger remainder (2/3, the second cluster)
    assert _allocate([2.0, 1.0], [10, 10], 4) == [2, 2]
    # a full cluster's weight leaves the shares: the ten left go 9 : 1 to the open clusters
    assert _allocate([100.0, 9.0, 1.0], [1, 10, 10], 13) == [1, 10, 2]
