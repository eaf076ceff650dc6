"""Which documents a build draws its seeds from when fewer questions are asked for than there are documents.

``--questions N`` with ``N`` below the number of documents ``D`` draws ``N`` seed documents (one question each) by
systematic sampling over a stratified order, a standard survey design (Cochran, *Sampling Techniques*, ch. 8):

1. documents are sorted by stratum: their source group (:func:`source_group`: the folder of a file, or the JSONL/BEIR
   file a record came from), then their size in tokens, then a seeded random key (ties in random order);
2. with step ``s = D / N`` and a seeded random start ``u`` in ``[0, s)``, the documents at positions
   ``floor(u + i * s)`` for ``i = 0 .. N-1`` are drawn.

Every source group of ``g`` documents thus gets ``floor(N g / D)`` or ``ceil(N g / D)`` seeds (its proportional
share, rounded either way), and within a group the draws are spread evenly over the size order (small, medium and
large documents in proportion). The draw depends only on the documents (ids, sources, sizes) and the seed.

:func:`plan_text` is the line that tells the user the plan before the first model call, :func:`plan_warnings` what
may be wrong with it (a plan larger than ``--questions`` asked for among them). :func:`allocate` and
:func:`type_counts` share a total out in proportion (largest remainders) over documents and question types.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath

from assay.types import Chunk

__all__ = [
    "BIG_PLAN",
    "CROWDED_SEEDS",
    "allocate",
    "draw",
    "draw_documents",
    "largest_remainder",
    "plan_text",
    "plan_warnings",
    "source_group",
    "type_counts",
]


def source_group(source: str) -> str:
    """The stratum of a document: ``"docs/a.jsonl:12"`` -> ``"docs/a.jsonl"`` (a record of a file); a file path ->
    its folder (``"docs/faq/a.md"`` -> ``"docs/faq"``, ``"a.md"`` -> ``"."``)."""
    name, sep, line = source.rpartition(":")
    if sep and line.isdigit():
        return name
    return str(PurePosixPath(source).parent)


def draw_documents(groups: Sequence[str], sizes: Sequence[int], n: int, seed: int) -> list[int]:
    """Indices (ascending) of ``n`` of the documents described by ``groups`` and ``sizes`` (module docstring); all
    of them when ``n`` is at least their number."""
    count = len(groups)
    if n >= count:
        return list(range(count))
    rng = random.Random(f"{seed}:documents")
    ties = [rng.random() for _ in range(count)]
    order = sorted(range(count), key=lambda i: (groups[i], sizes[i], ties[i]))
    step = count / n
    start = rng.random() * step
    return sorted(order[min(int(start + i * step), count - 1)] for i in range(n))


def draw(
    by_doc: dict[str, list[Chunk]], n: int, seed: int, groups: Mapping[str, str], tokens: Callable[[Chunk], int]
) -> dict[str, list[Chunk]]:
    """The ``n`` seed documents of :func:`draw_documents`, in corpus order."""
    ids = list(by_doc)
    sizes = [sum(tokens(c) for c in by_doc[d]) for d in ids]
    drawn = draw_documents([groups.get(d, "") for d in ids], sizes, n, seed)
    return {ids[i]: by_doc[ids[i]] for i in drawn}


BIG_PLAN = 1000  # a plan of more questions than this that the user did not give as --questions is announced
CROWDED_SEEDS = 4  # more seeds per chunk than this draws a warning: the questions would repeat each other


def plan_text(wanted: int, docs: int, n_docs: int, per_doc: int | None, total: int | None) -> str:
    """One line saying how many questions are planned from which documents, and why."""
    if total is not None and docs < n_docs:
        return (
            f"{wanted:,} questions from {docs:,} of {n_docs:,} documents (drawn with the seed, stratified by "
            "source folder or file and by size; one question each)"
        )
    why = f"--per-doc {per_doc}" if per_doc is not None else "--questions" if total is not None else "the default"
    return f"{wanted:,} questions over all {n_docs:,} documents ({why}; about {wanted / n_docs:.3g} per document)"


def plan_warnings(picked: int, wanted: int, cap: int, n_chunks: int, *, explicit: bool) -> list[str]:
    """Warnings about a plan of ``picked`` seeds: fewer than ``wanted`` (the cap), crowded chunks, or a large plan
    that ``--questions`` did not ask for (``explicit``: it did)."""
    out = []
    if picked < wanted:
        out.append(f"only {picked} of {wanted} questions fit under the cap of {cap} per document.")
    if picked > CROWDED_SEEDS * n_chunks:
        out.append(
            f"{picked} questions from {n_chunks} chunks (more than {CROWDED_SEEDS} per chunk): many will be "
            "near-duplicates of each other and dropped; ask for fewer questions or give a larger corpus."
        )
    if picked > BIG_PLAN and not explicit:
        out.append(
            f"the plan is {picked:,} questions, and --questions did not ask for them: every one costs model "
            "calls; give --questions N to build N questions from N drawn documents."
        )
    return out


def largest_remainder(weights: Sequence[float], total: int) -> list[int]:
    """Integers proportional to ``weights`` summing to ``total`` (remainders to the largest fractions, then order)."""
    norm = sum(weights)
    if total <= 0 or norm <= 0:
        return [0] * len(weights)
    exact = [w * total / norm for w in weights]
    out = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - out[i]), i))
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def type_counts(mix: Mapping[str, float], total: int) -> dict[str, int]:
    """Target count per type for ``total`` questions (largest remainder over the shares)."""
    names = list(mix)
    return dict(zip(names, largest_remainder([mix[n] for n in names], total), strict=True))


def allocate(sizes: Sequence[int], total: int, cap: int) -> list[int]:
    """Questions per document: 1 each, the rest proportional to ``sizes``, none above ``cap`` (module docstring)."""
    quota = [1] * len(sizes)
    left = total - len(sizes)
    while left > 0:
        open_docs = [i for i, q in enumerate(quota) if q < cap]
        if not open_docs:
            break
        extra = largest_remainder([max(sizes[i], 1) for i in open_docs], left)
        for i, add in zip(open_docs, extra, strict=True):
            take = min(add, cap - quota[i])
            quota[i] += take
            left -= take
    return quota
