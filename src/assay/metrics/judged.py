"""Qrels and runs as arrays, and their join: the rank of every judged document of every evaluated query.

Conventions (trec_eval's, checked against pytrec_eval, its reference binding):

* A run is ordered by score descending, scores compared in single precision (trec_eval stores them as ``float``:
  1.00000001 and 1.0 tie), ties broken by docid descending in string (code point) order. The rank column of a TREC
  run is ignored. NaN scores are rejected; -0.0 and 0.0 tie.
* A duplicate docid within one query of a run (or of the qrels) is an error.
* Queries only in the run are ignored. A query in the qrels but not in the run is left out unless ``complete``
  (trec_eval ``-c``), which evaluates it as an empty ranking, so every measure gives it 0.

Every measure needs only the ranks of judged documents (unjudged documents count as grade 0), so the join
computes, for each judged document, its 0-based rank in the run (:data:`NOT_RETRIEVED` when absent): one sort of the
run's (query, score) keys and a binary search per judged document, all in numpy.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.metrics import MetricError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
UIntArray = npt.NDArray[np.uint64]

NOT_RETRIEVED = np.int64(1) << np.int64(62)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_FNV = np.uint64(0x100000001B3)


def docid_hashes(docids: npt.NDArray[Any]) -> UIntArray:
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
    return out


def _mixed_keys(qidx: IntArray, hashes: UIntArray) -> UIntArray:
    with np.errstate(over="ignore"):
        return hashes ^ (qidx.astype(np.uint64) * _MIX)


def _descending_bits(scores: FloatArray) -> UIntArray:
    """uint32 keys, as uint64, that sort ascending when the float32 scores sort descending."""
    f32 = scores.astype(np.float32) + np.float32(0.0)  # -0.0 becomes 0.0: they tie, as in trec_eval
    bits = f32.view(np.uint32)
    ordered = np.where(bits & np.uint32(0x80000000), ~bits, bits | np.uint32(0x80000000))
    return (~ordered).astype(np.uint64)


def _check_scores(scores: FloatArray) -> None:
    if np.isnan(scores).any():
        raise MetricError(f"run has a NaN score at entry {int(np.flatnonzero(np.isnan(scores))[0])}; give numbers")


@dataclass(frozen=True)
class Qrels:
    """Relevance judgments: ``query_ids`` sorted, entries grouped by query (``offsets``), integer ``grades``."""

    query_ids: list[str]
    offsets: IntArray
    docids: npt.NDArray[np.str_]
    grades: IntArray

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> Qrels:
        """From pytrec_eval's shape ``{qid: {docid: grade}}``; queries with no judgments are dropped."""
        qids = sorted(q for q, d in qrels.items() if len(d))
        lengths = np.fromiter((len(qrels[q]) for q in qids), np.int64, count=len(qids))
        docs = list(chain.from_iterable(qrels[q].keys() for q in qids))
        grades = np.fromiter(chain.from_iterable(qrels[q].values() for q in qids), np.int64, count=len(docs))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return cls(qids, offsets, np.array(docs, dtype=np.str_).reshape(len(docs)), grades)

    @classmethod
    def from_arrays(cls, query_ids: Sequence[str], docids: Sequence[str], grades: Iterable[int]) -> Qrels:
        """From parallel sequences, one entry per judgment; a repeated (query, docid) pair raises MetricError."""
        table: dict[str, dict[str, int]] = {}
        for q, d, g in zip(query_ids, docids, grades, strict=True):
            per_query = table.setdefault(q, {})
            if d in per_query:
                raise MetricError(f"qrels judge document {d!r} twice for query {q!r}; keep one judgment per pair")
            per_query[d] = int(g)
        return cls.from_dict(table)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """Back to ``{qid: {docid: grade}}``."""
        docs, grades = self.docids.tolist(), self.grades.tolist()
        return {q: dict(zip(docs[a:b], grades[a:b], strict=True)) for q, a, b in self._spans()}

    def _spans(self) -> Iterable[tuple[str, int, int]]:
        return zip(self.query_ids, self.offsets[:-1].tolist(), self.offsets[1:].tolist(), strict=True)

    def __len__(self) -> int:
        return len(self.query_ids)


