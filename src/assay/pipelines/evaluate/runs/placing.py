"""Where a repeated text came from: a passage whose words stand exactly in several places (a sentence repeated in
two sections, a page kept in two versions, a block copied into two pages) is placed by the rest of its ranking
before any global tie-break, so the same text scores the same however it was cut.

The rule, for the passages of one run's line in the order given (a passage given by id or offsets, or whose text
stands in one place, is *sure*; a repeated text, once placed, counts as placed there for the others, see
:func:`place_line` for the passes):

1. **A place not taken**: a place overlapping one that another passage of the line holds is the last resort: the
   same text retrieved twice, as two copies of a chunk, stands for both copies, not twice for one.
2. **Beside its neighbours**: a place that touches a place the passage just before or just after it can have
   (nothing but spaces, punctuation or markup between: the halves of a cut stand side by side).
3. **Where a section starts or ends**: a place that starts or ends where a golden chunk does (nothing but spaces,
   punctuation or markup between): a piece cut from a section begins or ends with it, while a copy of the same
   words inside a longer section does neither.
4. **The text that earned a grade**: the place where the question's graded golden chunks give the highest grade
   (the same words are as relevant wherever they stand; unlabelled counts below 0).
5. **The document of the nearest sure passage** (by rank, the earlier on a tie) that holds a place of it.
6. **Otherwise** the aligner's rule: the lowest document id, then the earliest place.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from assay.corpus.align import Span
from assay.pipelines.evaluate.runs.locate import Located, Resolver

__all__ = ["Grade", "graded_by", "place_line"]

Grade = Callable[[Span], int]  # the highest grade the question's graded golden chunks give a place (-1: none)


PASSES = 3  # placement passes at most: the second sees where the first put the later repeated texts


def place_line(
    resolver: Resolver, found: Sequence[Located], doc_ids: Sequence[str | None], grade: Grade | None = None
) -> list[Located]:
    """The line's passages with each repeated text placed by the rule of the module docstring; ``doc_ids``: the
    document each item was restricted to, if any; ``grade``: step 4 (None: skipped). A first pass places the
    repeated texts in order, each seeing the places of the sure passages and of the repeated texts before it; each
    further pass (at most :data:`PASSES`, until nothing moves) places each again seeing every other passage's place,
    so a repeated text gives way to a later passage that needs the same text."""
    places = [resolver.places(item, doc_id) for item, doc_id in zip(found, doc_ids, strict=True)]
    placed: list[Span | None] = [item.span if len(p) < 2 else None for item, p in zip(found, places, strict=True)]
    repeated = [i for i, item in enumerate(found) if len(places[i]) >= 2 and item.text is not None]
    for _ in range(PASSES):
        moved = False
        for i in repeated:
            best = _best(i, places, placed, resolver=resolver, grade=grade)
            moved |= best != placed[i]
            placed[i] = best
        if not moved:
            break
    out = list(found)
    for i in repeated:
        where, item = placed[i], found[i]
        if where is not None and where != item.span and item.text is not None:
            out[i] = resolver.unit_at(where, item.text)
    return out


def _best(
    i: int, places: Sequence[list[Span]], placed: Sequence[Span | None], *, resolver: Resolver,
    grade: Grade | None,
) -> Span:  # fmt: skip
    """Steps 1-6 for the ``i``-th passage, the others where ``placed`` has them."""
    taken = [s for j, s in enumerate(placed) if j != i and s is not None]
    near = [q for j in (i - 1, i + 1) if 0 <= j < len(places) for q in _where(places[j], placed[j])]
    ranked = [
        (
            any(_overlap(p, q) for q in taken),  # 1
            not any(_touch(resolver, p, q) for q in near),  # 2
            not _meets(resolver, p),  # 3
            -(grade(p) if grade is not None else -1),  # 4
            _rank_distance(p.doc_id, i, placed),  # 5
            n,  # 6: the aligner's order
        )
        for n, p in enumerate(places[i])
    ]
    return places[i][min(ranked)[-1]]


def graded_by(resolver: Resolver, grades: dict[str, int]) -> Grade:
    """Step 3 for one question: ``grades`` ``{chunk_id: grade}`` of its graded golden chunks."""
    spans = [(span, g) for cid, g in sorted(grades.items()) if (span := resolver.chunk_span(cid)) is not None]

    def grade(place: Span) -> int:
        held = [g for s, g in spans if s.doc_id == place.doc_id and s.start < place.end and place.start < s.end]
        return max(held, default=-1)

    return grade


def _meets(resolver: Resolver, place: Span) -> bool:
    """Step 3: whether ``place`` starts or ends where a golden chunk does (nothing but spaces, punctuation or markup
    between)."""
    edges = resolver.chunk_edges(place.doc_id)
    text = resolver.golden.document(place.doc_id).text
    for at in (place.start, place.end):
        k = bisect.bisect_left(edges, at)
        near = [edges[j] for j in (k - 1, k) if 0 <= j < len(edges)]  # the nearest edge on each side
        if any(_blank(text, min(edge, at), max(edge, at)) for edge in near):
            return True
    return False


def _blank(text: str, lo: int, hi: int) -> bool:
    """Whether ``text[lo:hi]`` holds no letter or digit."""
    return not any(ch.isalnum() for ch in text[lo:hi])


def _overlap(a: Span, b: Span) -> bool:
    return a.doc_id == b.doc_id and a.start < b.end and b.start < a.end


def _where(places: list[Span], sure: Span | None) -> list[Span]:
    """Where a neighbour can be: its place when sure, else every place of its text."""
    return [sure] if sure is not None else places


def _touch(resolver: Resolver, a: Span, b: Span) -> bool:
    """Whether two places of one document overlap or have no letter or digit between them."""
    if a.doc_id != b.doc_id:
        return False
    lo, hi = min(a.end, b.end), max(a.start, b.start)
    return hi <= lo or _blank(resolver.golden.document(a.doc_id).text, lo, hi)


def _rank_distance(doc_id: str, i: int, sure: Sequence[Span | None]) -> int:
    """How far in rank the nearest sure passage in ``doc_id`` is (the line's length when none is)."""
    return min((abs(j - i) for j, s in enumerate(sure) if s is not None and s.doc_id == doc_id), default=len(sure))
