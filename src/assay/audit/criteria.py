"""Judged criteria's verdicts queued for people, and people's labels of them, in the golden folder's label store.

A judged criterion is a model's reading of a team's words; it is measured against people before it is trusted. The
rule:

1. **Queued by the evaluation.** ``assay eval`` with a judged criterion adds each verdict's audit item to the store
   (:func:`queue_verdicts`): the item (:func:`assay.pipelines.evaluate.judging.criteria.criterion_item`, a digest of
   the criterion's version, the question and the inputs the judge saw), the criterion as people read it (its
   instructions, steps or decision tree, its labels ordered by declared score with their meaning), the inputs shown,
   and per run and judge the verdict: label (or why unscored) and every vote with its reason and tree walk. The same
   answer judged again, in any run or evaluation, is the same item; items and verdicts seen before are skipped.
2. **Labelled by people.** ``assay audit GOLDEN --criteria`` shows the items and a person picks a label of the
   scale with the keyboard (:func:`record_label`). Labels are events in ``criterion_events``, append-only like the
   relevance labels: a ``label`` pushes, an ``undo`` pops the label it names, and a person's current label of an item
   is the top of their stack (:func:`current_labels`).
3. **Compared.** One label per item for the evaluation (:func:`people_labels`: the lower median of the annotators'
   labels by scale position, as for relevance grades), which gives each criterion its agreement and PPI-corrected
   means (:mod:`assay.pipelines.evaluate.statistics.criteria`); :func:`audited_verdicts` pairs the judge's label with
   people's for ``assay agreement --criteria``.

The queue order is seeded and random within each criterion (:func:`queue_order`), so the first items audited are a
sample of the verdicts, as PPI assumes.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.audit.records import MAX_REASON, check_annotator
from assay.audit.store import LabelStore, _now
from assay.errors import AuditError
from assay.judge.criteria import Criterion
from assay.metrics.stats import Interval
from assay.pipelines.evaluate.statistics.criteria import label_agreement
from assay.results import CriterionVerdictRecord, rounded
from assay.text import canonical_json, content_hash

__all__ = [
    "CONFIDENCE",
    "AuditedVerdict",
    "CriterionEvent",
    "CriterionItem",
    "StoredVerdict",
    "agreement_report",
    "audited_verdicts",
    "criterion_item",
    "criterion_items",
    "current_labels",
    "describe",
    "people_labels",
    "queue_order",
    "queue_verdicts",
    "record_label",
    "undo_label",
]


CONFIDENCE = 0.95  # the level of assay agreement's intervals


@dataclass(frozen=True)
class StoredVerdict:
    """One run's verdict on an item by one judge (a panel's models joined by ``+``): its label or why it is
    unscored, and the votes (``model``, ``label``, ``reason``, ``steps``, ``unscored``)."""

    run: str
    judge: str
    label: str | None
    unscored: str | None
    votes: list[dict[str, Any]]


@dataclass(frozen=True)
class CriterionItem:
    """An audit item: the criterion as people read it (``about``: instructions, steps or tree, and ``labels`` in
    score order, each ``{"label", "score", "description"}``), the question, the inputs the judge saw, its verdicts."""

    item: str
    criterion: str
    ref: str
    query_id: str
    about: dict[str, Any]
    shown: dict[str, Any]
    verdicts: tuple[StoredVerdict, ...]

    @property
    def labels(self) -> list[str]:
        """The scale's labels, lowest declared score first."""
        return [one["label"] for one in self.about["labels"]]

    def judge_label(self) -> str | None:
        """The label of the first verdict stored (the first run's, the first judge's); None when it is unscored."""
        return self.verdicts[0].label if self.verdicts else None


@dataclass(frozen=True)
class CriterionEvent:
    """A person's label event (``label``) or the undoing of one (``undo``, ``undoes`` naming it; ``label`` the one
    restored, None when none)."""

    id: int
    kind: str
    item: str
    label: str | None
    reason: str | None
    annotator: str
    time: str
    undoes: int | None
    session: str | None


