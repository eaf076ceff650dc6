"""BM25 over chunks (bm25s) and candidate pooling for relevance judging.

For each question the judge grades a *pool* of chunks, not only the chunk the question was written from:

- ``source``: the chunks the question came from;
- ``bm25``: the BM25 top ``bm25_k`` chunks for the question text over the whole corpus;
- ``neighbour``: chunks within ``neighbours`` ordinals of a source chunk in the same document;
- ``near_duplicate``: chunks whose text is nearly the same as a source chunk's (Jaccard similarity of their sets
  of 5-word shingles >= 0.8), e.g. the same paragraph in an old and a new version of a policy.

BM25 is the Lucene variant (bm25s ``method="lucene"``, k1 = 1.5, b = 0.75):
``score(q, d) = sum over query terms t of idf(t) * tf(t,d) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))``
with ``idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))`` (Lucene drops the constant ``k1 + 1`` factor; ranks
are the same), ``|d|`` the number of terms of chunk d and ``avgdl`` its mean over the index. Text is tokenized
with :func:`assay.text.terms` (lower case, stop words dropped, no stemming), so results never depend on a
downloaded stemmer. A query term that repeats counts once per occurrence. Chunks with score 0 (no shared term)
are never returned. Ties are broken by the order the chunks were given to :meth:`Bm25Index.build`, so rankings are
deterministic.

Near-duplicates are found with a prefix filter (shingles ordered rarest first; two sets with Jaccard >= t must
share one of the first ``|x| - ceil(t * |x|) + 1`` shingles of each), then verified exactly on 64-bit shingle
hashes (no MinHash error; a hash collision, about 2^-64 per pair of shingles, is the only one). The hashes are built
from 8-byte BLAKE2b digests of the words, so they, and the order of shingles, are the same in every process and on
every machine (Python's built-in string hash is salted per process).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError, CorpusError
from assay.text import content_terms, terms, words
from assay.types import Chunk, Question

__all__ = ["Bm25Index", "PoolEntry", "PoolReason", "jaccard", "shingles"]

PoolReason = Literal["source", "bm25", "neighbour", "near_duplicate"]
_SHINGLE = 5
Shingle = tuple[str, ...]


@dataclass
class PoolEntry:
    """One pooled chunk for a question: why it is in the pool, and its BM25 rank (1-based) when in the top k."""

    chunk_id: str
    reasons: set[PoolReason] = field(default_factory=set)
    bm25_rank: int | None = None


def shingles(text: str, size: int = _SHINGLE) -> frozenset[tuple[str, ...]]:
    """The set of ``size``-word shingles of ``text`` (:func:`assay.text.words`); shorter texts give one shingle."""
    tokens = words(text)
    if len(tokens) <= size:
        return frozenset([tuple(tokens)]) if tokens else frozenset()
    return frozenset(zip(*(tokens[i:] for i in range(size)), strict=False))


def jaccard(a: frozenset[Hashable], b: frozenset[Hashable]) -> float:
    """|a ∩ b| / |a ∪ b| of two sets (shingles, question bigrams); 0.0 when both are empty."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


