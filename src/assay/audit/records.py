"""Records of the label store and the pure fold that turns an item's events into its current label.

An item is a (query_id, chunk_id) pair. Events fold per key: people by (item, annotator), judges by (item, model,
prompt), so that pointwise, listwise and repeated judge labels keep separate current labels. Folding a key's events
oldest first, a ``label`` event pushes, an ``undo`` event pops the event it names (only when that event is on top),
and the current label is the top of the stack: latest wins, undo restores the previous grade, history is kept.
A label's quotes (the sentences it says bear on the question) are part of it: they fold, and come back on undo, with
its grade.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from assay.errors import AuditError
from assay.types import LabelEvent, Question, RelevanceLabel

__all__ = [
    "ANNOTATOR_PATTERN",
    "HUMAN_ROLE",
    "JUDGE_ROLE",
    "MAX_REASON",
    "AuditedPair",
    "CurrentLabel",
    "FoldKey",
    "Item",
    "StoredEvent",
    "check_annotator",
    "current_of",
    "first_judge",
    "fold",
    "judge_event",
    "judge_events",
    "strata_of",
]

JUDGE_ROLE = "judge"
HUMAN_ROLE = "human"
FoldKey = tuple[str, str, str, str, str]
Item = tuple[str, str]


@dataclass(frozen=True)
class StoredEvent:
    """One row of the event log. ``kind`` is ``label`` or ``undo``; an undo names the event it undoes."""

    id: int
    kind: str
    query_id: str
    chunk_id: str
    grade: int | None
    reason: str | None
    source: str
    annotator: str
    prompt: str | None
    time: str
    undoes: int | None = None
    session: str | None = None
    queue: str | None = None
    quotes: tuple[str, ...] | None = None

    @property
    def role(self) -> str:
        return JUDGE_ROLE if self.source == "judge" else HUMAN_ROLE

    @property
    def fold_key(self) -> FoldKey:
        prompt = (self.prompt or "") if self.role == JUDGE_ROLE else ""
        return (self.query_id, self.chunk_id, self.role, self.annotator, prompt)


@dataclass(frozen=True)
class CurrentLabel:
    """The current label of one item for one annotator (or one judge model and prompt)."""

    query_id: str
    chunk_id: str
    grade: int | None
    reason: str | None
    source: str
    annotator: str
    prompt: str | None
    time: str
    event_id: int
    quotes: tuple[str, ...] | None = None

    @property
    def item(self) -> Item:
        return (self.query_id, self.chunk_id)


@dataclass(frozen=True)
class AuditedPair:
    """An item a person graded, with the judge's grade (None when the judge left it unscored) and its strata."""

    query_id: str
    chunk_id: str
    annotator: str
    judge_grade: int | None
    human_grade: int
    judge_prompt: str | None = None
    strata: dict[str, str] = field(default_factory=dict)


def fold(events: Iterable[StoredEvent]) -> dict[FoldKey, list[StoredEvent]]:
    """Fold events (oldest first) into one stack of label events per key: label pushes, undo pops its target."""
    stacks: dict[FoldKey, list[StoredEvent]] = {}
    for event in events:
        stack = stacks.setdefault(event.fold_key, [])
        if event.kind == "label":
            stack.append(event)
        elif stack and stack[-1].id == event.undoes:
            stack.pop()
    return stacks


def current_of(event: StoredEvent) -> CurrentLabel:
    return CurrentLabel(
        event.query_id,
        event.chunk_id,
        event.grade,
        event.reason,
        event.source,
        event.annotator,
        event.prompt,
        event.time,
        event.id,
        event.quotes,
    )


def first_judge(labels: Iterable[CurrentLabel], prompt: str | None = None) -> dict[Item, CurrentLabel]:
    """Per item, its judge label of ``prompt`` (of any prompt when None) imported first: the golden set's own."""
    chosen: dict[Item, CurrentLabel] = {}
    for lab in labels:
        if lab.source != "judge" or (prompt is not None and lab.prompt != prompt):
            continue
        if lab.item not in chosen or lab.event_id < chosen[lab.item].event_id:
            chosen[lab.item] = lab
    return chosen


def strata_of(questions: Mapping[str, Question] | None, query_id: str, judge_grade: int | None) -> dict[str, str]:
    strata = {"judge_grade": "unscored" if judge_grade is None else str(judge_grade)}
    question = questions.get(query_id) if questions else None
    if question is None:
        return strata
    strata["type"] = question.type
    strata["difficulty"] = question.difficulty or "unknown"
    for key, value in question.metadata.items():
        if isinstance(value, str | int | float | bool) and key not in strata:
            strata[key] = str(value)
    return strata


def judge_event(label: RelevanceLabel) -> LabelEvent:
    """The judge event of a qrels label (a panel's combined label included; its votes: :func:`judge_events`)."""
    prov = label.provenance
    reason = label.unscored.reason if label.unscored else prov.rationale
    return LabelEvent(
        query_id=label.query_id,
        chunk_id=label.chunk_id,
        grade=label.grade,
        reason=reason,
        source="judge",
        annotator=prov.model or prov.annotator or "judge",
        prompt=prov.prompt,
        time=prov.time,
        quotes=label.quotes or None,
    )


def judge_events(label: RelevanceLabel) -> list[LabelEvent]:
    """The label's judge event, then (for a label a panel combined) one per judge's vote, under that judge's model:
    the combined label comes first, so it is the item's first judge label (the one agreement and PPI read)."""
    votes = [
        LabelEvent(
            query_id=label.query_id,
            chunk_id=label.chunk_id,
            grade=vote.grade,
            reason=vote.unscored.reason if vote.unscored else vote.rationale,
            source="judge",
            annotator=vote.model,
            prompt=vote.prompt,
            time=label.provenance.time,
        )
        for vote in label.votes or ()
    ]
    return [judge_event(label), *votes]


ANNOTATOR_PATTERN = re.compile(r"^[A-Za-z0-9][\w.@+ -]{0,63}$")
MAX_REASON = 2000


def check_annotator(name: str) -> str:
    """An annotator name as given, or AuditError: 1-64 letters, digits, spaces and ``_ . @ + -``, not ``judge``."""
    if not ANNOTATOR_PATTERN.fullmatch(name) or name.strip().lower() == JUDGE_ROLE:
        raise AuditError(
            f"annotator name {name[:80]!r} is not allowed; use 1-64 letters, digits, spaces or _ . @ + - "
            "(and not 'judge'), e.g. --annotator alice"
        )
    return name.strip()