@dataclass(frozen=True, eq=False)
class Run:
    """A ranking per query: ``qidx`` (index into ``query_ids``) and ``scores`` per entry, in any order.

    Built from mappings (``from_dict``) the docids stay in those mappings and are looked up there; built from arrays
    or files they are a bytes array with 64-bit hashes for the join. Use the constructors, not ``Run(...)``.
    """

    query_ids: list[str]
    qidx: IntArray
    scores: FloatArray
    docids: npt.NDArray[np.bytes_] | None = None
    hashes: UIntArray | None = None
    source: Mapping[str, Mapping[str, float]] | None = None

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]]) -> Run:
        """From pytrec_eval's shape ``{qid: {docid: score}}`` (no copy of the docids is made)."""
        qids = list(run)
        lengths = np.fromiter(map(len, run.values()), np.int64, count=len(qids))
        total = int(lengths.sum())
        scores = np.fromiter(chain.from_iterable(d.values() for d in run.values()), np.float64, count=total)
        _check_scores(scores)
        return cls(qids, np.repeat(np.arange(len(qids), dtype=np.int64), lengths), scores, source=run)

    @classmethod
    def from_ranked_lists(cls, ranked: Mapping[str, Sequence[str]]) -> Run:
        """From ``{qid: [docid, ...]}`` in rank order: synthetic scores n, n-1, ..., 1 keep that order exactly."""
        table: dict[str, dict[str, float]] = {}
        for q, docs in ranked.items():
            n = len(docs)
            table[q] = dict(zip(docs, range(n, 0, -1), strict=True))
            if len(table[q]) != n:
                raise MetricError(f"run lists a document twice for query {q!r}; each docid may appear once")
        if max(map(len, ranked.values()), default=0) > 2**24:
            raise MetricError("a ranked list longer than 16,777,216 cannot keep its order in float32 scores")
        return cls.from_dict(table)

    @classmethod
    def from_arrays(cls, query_ids: Sequence[str], docids: Sequence[str] | npt.NDArray[Any], scores: Any) -> Run:
        """From parallel per-entry arrays (any order); a docid repeated within a query raises MetricError."""
        names, inverse = np.unique(np.asarray(query_ids, dtype=np.str_), return_inverse=True)
        raw = np.asarray(docids)
        encoded = raw if raw.dtype.kind == "S" else np.char.encode(raw.astype(np.str_), "utf-8")
        values = np.asarray(scores, dtype=np.float64)
        _check_scores(values)
        hashes = docid_hashes(encoded)
        qidx = inverse.astype(np.int64).reshape(-1)
        dup = find_duplicate(qidx, hashes, encoded)
        if dup is not None:
            doc, q = encoded[dup[1]].decode(), str(names[qidx[dup[1]]])
            raise MetricError(f"run lists document {doc!r} twice for query {q!r}; each docid may appear once")
        return cls([str(n) for n in names], qidx, values, encoded, hashes)

    def __len__(self) -> int:
        return len(self.query_ids)

    def lengths(self) -> IntArray:
        """Number of retrieved documents per query, aligned with ``query_ids``."""
        return np.bincount(self.qidx, minlength=len(self.query_ids)).astype(np.int64)

    @cached_property
    def key_order(self) -> tuple[IntArray, UIntArray]:
        """Entries sorted by their (query, docid-hash) key, and the sorted keys (arrays-built runs only)."""
        if self.hashes is None:
            raise MetricError("run has no docid hashes; build it with Run.from_arrays or a reader")
        keys = _mixed_keys(self.qidx, self.hashes)
        order = np.argsort(keys, kind="stable").astype(np.int64)
        return order, keys[order]

    def docids_at(self, entries: IntArray) -> list[str]:
        """The docids of the given entries (used only to break score ties)."""
        if self.docids is not None:
            return [d.decode() for d in self.docids[entries].tolist()]
        if self.source is None:
            raise MetricError("run has neither docids nor a source mapping; build it with Run.from_dict/from_arrays")
        flat = list(chain.from_iterable(self.source.values()))
        return [flat[i] for i in entries.tolist()]


