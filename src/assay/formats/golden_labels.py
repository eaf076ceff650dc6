"""The rules of a golden set's labels: which label stands for a pair, and where the labels came from.

A pair with labels from several sources takes a scored label before an unscored one, then the first source in
:data:`SOURCE_PRECEDENCE`, then the newer label (:func:`standing_labels`); :func:`merge_labels` keeps one label per
(question, chunk, source), the newest; :func:`label_origin` names the origin of a set's labels. Used by
:class:`assay.formats.golden.GoldenSet`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from assay.types import LabelSource, RelevanceLabel

__all__ = ["MACHINE_SOURCES", "SOURCE_PRECEDENCE", "LabelOrigin", "label_origin", "merge_labels", "standing_labels"]

# When a (question, chunk) pair has labels from several sources, qrels use the first source in this order.
SOURCE_PRECEDENCE: tuple[LabelSource, ...] = ("human", "imported", "judge", "generator")
# Where a golden set's labels came from, by their provenance: people (human; imported: brought from elsewhere, e.g.
# assessors' qrels imported without --source human), a machine (judge, generator), both (mixed), or none at all.
LabelOrigin = Literal["human", "imported", "judge", "mixed", "none"]
MACHINE_SOURCES: frozenset[str] = frozenset({"judge", "generator"})


def label_origin(sources: Iterable[str]) -> LabelOrigin:
    """``judge`` when every label is a machine's (judge or generator), ``human`` when every one is a person's,
    ``imported`` when every one came from elsewhere (some of them without ``source human``), ``mixed`` when
    machine and other labels meet, ``none`` without a label."""
    present = set(sources)
    machine, other = present & MACHINE_SOURCES, present - MACHINE_SOURCES
    if machine and other:
        return "mixed"
    if machine:
        return "judge"
    if other:
        return "human" if other == {"human"} else "imported"
    return "none"


def merge_labels(into: list[RelevanceLabel], labels: Iterable[RelevanceLabel]) -> int:
    """Add ``labels`` to ``into``, one per (query_id, chunk_id, source): the newest by ``provenance.time`` (on equal
    times the one added last); how many were new or replaced one."""
    index = {(q.query_id, q.chunk_id, q.provenance.source): i for i, q in enumerate(into)}
    changed = 0
    for label in labels:
        key = (label.query_id, label.chunk_id, label.provenance.source)
        at = index.get(key)
        if at is None:
            index[key] = len(into)
            into.append(label)
            changed += 1
        elif label.provenance.time >= into[at].provenance.time:
            into[at] = label
            changed += 1
    return changed


def standing_labels(labels: Iterable[RelevanceLabel]) -> dict[tuple[str, str], RelevanceLabel]:
    """The label that stands for each (query_id, chunk_id) among ``labels``: see :meth:`GoldenSet.standing`."""
    rank: dict[str, int] = {name: i for i, name in enumerate(SOURCE_PRECEDENCE)}
    chosen: dict[tuple[str, str], RelevanceLabel] = {}
    for label in labels:
        key = (label.query_id, label.chunk_id)
        old = chosen.get(key)
        if old is None or _better(label, old, rank):
            chosen[key] = label
    return chosen


def _better(new: RelevanceLabel, old: RelevanceLabel, rank: dict[str, int]) -> bool:
    """Whether ``new`` should stand for its pair instead of ``old``: scored beats unscored, then source precedence,
    then the newer label."""
    if (new.grade is None) != (old.grade is None):
        return old.grade is None
    new_rank, old_rank = rank.get(new.provenance.source, 99), rank.get(old.provenance.source, 99)
    if new_rank != old_rank:
        return new_rank < old_rank
    return new.provenance.time >= old.provenance.time
