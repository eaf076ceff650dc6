"""One unit of account for ranking measures: a run's passages projected onto labelled units.

A system that chunks its own way retrieves passages that are not the golden set's units (its chunks). To score it
with trec_eval's measures against the same qrels as every other run, its ranked passages are projected onto the
units they cover. The rule, for a ranked list of items (each a unit given as itself, a passage located at a
character range ``(doc, start, end)``, or an item found in no document):

1. **A unit given as itself** (a golden chunk by id, or a text whose words are exactly the chunk's) reaches that
   unit at its rank, and nothing else (so a run of chunk ids projects onto itself: trec_eval parity).
2. **A located passage** at rank r reaches every unit u not reached before of which the passages of ranks 1..r
   together cover at least ``share`` (default half) of the characters: text shown in several pieces adds up, and
   overlapping pieces count each character once.
3. **An item found in no document** stands for itself at its rank: it takes a place in the ranking and is never
   relevant (trec_eval's unjudged document).
4. **Order.** Units appear in the order they are reached; units reached at the same rank follow the document
   order (start offset, then end, then their position in ``units``).

So the same text cut differently (halves, thirds, overlapping windows, neighbours merged) projects onto the same
units in the same order: a unit is reached at the character that shows its half, wherever the cuts fall, and for
units that do not overlap each other those characters come in document order within a passage. The measures
computed on the projection do not change, and a unit is never counted twice however many passages show it. The
price: a passage much shorter than the units reaches none of them alone (a sentence of a long chunk); its unit
counts once half of it has been shown. Budget measures (:mod:`assay.metrics.budget`) score such text exactly.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["SHARE", "Slot", "UnitIndex", "project"]

SHARE = 0.5
Range = tuple[str, int, int]
Item = int | Range | None  # int: the item is unit i; a range: a located passage; None: found in no document


class Slot(NamedTuple):
    """One place of a projected ranking: ``unit`` i of the units, or ``item`` r (0-based rank) standing for
    itself (``at``); ``rank`` is the 0-based rank of the item that reached it."""

    kind: str  # "unit" | "item"
    at: int
    rank: int


class _Doc:
    """The units of one document, sorted by start, with the running maximum of their ends (for overlap look-ups)."""

    def __init__(self, spans: list[tuple[int, int, int]]) -> None:
        spans.sort()
        self.starts = [s for s, _, _ in spans]
        self.spans = spans
        self.max_end: list[int] = []
        top = -1
        for _, end, _ in spans:
            top = max(top, end)
            self.max_end.append(top)

    def overlapping(self, start: int, end: int) -> list[tuple[int, int, int]]:
        """Units overlapping ``[start, end)``, in document order."""
        out = []
        i = bisect.bisect_left(self.starts, end) - 1
        while i >= 0 and self.max_end[i] > start:
            s, e, unit = self.spans[i]
            if e > start:
                out.append((s, e, unit))
            i -= 1
        out.reverse()
        return out


def _index(units: Sequence[Range]) -> dict[str, _Doc]:
    by_doc: dict[str, list[tuple[int, int, int]]] = {}
    for i, (doc, start, end) in enumerate(units):
        if end > start:
            by_doc.setdefault(doc, []).append((start, end, i))
    return {doc: _Doc(spans) for doc, spans in by_doc.items()}


def _add(covered: list[tuple[int, int]], start: int, end: int) -> int:
    """Add ``[start, end)`` to the sorted disjoint intervals ``covered`` (in place); return the covered length."""
    covered.append((start, end))
    covered.sort()
    merged = [covered[0]]
    for s, e in covered[1:]:
        if s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    covered[:] = merged
    return sum(e - s for s, e in merged)


class UnitIndex:
    """``units`` indexed once by document, to project many rankings onto them (:meth:`project`)."""

    def __init__(self, units: Sequence[Range], *, share: float = SHARE) -> None:
        if not 0.0 < share <= 1.0:
            raise ValueError(f"share must be in (0, 1], got {share}")
        self.share = share
        self._docs = _index(units)

    def project(self, items: Sequence[Item]) -> list[Slot]:
        """The projected ranking of ``items`` (the rule of the module docstring)."""
        covered: dict[int, list[tuple[int, int]]] = {}
        reached: set[int] = set()
        out: list[Slot] = []
        for rank, item in enumerate(items):
            if item is None:
                out.append(Slot("item", rank, rank))
            elif isinstance(item, int):
                if item not in reached:
                    reached.add(item)
                    out.append(Slot("unit", item, rank))
            else:
                found = _reached(item, self._docs, covered, reached, self.share)
                out.extend(Slot("unit", unit, rank) for unit in found)
        return out


def project(items: Sequence[Item], units: Sequence[Range], *, share: float = SHARE) -> list[Slot]:
    """The projected ranking of ``items`` onto ``units`` (the rule of the module docstring); to project many
    rankings onto the same units, index them once with :class:`UnitIndex`."""
    return UnitIndex(units, share=share).project(items)


def _reached(
    passage: Range, docs: dict[str, _Doc], covered: dict[int, list[tuple[int, int]]], reached: set[int], share: float
) -> list[int]:
    """Units a located passage reaches now (rule 2), in document order; updates the coverage and ``reached``."""
    doc, start, end = passage
    index = docs.get(doc)
    if index is None or end <= start:
        return []
    found = []
    for s, e, unit in index.overlapping(start, end):
        shown = _add(covered.setdefault(unit, []), max(s, start), min(e, end))
        if unit not in reached and shown >= share * (e - s):
            reached.add(unit)
            found.append(unit)
    return found
