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
    assert align._densest([4, 4, 9], 2) == (4, 2)
    assert align._densest([0, 5], 2) == (0, 1)  # the earliest of equally dense: ties keep the first


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


def test_a_whole_end_word_hyphenated_across_a_line_keeps_its_whole_text() -> None:
    """The word "exam-\\nple" is "example" (7 letters) written in 9 characters: a passage ending (or starting)
    with the whole word spans all 9, not the first 7."""
    ending = "See the exam-\nple page"  # exam-\nple: 8..17
    assert Aligner([doc("d", ending)]).locate("see the example") == exact("d", 0, 17)
    starting = "exam-\nple page now more"  # exam-\nple: 0..9, now: 15..18
    assert Aligner([doc("d", starting)]).locate("example page now") == exact("d", 0, 18)


def test_an_approximate_score_is_rounded_to_six_places() -> None:
    """A title of 7 words the document lacks before 14 of its words: 14 of 21 found, 0.666667."""
    words = [f"w{i}" for i in range(60)]
    passage = " ".join([f"x{i}" for i in range(7)] + words[10:24])
    span = Aligner([doc("d", " ".join(words))]).locate(passage)
    assert span is not None and span.match == "approximate" and span.score == 0.666667


def test_exact_places_of_a_long_text() -> None:
    """67 words (more than the 64 the document sampling steps over)."""
    words = [f"w{i}" for i in range(100)]
    text = " ".join(words)  # w0..w9 take 3 characters and a space each, then 4
    found = Aligner([doc("d", text)]).exact_places(" ".join(words[20:87]))
    start = 10 * 3 + 10 * 4  # w20's start
    assert found == [exact("d", start, start + 67 * 4 - 1)]


def test_a_three_word_passage_may_have_cut_ends_and_short_ones_keep_to_doc_ids() -> None:
    assert aligner().locate("ne two thr") == exact("a", 1, 11)
    assert aligner().locate("two three", doc_ids=["b"]) == exact("b", 4, 13)


def _numbered(first: int, stop: int) -> list[str]:
    return [f"w{i}" for i in range(first, stop)]


def test_an_approximate_match_of_0_95_stops_the_search() -> None:
    """Candidates read in id order: "a" finds 19 of the 20 words (0.95, good enough) before "b" would find all 20."""
    passage = " ".join(_numbered(0, 20))
    a = " ".join([*_numbered(0, 19), "zz"])  # w18: 62..65
    b = " ".join([*_numbered(0, 10), "extra", *_numbered(10, 20)])
    found = Aligner([doc("a", a), doc("b", b)]).locate(passage, doc_ids=["b", "a"])
    assert found == Span("a", 0, 65, "approximate", 0.95)


def test_below_0_95_the_highest_score_wins() -> None:
    """Document "a" finds 16 of the 20 words (0.8), "b" 18 (0.9): "b" wins though read second."""
    passage = " ".join(_numbered(0, 20))
    a = " ".join([*_numbered(0, 16), "y1", "y2", "y3", "y4"])
    b = " ".join([*_numbered(0, 18), "z1", "z2"])  # w17: 58..61
    found = Aligner([doc("a", a), doc("b", b)]).locate(passage, doc_ids=["a", "b"])
    assert found == Span("b", 0, 61, "approximate", 0.9)


def test_approximate_candidates_are_the_documents_holding_most_anchors() -> None:
    """w0..w59 has anchors at 26, 28, 33, 39, 40, 45 and 47: each anchor a document holds is one vote for it."""
    words = _numbered(0, 60)
    # "a" holds 26, 28, 33 (also in "b"), "b" all seven: 3 and 7 votes
    one = Aligner([doc("a", " ".join(_numbered(26, 36))), doc("b", " ".join(words))])
    assert one._anchored(words) == [1, 0]
    # "a" holds 45 and 47 (in no other document), "b" and "c" 26, 28, 33: 2, 3 and 3 votes
    two = Aligner([doc("a", " ".join(_numbered(44, 50))), *(doc(d, " ".join(_numbered(25, 37))) for d in "bc")])
    assert two._anchored(words) == [1, 2, 0]


def test_a_score_equal_to_min_score_is_accepted() -> None:
    """A title of 7 words the document lacks before 13 of its words: 13 of 20, exactly 0.65."""
    words = _numbered(0, 60)
    passage = " ".join([f"x{i}" for i in range(7)] + words[10:23])
    span = Aligner([doc("d", " ".join(words))], min_score=0.65).locate(passage)
    assert span is not None and span.score == 0.65


def test_voting_words_are_the_rarest_eight() -> None:
    """z1..z8 are in one document ("b"), "aa" in three: the eight rarest words are z1..z8, so only "b" is voted for
    (taken by the word alone, "aa" would come first and bring "c", "d" and "e")."""
    zs = [f"z{i}" for i in range(1, 9)]
    aligner = Aligner([doc("b", " ".join(zs)), *(doc(d, "aa") for d in "cde")])
    assert aligner._voted([*zs, "aa"]) == [0]


def test_exact_places_stop_at_64_by_default() -> None:
    repeated = Aligner([doc("d", " ".join(["one two three"] * 70))])
    assert len(repeated.exact_places("one two three")) == 64
