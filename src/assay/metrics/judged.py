"""Qrels and runs as arrays, and their join: the rank of every judged document of every evaluated query.

Conventions (trec_eval's, checked against pytrec_eval, its reference binding):

* A run is ordered by score descending, scores compared in single precision (trec_eval stores them as ``float``:
  1.00000001 and 1.0 tie), ties broken by docid descending in string (code point) order. The rank column of a TREC
  run is ignored. NaN scores are rejected; -0.0 and 0.0 tie.
* A duplicate docid within one query of a run (or of the qrels) is an error.
* Queries only in the run are ignored. A query in the qrels but not in the run is left out unless ``complete``
  (trec_eval ``-c``), which evaluates it as an empty ranking, so every measure gives it 0.

Every measure needs only the ranks of judged documents (unjudged documents count as grade 0), so the join looks up
each judged document's score in the run and counts the documents ranked above it (:mod:`assay.metrics._ranks`);
memory beyond the run itself is O(judged documents + one bounded chunk), never O(retrieved documents).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, compress, islice, repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.metrics._errors import MetricError
from assay.metrics._lookup import docid_hashes, first_duplicate, hash31, lookup
from assay.metrics._ranks import NOT_RETRIEVED, Docids, Targets, judged_ranks

__all__ = ["NOT_RETRIEVED", "Judged", "Qrels", "Run", "docid_hashes", "find_duplicate", "join"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
UIntArray = npt.NDArray[np.uint64]

_MIX = np.uint64(0x9E3779B97F4A7C15)


def utf8(docids: npt.NDArray[Any]) -> npt.NDArray[np.bytes_]:
    """A str (``U``) array as UTF-8 bytes (``S``); the cast is fast when every id is ASCII."""
    if docids.dtype.kind == "S":
        return docids
    try:
        return docids.astype(np.bytes_)
    except UnicodeEncodeError:
        return np.char.encode(docids, "utf-8")


def _mixed_keys(qidx: IntArray, hashes: UIntArray) -> UIntArray:
    with np.errstate(over="ignore"):
        return hashes ^ (qidx.astype(np.uint64) * _MIX)


def _check_scores(scores: FloatArray) -> None:
    if np.isnan(scores).any():
        raise MetricError(f"run has a NaN score at entry {int(np.flatnonzero(np.isnan(scores))[0])}; give numbers")


def _starts(lengths: IntArray) -> IntArray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: ``query_ids`` sorted, entries grouped by query (``offsets``), integer ``grades``.

    ``docs`` holds the entries' docids as given: a list of str (from mappings) or a str array (from files);
    :attr:`docids` is always the array, :meth:`doc_list` always the list.
    """

    query_ids: list[str]
    offsets: IntArray
    docs: list[str] | npt.NDArray[np.str_]
    grades: IntArray

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> Qrels:
        """From pytrec_eval's shape ``{qid: {docid: grade}}``; queries with no judgments are dropped."""
        qids = sorted(q for q, d in qrels.items() if len(d))
        lengths = np.fromiter((len(qrels[q]) for q in qids), np.int64, count=len(qids))
        docs = list(chain.from_iterable(qrels[q].keys() for q in qids))
        grades = np.fromiter(chain.from_iterable(qrels[q].values() for q in qids), np.int64, count=len(docs))
        return cls(qids, _starts(lengths), docs, grades)

    @cached_property
    def docids(self) -> npt.NDArray[np.str_]:
        """The docids as a str array."""
        return self.docs if isinstance(self.docs, np.ndarray) else np.array(self.docs, dtype=np.str_).reshape(-1)

    def doc_list(self) -> list[str]:
        """The docids as a list of str."""
        return self.docs if isinstance(self.docs, list) else self.docs.tolist()

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
        docs, grades = self.doc_list(), self.grades.tolist()
        return {q: dict(zip(docs[a:b], grades[a:b], strict=True)) for q, a, b in self._spans()}

    def _spans(self) -> Iterable[tuple[str, int, int]]:
        return zip(self.query_ids, self.offsets[:-1].tolist(), self.offsets[1:].tolist(), strict=True)

    def __len__(self) -> int:
        return len(self.query_ids)


