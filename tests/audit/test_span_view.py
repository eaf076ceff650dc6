"""span_view: the audit page's fields for a span label, checked on a short document with hand-counted offsets."""

from __future__ import annotations

from assay.audit.spans import NOT_FOUND, span_view
from assay.types import Document, Passage

# offsets: one=0-3 two=4-7 three=8-13 four=14-18 five=19-23 six=24-27 seven=28-33 (33 characters)
TEXT = "one two three four five six seven"


def _doc(text: str = TEXT) -> Document:
    return Document(id="d", source="d.md", title="D", text=text, content_hash="h")


def _passage(start: int | None, end: int | None, text: str = "four", doc_id: str | None = "d") -> Passage:
    return Passage(id=f"p:d:{start}-{end}", text=text, match="exact", doc_id=doc_id, start=start, end=end)


def test_context_is_cut_at_a_space_on_both_sides() -> None:
    view = span_view(_passage(14, 18), _doc(), context=8)
    # before = TEXT[6:14] = "o three " -> from its first space on; after = TEXT[18:26] = " five si" -> up to its last
    assert (view["before"], view["text"], view["after"]) == ("three ", "four", " five")
    assert view["cut_before"] is True and view["cut_after"] is True
    assert view["located"] is True and view["note"] is None and view["run_text"] is None
    assert [view[key] for key in ("doc_id", "doc_title", "doc_source", "start", "end")] == ["d", "D", "d.md", 14, 18]
    assert view["match"] == "exact"


def test_context_reaching_the_document_edges_exactly_is_not_cut() -> None:
    # start == context: the context starts the document; end + context == len(TEXT): it ends it
    view = span_view(_passage(8, 13, "three"), _doc(), context=8)
    assert (view["before"], view["cut_before"]) == ("one two ", False)
    view = span_view(_passage(14, 18), _doc(), context=15)
    assert (view["after"], view["cut_after"]) == (" five six seven", False)


def test_context_longer_than_the_start_begins_at_the_first_character() -> None:
    view = span_view(_passage(4, 7, "two"), _doc(), context=8)
    assert (view["before"], view["cut_before"]) == ("one ", False)


def test_a_cut_piece_without_a_space_is_kept_whole() -> None:
    # span 5-7 of 13 letters with context 3: before [2:5], after [7:10], both cut mid-document, no space
    view = span_view(_passage(5, 7, "fg"), _doc("abcdefghijklm"), context=3)
    assert (view["before"], view["cut_before"]) == ("cde", True)
    assert (view["after"], view["cut_after"]) == ("hij", True)


def test_an_empty_span_and_a_span_ending_the_document_are_located() -> None:
    assert span_view(_passage(14, 14, ""), _doc(), context=3)["located"] is True
    view = span_view(_passage(28, 33, "seven"), _doc(), context=3)
    assert view["located"] is True and view["text"] == "seven" and view["after"] == "" and view["cut_after"] is False
    assert span_view(_passage(0, 3, "one"), _doc(), context=3)["before"] == ""


def test_the_run_text_is_given_only_when_it_differs_beyond_whitespace() -> None:
    assert span_view(_passage(14, 18, " four\n"), _doc())["run_text"] is None
    assert span_view(_passage(14, 18, "for"), _doc())["run_text"] == "for"


def test_offsets_outside_the_document_are_not_located() -> None:
    for start, end in [(-1, 3), (14, 34), (18, 14), (None, 18), (14, None)]:
        view = span_view(_passage(start, end, "x"), _doc())
        assert view == {
            "located": False,
            "note": "Located in document 'd', which the golden set no longer holds at those offsets.",
            "text": "x",
            "doc_id": "d",
            "match": "exact",
        }, (start, end)


def test_a_passage_found_in_no_document_says_so() -> None:
    view = span_view(_passage(None, None, "loose", doc_id=None), None)
    assert view == {"located": False, "note": NOT_FOUND, "text": "loose", "doc_id": None, "match": "exact"}
    assert span_view(_passage(14, 18), None)["note"].startswith("Located in document 'd'")
