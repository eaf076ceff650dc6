"""Docid lookups within each query of a run held as arrays (read from a file, or built from arrays).

Each query's entries are keyed by a 31-bit hash of their docid, sorted within the query in the same bounded,
padded chunks :mod:`assay.metrics._ranks` uses (no sort over the whole run). A key match is confirmed by comparing
the docid bytes, so a hash collision costs a second probe and never a wrong answer.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from assay.metrics._ranks import chunks, chunks_with, search_rows, sorted_rows

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
U32Array = npt.NDArray[np.uint32]
Bytes = npt.NDArray[np.bytes_]

_MIX = np.uint64(0x9E3779B97F4A7C15)
_FNV = np.uint64(0x100000001B3)
_LOW = np.uint64(0xFFFFFFFF)


class Entries(Protocol):
    """A run's entries grouped by query (see :class:`assay.metrics.judged.Run`)."""

    @property
    def scores(self) -> FloatArray: ...

    def lengths(self) -> IntArray: ...

    def gather(self, values: npt.NDArray[np.uint32], queries: IntArray, width: int) -> U32Array: ...

    def entries(self, queries: IntArray, positions: IntArray) -> IntArray: ...


def docid_hashes(docids: npt.NDArray[np.bytes_]) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each UTF-8 docid of a bytes (``S``) array, eight bytes at a time; equal ids hash equally."""
    arr = np.ascontiguousarray(docids)
    width = arr.dtype.itemsize
    padded = -(-max(width, 1) // 8) * 8
    if padded != width:
        arr = arr.astype(f"S{padded}")
    words = arr.view(np.uint64).reshape(len(arr), padded // 8)
    out = np.full(len(arr), 0xCBF29CE484222325, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            out = (out ^ words[:, j]) * _FNV
            out ^= out >> np.uint64(29)
        out *= _MIX
    return out


def hash31(docids: Bytes) -> U32Array:
    """31 bits of :func:`docid_hashes` (below 0xFFFFFFFF, the padding key of sorted rows)."""
    return (docid_hashes(docids) >> np.uint64(33)).astype(np.uint32)


def lookup(run: Entries, hashes: U32Array, docids: Bytes, queries: IntArray, wanted: Bytes) -> FloatArray:
    """The score of docid ``wanted[i]`` in run query ``queries[i]``; NaN where absent (or ``queries[i]`` is -1)."""
    out = np.full(len(wanted), np.nan)
    present = np.flatnonzero(queries >= 0)
    want_hash = hash31(wanted)
    lengths = run.lengths()
    for width, rows, mine in chunks_with(lengths, queries[present]):
        idx = present[mine]
        keys = sorted_rows(run.gather(hashes, rows, width), lengths[rows])
        local = np.searchsorted(rows, queries[idx])
        flat, target, cell = search_rows(keys, local, want_hash[idx])
        pending = np.arange(len(idx))
        while len(pending):  # more than one pass only on a hash collision within a query
            at = np.minimum(cell[pending], len(flat) - 1)
            same = (cell[pending] < len(flat)) & (flat[at] == target[pending])
            pending, at = pending[same], at[same]
            entry = run.entries(rows[local[pending]], (keys.reshape(-1)[at] & _LOW).astype(np.int64))
            hit = docids[entry] == wanted[idx[pending]]
            out[idx[pending[hit]]] = run.scores[entry[hit]]
            pending = pending[~hit]
            cell[pending] += 1
    return out


def first_duplicate(run: Entries, hashes: U32Array, docids: Bytes) -> tuple[int, int] | None:
    """Entries ``(first, second)`` of a docid repeated within a query (the earliest second one), or None."""
    lengths = run.lengths()
    pairs: list[tuple[int, int]] = []
    for width, rows in chunks(lengths):
        keys = sorted_rows(run.gather(hashes, rows, width), lengths[rows])
        high = keys >> np.uint64(32)
        same = high[:, 1:] == high[:, :-1]
        same &= np.arange(1, width)[None, :] < lengths[rows][:, None]  # both cells hold entries
        for r in np.unique(np.flatnonzero(same) // max(width - 1, 1)).tolist():
            positions = (keys[r, : lengths[rows[r]]] & _LOW).astype(np.int64)
            entries = run.entries(np.full(len(positions), rows[r]), positions)
            pairs.extend(_repeats(docids[np.sort(entries)], np.sort(entries)))
    return min(pairs, key=lambda pair: pair[1]) if pairs else None


def _repeats(docids: Bytes, entries: IntArray) -> list[tuple[int, int]]:
    """(first, second) entries of each repeated docid in one query, entries in file order."""
    seen: dict[bytes, int] = {}
    found = []
    for doc, entry in zip(docids.tolist(), entries.tolist(), strict=True):
        if doc in seen:
            found.append((seen[doc], entry))
        else:
            seen[doc] = entry
    return found