@dataclass(frozen=True, eq=False)
class Run:
    """A ranking per query: ``scores`` per entry; query i holds entries ``order[starts[i]:starts[i + 1]]``.

    ``order`` is None when entries are already grouped by query in query order. Built from mappings
    (``from_dict``) the docids stay in those mappings and are read from them only to break score ties; built from
    arrays or files they are a bytes array with a 31-bit hash each for per-query lookups (:mod:`._lookup`). Use the
    constructors, not ``Run(...)``.
    """

    query_ids: list[str]
    scores: FloatArray
    starts: IntArray
    order: IntArray | None = None
    docids: npt.NDArray[np.bytes_] | None = None
    hashes: npt.NDArray[np.uint32] | None = None
    source: Mapping[str, Mapping[str, float]] | None = None

    @classmethod
    def from_dict(cls, run: Mapping[str, Mapping[str, float]]) -> Run:
        """From pytrec_eval's shape ``{qid: {docid: score}}`` (no copy of the docids is made)."""
        lengths = np.fromiter(map(len, run.values()), np.int64, count=len(run))
        starts = _starts(lengths)
        scores = np.fromiter(chain.from_iterable(d.values() for d in run.values()), np.float64, count=int(starts[-1]))
        _check_scores(scores)
        return cls(list(run), scores, starts, source=run)

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
        encoded = utf8(raw if raw.dtype.kind == "S" else raw.astype(np.str_))
        values = np.asarray(scores, dtype=np.float64)
        _check_scores(values)
        run = cls.from_entries([str(n) for n in names], inverse.astype(np.int64).reshape(-1), values, encoded)
        dup = run.first_duplicate()
        if dup is not None:
            doc, q = encoded[dup[1]].decode(), run.query_ids[int(run.qidx[dup[1]])]
            raise MetricError(f"run lists document {doc!r} twice for query {q!r}; each docid may appear once")
        return run

    @classmethod
    def from_entries(
        cls, query_ids: list[str], qidx: IntArray, scores: FloatArray, docids: npt.NDArray[np.bytes_]
    ) -> Run:
        """From per-entry arrays, not checked for repeated docids: ``qidx`` indexes ``query_ids``, any order."""
        lengths = np.bincount(qidx, minlength=len(query_ids)).astype(np.int64)
        grouped = bool(np.all(qidx[1:] >= qidx[:-1]))
        order = None if grouped else np.argsort(qidx, kind="stable").astype(np.int64)
        return cls(query_ids, scores, _starts(lengths), order, docids, hash31(docids))

    @classmethod
    def from_runs(
        cls, query_ids: list[str], runs: tuple[IntArray, IntArray], scores: FloatArray, docids: npt.NDArray[np.bytes_]
    ) -> Run:
        """Like :meth:`from_entries`, queries given as runs: ``counts[i]`` entries in a row of ``codes[i]``.

        ``runs`` is ``(codes, counts)``, codes numbered by first appearance (as a file reader assigns them).
        """
        codes, counts = runs
        heads = np.flatnonzero(np.diff(codes, prepend=-1))
        codes, counts = codes[heads], np.add.reduceat(counts, heads) if len(heads) else counts
        if not np.array_equal(codes, np.arange(len(query_ids))):  # some query comes back later: not grouped
            return cls.from_entries(query_ids, np.repeat(codes, counts), scores, docids)
        return cls(query_ids, scores, _starts(counts), None, docids, hash31(docids))

    def __len__(self) -> int:
        return len(self.query_ids)

    def lengths(self) -> IntArray:
        """Number of retrieved documents per query, aligned with ``query_ids``."""
        return np.diff(self.starts)

    @cached_property
    def qidx(self) -> IntArray:
        """The query index of every entry."""
        qidx = np.repeat(np.arange(len(self.query_ids), dtype=np.int64), self.lengths())
        if self.order is None:
            return qidx
        out = np.empty_like(qidx)
        out[self.order] = qidx
        return out

    def first_duplicate(self) -> tuple[int, int] | None:
        """Entries ``(first, second)`` of a docid repeated within a query, or None (arrays-built runs only)."""
        if self.docids is None or self.hashes is None:
            return None  # a mapping cannot repeat a key
        return first_duplicate(self, self.hashes, self.docids)

    def entries(self, queries: IntArray, positions: IntArray) -> IntArray:
        """The entry at ``positions[i]`` within query ``queries[i]``'s ranking, for each i."""
        at = self.starts[queries] + positions
        return at if self.order is None else self.order[at]

    def gather(self, values: npt.NDArray[Any], queries: IntArray, width: int) -> Any:
        """``[len(queries), width]`` of a per-entry array: row i query ``queries[i]``'s entries, then any value."""
        at = self.starts[queries][:, None] + np.arange(width, dtype=np.int64)[None, :]
        np.minimum(at, len(self.scores) - 1, out=at)
        return values[at if self.order is None else self.order[at]]

    def score_matrix(self, queries: IntArray, width: int) -> FloatArray:
        """:meth:`gather` of the scores."""
        scores: FloatArray = self.gather(self.scores, queries, width)
        return scores

    def docids_at(self, entries: IntArray) -> list[str]:
        """The docids of the given entries."""
        if self.docids is not None:
            return [d.decode() for d in self.docids[entries].tolist()]
        if self.source is None:
            raise MetricError("run has neither docids nor a source mapping; build it with Run.from_dict/from_arrays")
        flat = list(chain.from_iterable(self.source.values()))
        return [flat[i] for i in entries.tolist()]

    def tie_docids(self, queries: IntArray, positions: IntArray) -> Docids:
        """Docids at ``positions`` within ``queries`` (queries non-decreasing): bytes array, or str list."""
        if self.docids is not None:
            return self.docids[self.entries(queries, positions)]
        if self.source is None:
            raise MetricError("run has neither docids nor a source mapping; build it with Run.from_dict/from_arrays")
        return _docids_in_mappings(list(self.source.values()), queries, positions)


