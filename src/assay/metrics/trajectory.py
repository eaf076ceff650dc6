"""Measures of a trajectory: what a system that searches several times saw along the way, in characters of relevant
text, so that, like the budget measures (:mod:`assay.metrics.budget`), the figures depend on which text each search
returned and never on how it was cut.

**Inputs.** The searches in order, each the ranges ``(doc, start, end)`` of the passages it returned; the final
context (the ranges the answer was written from); the question's character grades (disjoint ``(start, end, grade)``
segments per document, as the budget measures read them); the hops, each the ranges of one hop's evidence. A
character is relevant when its grade is >= ``threshold``; ``N`` is the number of relevant characters. Passages found
in no document are left out by the caller: they hold no relevant character.

With ``U_i`` the characters shown by searches 1..i and ``R`` the relevant ones:

* ``recall_after[i]`` = |U_i ∩ R| / N: recall after each search, and ``recall`` = that after the last one (did the
  system ever see the evidence); NaN when N = 0, 0 when there is no search;
* ``dropped`` = |U ∩ R \\ F| / N, F the final context's characters: the relevant text some search returned that the
  answer was not written from (the recall lost between searching and answering); NaN when N = 0;
* ``added[i]`` = |U_i ∩ R| - |U_{i-1} ∩ R|: the relevant characters search i returned that no earlier search had;
  a search is **redundant** when it added none; ``lost[i]`` = |S_i ∩ R \\ F|: the relevant characters search i
  returned that the final context lacks (where the evidence was lost);
* ``hop_found[h]``: the first search (0-based) after which at least half of hop h's evidence characters had been
  shown (the share a passage must show of a golden chunk to stand for it, :mod:`assay.metrics.projection`), None when
  none did; a hop without characters is never found.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["FOUND_SHARE", "Trajectory", "trajectory"]

FOUND_SHARE = 0.5
Range = tuple[str, int, int]
Intervals = dict[str, list[tuple[int, int]]]


@dataclass(frozen=True)
class Trajectory:
    """The measures of the module docstring for one question."""

    recall_after: tuple[float, ...]
    recall: float
    dropped: float
    added: tuple[int, ...]
    lost: tuple[int, ...]
    hop_found: tuple[int | None, ...]
    n_relevant: int

    @property
    def redundant(self) -> int:
        """Searches that added no relevant character."""
        return sum(n == 0 for n in self.added)


def trajectory(
    searches: Sequence[Sequence[Range]],
    final: Sequence[Range],
    grades: Mapping[str, Sequence[tuple[int, int, int]]],
    threshold: int,
    hops: Sequence[Sequence[Range]] = (),
) -> Trajectory:
    """The measures of the module docstring."""
    relevant = _merged([(doc, s, e) for doc, parts in grades.items() for s, e, g in parts if g >= threshold])
    n = _size(relevant)
    targets = [_merged(hop) for hop in hops]
    found: list[int | None] = [None] * len(targets)
    context = _merged(final)
    shown: Intervals = {}
    after, added, lost = [], [], []
    before = 0
    for i, search in enumerate(searches):
        own = _intersect(_merged(search), relevant)
        lost.append(_size(own) - _size(_intersect(own, context)))
        shown = _merged([*_ranges(shown), *search])
        seen = _size(_intersect(shown, relevant))
        after.append(seen / n if n else math.nan)
        added.append(seen - before)
        before = seen
        for h, target in enumerate(targets):
            size = _size(target)
            if found[h] is None and size and _size(_intersect(shown, target)) >= FOUND_SHARE * size:
                found[h] = i
    seen_relevant = _intersect(shown, relevant)
    kept = _size(_intersect(seen_relevant, context))
    return Trajectory(
        recall_after=tuple(after),
        recall=after[-1] if after else (0.0 if n else math.nan),
        dropped=(_size(seen_relevant) - kept) / n if n else math.nan,
        added=tuple(added),
        lost=tuple(lost),
        hop_found=tuple(found),
        n_relevant=n,
    )


def _ranges(intervals: Intervals) -> list[Range]:
    return [(doc, s, e) for doc, parts in intervals.items() for s, e in parts]


def _merged(ranges: Sequence[Range]) -> Intervals:
    """The ranges as disjoint, sorted intervals per document (empty ranges dropped)."""
    out: Intervals = {}
    for doc, start, end in sorted(r for r in ranges if r[2] > r[1]):
        parts = out.setdefault(doc, [])
        if parts and start <= parts[-1][1]:
            parts[-1] = (parts[-1][0], max(parts[-1][1], end))
        else:
            parts.append((start, end))
    return out


def _intersect(a: Intervals, b: Intervals) -> Intervals:
    out: Intervals = {}
    for doc, left in a.items():
        right, i, j, parts = b.get(doc, []), 0, 0, []
        while i < len(left) and j < len(right):
            start, end = max(left[i][0], right[j][0]), min(left[i][1], right[j][1])
            if end > start:
                parts.append((start, end))
            if left[i][1] < right[j][1]:
                i += 1
            else:
                j += 1
        if parts:
            out[doc] = parts
    return out


def _size(intervals: Intervals) -> int:
    return sum(e - s for parts in intervals.values() for s, e in parts)
