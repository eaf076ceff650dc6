"""Which characters are relevant: a question's labels painted onto the characters of the documents.

Two questions are kept apart. *Is this passage useful on its own?* is judged per passage and read only by that
run's passage-bound measures. *Which characters are relevant?* is a property of text, answered here, and read by
the budget measures and the carry-over rule of every run alike. The rule, per question:

1. **A label with quotes** (the sentences that bear on the question, :mod:`assay.judge.quotes`) paints each quote
   with its grade and the rest of its span with 0 (read, and not what answers). A quote is placed where its words
   stand inside the label's span; a quote found nowhere in it is dropped (counted in ``dropped``).
2. **A label without quotes** (a grade 0, a label made before quotes, a person's grade) paints its whole span with
   its grade.
3. **Golden chunks first.** The golden chunks' labels paint every character they cover. A judged passage's label
   paints only the characters no chunk label of the question covers: a passage that lies inside labelled text was
   judged for its usefulness, and its verdict on the whole is not a verdict on its characters. So judging one run's
   fragments never changes another run's character grades; a passage that reached text no label covered (the judge
   read new text) adds its grades there.
4. **The same words, the same grade.** A golden chunk's label graded 1 or more also paints, with its grade, every
   other place where the words of a quote of it (of its whole text, when it has no quote) stand exactly (a sentence
   repeated in another section, a page kept in two versions): relevance is a property of the text, so a run that
   retrieved the other copy has retrieved the same relevant text. A passage's label does not: it was judged for the
   passage's usefulness, and its copies are text the judge never read in place.
5. **The highest grade wins** where painted spans overlap (:func:`assay.metrics.budget.resolve`): a label adds
   relevant text, never erases relevant text another label found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assay.corpus.align import Span

__all__ = ["LabelSpan", "Segment", "outside", "painted_segments", "quote_spans"]

Segment = tuple[str, int, int, int]  # (doc, start, end, grade)
Places = Callable[[str, str], list[Span]]  # (text, doc_id or "": any) -> where the text's words stand exactly


@dataclass(frozen=True)
class LabelSpan:
    """One scored label at its span, with its quotes placed in the document (empty: the label has none)."""

    span: Span
    grade: int
    quotes: tuple[Span, ...] = ()
    echoes: tuple[Span, ...] = ()  # the other places of its quotes' words (of its text's, without quotes): step 4


def quote_spans(span: Span, quotes: Sequence[str] | None, places: Places) -> tuple[list[Span], list[Span], int]:
    """``quotes`` placed inside ``span`` (each at its first place overlapping the span, clipped to it), their other
    places anywhere (step 4), and how many could not be placed inside ``span``."""
    out: list[Span] = []
    echoes: list[Span] = []
    dropped = 0
    for quote in quotes or ():
        found = places(quote, "")
        inside = [p for p in found if p.doc_id == span.doc_id and p.end > span.start and p.start < span.end]
        if not inside:
            dropped += 1
            continue
        first = inside[0]
        out.append(Span(span.doc_id, max(first.start, span.start), min(first.end, span.end), "quote", 1.0))
        echoes += [p for p in found if p is not first]
    return out, echoes, dropped


def _segments(label: LabelSpan) -> list[Segment]:
    s = label.span
    echoes = [(e.doc_id, e.start, e.end, label.grade) for e in label.echoes] if label.grade >= 1 else []  # step 4
    if label.quotes and label.grade >= 1:  # step 1
        return [
            (s.doc_id, s.start, s.end, 0),
            *((q.doc_id, q.start, q.end, label.grade) for q in label.quotes),
            *echoes,
        ]
    return [(s.doc_id, s.start, s.end, label.grade), *echoes]  # step 2


def outside(segment: Segment, covered: Sequence[tuple[str, int, int]]) -> list[Segment]:
    """The parts of ``segment`` that no range of ``covered`` (sorted by start) holds."""
    doc, start, end, grade = segment
    out: list[Segment] = []
    at = start
    for c_doc, c_start, c_end in covered:
        if c_doc != doc or c_end <= at:
            continue
        if c_start >= end:
            break
        if c_start > at:
            out.append((doc, at, c_start, grade))
        at = max(at, c_end)
    if at < end:
        out.append((doc, at, end, grade))
    return out


def painted_segments(chunks: Sequence[LabelSpan], passages: Sequence[LabelSpan]) -> list[Segment]:
    """The segments the rule of the module docstring paints for one question (overlapping; resolve them by the
    highest grade, step 4)."""
    out = [segment for label in chunks for segment in _segments(label)]
    covered = sorted((label.span.doc_id, label.span.start, label.span.end) for label in chunks)  # step 3
    for label in passages:
        out.extend(part for segment in _segments(label) for part in outside(segment, covered))
    return out
