"""Pins of pipelines/bootstrap/filters.py: the quote window's edges, every threshold at its boundary, the drop
details, the hops of a question whose sources name a chunk its evidence does not, and difficulty end to end."""

from __future__ import annotations

import pytest
from build_helpers import chunk, question

from assay.corpus.pooling import Bm25Index
from assay.pipelines.bootstrap.filters import (
    assign_difficulty,
    difficulty_label,
    filter_evidence,
    filter_leakage,
    filter_near_duplicates,
    leakage_span,
    question_bigrams,
    quote_score,
    relabel_single_chunk,
)
from assay.pipelines.bootstrap.settings import BuildSettings

# 220 words: "w0 the w1 the ... w109 the"; "the" is in every second place, a word difflib's autojunk would drop
LONG = " ".join(f"w{i} the" for i in range(110))


@pytest.mark.parametrize(
    ("quote", "text", "score"),
    [
        # one shared word (f, quote word 3 of 5): window = the whole one-word text, 1 of 5 matched
        ("a d f b d", "f", 0.2),
        # longest run "d e" (quote 2-3, text 5-6): window = text words 2..8 (e b d d e b c), the leading "a" outside
        ("a d e", "a e b d d e b c b f b d", 2 / 3),
        # longest run "f d" (quote 3-4, text 2-3): window = text words 1..5 (d f d b a): only "f d" in order
        ("e a f d", "d f d b a d a d", 0.5),
        # no shared pair; earliest quote word in the text is "e" (text word 11): window = words 9..11 (f f e)
        ("e f b c", "a b f f c a f c f f e", 0.25),
        # longest run "a d" (quote 2-3, text 4-5): window = words 1..8 (f f c a d f e a): f, a d, a all in order
        ("f a d a", "f f c a d f e a b e d c", 1.0),
        # the one shared word "a" (quote 2, text 1): window = words 1..5 (a f a a f): 1 of 4
        ("b a e c", "a f a a f a c c d", 0.25),
        # a word frequent in a long text still counts: "the" (text word 2) matched, "lost" not
        ("the lost", LONG, 0.5),
        # 200 words of LONG with "w50" and "w51" replaced: the 198 others, the lone "the" between them included
        (" ".join(f"w{i} the" for i in range(100)).replace("w50 the w51", "x the y"), LONG, 198 / 200),
    ],
)
def test_quote_score_windows(quote: str, text: str, score: float) -> None:
    assert quote_score(quote, text) == pytest.approx(score)


def test_leakage_span_edges() -> None:
    assert leakage_span("alpha beta", "alpha beta") == 2
    assert leakage_span("?!", "alpha") == 0
    assert leakage_span("the lost", LONG) == 1


def test_question_bigrams_of_two_words_and_one() -> None:
    assert question_bigrams("Return window?") == frozenset({"return window"})
    assert question_bigrams("Window?") == frozenset({"window"})


RETURNS = chunk("returns.md", 0, "Summit members get 90 days to return unopened items.")
STOVE = chunk("stove.md", 0, "The Emberline stove weighs 88 g.")
CHUNKS = {c.id: c for c in (RETURNS, STOVE)}


def test_evidence_details_rounding_missing_chunks_and_the_threshold_itself() -> None:
    settings = BuildSettings(quote_match=0.5)
    none = question("q1", "a?", sources=[RETURNS.id])
    # 2 of 3 words found: 0.667 >= 0.5; 2 of 4 words: exactly 0.5, kept
    kept = question("q2", "b?", sources=[RETURNS.id], evidence=["Summit members sleep", "Summit members never sleep"],
                    cited=[RETURNS.id, RETURNS.id])  # fmt: skip
    extra = question("q3", "c?", sources=[RETURNS.id], evidence=["Summit members get 90 days", "88 g"])
    extra.metadata["evidence_chunk_ids"] = [RETURNS.id]  # the second quote cites nothing
    lost = question("q4", "d?", sources=["gone#0"], evidence=["anything"])
    bare = question("q5", "e?", sources=[RETURNS.id], evidence=["Summit members get 90 days"])
    del bare.metadata["evidence_chunk_ids"]
    out = filter_evidence([none, kept, extra, lost, bare], CHUNKS, settings)
    assert [q.id for q in out.records] == ["q2"]
    assert none.flags["dropped_detail"] == "no evidence quotes"
    assert kept.metadata["evidence_match"] == [0.667, 0.5]
    assert extra.metadata["evidence_match"] == [1.0, 0.0]
    assert lost.metadata["evidence_match"] == [0.0]
    assert bare.metadata["evidence_match"] == [0.0]


