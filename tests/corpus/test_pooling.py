"""BM25 (against an independent implementation of the Lucene formula) and pooling for relevance judging."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from assay.corpus import Bm25Index
from assay.corpus.pooling import _NearDuplicates, jaccard, shingle_hashes, shingles
from assay.errors import CorpusError
from assay.text import terms
from assay.types import Chunk, Question

TEXTS = {
    ("refunds", 0): "Customers can ask for a full refund within 30 days of delivery.",
    ("refunds", 1): "Refunds are processed within 5 business days after the item reaches the warehouse.",
    ("refunds", 2): "Gift cards, custom-engraved items and clearance items marked final sale cannot be refunded, and "
    "opened software licences are refunded only when the key was never activated by the customer.",
    ("refunds", 3): "After 30 days store credit is offered instead of a refund.",
    ("shipping", 0): "Standard delivery takes 2 to 4 business days across the European Union.",
    ("shipping", 1): "Express delivery arrives the next business day when ordered before 14:00.",
    ("shipping", 2): "Orders over 50 euros ship for free; other orders cost 4.95 euros.",
    ("warranty", 0): "Every jacket carries a two-year warranty against manufacturing defects.",
    # an older copy of refunds#2 with its last word changed: a planted near-duplicate
    ("refunds-2019", 0): "Gift cards, custom-engraved items and clearance items marked final sale cannot be refunded, "
    "and opened software licences are refunded only when the key was never activated by the buyer.",
    ("refunds-2019", 1): "Refund requests are handled by the support team by email.",
}


def _chunks() -> list[Chunk]:
    return [
        Chunk(id=f"{doc}#{ordinal}", doc_id=doc, ordinal=ordinal, text=text) for (doc, ordinal), text in TEXTS.items()
    ]


def _reference_bm25(docs: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """Lucene BM25 written out from the formula: sum over query terms of idf * tf / (tf + k1 * (1 - b + b*dl/avgdl))."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    df = Counter(t for d in docs for t in set(d))
    scores = []
    for doc in docs:
        tf = Counter(doc)
        total = 0.0
        for t in query:
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                total += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(total)
    return scores


def test_scores_match_the_lucene_formula() -> None:
    chunks = _chunks()
    index = Bm25Index.build(chunks)
    docs = [terms(c.text) for c in chunks]
    for query in ("refund within 30 days", "business days delivery", "gift cards final sale refunded", "euros euros"):
        expected = _reference_bm25(docs, terms(query))
        np.testing.assert_allclose(index.scores(query), expected, rtol=1e-5, atol=1e-6)


def test_random_corpus_scores_match_the_formula() -> None:
    rng = random.Random(7)
    vocab = [f"term{i}" for i in range(40)]
    chunks = [
        Chunk(id=f"c{i}", doc_id="d", ordinal=i, text=" ".join(rng.choices(vocab, k=rng.randint(3, 30))))
        for i in range(60)
    ]
    index = Bm25Index.build(chunks)
    docs = [terms(c.text) for c in chunks]
    for _ in range(20):
        query = " ".join(rng.choices(vocab, k=rng.randint(1, 5)))
        np.testing.assert_allclose(index.scores(query), _reference_bm25(docs, terms(query)), rtol=1e-5, atol=1e-6)


def test_exact_match_chunk_ranks_first() -> None:
    index = Bm25Index.build(_chunks())
    for chunk in _chunks():
        assert index.search(chunk.text, k=3)[0][0] == chunk.id
        assert index.rank_of(chunk.text, chunk.id) == 1


def test_search_returns_only_matching_chunks_best_first() -> None:
    index = Bm25Index.build(_chunks())
    hits = index.search("warranty jacket", k=5)
    assert [cid for cid, _ in hits] == ["warranty#0"]
    assert index.search("zebra unicorn", k=5) == []
    assert index.search("the and of", k=5) == []  # stop words only
    scores = [s for _, s in index.search("refund days", k=10)]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_ties_are_broken_by_index_order_everywhere() -> None:
    chunks = [Chunk(id=f"c{i}", doc_id=f"d{i}", ordinal=0, text="same words here") for i in range(6)]
    index = Bm25Index.build(chunks)
    assert [cid for cid, _ in index.search("words", k=4)] == ["c0", "c1", "c2", "c3"]
    assert [index.rank_of("words", f"c{i}") for i in range(6)] == [1, 2, 3, 4, 5, 6]


