"""Chunking-independent retrieval metrics over character ranges of documents (the idea of Chroma's chunking
evaluation, which measures tokens; here characters of the documents' text).

For one question: E = the characters of its evidence (a set of ``(doc, start, end)`` ranges, end exclusive), R = the
characters the top-k retrieved passages cover (ranges in the documents, plus ``outside`` characters of passages that
lie in no document):

* ``span_recall`` = |R ∩ E| / |E|: how much of the evidence was retrieved;
* ``span_precision`` = |R ∩ E| / |R|: how much of what was retrieved is evidence;
* ``span_iou`` = |R ∩ E| / |R ∪ E|.

Ranges are unions: overlapping passages (or overlapping evidence) count each character once. Edge cases: E empty
gives NaN for all three (nothing to find: the caller reports it unscored); R empty gives recall 0, precision 0
(nothing retrieved, as P@k of an empty list) and IoU 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["Range", "SpanScores", "overlap_length", "span_scores", "union_length"]

Range = tuple[str, int, int]


class SpanScores(NamedTuple):
    recall: float
    precision: float
    iou: float


def _merged(ranges: Iterable[Range]) -> dict[str, list[tuple[int, int]]]:
    """Per document, the union of the ranges as sorted disjoint intervals (empty ranges dropped)."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc, start, end in ranges:
        if end > start:
            by_doc.setdefault(doc, []).append((start, end))
    out: dict[str, list[tuple[int, int]]] = {}
    for doc, spans in by_doc.items():
        spans.sort()
        merged = [spans[0]]
        for start, end in spans[1:]:
            if start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        out[doc] = merged
    return out


def _length(merged: dict[str, list[tuple[int, int]]]) -> int:
    return sum(end - start for spans in merged.values() for start, end in spans)


def union_length(ranges: Iterable[Range]) -> int:
    """Characters covered by the union of ``ranges``."""
    return _length(_merged(ranges))


def overlap_length(a: Iterable[Range], b: Iterable[Range]) -> int:
    """Characters in both the union of ``a`` and the union of ``b``."""
    return _intersection(_merged(a), _merged(b))


def _intersection(a: dict[str, list[tuple[int, int]]], b: dict[str, list[tuple[int, int]]]) -> int:
    total = 0
    for doc, left in a.items():
        right = b.get(doc, [])
        i = j = 0
        while i < len(left) and j < len(right):
            total += max(0, min(left[i][1], right[j][1]) - max(left[i][0], right[j][0]))
            if left[i][1] < right[j][1]:
                i += 1
            else:
                j += 1
    return total


def span_scores(retrieved: Iterable[Range], evidence: Iterable[Range], outside: int = 0) -> SpanScores:
    """Recall, precision and IoU of the retrieved characters against the evidence (see the module docstring).

    ``outside``: characters of retrieved passages found in no document (they count in |R|, never in |R ∩ E|).
    """
    if outside < 0:
        raise ValueError(f"outside must be >= 0 characters, got {outside}")
    r, e = _merged(retrieved), _merged(evidence)
    e_len = _length(e)
    if e_len == 0:
        return SpanScores(math.nan, math.nan, math.nan)
    r_len = _length(r) + outside
    both = _intersection(r, e)
    precision = both / r_len if r_len else 0.0
    return SpanScores(both / e_len, precision, both / (r_len + e_len - both))