@dataclass(frozen=True)
class AuditedVerdict:
    """The judge's label beside one person's on an item (the judge's None when it left the item unscored)."""

    item: str
    criterion: str
    ref: str
    labels: tuple[str, ...]
    judge: str
    judge_label: str | None
    annotator: str
    human_label: str


def describe(criterion: Criterion) -> dict[str, Any]:
    """The criterion as people read it on the audit page: its description and instructions, its steps or decision
    tree, and its labels ordered by declared score with their meaning."""
    ordered = sorted(criterion.labels, key=lambda label: label.score)
    return {
        "description": criterion.description,
        "instructions": criterion.instructions,
        "steps": list(criterion.steps),
        "tree": [{"id": s.id, "question": s.question, "yes": s.yes, "no": s.no} for s in criterion.tree],
        "labels": [{"label": one.name, "score": one.score, "description": one.description} for one in ordered],
    }


def queue_verdicts(
    store: LabelStore,
    criteria: Sequence[Criterion],
    verdicts: Iterable[CriterionVerdictRecord],
    shown: Mapping[str, Mapping[str, Any]],
) -> int:
    """Step 1: add the verdicts' items (with ``shown``: item -> the inputs the judge saw) and the verdicts to the store;
    returns how many items are new. A verdict without an item, or of a criterion not in ``criteria``, is skipped."""
    by_ref = {one.ref: one for one in criteria if one.judged}
    added, now = 0, _now()
    with store.transaction() as conn:
        for v in verdicts:
            criterion = by_ref.get(v.ref)
            if v.item is None or criterion is None or v.item not in shown:
                continue
            cursor = conn.execute(
                "INSERT OR IGNORE INTO criterion_items (item, criterion, ref, query_id, scale, shown, added) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (v.item, v.criterion, v.ref, v.query_id, canonical_json(describe(criterion)),
                 canonical_json(dict(shown[v.item])), now),
            )  # fmt: skip
            added += cursor.rowcount
            votes = [vote.model_dump(mode="json") for vote in v.votes]
            judge = "+".join(vote.model for vote in v.votes) or "judge"
            conn.execute(
                "INSERT OR IGNORE INTO criterion_verdicts (item, run, judge, label, unscored, votes, time) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (v.item, v.run, judge, v.label, v.unscored, canonical_json(votes), now),
            )
    return added


def queue_order(items: Iterable[str], seed: int) -> list[str]:
    """``items`` in a seeded random order that does not depend on how they were given (a digest of seed and item)."""
    return sorted(set(items), key=lambda item: (content_hash(f"{seed}:{item}", 8), item))


def criterion_items(store: LabelStore, criterion: str | None = None) -> list[CriterionItem]:
    """Every queued item (of the criterion named ``criterion`` only), by criterion name then item, with its
    verdicts in the order stored."""
    with store.connect() as conn:
        query = "SELECT * FROM criterion_items" + (" WHERE criterion = ?" if criterion else "")
        rows = conn.execute(query + " ORDER BY criterion, item", (criterion,) if criterion else ()).fetchall()
        verdicts: dict[str, list[StoredVerdict]] = {}
        for row in conn.execute("SELECT * FROM criterion_verdicts ORDER BY rowid"):
            verdicts.setdefault(row["item"], []).append(_as_verdict(row))
    return [_as_item(row, verdicts.get(row["item"], [])) for row in rows]


def criterion_item(store: LabelStore, item: str) -> CriterionItem:
    """One queued item with its verdicts (ValueError when it is not queued): what a page request reads, rather than
    every item."""
    with store.connect() as conn:
        row = conn.execute("SELECT * FROM criterion_items WHERE item = ?", (item,)).fetchone()
        if row is None:
            raise ValueError(f"no criterion verdict {item!r} is queued in this golden set")
        found = conn.execute("SELECT * FROM criterion_verdicts WHERE item = ? ORDER BY rowid", (item,)).fetchall()
    return _as_item(row, [_as_verdict(one) for one in found])