def find_duplicate(
    qidx: IntArray, hashes: UIntArray, docids: npt.NDArray[Any], sorted_by: tuple[IntArray, UIntArray] | None = None
) -> tuple[int, int] | None:
    """Entries ``(first, second)`` of the first repeated (query, docid) pair, or None.

    ``sorted_by`` is ``Run.key_order`` when at hand (it saves a sort).
    """
    if sorted_by is None:
        keys = _mixed_keys(qidx, hashes)
        order = np.argsort(keys, kind="stable")
        sorted_by = (order.astype(np.int64), keys[order])
    order, keys = sorted_by
    same = np.flatnonzero(keys[1:] == keys[:-1])
    for i in same.tolist():
        a, b = int(order[i]), int(order[i + 1])
        if qidx[a] == qidx[b] and docids[a] == docids[b]:
            return (min(a, b), max(a, b))
    return None


@dataclass(frozen=True)
class Judged:
    """The join of qrels and a run over the evaluated queries (sorted ids), entries sorted by (query, rank).

    ``q``, ``rank`` and ``grade`` have one entry per judged document of an evaluated query; ``rank`` is 0-based,
    :data:`NOT_RETRIEVED` when the run lacks the document. ``n_ret`` counts retrieved documents per query;
    ``n_missing`` counts qrels queries absent from the run (evaluated as empty only when ``complete``).
    """

    query_ids: list[str]
    n_ret: IntArray
    q: IntArray
    rank: IntArray
    grade: IntArray
    n_missing: int

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def relevant(self, threshold: int) -> npt.NDArray[np.bool_]:
        """Entries judged relevant at ``grade >= threshold`` (threshold >= 1: negative grades never count)."""
        return self.grade >= max(threshold, 1)

    def per_query(self, values: npt.NDArray[Any], mask: npt.NDArray[np.bool_] | None = None) -> FloatArray:
        """Sum of ``values`` per evaluated query (over ``mask`` entries when given)."""
        q = self.q if mask is None else self.q[mask]
        v = values if mask is None else values[mask]
        return np.bincount(q, weights=v, minlength=self.n_queries).astype(np.float64)

    def count(self, mask: npt.NDArray[np.bool_]) -> FloatArray:
        """Number of ``mask`` entries per evaluated query."""
        return np.bincount(self.q[mask], minlength=self.n_queries).astype(np.float64)


def join(qrels: Qrels, run: Run, *, complete: bool = False) -> Judged:
    """Rank every judged document of every evaluated query in the run (see the module docstring)."""
    run_pos = {q: i for i, q in enumerate(run.query_ids)}
    rq = np.array([run_pos.get(q, -1) for q in qrels.query_ids], dtype=np.int64)
    keep = np.ones(len(rq), dtype=bool) if complete else rq >= 0
    entry_q = np.repeat(np.arange(len(rq), dtype=np.int64), np.diff(qrels.offsets))
    entry_keep = keep[entry_q]
    entry_rq = rq[entry_q][entry_keep]
    docids = qrels.docids[entry_keep]
    scores = _lookup_scores(qrels, run, rq, keep) if len(docids) else np.empty(0, dtype=np.float64)
    ranks = _ranks(run, entry_rq, docids, scores)
    eval_index = np.cumsum(keep) - 1
    q = eval_index[entry_q[entry_keep]]
    grade = qrels.grades[entry_keep]
    order = np.lexsort((ranks, q))
    n_ret = np.append(run.lengths(), 0)[rq[keep]]  # rq == -1 (not in the run) picks the appended 0
    ids = [qid for qid, k in zip(qrels.query_ids, keep.tolist(), strict=True) if k]
    return Judged(ids, n_ret, q[order], ranks[order], grade[order], int((rq < 0).sum()))


