"""Quotes on the audit page: where a label's quotes stand in the text under review, and what a person's quotes must be.

A quote is a sentence of the text a label grades that bears on the question (:mod:`assay.judge.quotes`); the
evaluation paints its characters with the label's grade. The page marks each quote at its place: the first run of the
text's words equal to the quote's words (letters and digits after NFKC and case folding, markup and punctuation
ignored, as :func:`~assay.judge.quotes.stands_in` compares them), as character offsets ``[start, end)`` from the
first word's first letter to the last word's last. The text under review is the chunk's text, or for a span label
the span of its document (the passage's own text when it was found in no document): the text the page shows.

A person's quotes, sent with a grade (the page's ``POST /api/label``), follow one rule:

1. **What was shown when saved.** The label carries exactly the quotes given: the page sends the quotes it shows,
   which are the person's own once they saved a label, before that the judge's (none in blind mode, where the
   judge's label is hidden); a grade 0 sends none. Quotes not given: the label has none, and its grade paints its
   whole text (as any label without quotes).
2. **Text of the passage.** Each quote is a string whose words stand in the text under review; one that does not
   (a paraphrase, a typo, text of another item) is refused with the quote named, and nothing is stored.
3. **Grade 0 quotes nothing.** A quote on a label graded 0 is refused: nothing in that text is relevant.
4. **Word for word, once, bounded.** A quote is kept as the text says it, from its first word to its last at its
   place (a typed ``refunds.`` keeps ``refunds``; case and punctuation as the text has them), whitespace folded so it
   fits one line; a quote given twice is kept once; more than :data:`~assay.judge.quotes.QUOTES_MAX` quotes are
   refused (quote fewer, longer runs).
"""

from __future__ import annotations

from typing import Any

from assay.audit._golden import GoldenView
from assay.audit.spans import span_view
from assay.judge.quotes import QUOTES_MAX
from assay.text import normalized_words, words_with_offsets

__all__ = ["item_text", "person_quotes", "placed_quote", "quote_place", "quote_places"]


def item_text(golden: GoldenView, item_id: str) -> str | None:
    """The text the page shows for an item: the chunk's, or the span label's span (the passage's own text when it was
    found in no document); None for an id the golden set no longer holds."""
    if golden.is_span(item_id):
        passage = golden.passages[item_id]
        return str(span_view(passage, golden.documents.get(passage.doc_id or ""))["text"])
    chunk = golden.chunks.get(item_id)
    return chunk.text if chunk else None


def quote_place(quote: str, text: str) -> tuple[int, int] | None:
    """Where ``quote``'s words first stand in ``text`` as character offsets ``[start, end)``; None when they do not
    (exactly when :func:`~assay.judge.quotes.stands_in` is false)."""
    needle = normalized_words(quote)
    if not needle:
        return None
    words, starts, ends = words_with_offsets(text)
    size = len(needle)
    for first in range(len(words) - size + 1):
        if words[first : first + size] == needle:
            return starts[first], ends[first + size - 1]
    return None


def quote_places(quotes: tuple[str, ...] | list[str] | None, text: str | None) -> list[dict[str, Any]]:
    """Each quote with its place in ``text`` (``start`` and ``end`` None when it does not stand there: a judge's quote
    of a run's text that differs from the document's span)."""
    out = []
    for quote in quotes or ():
        place = quote_place(quote, text) if text is not None else None
        out.append({"text": quote, "start": place[0] if place else None, "end": place[1] if place else None})
    return out


def placed_quote(quote: Any, text: str | None) -> dict[str, Any]:
    """``quote`` as it stands in ``text`` (rule 4) with its place; ValueError when it does not stand there (rule 2)."""
    place = quote_place(quote, text) if isinstance(quote, str) and text is not None else None
    if place is None or text is None:
        raise ValueError(_not_in(quote if isinstance(quote, str) else repr(quote)))
    return {"text": " ".join(text[place[0] : place[1]].split()), "start": place[0], "end": place[1]}


def person_quotes(raw: Any, text: str | None, grade: int) -> list[str] | None:
    """A person's quotes for a label of ``grade`` on ``text`` by the module docstring's rule; ValueError says what is
    wrong and how to fix it. None when no quotes were given (or an empty list)."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(quote, str) for quote in raw):
        raise ValueError("quotes must be a list of texts")
    kept: dict[str, str] = {}
    for quote in raw:
        kept.setdefault(" ".join(normalized_words(quote)), placed_quote(quote, text)["text"])
    if kept and grade < 1:
        raise ValueError("grade 0 quotes nothing: remove the quotes, or grade the text 1-3")
    if len(kept) > QUOTES_MAX:
        raise ValueError(f"{len(kept)} quotes; quote at most {QUOTES_MAX} (fewer, longer runs of the text)")
    return list(kept.values()) or None


def _not_in(quote: str) -> str:
    return f"this quote is not in the passage: {quote[:200]!r}; select or type its words as they stand in the text"
