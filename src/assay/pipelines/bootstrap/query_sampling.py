"""Pick N representative questions from a query log (``assay build --queries FILE --questions N``).

Steps (numpy only, no model; every choice seeded, every hash a CRC-32, so the same log gives the same sample on any
machine):

1. **Normalise** each question (:func:`assay.text.query_log_key`: lower case, punctuation dropped, whitespace
   collapsed); equal normalised texts are one group whose count is the sum of their lines' counts.
2. **Merge near-duplicates**: a MinHash signature of each group's character 4-gram shingles (64 hash functions
   ``(a * crc32(shingle) + b) mod (2^31 - 1)``, seeded), banded (16 bands of 4 rows); two groups sharing a band whose
   signatures agree on at least ``NEAR`` (0.75) of the 64 minima are merged (union-find). A merged group is shown
   by its most frequent wording (ties: the first in the log) and keeps the sum of the counts.
3. **Cluster the wording**: TF-IDF over the 1,024 words with the highest document frequency (ties by the word),
   rows L2-normalised, k-means with ``k = min(groups, max(1, N // 4))`` clusters, seeded k-means++ start and
   20 Lloyd iterations (an empty cluster keeps its centre).
4. **Allocate** N over the clusters: every cluster gets one; the rest in proportion to ``sqrt(cluster count)``
   (largest remainder, ties by cluster number), never more than the cluster's groups (the overflow goes round
   again). So frequent wordings get more questions, but more slowly than their traffic, and every cluster (rare
   intents form clusters of their own when their wording differs) is represented.
5. **Within a cluster**: its most frequent group first, then the others by seeded weighted sampling without
   replacement (Efraimidis-Spirakis keys ``u ** (1 / sqrt(count))``): frequent questions and rare ones both appear.

When the log has no more groups than N, every group is kept (no clustering).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from assay.text import query_log_key

__all__ = ["NEAR", "QueryGroup", "SampledQueries", "sample_queries"]

NEAR = 0.75
_PERMS, _BANDS = 64, 16
_PRIME = (1 << 31) - 1
_SHINGLE = 4
_FEATURES = 1024
_ITERATIONS = 20


@dataclass
class QueryGroup:
    """Log lines merged into one question: the wording shown, total count, the member line indexes and wordings."""

    text: str
    count: int
    members: list[int]
    cluster: int = 0
    variants: int = 1


@dataclass
class SampledQueries:
    """The chosen groups (in cluster order), with the log's counts: lines, groups, near-duplicate merges, clusters."""

    chosen: list[QueryGroup]
    counts: dict[str, int] = field(default_factory=dict)