def test_rank_of_is_the_position_in_the_full_ranking() -> None:
    index = Bm25Index.build(_chunks())
    query = "refund days"
    full = index.search(query, k=len(index))
    for position, (cid, _) in enumerate(full, start=1):
        assert index.rank_of(query, cid) == position
    assert index.rank_of(query, "warranty#0") is None  # shares no term with the query
    assert index.rank_of(Question(id="q", text=query), full[0][0]) == 1


def test_pool_has_source_bm25_neighbours_and_the_planted_near_duplicate() -> None:
    index = Bm25Index.build(_chunks())
    question = Question(id="q1", text="Can gift cards be refunded?", source_chunk_ids=["refunds#2"])
    pool = {e.chunk_id: e for e in index.pool(question, bm25_k=3)}
    assert pool["refunds#2"].reasons == {"source", "bm25"} and pool["refunds#2"].bm25_rank == 1
    assert "neighbour" in pool["refunds#1"].reasons and "neighbour" in pool["refunds#3"].reasons
    assert "near_duplicate" in pool["refunds-2019#0"].reasons
    assert all("near_duplicate" not in e.reasons for e in pool.values() if e.chunk_id != "refunds-2019#0")
    assert jaccard(shingles(TEXTS[("refunds", 2)]), shingles(TEXTS[("refunds-2019", 0)])) >= 0.8
    assert "refunds#0" not in pool or "neighbour" not in pool["refunds#0"].reasons  # two ordinals away
    bm25_entries = [e for e in pool.values() if "bm25" in e.reasons]
    assert sorted(e.bm25_rank for e in bm25_entries if e.bm25_rank) == list(range(1, len(bm25_entries) + 1))
    assert next(iter(pool)) == "refunds#2"  # sources come first


def test_pool_options() -> None:
    index = Bm25Index.build(_chunks())
    only_source = index.pool("gift cards", ["refunds#2"], bm25_k=0, neighbours=0, near_duplicates=False)
    assert [(e.chunk_id, e.reasons) for e in only_source] == [("refunds#2", {"source"})]
    wide = index.pool("xyz", ["refunds#0"], bm25_k=0, neighbours=2, near_duplicates=False)
    assert [e.chunk_id for e in wide] == ["refunds#0", "refunds#1", "refunds#2"]
    with pytest.raises(CorpusError, match="chunk 'ghost' is not in the BM25 index"):
        index.pool("q", ["ghost"])


def test_neighbours_follow_ordinals_not_input_order() -> None:
    chunks = list(reversed(_chunks()))
    index = Bm25Index.build(chunks)
    assert index.neighbours_of("shipping#1") == ["shipping#0", "shipping#2"]
    assert index.neighbours_of("warranty#0", 3) == []
    assert index.chunk("shipping#1").text == TEXTS[("shipping", 1)]  # by id, whatever the input order
    with pytest.raises(CorpusError, match="'nope#0' is not in the BM25 index"):
        index.chunk("nope#0")


def test_near_duplicate_index_matches_brute_force() -> None:
    rng = random.Random(3)
    base = [[f"w{rng.randrange(30)}" for _ in range(rng.randint(3, 25))] for _ in range(40)]
    texts = [" ".join(words) for words in base]
    for words in base[:15]:  # plant edited copies
        copy = list(words)
        copy[rng.randrange(len(copy))] = "edited"
        texts.append(" ".join(copy))
    sets = [shingles(t) for t in texts]
    for threshold in (0.5, 0.8, 0.9):
        near = _NearDuplicates.of_texts(texts, threshold)
        for i in range(len(sets)):
            brute = [j for j in range(len(sets)) if j != i and sets[i] and jaccard(sets[i], sets[j]) >= threshold]
            assert near.similar(i) == brute


def test_shingle_hashes_are_the_shingles_one_to_one() -> None:
    for text in ("a b c d e f g a b c d e", "Two words", "", "one two three four five"):
        assert len(shingle_hashes(text)) == len(shingles(text))
    assert shingle_hashes("x y z u v w").tolist() == sorted(shingle_hashes("X y z u v w").tolist())


def test_shingles_of_short_texts() -> None:
    assert shingles("Two words") == frozenset({("two", "words")})
    assert shingles("") == frozenset()
    assert len(shingles("a b c d e f g")) == 3


def test_empty_and_duplicate_chunks_are_refused() -> None:
    with pytest.raises(CorpusError, match="no chunks"):
        Bm25Index.build([])
    chunk = _chunks()[0]
    with pytest.raises(CorpusError, match="duplicate chunk id 'refunds#0'"):
        Bm25Index.build([chunk, chunk])
