"""painting.py step by step on hand-made documents: where a label's quotes are placed (and which are dropped and
counted), what a grade 0 or a grade 1 label paints, and the parts of a passage's segment that no golden chunk covers.
(The mutation habit, scripts/mutation.sh, found these untested: test_carry.py and test_same_text.py read the painted
characters only through whole evaluations.)"""

from __future__ import annotations

from assay.corpus.align import Span
from assay.pipelines.evaluate.runs.painting import LabelSpan, outside, painted_segments, quote_spans

DOCS = {
    "a": "intro. the cache keeps answers. more text here. the cache keeps answers. end.",
    "b": "elsewhere: the cache keeps answers.",
}
CACHE = "the cache keeps answers."


def places(text: str, doc_id: str) -> list[Span]:
    """Where ``text`` stands exactly, in ``doc_id`` when given, else in any document (document order, then by
    position), as carry.py's places are."""
    out = []
    for doc, body in sorted(DOCS.items()):
        if doc_id and doc != doc_id:
            continue
        at = body.find(text)
        while at >= 0:
            out.append(Span(doc, at, at + len(text), "exact", 1.0))
            at = body.find(text, at + 1)
    return out


def span(start: int, end: int, doc: str = "a") -> Span:
    return Span(doc, start, end, "exact", 1.0)


FIRST, SECOND = DOCS["a"].index(CACHE), DOCS["a"].rindex(CACHE)
OTHER = DOCS["b"].index(CACHE)


def test_a_quote_is_placed_inside_its_label_and_its_other_places_are_echoes() -> None:
    """The label covers the second copy only: the quote is placed there (not at the first copy, which comes first
    in document order, nor in the other document), and both other copies are its echoes."""
    label = span(SECOND - 5, len(DOCS["a"]))
    quotes, echoes, dropped = quote_spans(label, [CACHE], places)
    assert quotes == [Span("a", SECOND, SECOND + len(CACHE), "quote", 1.0)]
    assert echoes == [span(FIRST, FIRST + len(CACHE)), span(OTHER, OTHER + len(CACHE), "b")]
    assert dropped == 0


def test_a_quote_is_clipped_to_its_label() -> None:
    label = span(FIRST + 4, FIRST + 10)  # "cache " of the first copy
    quotes, _, dropped = quote_spans(label, [CACHE], places)
    assert quotes == [Span("a", FIRST + 4, FIRST + 10, "quote", 1.0)] and dropped == 0


def test_a_quote_only_touching_its_label_or_in_another_document_is_dropped_and_counted() -> None:
    """Places that end where the label starts, start where it ends, or stand in another document are not inside it;
    every quote not placed is counted, and the quotes after it are still placed."""
    touching = span(FIRST + len(CACHE), SECOND)  # from the end of the first copy to the start of the second
    quotes, echoes, dropped = quote_spans(touching, [CACHE, "no such words", "more text"], places)
    at = DOCS["a"].index("more text")
    assert quotes == [Span("a", at, at + len("more text"), "quote", 1.0)]
    assert dropped == 2 and echoes == []
    in_b = span(0, len(DOCS["b"]), "b")
    assert quote_spans(in_b, ["intro."], places) == ([], [], 1)
    assert quote_spans(in_b, None, places) == ([], [], 0)


def test_the_echoes_of_every_quote_are_kept() -> None:
    label = span(0, len(DOCS["a"]))
    quotes, echoes, _ = quote_spans(label, [CACHE, "keeps answers"], places)
    assert len(quotes) == 2
    assert {(e.doc_id, e.start) for e in echoes} == {
        ("a", SECOND),
        ("b", OTHER),
        ("a", SECOND + 10),
        ("b", OTHER + 10),
    }


def test_a_grade_1_label_paints_its_quotes_and_echoes_with_1_and_the_rest_with_0() -> None:
    label = LabelSpan(span(0, 30), 1, (span(7, 24),), (span(40, 57), span(3, 9, "b")))
    assert painted_segments([label], []) == [("a", 0, 30, 0), ("a", 7, 24, 1), ("a", 40, 57, 1), ("b", 3, 9, 1)]
    whole = LabelSpan(span(0, 30), 1, (), (span(40, 57),))
    assert painted_segments([whole], []) == [("a", 0, 30, 1), ("a", 40, 57, 1)]


def test_a_grade_0_label_paints_its_span_only_never_its_echoes() -> None:
    label = LabelSpan(span(0, 30), 0, (span(7, 24),), (span(40, 57),))
    assert painted_segments([label], []) == [("a", 0, 30, 0)]


def test_outside_keeps_the_parts_no_covered_range_holds() -> None:
    segment = ("d", 0, 100, 2)
    assert outside(segment, [("d", 0, 40), ("d", 60, 80)]) == [("d", 40, 60, 2), ("d", 80, 100, 2)]
    assert outside(segment, [("d", 10, 20), ("d", 30, 100)]) == [("d", 0, 10, 2), ("d", 20, 30, 2)]
    assert outside(segment, [("d", 0, 100)]) == []
    assert outside(segment, [("d", 100, 120)]) == [segment]


def test_outside_skips_other_documents_wherever_they_sort() -> None:
    segment = ("d", 0, 100, 2)
    assert outside(segment, [("c", 0, 50), ("d", 0, 50)]) == [("d", 50, 100, 2)]
    assert outside(segment, [("c", 0, 50), ("e", 0, 50)]) == [segment]


def test_a_passage_label_paints_around_chunks_of_another_document() -> None:
    """The covered ranges are sorted by document: a chunk of document "c" sorts before the passage's "d"."""
    chunks = [LabelSpan(span(0, 50, "c"), 3), LabelSpan(span(0, 50, "d"), 0)]
    passage = LabelSpan(span(20, 80, "d"), 2)
    assert painted_segments(chunks, [passage]) == [("c", 0, 50, 3), ("d", 0, 50, 0), ("d", 50, 80, 2)]
