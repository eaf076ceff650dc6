"""Sampling a query log: near-duplicates merged with counts kept, every cluster represented, seeded."""

from __future__ import annotations

import random

from assay.pipelines.bootstrap.query_sampling import sample_queries
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
