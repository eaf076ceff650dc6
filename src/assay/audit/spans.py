"""What the audit page shows for a span label: the passage's span inside its document's text, as a search result.

A located passage (``p:{doc_id}:{start}-{end}``) shows its document's title and id, up to :data:`CONTEXT`
characters of the document before and after the span (cut at a space so no word is split, ``cut_before`` /
``cut_after`` when the document goes on) and the span itself, ``document.text[start:end]``: the text whose label
joins the pool. The run's own text of the passage is given too when it differs (an approximate match). A passage
found in no document (``t:{hash}``, no offsets) shows its own text and a note that says so.
"""

from __future__ import annotations

from typing import Any

from assay.types import Document, Passage

__all__ = ["CONTEXT", "NOT_FOUND", "span_view"]

CONTEXT = 300
NOT_FOUND = (
    "Found in no golden document: this is the text as the run gave it. Its grade counts for runs that retrieve this "
    "same text; it adds no span to the pool, which holds spans of documents."
)


def span_view(passage: Passage, document: Document | None, context: int = CONTEXT) -> dict[str, Any]:
    """The page's fields for ``passage`` (see the module docstring); ``document`` is the one it names, if any."""
    start, end = passage.start, passage.end
    if document is None or start is None or end is None or not 0 <= start <= end <= len(document.text):
        note = NOT_FOUND
        if passage.doc_id is not None:
            note = f"Located in document {passage.doc_id!r}, which the golden set no longer holds at those offsets."
        return {"located": False, "note": note, "text": passage.text, "doc_id": passage.doc_id, "match": passage.match}
    text = document.text
    before, cut_before = _tail(text[max(0, start - context) : start], start > context)
    after, cut_after = _head(text[end : end + context], end + context < len(text))
    span = text[start:end]
    return {
        "located": True,
        "note": None,
        "doc_id": document.id,
        "doc_title": document.title,
        "doc_source": document.source,
        "start": start,
        "end": end,
        "before": before,
        "text": span,
        "after": after,
        "cut_before": cut_before,
        "cut_after": cut_after,
        "match": passage.match,
        "run_text": passage.text if passage.text.strip() != span.strip() else None,
    }


def _tail(piece: str, cut: bool) -> tuple[str, bool]:
    """The end of ``piece``, from its first space on when it was cut mid-document (no half word at the start)."""
    if cut and " " in piece:
        piece = piece[piece.index(" ") + 1 :]
    return piece, cut


def _head(piece: str, cut: bool) -> tuple[str, bool]:
    """The start of ``piece``, up to its last space when it was cut mid-document."""
    if cut and " " in piece:
        piece = piece[: piece.rindex(" ")]
    return piece, cut
