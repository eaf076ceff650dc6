"""trec_eval's rank of each judged document, computed without ordering whole runs.

The rank of a judged document d with score s in its query's run (0-based, trec_eval's order) is

    rank(d) = #{e : f32(s_e) > f32(s)} + #{e : f32(s_e) = f32(s), docid_e > docid_d}

(scores compared in single precision, -0.0 = 0.0, docids in code point order, which is also UTF-8 byte order).
Only those two counts are needed, so each query's scores are sorted as 64-bit keys ``desc(s) << 32 | position``
(``desc`` maps float32 order to descending uint32 order) in a padded matrix, one row per query, queries bucketed
by their length rounded up to a power of two so padding at most doubles the work, a bounded number of entries at a
time (memory stays O(chunk + judged), not O(run)). The first count is a binary search; the second reads the
positions of the tied entries from the sorted keys and compares docids, which is needed only when a judged
document's score is shared (the docids of the rest of the run are never read).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
U64Array = npt.NDArray[np.uint64]
Docids = list[Any] | npt.NDArray[np.bytes_]
"""Docids as a list of str, or as UTF-8 bytes in a numpy ``S`` array (both compare in code point order)."""

NOT_RETRIEVED = np.int64(1) << np.int64(62)
CHUNK_ENTRIES = 1 << 21  # padded matrix cells per chunk: 16 MiB of keys
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


class Rankings(Protocol):
    """One ranking (the run's entries of one query, in a fixed order of its own) per row."""

    @property
    def lengths(self) -> IntArray:
        """Entries per ranking."""
        ...

    def score_matrix(self, rows: IntArray, width: int) -> FloatArray:
        """``[len(rows), width]`` scores: row i holds ranking ``rows[i]``'s scores, then any value."""
        ...

    def docids(self, rows: IntArray, positions: IntArray) -> Docids:
        """The docid of entry ``positions[i]`` of ranking ``rows[i]`` (rows non-decreasing)."""
        ...


@dataclass(frozen=True)
class Targets:
    """Judged documents to rank: ranking ``row``, ``score`` there (NaN: not retrieved), docid ``docids[index]``.

    ``index`` is None for 0, 1, 2, ...; a subset (``take``) shares ``docids`` and narrows ``index``.
    """

    row: IntArray
    score: FloatArray
    docids: Docids
    index: IntArray | None = None

    def take(self, idx: IntArray) -> Targets:
        return Targets(self.row[idx], self.score[idx], self.docids, idx if self.index is None else self.index[idx])

    def docids_of(self, which: IntArray) -> Docids:
        """The docids of targets ``which`` (read only for tied targets)."""
        at = which if self.index is None else self.index[which]
        if isinstance(self.docids, np.ndarray):
            return self.docids[at]
        return list(map(self.docids.__getitem__, at.tolist()))


def descending_keys(scores: npt.NDArray[Any]) -> npt.NDArray[np.uint32]:
    """uint32 keys that sort ascending as the float32 scores sort descending; -0.0 and 0.0 get the same key.

    A float's bits order as the floats do once negatives have all bits flipped and positives the sign bit; the
    complement of that reverses the order: positives map to ``bits ^ 0x7FFFFFFF``, negatives keep their bits.
    """
    f32 = np.asarray(scores).astype(np.float32)
    f32 += np.float32(0.0)  # -0.0 + 0.0 is 0.0
    sign = f32.view(np.int32) >> 31  # -1 for negatives, 0 otherwise
    flip = sign.view(np.uint32)
    np.invert(flip, out=flip)
    flip &= np.uint32(0x7FFFFFFF)
    keys = f32.view(np.uint32)
    keys ^= flip
    return keys


def chunks(lengths: IntArray) -> Iterator[tuple[int, IntArray]]:
    """(width, rows) groups: the rows of one power-of-two width bucket, at most CHUNK_ENTRIES cells per group."""
    nonempty = np.flatnonzero(lengths > 0)
    widths = np.left_shift(1, np.ceil(np.log2(lengths[nonempty])).astype(np.int64))
    for width in np.unique(widths).tolist():
        rows = nonempty[widths == width]
        step = max(1, CHUNK_ENTRIES // width)
        for a in range(0, len(rows), step):
            yield width, rows[a : a + step]


def chunks_with(lengths: IntArray, target_rows: IntArray) -> Iterator[tuple[int, IntArray, IntArray]]:
    """(width, rows, targets) for the chunks of rows that hold a target: ``targets`` index ``target_rows``.

    Rows without a target are left out (never read).
    """
    active = np.zeros(len(lengths), dtype=bool)
    active[target_rows] = True
    groups = list(chunks(np.where(active, lengths, 0)))
    chunk_of = np.full(len(lengths), -1, dtype=np.int64)
    for c, (_, rows) in enumerate(groups):
        chunk_of[rows] = c
    owner = chunk_of[target_rows]
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(len(groups) + 1)).tolist()
    for c, (width, rows) in enumerate(groups):
        yield width, rows, order[bounds[c] : bounds[c + 1]]


def sorted_rows(values: npt.NDArray[np.uint32], lengths: IntArray) -> U64Array:
    """Each row's ``value << 32 | position`` keys sorted ascending; cells past the row's length sort last.

    Values must be below 0xFFFFFFFF, the padding's value (``values`` is overwritten there).
    """
    cols = np.arange(values.shape[1], dtype=np.uint64)
    if (lengths < values.shape[1]).any():
        values[cols[None, :] >= lengths[:, None].astype(np.uint64)] = np.uint32(0xFFFFFFFF)
    keys = values.astype(np.uint64)
    keys <<= _SHIFT
    keys |= cols[None, :]
    keys.sort(axis=1)
    return keys


def search_rows(keys: U64Array, local: IntArray, values: npt.NDArray[np.uint32]) -> tuple[U64Array, U64Array, IntArray]:
    """Find ``values[i]`` in row ``local[i]`` of ``sorted_rows`` keys.

    Returns the row-tagged flat array ``row << 32 | value`` (sorted), each target's tagged value, and the flat
    index of the first cell not below it (the cells of row r are ``r * width`` to ``(r + 1) * width - 1``).
    """
    flat = keys >> _SHIFT
    flat |= np.arange(len(keys), dtype=np.uint64)[:, None] << _SHIFT
    flat = flat.reshape(-1)
    target = (local.astype(np.uint64) << _SHIFT) | values.astype(np.uint64)
    return flat, target, np.searchsorted(flat, target, side="left").astype(np.int64)


def judged_ranks(rankings: Rankings, targets: Targets) -> IntArray:
    """0-based rank of each target in its ranking, :data:`NOT_RETRIEVED` where its score is NaN.

    Rankings without a retrieved target are never read; rows are processed a chunk at a time (``chunks``).
    """
    ranks = np.full(len(targets.row), NOT_RETRIEVED, dtype=np.int64)
    found = np.flatnonzero(~np.isnan(targets.score))
    for width, rows, mine in chunks_with(rankings.lengths, targets.row[found]):
        ranks[found[mine]] = _chunk_ranks(rankings, rows, width, targets.take(found[mine]))
    return ranks


def _chunk_ranks(rankings: Rankings, rows: IntArray, width: int, targets: Targets) -> IntArray:
    """Ranks of targets in ``rows`` (one width bucket): documents ahead by score, then tied ones with larger ids."""
    keys = sorted_rows(descending_keys(rankings.score_matrix(rows, width)), rankings.lengths[rows])
    local = np.searchsorted(rows, targets.row)
    flat, target, left = search_rows(keys, local, descending_keys(targets.score))
    ranks = left - local * width
    after = np.minimum(left + 1, len(flat) - 1)
    tied = np.flatnonzero((left + 1 < len(flat)) & (flat[after] == target))  # the next cell has the same score
    if len(tied):
        right = np.searchsorted(flat, target[tied], side="right").astype(np.int64)
        group = (left[tied], right)
        ranks[tied] += _tie_offsets(rankings, keys.reshape(-1), group, targets.take(tied))
    return ranks


def _tie_offsets(
    rankings: Rankings, flat_keys: U64Array, group: tuple[IntArray, IntArray], targets: Targets
) -> IntArray:
    """For each tied target: the entries of its tie group (cells [left, right) of the sorted keys, the target
    among them) whose docid is larger than its own."""
    left, right = group
    sizes = right - left
    owner = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    cells = left[owner] + np.arange(len(owner), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    positions = (flat_keys[cells] & _LOW).astype(np.int64)
    partners = rankings.docids(targets.row[owner], positions)
    mine = targets.docids_of(owner)
    if isinstance(partners, np.ndarray) and isinstance(mine, np.ndarray):
        larger = np.asarray(partners > mine)
    else:
        larger = np.fromiter(map(operator.gt, partners, mine), bool, count=len(owner))
    return np.bincount(owner, weights=larger, minlength=len(sizes)).astype(np.int64)
