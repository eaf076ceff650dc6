"""Measures at a context budget: the first B characters of text a run retrieved, scored in characters of relevant
text, so that the figures depend on which text was retrieved and in what order, never on how it was cut.

**The text stream.** A run's passages in rank order, each the characters of its range ``(doc, start, end)`` in
document order; characters an earlier passage already showed are skipped (text repeated by overlapping passages is
counted once); a passage found in no document adds its length of text that is never relevant. The budget keeps
the first B characters of the stream (a budget in tokens counts :data:`CHARS_PER_TOKEN` characters a token).

**Relevance.** Each character of a document has at most one grade for the question (``grades``: disjoint
``(doc, start, end, grade)`` segments; how overlapping labels resolve into them is the caller's rule); a character
without a grade is unjudged and counts as not relevant, as trec_eval counts unjudged documents. ``N`` = the number
of characters with grade >= ``threshold`` in ``grades`` (retrieved or not), ``r(i)`` = 1 when the i-th character
of the stream is relevant.

* ``recall@B``   = sum_{i<=B} r(i) / N (INEX's character recall);
* ``precision@B`` = sum_{i<=B} r(i) / B: the budget is the denominator even when the run returned less text, as
  trec_eval's P@k divides by k;
* ``map@B``      = sum_{i<=B, r(i)=1} P(i) / N with P(i) = sum_{j<=i} r(j) / i: average precision with every
  character a ranked document (the character-level passage MAP of the TREC 2007 Genomics track, cut at B);
* ``ndcg@B``     = DCG / IDCG with DCG = sum_{i<=B} g(i) / log2(i + 1), g the character's grade (linear gain, as
  trec_eval's nDCG), IDCG the same sum over every graded character of ``grades`` sorted by grade, cut at B.

Edge cases: N = 0 (nothing relevant to find) gives NaN for recall and MAP (the caller reports them unscored) and
precision 0; nDCG is NaN when no character has a grade >= 1; an empty stream gives 0.

**How full, how judged** (:func:`fill`): ``shown`` = the characters of the stream within the budget (< B when the
run retrieved less text); ``judged`` = those of them that have a grade in ``grades``, any grade, 0 included (text
found in no document is never judged); ``used`` = the passages, in rank order, the stream took to reach B (0 when
it never does).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

import numpy as np

__all__ = ["CHARS_PER_TOKEN", "BudgetScores", "Fill", "budget_scores", "fill", "resolve", "stream"]

CHARS_PER_TOKEN = 4  # the usual average of GPT-style tokenizers on English text
Range = tuple[str, int, int]
Segment = tuple[str, int, int, int]  # (doc, start, end, grade), disjoint per document
Piece = Range | int  # a range of a document, or a length of text found in no document


class BudgetScores(NamedTuple):
    """The four measures, and the counts behind them: relevant characters retrieved within the budget
    (``found``), characters of the stream within the budget (``shown``) and relevant characters in all (N)."""

    recall: float
    precision: float
    map: float
    ndcg: float
    found: int
    shown: int
    n_relevant: int


def resolve(labels: Sequence[Segment]) -> dict[str, list[tuple[int, int, int]]]:
    """Graded spans that may overlap, as disjoint ``(start, end, grade)`` segments per document, sorted: a character
    takes the highest grade of the spans holding it, so a label can add relevant text and never erase relevant text
    another label found (a piece judged 0 on its own does not make its relevant characters irrelevant)."""
    painted: dict[str, list[tuple[int, int, int]]] = {}
    for doc, start, end, grade in sorted(labels, key=lambda lab: (lab[3], lab[0], lab[1], lab[2])):
        if end <= start:
            continue
        kept = []
        for s, e, g in painted.get(doc, []):
            if e <= start or s >= end:
                kept.append((s, e, g))
                continue
            if s < start:
                kept.append((s, start, g))
            if e > end:
                kept.append((end, e, g))
        kept.append((start, end, grade))
        painted[doc] = sorted(kept)
    return painted


def _subtract(covered: list[tuple[int, int]], start: int, end: int) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` not in the sorted disjoint ``covered``; adds them to ``covered``."""
    out = []
    at = start
    for s, e in covered:
        if e <= at:
            continue
        if s >= end:
            break
        if s > at:
            out.append((at, s))
        at = max(at, e)
    if at < end:
        out.append((at, end))
    if out:
        covered.extend(out)
        covered.sort()
    return out


def stream(passages: Sequence[Range | int], budget: int) -> list[Piece]:
    """The first ``budget`` characters of the text stream of ``passages`` (ranges, or lengths of text found in no
    document), as pieces in stream order."""
    return [piece for _, piece in _stream(passages, budget)]


