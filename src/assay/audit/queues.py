"""The order in which items are shown for audit: seeded, and recorded in the store so a session resumes unchanged.

Three queues over the items the judge labelled:

``stratified``
    Items grouped by the judge's grade (0, 1, 2, 3, and unscored), each group shuffled; then taken one per group in
    rounds, the order within a round shuffled too, so every prefix of the queue holds an equal share of each grade
    (until a grade runs out) and the position of an item says nothing about its judge grade (blind mode).
``disagreement``
    First the items where people disagree (two annotators gave different grades) or judge prompts disagree (two
    judge labels of the item differ), shuffled; then the rest in stratified order.
``uncertainty``
    First the items whose judge labels are uncertain: several judge labels that disagree (pointwise against
    listwise, or repeats), or a judge label left unscored; most uncertain first (largest spread between judge
    grades, an unscored label counting as a spread of 1), ties shuffled; then the rest in stratified order.

The default queue (:func:`default_queue`) is ``disagreement`` when judges disagree on some item (the votes of a
panel of judges, imported as one judge label each, or two judge prompts), else ``stratified``: where a panel's
judges disagree, people look first.

Items of questions that people must confirm first (a build from real questions: a drafted reference, or no chunk
graded 2 or more; :func:`confirm_first`) lead every queue, in the queue's own order among themselves.

An item's order is computed once per (annotator, queue, seed) and saved; items added to the golden set later are
appended at the end, so labels in progress never move.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from assay.audit.records import CurrentLabel, Item, first_judge
from assay.audit.store import LabelStore
from assay.errors import AuditError

__all__ = [
    "QUEUES",
    "check_queue",
    "confirm_first",
    "default_queue",
    "disagreement",
    "order",
    "queue_for",
    "stratified",
    "uncertainty",
]

_UNSCORED = 99


def stratified(labels: list[CurrentLabel], seed: int) -> list[Item]:
    """All judged items, equal share per judge grade in every prefix (see the module docstring)."""
    rng = random.Random(seed)
    groups: dict[int, list[Item]] = {}
    for item, grade in sorted(_judge_grade(labels).items()):
        groups.setdefault(_UNSCORED if grade is None else grade, []).append(item)
    pools = [groups[key] for key in sorted(groups)]
    for pool in pools:
        rng.shuffle(pool)
    ordered: list[Item] = []
    while any(pools):
        round_ = [pool.pop() for pool in pools if pool]
        rng.shuffle(round_)
        ordered.extend(round_)
    return ordered


def _grades(labels: list[CurrentLabel]) -> dict[Item, tuple[set[int], set[int]]]:
    """Per item, the distinct scored grades of people and of judges."""
    by_item: dict[Item, tuple[set[int], set[int]]] = {}
    for lab in labels:
        if lab.grade is None:
            continue
        humans, judges = by_item.setdefault(lab.item, (set(), set()))
        (judges if lab.source == "judge" else humans).add(lab.grade)
    return by_item


def disagreement(labels: list[CurrentLabel], seed: int) -> list[Item]:
    """Items where annotators or judges (a panel's judges, or judge prompts) disagree first, then the rest
    stratified."""
    by_item = _grades(labels)
    disputed = sorted(item for item, (humans, judges) in by_item.items() if len(humans) > 1 or len(judges) > 1)
    return _first(disputed, labels, seed)


def default_queue(labels: list[CurrentLabel]) -> str:
    """``disagreement`` when judges disagree on some item, else ``stratified``."""
    return "disagreement" if any(len(judges) > 1 for _, judges in _grades(labels).values()) else "stratified"


def uncertainty(labels: list[CurrentLabel], seed: int) -> list[Item]:
    """Items with disagreeing or unscored judge labels first (largest spread first), then the rest stratified."""
    grades: dict[Item, list[int | None]] = {}
    for lab in labels:
        if lab.source == "judge":
            grades.setdefault(lab.item, []).append(lab.grade)
    spread: dict[Item, int] = {}
    for item, values in grades.items():
        scored = [g for g in values if g is not None]
        width = max(scored) - min(scored) if scored else 0
        spread[item] = max(width, 1 if None in values else 0)
    rng = random.Random(seed)
    uncertain = sorted(item for item, s in spread.items() if s > 0)
    keys = {item: (-spread[item], rng.random()) for item in uncertain}
    return _first(sorted(uncertain, key=keys.__getitem__), labels, seed, shuffle=False)


QUEUES: dict[str, Callable[[list[CurrentLabel], int], list[Item]]] = {
    "stratified": stratified,
    "disagreement": disagreement,
    "uncertainty": uncertainty,
}


def check_queue(queue: str) -> str:
    """``queue`` when it names a queue, else AuditError listing the queues."""
    if queue not in QUEUES:
        raise AuditError(f"unknown queue {queue!r}; choose one of: {', '.join(QUEUES)}")
    return queue


def order(queue: str, labels: list[CurrentLabel], seed: int) -> list[Item]:
    """The items of ``queue`` in order; AuditError for an unknown queue name."""
    return QUEUES[check_queue(queue)](labels, seed)


def confirm_first(flags: dict[str, dict[str, object]]) -> set[str]:
    """Question ids (from question id -> flags) whose items lead the queue: a drafted reference answer or drafted
    reference tool calls, or unanswerable from the corpus."""
    return {qid for qid, f in flags.items()
            if f.get("drafted") or f.get("drafted_tool_calls") or f.get("unanswerable_from_corpus")}  # fmt: skip


def queue_for(store: LabelStore, annotator: str, queue: str, seed: int, first: set[str] | None = None) -> list[Item]:
    """The annotator's queue: its saved order when a session used it before, else computed now and saved; items of
    the questions in ``first`` lead (a stable partition of the queue's order)."""
    fresh = order(queue, store.current_labels(), seed)
    if first:
        fresh = [i for i in fresh if i[0] in first] + [i for i in fresh if i[0] not in first]
    return store.save_queue(annotator, queue, seed, fresh)


def _judge_grade(labels: list[CurrentLabel]) -> dict[Item, int | None]:
    """Per judged item, the grade of its first imported judge label (None when unscored)."""
    return {item: lab.grade for item, lab in first_judge(labels).items()}


def _first(head: list[Item], labels: list[CurrentLabel], seed: int, *, shuffle: bool = True) -> list[Item]:
    judged = _judge_grade(labels)
    head = [item for item in head if item in judged]
    if shuffle:
        random.Random(seed).shuffle(head)
    chosen = set(head)
    return head + [item for item in stratified(labels, seed) if item not in chosen]