def _docids_in_mappings(rankings: list[Mapping[str, float]], queries: IntArray, positions: IntArray) -> list[str]:
    """The keys at ``positions`` of ``rankings[queries]``: each mapping is walked once, up to its last wanted key."""
    cells, inverse = np.unique((queries << 32) | positions, return_inverse=True)
    found: list[str] = []
    current, walk, at = -1, iter(()), 0
    for row, position in zip((cells >> 32).tolist(), (cells & 0xFFFFFFFF).tolist(), strict=True):
        if row != current:
            current, walk, at = row, iter(rankings[row]), 0
        found.append(next(islice(walk, position - at, None)))
        at = position + 1
    return list(map(found.__getitem__, inverse.reshape(-1).tolist()))


def find_duplicate(qidx: IntArray, hashes: UIntArray, docids: npt.NDArray[Any]) -> tuple[int, int] | None:
    """Entries ``(first, second)`` of a repeated (query, docid) pair, or None: one sort of all entries (for qrels;
    a run uses :meth:`Run.first_duplicate`, which sorts one query at a time)."""
    keys = _mixed_keys(qidx, hashes)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    same = keys[1:] == keys[:-1]
    # each run of equal keys is checked whole: a collision (another docid, or another query, with the same key) can
    # sit between the two entries of a repeat, so comparing neighbours alone would miss it
    starts = np.flatnonzero(same & ~np.concatenate([[False], same[:-1]]))
    for start in starts.tolist():
        end = start + 1
        while end < len(same) and same[end]:
            end += 1
        seen: dict[tuple[int, bytes], int] = {}
        for entry in order[start : end + 1].tolist():  # stable sort: file order within the run
            key = (int(qidx[entry]), docids[entry])
            if key in seen:
                return (seen[key], entry)
            seen[key] = entry
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