def _stream(passages: Sequence[Range | int], budget: int) -> Iterator[tuple[int, Piece]]:
    """:func:`stream`'s pieces, each with the index of the passage it comes from."""
    if budget < 1:
        raise ValueError(f"a budget is at least 1 character, got {budget}")
    seen: dict[str, list[tuple[int, int]]] = {}
    left = budget
    for index, passage in enumerate(passages):
        if left <= 0:
            break
        if isinstance(passage, int):
            if passage > 0:
                yield index, min(passage, left)
                left -= min(passage, left)
            continue
        doc, start, end = passage
        for s, e in _subtract(seen.setdefault(doc, []), start, end):
            take = min(e - s, left)
            if take <= 0:
                break
            yield index, (doc, s, s + take)
            left -= take


class Fill(NamedTuple):
    """How full the budget is and how much of it is judged (see the module docstring)."""

    shown: int
    judged: int
    used: int


def fill(passages: Sequence[Range | int], grades: Mapping[str, Sequence[tuple[int, int, int]]], budget: int) -> Fill:
    """The characters of the first ``budget`` the passages filled, those of them ``grades`` grades (any grade), and
    the passages it took to fill the budget (0: they did not)."""
    pieces = list(_stream(passages, budget))
    shown = sum(_length(piece) for _, piece in pieces)
    judged = sum(length for length, grade in _runs([piece for _, piece in pieces], grades, ungraded=-1) if grade >= 0)
    return Fill(shown, judged, pieces[-1][0] + 1 if shown == budget else 0)


def _length(piece: Piece) -> int:
    return piece if isinstance(piece, int) else piece[2] - piece[1]


def _runs(
    pieces: Sequence[Piece], grades: Mapping[str, Sequence[tuple[int, int, int]]], ungraded: int = 0
) -> list[tuple[int, int]]:
    """The stream as ``(length, grade)`` runs; ungraded text has grade ``ungraded`` (0: not relevant)."""
    out: list[tuple[int, int]] = []
    for piece in pieces:
        if isinstance(piece, int):
            out.append((piece, ungraded))
            continue
        doc, start, end = piece
        at = start
        for s, e, grade in grades.get(doc, ()):
            if e <= at:
                continue
            if s >= end:
                break
            if s > at:
                out.append((s - at, ungraded))
            stop = min(e, end)
            out.append((stop - max(s, at), grade))
            at = stop
        if at < end:
            out.append((end - at, ungraded))
    return out


class _Sums:
    """Prefix sums of 1/i (harmonic numbers) and 1/log2(i + 1) for i = 1..n, grown on demand."""

    def __init__(self) -> None:
        self.harmonic = np.zeros(1)
        self.discount = np.zeros(1)

    def ensure(self, n: int) -> None:
        if n < len(self.harmonic):
            return
        size = max(n + 1, 2 * len(self.harmonic))
        i = np.arange(1, size, dtype=float)
        self.harmonic = np.concatenate(([0.0], np.cumsum(1.0 / i)))
        self.discount = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(i + 1.0))))


_SUMS = _Sums()


def _dcg(runs: Sequence[tuple[int, int]]) -> float:
    """Sum over characters of grade / log2(position + 1), by runs of equal grade."""
    total, at = 0.0, 0
    _SUMS.ensure(sum(length for length, _ in runs))
    for length, grade in runs:
        if grade > 0:
            total += grade * float(_SUMS.discount[at + length] - _SUMS.discount[at])
        at += length
    return total


def budget_scores(
    passages: Sequence[Range | int],
    grades: Mapping[str, Sequence[tuple[int, int, int]]],
    budget: int,
    threshold: int = 1,
) -> BudgetScores:
    """Recall, precision, MAP and nDCG at ``budget`` characters (see the module docstring). ``grades``: per
    document, sorted disjoint ``(start, end, grade)`` segments."""
    runs = _runs(stream(passages, budget), grades)
    pool = [(e - s, g) for segments in grades.values() for s, e, g in segments]
    n_relevant = sum(length for length, g in pool if g >= threshold)
    # positions read: the stream's (at most the text retrieved) and the ideal's (at most the graded text), never B
    _SUMS.ensure(min(budget, max(sum(length for length, _ in runs), sum(length for length, _ in pool))) + 1)
    found = at = 0
    ap = 0.0
    for length, grade in runs:
        if grade >= threshold:
            # sum_{j=1..L} (found + j) / (at + j) = L + (found - at) * (H(at + L) - H(at))
            ap += length + (found - at) * float(_SUMS.harmonic[at + length] - _SUMS.harmonic[at])
            found += length
        at += length
    ideal = _dcg(_cut(sorted(pool, key=lambda run: -run[1]), budget))
    ndcg = _dcg(runs) / ideal if ideal > 0 else math.nan
    if n_relevant == 0:
        return BudgetScores(math.nan, 0.0, math.nan, ndcg, 0, at, 0)
    return BudgetScores(found / n_relevant, found / budget, ap / n_relevant, ndcg, found, at, n_relevant)


def _cut(runs: Sequence[tuple[int, int]], budget: int) -> list[tuple[int, int]]:
    out, left = [], budget
    for length, grade in runs:
        if left <= 0:
            break
        out.append((min(length, left), grade))
        left -= min(length, left)
    return out
