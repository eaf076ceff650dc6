"""Quotes: the sentences of a passage that a judge (or a person) says bear on the question.

A relevance label says whether a passage is useful; its quotes say *which characters* of it are relevant, as INEX
assessors highlight. The evaluation paints a character with the highest grade of any quote covering it, so a quote
must be text of the passage, never the judge's own words. The rule, applied to every label a judge returns:

1. **Words, not characters.** A quote stands in its passage when its words (letters and digits after NFKC and case
   folding, markup and punctuation ignored: :func:`assay.text.normalized_words`) are a contiguous run of the
   passage's words. Spacing, quotation marks and a dropped comma do not matter; a paraphrase does.
2. **Dropped and counted.** A quote that does not stand in its passage (a paraphrase, a summary, the question
   itself) is dropped and counted on the label (``quotes_dropped``), never trusted.
3. **Grade 0 quotes nothing.** A label graded 0 keeps no quote: nothing in it is relevant.
4. **Once, in order, bounded.** A quote given twice is kept once (not counted as dropped); at most
   :data:`QUOTES_MAX` are kept, the first ones (a judge that quotes the whole passage sentence by sentence says
   nothing finer than its grade).
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.text import normalized_words

__all__ = ["QUOTES_MAX", "checked_quotes", "stands_in"]

QUOTES_MAX = 8


def stands_in(quote: str, passage: str) -> bool:
    """Whether ``quote``'s words are a contiguous run of ``passage``'s words (rule 1); an empty quote never is."""
    needle = normalized_words(quote)
    if not needle:
        return False
    return f" {' '.join(needle)} " in f" {' '.join(normalized_words(passage))} "


def checked_quotes(quotes: Sequence[str], passage: str, grade: int | None) -> tuple[list[str], int]:
    """The quotes kept for a label of ``grade`` on ``passage`` and the number dropped (see the module docstring)."""
    if not grade or grade < 1:
        return [], 0
    kept: list[str] = []
    seen: set[str] = set()
    dropped = 0
    for quote in quotes:
        if not stands_in(quote, passage):
            dropped += 1
            continue
        key = " ".join(normalized_words(quote))
        if key not in seen and len(kept) < QUOTES_MAX:
            seen.add(key)
            kept.append(quote.strip())
    return kept, dropped