def test_leakage_thresholds_are_inclusive_and_the_seed_chunks_stand_in_for_sources() -> None:
    settings = BuildSettings(leakage_words=5, leakage_flag_words=3, leakage_ratio=0.8)
    flag_only = question("q1", "Do Summit members get extra time?", sources=[RETURNS.id])  # run of 3 of 6
    at_words = question("q2", "So Summit members get 90 days then?", sources=[RETURNS.id])  # run of 5
    at_ratio = question("q3", "Summit members get 90 weeks?", sources=[RETURNS.id])  # run of 4 of 5 = 0.8
    seeded = question("q4", "So Summit members get 90 days then?", sources=[RETURNS.id])
    seeded.source_chunk_ids = []  # the generation stage's seed chunks are used instead
    nothing = question("q5", "Summit members get 90 days?", sources=[])
    out = filter_leakage([flag_only, at_words, at_ratio, seeded, nothing], CHUNKS, settings)
    assert [q.id for q in out.records] == ["q1", "q5"]
    assert flag_only.flags["leakage_span"] == 3 and "leakage_span" not in nothing.flags
    assert at_words.flags["dropped_detail"] == "copies a run of 5 words of 7"
    assert at_ratio.flags["dropped_detail"] == "copies a run of 4 words of 5"
    assert seeded.flags["dropped_detail"] == "copies a run of 5 words of 7"
    assert out.counts == {"dropped_by_leakage": 3, "flagged_leakage": 4}


def test_leakage_of_a_one_word_question_and_a_question_without_sources() -> None:
    settings = BuildSettings(leakage_words=1, leakage_flag_words=1)
    one = question("q1", "Emberline?", sources=[STOVE.id])
    alone = question("q2", "What else?", sources=[])
    del alone.metadata["seed_chunk_ids"]  # neither sources nor seeds: nothing to copy from
    out = filter_leakage([one, alone], CHUNKS, settings)
    assert one.flags["dropped_detail"] == "copies a run of 1 words of 1"
    assert [q.id for q in out.records] == ["q2"] and "leakage_span" not in alone.flags


def test_near_duplicates_at_the_threshold_itself() -> None:
    # bigrams {a b, b c, c d} and {a b, b c, c e}: 2 shared of 4 -> Jaccard 0.5
    first, second = question("q1", "alpha beta gamma delta"), question("q2", "alpha beta gamma epsilon")
    out = filter_near_duplicates([first, second], BuildSettings(duplicate_jaccard=0.5))
    assert [q.id for q in out.records] == ["q1"]


def test_relabel_walks_every_question_and_keeps_only_the_cited_sources_as_hops() -> None:
    factoid = question("q0", "z?", sources=[RETURNS.id])
    hops = question("q1", "a?", qtype="multi-hop", sources=[RETURNS.id, STOVE.id, "third#0"],
                    cited=[STOVE.id, RETURNS.id])  # fmt: skip
    bare = question("q2", "b?", qtype="comparison", sources=[RETURNS.id, STOVE.id])
    del bare.metadata["evidence_chunk_ids"]
    words_25 = " ".join(["word"] * 24) + " end."
    short = question("q3", "c?", qtype="multi-hop", sources=[RETURNS.id], cited=[RETURNS.id], reference_answer=words_25)
    longer = question("q4", "d?", qtype="multi-hop", sources=[RETURNS.id], cited=[RETURNS.id],
                      reference_answer="more " + words_25)  # fmt: skip
    out = relabel_single_chunk([factoid, hops, bare, short, longer])
    assert out.records == [factoid, hops, bare, short, longer]
    assert hops.hops == [RETURNS.id, STOVE.id]
    assert bare.hops == [RETURNS.id, STOVE.id]  # no evidence ids: the sources stand as the hops
    assert (short.type, longer.type) == ("factoid", "explanatory")  # 25 words in one sentence, then 26
    assert out.counts == {"relabelled": 2}