class Bm25Index:
    """A BM25 index over chunks, with pooling helpers. Build it with :meth:`build`."""

    def __init__(self, chunks: Sequence[Chunk], k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        if not chunks:
            raise CorpusError("cannot build a BM25 index over no chunks: ingest a corpus with text first")
        self.chunks = list(chunks)
        self.ids = [c.id for c in self.chunks]
        self.position = {cid: i for i, cid in enumerate(self.ids)}
        if len(self.position) != len(self.ids):
            dup = next(cid for i, cid in enumerate(self.ids) if self.position[cid] != i)
            raise CorpusError(f"duplicate chunk id {dup!r} in the index: chunk ids must be unique")
        self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
        vocabulary: dict[str, int] = {}
        token_ids: list[list[int]] = []
        self._shingles: list[npt.NDArray[np.uint64]] = []
        digests: dict[str, bytes] = {}  # a word's digest, computed once per index
        for chunk in self.chunks:  # one tokenization per chunk serves BM25 and the near-duplicate shingles
            tokens = words(chunk.text)
            token_ids.append([vocabulary.setdefault(t, len(vocabulary)) for t in content_terms(tokens)])
            self._shingles.append(_hash_shingles(tokens, digests))
        self._bm25.index((token_ids, vocabulary), show_progress=False)
        self._by_doc: dict[str, list[Chunk]] = defaultdict(list)
        for chunk in sorted(self.chunks, key=lambda c: (c.doc_id, c.ordinal)):
            self._by_doc[chunk.doc_id].append(chunk)
        self._near: _NearDuplicates | None = None

    @classmethod
    def build(cls, chunks: Sequence[Chunk], *, k1: float = 1.5, b: float = 0.75) -> Bm25Index:
        """Index ``chunks`` (their ids must be unique)."""
        return cls(chunks, k1=k1, b=b)

    def __len__(self) -> int:
        return len(self.ids)

    def chunk(self, chunk_id: str) -> Chunk:
        """The indexed chunk ``chunk_id`` (CorpusError when it is not in the index)."""
        return self.chunks[self._position(chunk_id)]

    # ------------------------------------------------------------------------------------------- search

    def scores(self, query: str) -> npt.NDArray[np.float64]:
        """BM25 score of every chunk for ``query``, in index order (all zeros when no query term is known)."""
        ids = self._bm25.get_tokens_ids(terms(query))
        if not ids:
            return np.zeros(len(self.ids))
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float64)

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """The top ``k`` chunks for ``query`` as ``(chunk_id, score)``, best first; only chunks with score > 0."""
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        return [(self.ids[i], float(s)) for i, s in _top_k(self.scores(query), k)]

    def rank_of(self, question: str | Question, chunk_id: str) -> int | None:
        """1-based BM25 rank of ``chunk_id`` for the question over the whole corpus (ties broken by index order);
        None when the chunk shares no term with the question. Used for the difficulty label."""
        at = self._position(chunk_id)
        scores = self.scores(_text(question))
        if scores[at] <= 0:
            return None
        better = int(np.count_nonzero(scores > scores[at]))
        tied_before = int(np.count_nonzero(scores[:at] == scores[at]))
        return better + tied_before + 1

    # ------------------------------------------------------------------------------------------- pooling

    def neighbours_of(self, chunk_id: str, distance: int = 1) -> list[str]:
        """Chunks of the same document within ``distance`` ordinals (by position in ordinal order), nearest first."""
        chunk = self.chunk(chunk_id)
        siblings = self._by_doc[chunk.doc_id]
        at = next(i for i, c in enumerate(siblings) if c.id == chunk_id)
        out: list[str] = []
        for step in range(1, distance + 1):
            out.extend(siblings[j].id for j in (at - step, at + step) if 0 <= j < len(siblings))
        return out

    def near_duplicates_of(self, chunk_id: str, threshold: float = 0.8) -> list[str]:
        """Other chunks whose 5-word-shingle Jaccard similarity with ``chunk_id`` is at least ``threshold``."""
        if self._near is None or self._near.threshold != threshold:
            self._near = _NearDuplicates(self._shingles, threshold)
        return [self.ids[j] for j in self._near.similar(self._position(chunk_id))]

    def pool(
        self,
        question: str | Question,
        source_chunk_ids: Sequence[str] | None = None,
        *,
        bm25_k: int = 20,
        neighbours: int = 1,
        near_duplicates: bool = True,
        near_threshold: float = 0.8,
    ) -> list[PoolEntry]:
        """The candidate chunks to judge for one question, in order: sources, BM25 top k, neighbours,
        near-duplicates; a chunk found several ways appears once with all its reasons.

        ``source_chunk_ids`` defaults to ``question.source_chunk_ids``; an id not in the index raises CorpusError.
        """
        sources = list(source_chunk_ids if source_chunk_ids is not None else _sources(question))
        entries: dict[str, PoolEntry] = {}

        def add(chunk_id: str, reason: PoolReason) -> PoolEntry:
            entry = entries.setdefault(chunk_id, PoolEntry(chunk_id))
            entry.reasons.add(reason)
            return entry

        for cid in sources:
            self._position(cid)
            add(cid, "source")
        for rank, (cid, _) in enumerate(self.search(_text(question), bm25_k) if bm25_k > 0 else [], start=1):
            add(cid, "bm25").bm25_rank = rank
        for cid in sources:
            for other in self.neighbours_of(cid, neighbours) if neighbours > 0 else []:
                add(other, "neighbour")
        for cid in sources if near_duplicates else []:
            for other in self.near_duplicates_of(cid, near_threshold):
                add(other, "near_duplicate")
        return list(entries.values())

    def _position(self, chunk_id: str) -> int:
        try:
            return self.position[chunk_id]
        except KeyError:
            raise CorpusError(
                f"chunk {chunk_id!r} is not in the BM25 index: was it chunked from this corpus?"
            ) from None


def _text(question: str | Question) -> str:
    return question if isinstance(question, str) else question.text


def _sources(question: str | Question) -> list[str]:
    return [] if isinstance(question, str) else list(question.source_chunk_ids)


def _top_k(scores: npt.NDArray[np.float64], k: int) -> list[tuple[int, float]]:
    """Indices and scores of the ``k`` best positive scores, best first, ties by index: O(n) selection."""
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    values = scores[positive]
    if positive.size > k:
        cutoff = np.partition(values, positive.size - k)[positive.size - k]
        keep = values >= cutoff
        positive, values = positive[keep], values[keep]
    order = np.lexsort((positive, -values))[:k]
    return [(int(positive[i]), float(values[i])) for i in order]


