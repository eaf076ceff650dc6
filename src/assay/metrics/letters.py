"""Compact letter display: runs that share a letter are not distinguished, runs that share none differ.

:func:`compact_letters` groups runs from the whole significance matrix, as multiple-comparison packages print it
(Piepho 2004, "An algorithm for a letter-based representation of all-pairwise comparisons", insert-and-absorb with
the sweep). Its input is the runs in order (best mean first) and the pairs found significantly different; every
other pair, including a pair that was not compared, counts as not distinguished. The rule:

1. Start with one letter (a column) held by every run.
2. Insert: for each significantly different pair (i, j), in the runs' order, every column holding both becomes two
   columns, one without i and one without j.
3. Absorb: after each insertion a column whose runs all sit in another column is dropped (so is a duplicate).
4. Sweep: column by column, a run leaves a column when it holds another one and every run it shares this column
   with shares another column with it too; then absorb once more.
5. The columns, each a sorted tuple of run positions, are sorted; the k-th gets the k-th letter of :data:`ALPHABET`
   (``a``..``z``, ``A``..``Z``, then the other Unicode letters in code-point order), so the best run holds ``a``.

What holds (checked by a property test over random matrices): two runs significantly different never share a letter
(step 2 splits every column holding both; steps 3-4 only remove); two runs not distinguished share at least one
(a split keeps the pair in one of its copies, absorption keeps a superset, the sweep removes a run from a column only
where another column still holds the pair); every run holds a letter; the same input gives the same letters.

Cost: before the sweep the columns are the maximal sets of runs no two of which differ. When significance follows
the means (the usual case) there are at most as many as runs; for an arbitrary matrix their number can grow
exponentially with the runs, so the insertion stops with :class:`MetricError` once more than :data:`MAX_COLUMNS`
columns would be needed (no letters can be printed for such a matrix anyway; the caller says so).
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence

from assay.metrics._errors import MetricError

__all__ = ["ALPHABET", "MAX_COLUMNS", "compact_letters"]

MAX_COLUMNS = 256  # columns the insertion may hold: beyond, a letter display is unreadable and its cost explodes

ALPHABET = (
    string.ascii_lowercase
    + string.ascii_uppercase
    + "".join(letter for code in range(0xC0, 0x3000) if (letter := chr(code)).isalpha() and letter.isprintable())
)


def compact_letters(runs: Sequence[str], different: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The letters of each run (see the module docstring): ``runs`` in order, best first, and the pairs of runs whose
    comparison is significant. Raises :class:`MetricError` on a repeated run, or a pair naming an unknown run or the
    same run twice."""
    position = _positions(runs)
    pairs = sorted({_pair(position, a, b) for a, b in different})
    columns = [(1 << len(runs)) - 1] if runs else []  # a column is a bit mask of run positions
    for i, j in pairs:
        columns = _insert(columns, i, j)
        if len(columns) > MAX_COLUMNS:
            raise MetricError(f"the significant pairs cross too often to letter: more than {MAX_COLUMNS} groups of "
                              f"runs not distinguished among {len(runs)} runs")  # fmt: skip
    ordered = sorted(_members(column) for column in _absorb(_sweep(columns)))
    if len(ordered) > len(ALPHABET):
        raise MetricError(f"{len(ordered)} letters are needed and there are {len(ALPHABET)}: compare fewer runs")
    return {name: "".join(ALPHABET[k] for k, column in enumerate(ordered) if at in column)
            for at, name in enumerate(runs)}  # fmt: skip


def _positions(runs: Sequence[str]) -> dict[str, int]:
    position: dict[str, int] = {}
    for at, name in enumerate(runs):
        if name in position:
            raise MetricError(f"run {name!r} is listed twice; each run is lettered once")
        position[name] = at
    return position


def _pair(position: dict[str, int], a: str, b: str) -> tuple[int, int]:
    for name in (a, b):
        if name not in position:
            raise MetricError(f"significant pair ({a!r}, {b!r}): no run {name!r}; runs: {', '.join(position)}")
    if a == b:
        raise MetricError(f"significant pair ({a!r}, {b!r}): a run is never compared with itself")
    i, j = sorted((position[a], position[b]))
    return i, j


def _insert(columns: list[int], i: int, j: int) -> list[int]:
    """Steps 2 and 3: each column holding both i and j is replaced by its copies without i and without j, each kept
    unless another column holds it. Only a copy can be absorbed: the columns were absorbed before, so no column is
    inside a copy (it would be inside the split column), and two copies are never nested unless equal."""
    both = (1 << i) | (1 << j)
    kept = [column for column in columns if column & both != both]
    copies: list[int] = []
    for column in columns:
        if column & both == both:
            for copy in (column & ~(1 << i), column & ~(1 << j)):
                if copy not in copies and not any(copy | other == other for other in kept):
                    copies.append(copy)
    return kept + copies


def _absorb(columns: list[int]) -> list[int]:
    """Step 3 on any columns: those not inside another one (duplicates kept once), in their order."""
    unique = list(dict.fromkeys(columns))
    return [column for column in unique if not any(column | other == other != column for other in unique)]


def _sweep(columns: list[int]) -> list[int]:
    """Step 4: a run leaves a column when each pair it forms there is held by another column of the run."""
    held = list(columns)
    for at, column in enumerate(held):
        for run in _members(column):
            bit = 1 << run
            others = [other for k, other in enumerate(held) if k != at and other & bit]
            mates = held[at] & ~bit
            covered = 0
            for other in others:
                covered |= other
            if others and mates & ~covered == 0:
                held[at] &= ~bit
    return [column for column in held if column]


def _members(column: int) -> tuple[int, ...]:
    """The run positions of a column, ascending."""
    return tuple(at for at in range(column.bit_length()) if column >> at & 1)