def _as_verdict(row: sqlite3.Row) -> StoredVerdict:
    return StoredVerdict(row["run"], row["judge"], row["label"], row["unscored"], json.loads(row["votes"]))


def _as_item(row: sqlite3.Row, verdicts: list[StoredVerdict]) -> CriterionItem:
    return CriterionItem(row["item"], row["criterion"], row["ref"], row["query_id"], json.loads(row["scale"]),
                         json.loads(row["shown"]), tuple(verdicts))  # fmt: skip


def _scale(conn: sqlite3.Connection, item: str) -> list[str]:
    """The labels of ``item``'s criterion, lowest score first (ValueError when the item is not queued)."""
    row = conn.execute("SELECT scale FROM criterion_items WHERE item = ?", (item,)).fetchone()
    if row is None:
        raise ValueError(f"no criterion verdict {item!r} is queued in this golden set")
    return [str(one["label"]) for one in json.loads(row["scale"])["labels"]]


def record_label(
    store: LabelStore, item: str, label: Any, *, annotator: str, reason: Any = None, session: str | None = None
) -> CriterionEvent:
    """Step 2: a person's ``label`` of ``item``: one of its criterion's labels (case as the scale spells it; any case
    is read), with an optional ``reason`` of at most ``MAX_REASON`` characters (ValueError otherwise)."""
    check_annotator(annotator)
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
        raise ValueError(f"reason must be text of at most {MAX_REASON} characters")
    with store.transaction() as conn:
        names = _scale(conn, item)
        found = next((name for name in names if isinstance(label, str) and name.casefold() == label.casefold()), None)
        if found is None:
            raise ValueError(f"label must be one of {', '.join(names)}")
        cursor = conn.execute(
            "INSERT INTO criterion_events (kind, item, label, reason, annotator, time, session) "
            "VALUES ('label', ?, ?, ?, ?, ?, ?)",
            (item, found, reason or None, annotator, _now(), session),
        )
        return _event(conn, cursor.lastrowid)


def undo_label(store: LabelStore, annotator: str, *, session: str | None = None) -> CriterionEvent | None:
    """Undo ``annotator``'s latest label still in effect (None when there is none); the undo event carries the
    label it restores."""
    with store.transaction() as conn:
        events = _events(conn, annotator)
        stacks = _stacks(events)
        tops = [stack[-1] for stack in stacks.values() if stack]
        if not tops:
            return None
        latest = max(tops, key=lambda event: event.id)
        below = stacks[latest.item][-2].label if len(stacks[latest.item]) > 1 else None
        cursor = conn.execute(
            "INSERT INTO criterion_events (kind, item, label, annotator, time, undoes, session) "
            "VALUES ('undo', ?, ?, ?, ?, ?, ?)",
            (latest.item, below, annotator, _now(), latest.id, session),
        )
        return _event(conn, cursor.lastrowid)


def current_labels(
    store: LabelStore, annotator: str | None = None, item: str | None = None
) -> dict[str, dict[str, CriterionEvent]]:
    """Step 2's fold: item -> annotator -> the label event in effect (items with none left out); of one ``item`` only
    when given."""
    with store.connect() as conn:
        events = _events(conn, annotator, item)
    out: dict[str, dict[str, CriterionEvent]] = {}
    for who in sorted({event.annotator for event in events}):
        for key, stack in _stacks([e for e in events if e.annotator == who]).items():
            if stack:
                out.setdefault(key, {})[who] = stack[-1]
    return out


def people_labels(store: LabelStore, annotator: str | None = None) -> dict[str, str]:
    """Step 3: one label per audited item, the lower median of its annotators' labels by scale position."""
    current = current_labels(store, annotator)
    if not current:
        return {}
    scales = {one.item: one.labels for one in criterion_items(store)}
    out = {}
    for item, by_person in current.items():
        order = scales.get(item, [])
        positions = [order.index(e.label) for e in by_person.values() if e.label in order]
        if positions:
            out[item] = order[statistics.median_low(positions)]
    return out