_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd: the polynomial hash below is a bijection in each word


def shingle_hashes(text: str, size: int = _SHINGLE) -> npt.NDArray[np.uint64]:
    """The :func:`shingles` of ``text`` as sorted unique 64-bit hashes: ``h = sum_j c(w_(i+j)) * M^(size-1-j)``
    modulo 2^64 over each run of ``size`` words, ``c(w)`` the 8-byte BLAKE2b digest of ``w`` in UTF-8 read as a
    little-endian integer (the same in every process and on every machine)."""
    return _hash_shingles(words(text), {}, size)


def _hash_shingles(tokens: list[str], digests: dict[str, bytes], size: int = _SHINGLE) -> npt.NDArray[np.uint64]:
    """:func:`shingle_hashes` of ``tokens``; ``digests`` holds the words' digests already computed (it is added to)."""
    if not tokens:
        return np.zeros(0, dtype=np.uint64)
    codes = np.frombuffer(b"".join([_digest(t, digests) for t in tokens]), dtype="<u8").astype(np.uint64)
    width = min(size, len(codes))
    out = np.zeros(len(codes) - width + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(width):
            out = out * _MULTIPLIER + codes[j : j + len(out)]
    return np.unique(out)


def _digest(word: str, digests: dict[str, bytes]) -> bytes:
    digest = digests.get(word)
    if digest is None:
        digest = digests[word] = hashlib.blake2b(word.encode(), digest_size=8).digest()
    return digest


class _NearDuplicates:
    """All pairs with Jaccard >= threshold over shingle sets, by prefix filtering.

    Each set is an array of 64-bit shingle hashes (:func:`shingle_hashes`; two different shingles share a hash with
    probability about 2^-64, the only source of error, so the answer is the exact one in practice). Shingles are
    ordered globally by corpus frequency, rarest first (ties by hash). Any two sets with Jaccard >= t share at least
    ``ceil(t * |x|)`` shingles, so they share one of the first ``|x| - ceil(t * |x|) + 1`` shingles of each; only
    pairs that do are compared exactly. Memory: 8 bytes per shingle plus 16 per prefix shingle, in numpy arrays.
    """

    def __init__(self, sets: list[npt.NDArray[np.uint64]], threshold: float) -> None:
        if not 0 < threshold <= 1:
            raise ConfigError(f"near-duplicate threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self.sets = sets
        lengths = np.array([len(x) for x in sets], dtype=np.int64)
        every = np.concatenate([*sets, np.zeros(0, dtype=np.uint64)])
        distinct, inverse, frequency = np.unique(every, return_inverse=True, return_counts=True)
        rank = np.empty(len(distinct), dtype=np.int64)
        rank[np.lexsort((distinct, frequency))] = np.arange(len(distinct))
        owner = np.repeat(np.arange(len(sets)), lengths)
        ranks = rank[inverse]
        self._ranks = ranks[np.lexsort((ranks, owner))]  # each set's shingle ranks, rarest first
        self._starts = np.cumsum(lengths) - lengths
        needed = np.ceil(threshold * lengths - 1e-9).astype(np.int64)  # shared shingles any match must have
        self._lengths = np.minimum(lengths - needed + 1, lengths)  # prefix lengths
        in_prefix = np.arange(len(ranks)) - np.repeat(self._starts, lengths) < np.repeat(self._lengths, lengths)
        keys, owners = self._ranks[in_prefix], owner[in_prefix]
        order = np.argsort(keys, kind="stable")
        self._keys, self._owners = keys[order], owners[order]

    @classmethod
    def of_texts(cls, texts: Sequence[str], threshold: float) -> _NearDuplicates:
        """The index over the 5-word shingles of ``texts``."""
        digests: dict[str, bytes] = {}
        return cls([_hash_shingles(words(text), digests) for text in texts], threshold)

    def similar(self, i: int) -> list[int]:
        """Indices of the other sets with Jaccard >= threshold with set ``i``, ascending."""
        prefix = self._ranks[self._starts[i] : self._starts[i] + self._lengths[i]]
        lo, hi = np.searchsorted(self._keys, prefix, "left"), np.searchsorted(self._keys, prefix, "right")
        slices = [self._owners[a:b] for a, b in zip(lo, hi, strict=True)]
        found = np.unique(np.concatenate([*slices, np.zeros(0, dtype=self._owners.dtype)]))
        mine = self.sets[i]
        return [int(j) for j in found if j != i and _jaccard_sorted(mine, self.sets[int(j)]) >= self.threshold]


def _jaccard_sorted(a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]) -> float:
    """Jaccard similarity of two sorted arrays of distinct values (0.0 when both are empty)."""
    shared = len(np.intersect1d(a, b, assume_unique=True))
    union = len(a) + len(b) - shared
    return shared / union if union else 0.0