def join(qrels: Qrels, run: Run, *, complete: bool = False, positive_only: bool = False) -> Judged:
    """Rank every judged document of every evaluated query in the run (see the module docstring).

    ``positive_only`` leaves out judged documents with grade <= 0: every measure but bpref reads only documents
    with a positive grade (the others gain 0 and are not relevant at any threshold >= 1), so it gives the same
    values for them with less work.
    """
    run_pos = {q: i for i, q in enumerate(run.query_ids)}
    rq = np.array([run_pos.get(q, -1) for q in qrels.query_ids], dtype=np.int64)
    keep = np.ones(len(rq), dtype=bool) if complete else rq >= 0
    entry_q = np.repeat(np.arange(len(rq), dtype=np.int64), np.diff(qrels.offsets))
    entry_keep = keep[entry_q] & (qrels.grades > 0) if positive_only else keep[entry_q]
    row_rq = rq[keep]  # run query of each evaluated query (row), -1 when absent
    jrow = (np.cumsum(keep) - 1)[entry_q[entry_keep]]
    n_ret = np.append(run.lengths(), 0)[row_rq]  # -1 picks the appended 0
    jdocs: Docids
    if run.source is not None:
        names = list(compress(qrels.doc_list(), entry_keep.tolist()))
        jscore = _dict_scores(run.source, [qrels.query_ids[i] for i in np.flatnonzero(keep).tolist()], jrow, names)
        jdocs = names
    else:
        jdocs = utf8(qrels.docids[entry_keep])
        jscore = _hash_lookup(run, row_rq[jrow], jdocs)
    ranks = judged_ranks(_Rows(run, row_rq, n_ret), Targets(jrow, jscore, jdocs))
    grade = qrels.grades[entry_keep]
    order = np.lexsort((ranks, jrow))
    ids = [qid for qid, k in zip(qrels.query_ids, keep.tolist(), strict=True) if k]
    return Judged(ids, n_ret, jrow[order], ranks[order], grade[order], int((rq < 0).sum()))


@dataclass(frozen=True)
class _Rows:
    """The run's rankings of the evaluated queries: row i is run query ``rq[i]`` (-1: none, length 0)."""

    run: Run
    rq: IntArray
    lengths: IntArray

    def score_matrix(self, rows: IntArray, width: int) -> FloatArray:
        return self.run.score_matrix(self.rq[rows], width)

    def docids(self, rows: IntArray, positions: IntArray) -> Docids:
        return self.run.tie_docids(self.rq[rows], positions)


def _dict_scores(
    source: Mapping[str, Mapping[str, float]], qids: list[str], jrow: IntArray, docs: list[Any]
) -> FloatArray:
    """The run's score of each judged document (rows of ``jrow`` are ``qids``), NaN where the run lacks it."""
    nan = float("nan")
    empty: Mapping[str, float] = {}
    bounds = np.searchsorted(jrow, np.arange(len(qids) + 1)).tolist()
    values = chain.from_iterable(
        map(source.get(q, empty).get, docs[a:b], repeat(nan))
        for q, a, b in zip(qids, bounds[:-1], bounds[1:], strict=True)
    )
    return np.fromiter(values, np.float64, count=len(docs))


def _hash_lookup(run: Run, want_q: IntArray, want_docs: npt.NDArray[np.bytes_]) -> FloatArray:
    """The score of each (run query, docid) pair, NaN where absent (want_q -1: the query is not in the run)."""
    if run.docids is None or run.hashes is None:
        raise MetricError("run has neither docids nor a source mapping; build it with Run.from_dict/from_arrays")
    return lookup(run, run.hashes, run.docids, want_q, want_docs)