def audited_verdicts(
    store: LabelStore, *, criterion: str | None = None, annotator: str | None = None
) -> list[AuditedVerdict]:
    """Per audited item and person, the judge's label beside theirs (the first verdict stored: the first run's, by
    the first judge that judged it), for ``assay agreement --criteria``."""
    current = current_labels(store, annotator)
    out = []
    for one in criterion_items(store, criterion):
        if one.item not in current or not one.verdicts:
            continue
        first = one.verdicts[0]
        for who, event in sorted(current[one.item].items()):
            if event.label is not None:
                out.append(AuditedVerdict(one.item, one.criterion, one.ref, tuple(one.labels), first.judge,
                                          first.label, who, event.label))  # fmt: skip
    return out


def agreement_report(
    store: LabelStore,
    *,
    annotator: str | None = None,
    criterion: str | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per criterion version, the judge's label (the first verdict stored) against people's (one per item, step 3;
    ``annotator``'s only when given): the statistic with its interval, exact agreement, the confusion matrix (rows the
    judge), the items compared and the audited items the judge left unscored. Criteria nobody audited are left out."""
    people = people_labels(store, annotator)
    by_ref: dict[str, list[CriterionItem]] = {}
    for one in criterion_items(store, criterion):
        if one.item in people and one.verdicts:
            by_ref.setdefault(one.ref, []).append(one)
    out = []
    for ref, items in sorted(by_ref.items()):
        labels = items[0].labels
        found = label_agreement(labels, [(one.judge_label(), people[one.item]) for one in items],
                                confidence=CONFIDENCE, n_resamples=n_resamples, seed=seed)  # fmt: skip
        out.append({
            "criterion": items[0].criterion, "ref": ref, "labels": labels, "judges": sorted({one.verdicts[0].judge
            for one in items}), "n": found.n, "judge_unscored": found.judge_unscored, "statistic": found.statistic,
            "kappa": _interval(found.kappa), "percent": _interval(found.percent), "confusion": found.confusion,
        })  # fmt: skip
    return out


def _interval(found: Interval | None) -> dict[str, float | None]:
    if found is None:  # nothing compared: every audited item left unscored by the judge
        return {"value": None, "low": None, "high": None}
    return {"value": rounded(found.mean), "low": rounded(found.low), "high": rounded(found.high)}


def _events(conn: sqlite3.Connection, annotator: str | None, item: str | None = None) -> list[CriterionEvent]:
    """The label events, oldest first, of one annotator and one item when given."""
    where = [(column, value) for column, value in (("annotator", annotator), ("item", item)) if value is not None]
    clause = " WHERE " + " AND ".join(f"{column} = ?" for column, _ in where) if where else ""
    rows = conn.execute(f"SELECT * FROM criterion_events{clause} ORDER BY id", [v for _, v in where])
    return [_as_event(row) for row in rows]


def _stacks(events: Sequence[CriterionEvent]) -> dict[str, list[CriterionEvent]]:
    """One annotator's label stacks per item: a label pushes, an undo pops the label it names."""
    stacks: dict[str, list[CriterionEvent]] = {}
    for event in events:
        stack = stacks.setdefault(event.item, [])
        if event.kind == "label":
            stack.append(event)
        elif stack and stack[-1].id == event.undoes:
            stack.pop()
    return stacks


def _event(conn: sqlite3.Connection, event_id: int | None) -> CriterionEvent:
    row = conn.execute("SELECT * FROM criterion_events WHERE id = ?", (event_id,)).fetchone()
    if row is None:  # pragma: no cover (the row was inserted in the same transaction)
        raise AuditError("a criterion label vanished while it was written")
    return _as_event(row)


def _as_event(row: sqlite3.Row) -> CriterionEvent:
    return CriterionEvent(**{key: row[key] for key in row.keys()})  # noqa: SIM118 (sqlite3.Row needs keys())