@pytest.mark.parametrize(
    ("hops", "rank", "overlap", "label"),
    [
        (2, 5, 0.6, "medium"),  # 2 + 1 + 0
        (1, 1, 0.3, "easy"),  # 0 + 0 + 1
        (1, 2, 0.3, "medium"),  # 0 + 1 + 1
        (2, 10, 0.6, "medium"),  # 2 + 1 + 0
        (2, 11, 0.6, "hard"),  # 2 + 2 + 0
        (1, None, 0.3, "medium"),  # 0 + 2 + 1
        (1, 2, 0.6, "easy"),  # 0 + 1 + 0
        (1, 2, 0.0, "medium"),  # 0 + 1 + 2
    ],
)
def test_difficulty_points_at_each_boundary(hops: int, rank: int | None, overlap: float, label: str) -> None:
    assert difficulty_label(hops, rank, overlap) == label


def test_assign_difficulty_end_to_end() -> None:
    shipping = chunk("shipping.md", 0, "Express shipping costs extra.")
    index = Bm25Index.build([RETURNS, STOVE, shipping])
    easy = question("q1", "Summit members days", sources=[RETURNS.id])  # rank 1, all 3 terms: 0 points
    # two cited sources (2), one of them second for the question (1), 2 of 3 terms (0.667: 0)
    two = question("q2", "Summit stove zebra", qtype="multi-hop", sources=[RETURNS.id, STOVE.id])
    # shares no term with its source (rank None: 2), 0 of 2 terms (2); no evidence ids: 1 hop
    far = question("q3", "Express zebra", sources=[STOVE.id], cited=[])
    # one source ranks 1, the other shares nothing: rank None (2); 1 of 2 terms (0.5: 1)
    mixed = question("q4", "Summit zebra", sources=[RETURNS.id, shipping.id], cited=[RETURNS.id])
    unanswerable = question("q5", "Summit members days", qtype="unanswerable", sources=[RETURNS.id])
    unsourced = question("q6", "Summit members days", sources=[])
    out = assign_difficulty([easy, two, far, mixed, unanswerable, unsourced], index)
    assert out.records == [easy, two, far, mixed, unanswerable, unsourced]
    assert [q.difficulty for q in out.records] == ["easy", "medium", "hard", "medium", None, None]
    assert [q.metadata.get("difficulty_inputs") for q in out.records] == [
        {"hops": 1, "bm25_rank": 1, "overlap": 1.0},
        {"hops": 2, "bm25_rank": 2, "overlap": 0.667},
        {"hops": 1, "bm25_rank": None, "overlap": 0.0},
        {"hops": 1, "bm25_rank": None, "overlap": 0.5},
        None,
        None,
    ]
    assert out.counts == {"difficulty_easy": 1, "difficulty_medium": 2, "difficulty_hard": 1}


def test_assign_difficulty_after_a_skipped_question_without_evidence_ids_or_content_words() -> None:
    index = Bm25Index.build([RETURNS, STOVE])
    unanswerable = question("q1", "Summit members days", qtype="unanswerable", sources=[RETURNS.id])
    bare = question("q2", "Summit members days", sources=[RETURNS.id])
    del bare.metadata["evidence_chunk_ids"]  # 1 hop, rank 1, all terms: easy
    empty = question("q3", "What is it?", sources=[RETURNS.id])  # stop words only: no rank (2), overlap 0 (2)
    assign_difficulty([unanswerable, bare, empty], index)
    assert [q.difficulty for q in (unanswerable, bare, empty)] == [None, "easy", "hard"]
    assert empty.metadata["difficulty_inputs"] == {"hops": 1, "bm25_rank": None, "overlap": 0.0}
