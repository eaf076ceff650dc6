"""Sampling a query log: near-duplicates merged with counts kept, every cluster represented, seeded."""

from __future__ import annotations

import random

from assay.pipelines.bootstrap.query_sampling import QueryGroup, _choose, normalize_query, sample_queries


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
    by_key = {normalize_query(g.text): g for g in out.chosen}
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
