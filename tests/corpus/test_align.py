"""The aligner: passages located in documents exactly (after normalization), approximately, or not at all, through an
index (never a scan of every document). Expected spans are found by hand in the document text."""

from __future__ import annotations

import random

import pytest

from assay.corpus import align
from assay.corpus.align import Aligner, Span, normalized_words
from assay.types import Document

TEXT = (
    "# Refunds\n\nCustomers may return any item within **30 days** of delivery. The refund is issued to the "
    "original payment method.\n\nSee <a href='/x'>the exam-\nple</a> page for [details](https://example.com/d)."
)
OTHER = "Shipping takes 3-5 business days. Express shipping costs $12 and arrives the next day."


def doc(doc_id: str, text: str) -> Document:
    return Document(id=doc_id, source=doc_id, text=text, content_hash=doc_id)


@pytest.fixture
def aligner() -> Aligner:
    return Aligner([doc("refunds", TEXT), doc("shipping", OTHER)])


def test_words_fold_case_punctuation_markup_and_line_break_hyphens() -> None:
    assert normalized_words("**Bold** <b>HTML</b> exam-\nple, snake_case; ﬁne") == [
        "bold", "html", "example", "snake", "case", "fine",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("passage", "expected"),
    [
        ("customers may RETURN any item   within 30 days", "Customers may return any item within **30 days"),
        ("See the example page", "See <a href='/x'>the exam-\nple</a> page"),
        ("tomers may return any item within 30 da", "tomers may return any item within **30 da"),  # cut inside words
        ("express shipping costs $12", "Express shipping costs $12"),
    ],
)
def test_exact_matches_give_the_span_in_the_original_text(aligner: Aligner, passage: str, expected: str) -> None:
    span = aligner.locate(passage)
    assert span is not None and span.match == "exact" and span.score == 1.0
    source = TEXT if span.doc_id == "refunds" else OTHER
    assert source[span.start : span.end] == expected


def test_approximate_match_tolerates_a_title_dropped_words_and_link_targets(aligner: Aligner) -> None:
    passage = "Refund policy. Customers may return any item within 30 days of delivery... the refund is issued"
    span = aligner.locate(passage)
    assert span is not None and span.match == "approximate" and span.doc_id == "refunds"
    # the title is not in the document at this place: the span runs from the first to the last word found in order
    assert TEXT[span.start : span.end] == (
        "Customers may return any item within **30 days** of delivery. The refund is issued"
    )
    # 16 words; the title's "refund policy" are not in the span in order: 14 of 16 found
    assert len(normalized_words(passage)) == 16
    assert span.score == pytest.approx(14 / 16)


def test_unrelated_text_is_unmatched_and_doc_ids_restrict(aligner: Aligner) -> None:
    assert aligner.locate("Our stores open at nine every morning and close at six.") is None
    assert aligner.locate("express shipping costs $12", doc_ids=["refunds"]) is None
    assert aligner.locate("express shipping costs $12", doc_ids=["shipping"]) is not None
    assert aligner.locate("  \n ") is None


def test_min_score_is_checked_and_applied() -> None:
    with pytest.raises(ValueError, match="min_score"):
        Aligner([], min_score=0)
    strict = Aligner([doc("refunds", TEXT)], min_score=0.99)
    assert strict.locate("Refund policy. Customers may return any item within 30 days of delivery") is None


def test_only_candidate_documents_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """200 documents with distinct words: a passage reads the one or two documents holding its rare words."""
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(5000)]
    docs = [doc(f"d{i}", " ".join(rng.choice(vocabulary) for _ in range(120))) for i in range(200)]
    aligner = Aligner(docs)
    read: list[str] = []
    real = align._occurrences

    def counting(haystack: str, needle: str):  # type: ignore[no-untyped-def]
        read.append(haystack)
        return real(haystack, needle)

    monkeypatch.setattr(align, "_occurrences", counting)
    words = docs[57].text.split()[30:70]
    span = aligner.locate(" ".join(words))
    assert span is not None and span.doc_id == "d57"
    assert len(read) <= 2


def test_an_inner_word_cut_short_is_not_an_exact_match() -> None:
    """Only the first and last words may be cut: "w3" inside the passage where the document has "w38" is not the
    document's text (the anchor lookup once took a prefix of the inner words for all of them)."""
    words = [f"w{i}" for i in range(60)]
    aligner = Aligner([doc("d", " ".join(words))])
    passage = [*words[5:38], "w3", "w39"]
    span = aligner.locate(" ".join(passage))
    assert span is None or span.match != "exact"
    assert aligner.locate(" ".join(words[5:40])).match == "exact"  # type: ignore[union-attr]


def test_anchors_are_chosen_by_crc32_of_the_words() -> None:
    """The same triples on every machine and in every process. Changing the anchor hash changes which document wins
    a tie between near-copies: bump the alignment cache's version with it."""
    words = normalized_words(TEXT.split("\n\n")[1])
    assert list(align._anchors(words)) == [(4, 1503415712), (9, 3505199072), (15, 280693768)]


def test_exact_ties_go_to_the_lowest_document_id_then_the_earliest_place() -> None:
    passage = "The refund is issued to the original payment method within five days."
    a = f"Refunds. {passage} Some other words come here. {passage}"
    aligner = Aligner([doc("b", passage), doc("c", passage), doc("a", a)])  # not in id order
    first = Span("a", a.index(passage), a.index(passage) + len(passage) - 1, "exact", 1.0)  # no final full stop
    assert aligner.locate(passage) == first
    assert aligner.locate(passage, doc_ids=["c", "b", "a"]) == first
    assert aligner.locate(passage, doc_ids=["c", "b"]) == Span("b", 0, len(passage) - 1, "exact", 1.0)
    assert aligner.locate("payment method") == Span("a", a.index("payment"), a.index(" within"), "exact", 1.0)


def test_approximate_ties_go_to_the_lowest_document_id() -> None:
    """Four identical documents: the three candidates are the lowest ids (equal votes) and the lowest id wins."""
    aligner = Aligner([doc(d, TEXT) for d in ("d3", "d1", "d2", "d0")])
    span = aligner.locate("Refund policy. Customers may return any item within 30 days of delivery... the refund is")
    assert span is not None and span.match == "approximate" and span.doc_id == "d0"


def test_a_word_inside_a_longer_word_is_not_a_match() -> None:
    """Whole words only: "cat" is the word at 26..29, not the letters inside "concatenate" (3..14)."""
    aligner = Aligner([doc("d", "We concatenate files. The cat sat.")])
    assert aligner.locate("cat") == Span("d", 26, 29, "exact", 1.0)


def test_the_default_min_score_accepts_0_65_and_rejects_0_55() -> None:
    """A title of 7 (then 9) words the document does not have before 13 (then 11) of its words, 20 words in all."""
    words = [f"w{i}" for i in range(60)]
    near = " ".join([f"x{i}" for i in range(7)] + words[10:23])
    far = " ".join([f"x{i}" for i in range(9)] + words[10:21])
    aligner = Aligner([doc("d", " ".join(words))])
    span = aligner.locate(near)
    assert span is not None and span.match == "approximate" and span.score == 0.65
    assert aligner.locate(far) is None
    lenient = Aligner([doc("d", " ".join(words))], min_score=0.5).locate(far)
    assert lenient is not None and lenient.score == 0.55