def sample_queries(texts: Sequence[str], counts: Sequence[int], n: int, seed: int) -> SampledQueries:
    """N representative groups of ``texts`` (each asked ``counts[i]`` times); see the module docstring."""
    groups = _merge(_exact_groups(texts), texts, counts, seed)
    result_counts = {"log_lines": len(texts), "log_asked": int(sum(counts)), "log_groups": len(groups)}
    if len(groups) <= n:
        return SampledQueries(chosen=groups, counts={**result_counts, "log_clusters": 0})
    k = min(len(groups), max(1, n // 4))
    labels = _kmeans(_tfidf([g.text for g in groups]), k, seed)
    for group, label in zip(groups, labels.tolist(), strict=True):
        group.cluster = int(label)
    chosen = _choose(groups, k, n, seed)
    return SampledQueries(chosen=chosen, counts={**result_counts, "log_clusters": k})


def _exact_groups(texts: Sequence[str]) -> list[tuple[str, list[int]]]:
    by_key: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        by_key.setdefault(query_log_key(text), []).append(i)
    return list(by_key.items())


def _signatures(keys: list[str], seed: int) -> npt.NDArray[np.int64]:
    """MinHash signatures [groups, _PERMS] of the keys' character shingles."""
    hashes: list[int] = []
    offsets = [0]
    for key in keys:
        padded = f" {key} "
        grams = {padded[i : i + _SHINGLE] for i in range(max(1, len(padded) - _SHINGLE + 1))}
        hashes.extend(zlib.crc32(g.encode()) for g in sorted(grams))
        offsets.append(len(hashes))
    values = np.asarray(hashes, dtype=np.int64)
    starts = np.asarray(offsets[:-1], dtype=np.int64)
    rng = np.random.default_rng(seed)
    a = rng.integers(1, _PRIME, size=_PERMS, dtype=np.int64)
    b = rng.integers(0, _PRIME, size=_PERMS, dtype=np.int64)
    out = np.empty((len(keys), _PERMS), dtype=np.int64)
    for p in range(_PERMS):
        out[:, p] = np.minimum.reduceat((a[p] * values + b[p]) % _PRIME, starts)
    return out


def _merge(
    exact: list[tuple[str, list[int]]], texts: Sequence[str], counts: Sequence[int], seed: int
) -> list[QueryGroup]:
    """Union-find over groups whose MinHash signatures agree on at least NEAR of their minima in some band."""
    keys = [key for key, _ in exact]
    sig = _signatures(keys, seed)
    parent = list(range(len(keys)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    rows = _PERMS // _BANDS
    for band in range(_BANDS):
        block = sig[:, band * rows : (band + 1) * rows]
        mixed = np.zeros(len(keys), dtype=np.uint64)
        for col in range(rows):
            mixed = mixed * np.uint64(1_000_003) + block[:, col].astype(np.uint64)
        order = np.argsort(mixed, kind="stable")
        same = np.flatnonzero(mixed[order][1:] == mixed[order][:-1])
        firsts, seconds = order[same], order[same + 1]
        near = (sig[firsts] == sig[seconds]).mean(axis=1) >= NEAR
        for first, second in zip(firsts[near].tolist(), seconds[near].tolist(), strict=True):
            ra, rb = root(first), root(second)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    return _collect(exact, texts, counts, [root(i) for i in range(len(keys))])


def _collect(
    exact: list[tuple[str, list[int]]], texts: Sequence[str], counts: Sequence[int], roots: list[int]
) -> list[QueryGroup]:
    merged: dict[int, list[int]] = {}
    for i, r in enumerate(roots):
        merged.setdefault(r, []).append(i)
    out = []
    for members in merged.values():
        asked = [sum(counts[line] for line in exact[i][1]) for i in members]
        best = members[int(np.argmax(asked))]  # most asked; ties: the first group in the log
        lines = sorted(line for i in members for line in exact[i][1])
        group = QueryGroup(text=texts[exact[best][1][0]], count=sum(asked), members=lines, variants=len(members))
        out.append(group)
    return out


def _tfidf(texts: list[str]) -> npt.NDArray[np.float64]:
    docs = [set(query_log_key(t).split()) for t in texts]
    df: dict[str, int] = {}
    for words in docs:
        for w in words:
            df[w] = df.get(w, 0) + 1
    vocab = sorted(df, key=lambda w: (-df[w], w))[:_FEATURES]
    index = {w: j for j, w in enumerate(vocab)}
    matrix = np.zeros((len(texts), len(vocab)), dtype=np.float64)
    for i, words in enumerate(docs):
        cols = [index[w] for w in words if w in index]
        matrix[i, cols] = 1.0
    idf = np.log((1 + len(texts)) / (1 + np.asarray([df[w] for w in vocab], dtype=np.float64))) + 1
    matrix *= idf
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def _kmeans(x: npt.NDArray[np.float64], k: int, seed: int) -> npt.NDArray[np.int64]:
    """Seeded k-means++ start, then Lloyd iterations; the cluster of each row."""
    rng = np.random.default_rng(seed)
    centres = [x[int(rng.integers(len(x)))]]
    nearest = ((x - centres[0]) ** 2).sum(axis=1)
    for _ in range(1, k):
        total = nearest.sum()
        pick = int(rng.integers(len(x))) if total <= 0 else int(rng.choice(len(x), p=nearest / total))
        centres.append(x[pick])
        nearest = np.minimum(nearest, ((x - x[pick]) ** 2).sum(axis=1))
    c = np.asarray(centres)
    sq = (x**2).sum(axis=1)
    labels = np.zeros(len(x), dtype=np.int64)
    for _ in range(_ITERATIONS):
        dist = sq[:, None] - 2 * (x @ c.T) + (c**2).sum(axis=1)[None, :]
        labels = np.argmin(np.round(dist, 9), axis=1)
        for j in range(k):
            members = labels == j
            if members.any():
                c[j] = x[members].mean(axis=0)
    return labels


def _allocate(weights: list[float], sizes: list[int], n: int) -> list[int]:
    """One per cluster, the rest by largest remainder on ``weights``, capped by ``sizes`` (overflow goes round)."""
    take = [min(1, s) for s in sizes]
    left = n - sum(take)
    while left > 0:
        open_ = [j for j in range(len(sizes)) if take[j] < sizes[j]]
        if not open_:
            break
        total = sum(weights[j] for j in open_)
        shares = {j: left * weights[j] / total for j in open_}
        floors = {j: min(int(shares[j]), sizes[j] - take[j]) for j in open_}
        for j, extra in floors.items():
            take[j] += extra
        left -= sum(floors.values())
        if left > 0:
            ranked = sorted((j for j in open_ if take[j] < sizes[j]), key=lambda j: (-(shares[j] - int(shares[j])), j))
            for j in ranked[:left]:
                take[j] += 1
            left -= min(left, len(ranked))
    return take


def _choose(groups: list[QueryGroup], k: int, n: int, seed: int) -> list[QueryGroup]:
    by_cluster: list[list[QueryGroup]] = [[] for _ in range(k)]
    for g in groups:
        by_cluster[g.cluster].append(g)
    weights = [float(np.sqrt(sum(g.count for g in members))) for members in by_cluster]
    take = _allocate(weights, [len(m) for m in by_cluster], n)
    rng = np.random.default_rng(seed + 1)
    chosen: list[QueryGroup] = []
    for members, want in zip(by_cluster, take, strict=True):
        if not members or not want:
            continue
        ordered = sorted(members, key=lambda g: (-g.count, g.members[0]))
        head, rest = ordered[0], ordered[1:]
        keys = rng.random(len(rest)) ** (1 / np.sqrt([g.count for g in rest])) if rest else np.zeros(0)
        picked = [rest[i] for i in np.argsort(-keys, kind="stable")[: want - 1]]
        chosen.extend([head, *picked])
    return chosen