def _lookup_scores(qrels: Qrels, run: Run, rq: IntArray, keep: npt.NDArray[np.bool_]) -> FloatArray:
    """The run's score of each kept judged document, NaN where the run lacks it."""
    spans = [(q, a, b) for (q, a, b), k in zip(qrels._spans(), keep.tolist(), strict=True) if k]
    if run.source is not None:
        docs = qrels.docids.tolist()
        nan = float("nan")
        empty: Mapping[str, float] = {}
        values = chain.from_iterable([run.source.get(q, empty).get(d, nan) for d in docs[a:b]] for q, a, b in spans)
        total = sum(b - a for _, a, b in spans)
        return np.fromiter(values, np.float64, count=total)
    return _hash_lookup(qrels, run, rq, keep)


def _hash_lookup(qrels: Qrels, run: Run, rq: IntArray, keep: npt.NDArray[np.bool_]) -> FloatArray:
    if run.docids is None or run.hashes is None:
        raise MetricError("run has neither docids nor a source mapping; build it with Run.from_dict/from_arrays")
    entry_q = np.repeat(np.arange(len(rq), dtype=np.int64), np.diff(qrels.offsets))
    mask = keep[entry_q]
    want_q = rq[entry_q[mask]]
    want_docs = np.char.encode(qrels.docids[mask], "utf-8")
    want = _mixed_keys(want_q, docid_hashes(want_docs))
    order, sorted_keys = run.key_order
    out = np.full(len(want), np.nan)
    pos = np.searchsorted(sorted_keys, want)
    pending = np.flatnonzero((want_q >= 0) & (pos < len(sorted_keys)))
    while len(pending):  # more than one pass only on a 64-bit hash collision
        cand = order[pos[pending]]
        same_key = sorted_keys[pos[pending]] == want[pending]
        hit = same_key & (run.qidx[cand] == want_q[pending]) & (run.docids[cand] == want_docs[pending])
        out[pending[hit]] = run.scores[cand[hit]]
        pending = pending[same_key & ~hit]
        pos[pending] += 1
        pending = pending[pos[pending] < len(sorted_keys)]
    return out


def _ranks(run: Run, entry_rq: IntArray, docids: npt.NDArray[np.str_], scores: FloatArray) -> IntArray:
    """0-based rank of each judged document: documents ahead by score, plus tied ones with a larger docid."""
    ranks = np.full(len(scores), NOT_RETRIEVED, dtype=np.int64)
    found = np.flatnonzero(~np.isnan(scores))
    if len(found) == 0:
        return ranks
    run_keys = (run.qidx.astype(np.uint64) << np.uint64(32)) | _descending_bits(run.scores)
    order = np.argsort(run_keys)
    sorted_keys = run_keys[order]
    starts = np.concatenate([[0], np.cumsum(run.lengths())]).astype(np.int64)
    rq = entry_rq[found]
    keys = (rq.astype(np.uint64) << np.uint64(32)) | _descending_bits(scores[found])
    left = np.searchsorted(sorted_keys, keys, side="left")
    right = np.searchsorted(sorted_keys, keys, side="right")
    ranks[found] = left - starts[rq]
    tied = np.flatnonzero(right - left > 1)
    if len(tied):
        ranks[found[tied]] += _tie_offsets(run, order, left[tied], right[tied], docids[found[tied]].tolist())
    return ranks


def _tie_offsets(run: Run, order: IntArray, left: IntArray, right: IntArray, docs: list[str]) -> IntArray:
    """For each tied judged document, how many run documents share its query and score with a larger docid.

    ``[left, right)`` is the document's tie group in the run sorted by (query, score); only those entries are read.
    """
    lo, first = np.unique(left, return_index=True)
    lengths = right[first] - lo
    shift = np.repeat(lo - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    entries = order[shift + np.arange(int(lengths.sum()), dtype=np.int64)]
    flat = run.docids_at(entries)
    bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    groups = {start: sorted(flat[a:b]) for start, a, b in zip(lo.tolist(), bounds[:-1], bounds[1:], strict=True)}
    return np.array(
        [len(groups[k]) - bisect_right(groups[k], d) for k, d in zip(left.tolist(), docs, strict=True)],
        dtype=np.int64,
    )
