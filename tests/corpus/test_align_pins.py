"""Pins of the aligner's smaller paths (mutation testing found them unasserted): every exact place of a text, the
word offsets it measures spans in. Expected offsets are counted by hand in the document text."""

from __future__ import annotations

from collections import Counter

import pytest

from assay.corpus import align
from assay.corpus.align import Aligner, Span
from assay.types import Document

# words: one(0..3) two(4..7) three(8..13) one(15..18) two(19..22) three(23..28) four(30..34) one(35..38) two(39..42)
# three(43..48)
TEXT = "one two three. one two three. four one two three"


def doc(doc_id: str, text: str) -> Document:
    return Document(id=doc_id, source=doc_id, text=text, content_hash=doc_id)


def aligner() -> Aligner:
    return Aligner([doc("b", "one two three"), doc("a", TEXT)])


def exact(doc_id: str, start: int, end: int) -> Span:
    return Span(doc_id, start, end, "exact", 1.0)


def test_exact_places_lists_every_place_in_id_order_then_position() -> None:
    places = aligner().exact_places("one two three")
    assert places == [exact("a", 0, 13), exact("a", 15, 28), exact("a", 35, 48), exact("b", 0, 13)]


def test_exact_places_stops_at_most() -> None:
    assert aligner().exact_places("one two three", most=2) == [exact("a", 0, 13), exact("a", 15, 28)]
    assert aligner().exact_places("one two three", most=1) == [exact("a", 0, 13)]


def test_exact_places_of_a_short_text_and_of_cut_end_words() -> None:
    short = [exact("a", 4, 13), exact("a", 19, 28), exact("a", 39, 48), exact("b", 4, 13)]
    assert aligner().exact_places("two three") == short
    cut = [exact("a", 1, 11), exact("a", 16, 26), exact("a", 36, 46)]
    assert aligner().exact_places("ne two thr", doc_ids=["a"]) == cut


def test_exact_places_restricted_empty_or_unknown() -> None:
    assert aligner().exact_places("one two three", doc_ids=["b"]) == [exact("b", 0, 13)]
    assert aligner().exact_places("two three four", doc_ids=["b"]) == []
    assert aligner().exact_places(" .. ") == []
    assert aligner().exact_places("one two seven") == []


def test_word_offsets_are_the_words_character_spans() -> None:
    starts, ends = aligner().word_offsets("b")
    assert list(starts) == [0, 4, 8] and list(ends) == [3, 7, 13]


def test_anchors_cover_first_and_last_triples_and_respect_first_and_stop() -> None:
    """w26..w35 has anchors at 0, 2 and 7 (the last triple); keys as test_align pins them (CRC-32 multiples of 8)."""
    words = [f"w{i}" for i in range(26, 36)]
    keys = {0: 3353528096, 2: 2815433632, 7: 2313227736}
    assert list(align._anchors(words)) == [(0, keys[0]), (2, keys[2]), (7, keys[7])]
    assert list(align._anchors(words, 1)) == [(2, keys[2]), (7, keys[7])]
    assert list(align._anchors(words, 0, 10)) == [(0, keys[0]), (2, keys[2]), (7, keys[7])]
    assert list(align._anchors(words, 0, 9)) == [(0, keys[0]), (2, keys[2])]  # the triple 7..9 passes the stop


def test_densest_window() -> None:
    # width 3: [10, 13] holds 4 values, [0, 3] only 3
    assert align._densest([0, 1, 2, 10, 11, 12, 13], 3) == (10, 4)
    assert align._densest([0, 3], 3) == (0, 2)  # both ends of the window count
    assert align._densest([0, 10, 11], 3) == (10, 2)
    assert align._densest([0, 1, 5, 6, 7], 3) == (5, 3)
    assert align._densest([4, 4, 9], 2) == (4, 2)  # the earliest of equally dense: ties keep the first


def test_near_is_inclusive_of_both_bounds() -> None:
    assert align._near([2, 5, 9], 5, 5) == 5
    assert align._near([2, 5, 9], 3, 4) is None
    assert align._near([2, 5, 9], 10, 12) is None
    assert align._near(None, 0, 9) is None


def test_occurrences_are_whole_words_only() -> None:
    assert list(align._occurrences("ab ab ab", "ab")) == [0, 3, 6]
    assert list(align._occurrences("xab ab", "ab")) == [4]
    assert list(align._occurrences("ab abx", "ab")) == [0]
    assert list(align._occurrences("cd", "ab")) == []


def test_most_voted_are_the_three_with_most_votes_ties_by_number() -> None:
    votes = Counter({0: 1, 1: 3, 2: 2, 3: 3})
    assert align._most_voted(votes) == [1, 3, 2]


def test_min_score_one_is_allowed_above_is_not() -> None:
    assert Aligner([], min_score=1.0).min_score == 1.0
    with pytest.raises(ValueError, match="min_score"):
        Aligner([], min_score=1.5)


def test_hit_count_is_the_number_of_places_of_an_anchor() -> None:
    text = " ".join(f"w{i}" for i in range(26, 36))
    one = Aligner([doc("a", text)])
    two = Aligner([doc("a", text), doc("b", text)])
    assert one._hit_count(3353528096) == 1
    assert two._hit_count(3353528096) == 2
    assert one._hit_count(1) == 0  # not a multiple of 8: never an anchor
