"""The audit page's criteria view (``assay audit GOLDEN --criteria``): judged criteria's verdicts, one at a time, for
people to label with the keyboard (the store's side is :mod:`assay.audit.criteria`).

Routes (added to the audit app; ``?annotator=NAME`` on GETs, ``"annotator"`` in POST bodies, as the relevance view)::

    GET  /criteria                  the page (``criteria.html``)
    GET  /api/criteria/queue        the annotator's queue: per item its criterion, question and the annotator's label
    GET  /api/criteria/item?i=N     item N: the criterion as people read it (instructions, steps or decision tree,
                                    labels in score order with their meaning), what the judge saw (question, answer,
                                    passages, reference answer, nuggets, history: the inputs the criterion names),
                                    the judge's verdicts (label, each vote's reason and tree walk; hidden in blind
                                    mode until the annotator labelled it), the annotator's label and others'
    POST /api/criteria/label        {"i", "label" | "accept_judge": true, "reason"?}: record the annotator's label
    POST /api/criteria/undo         undo the annotator's latest criterion label still in effect

The queue: the items of each criterion in turn (by name), in a seeded random order within it
(:func:`assay.audit.criteria.queue_order`), so the first items audited are a sample of the verdicts.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from assay.audit.criteria import (
    CriterionEvent,
    CriterionItem,
    criterion_item,
    criterion_items,
    current_labels,
    queue_order,
    record_label,
    undo_label,
)
from assay.audit.store import LabelStore

__all__ = ["CriteriaState"]


class CriteriaState:
    """What the criteria view serves: the store's queued verdicts and each annotator's queue over them."""

    def __init__(self, store: LabelStore, *, blind: bool, seed: int, criterion: str | None = None) -> None:
        self.store, self.blind, self.seed, self.criterion = store, blind, seed, criterion
        self._lock = threading.Lock()
        self._order: list[str] | None = None

    def _items(self) -> dict[str, CriterionItem]:
        return {one.item: one for one in criterion_items(self.store, self.criterion)}

    def order(self) -> list[str]:
        """The queue (module doc), the same for every annotator; built once, so a position never moves."""
        with self._lock:
            if self._order is None:
                by_name: dict[str, list[str]] = {}
                for one in self._items().values():
                    by_name.setdefault(one.criterion, []).append(one.item)
                self._order = [item for name in sorted(by_name) for item in queue_order(by_name[name], self.seed)]
            return self._order

    def item_at(self, raw: Any) -> tuple[int, str]:
        order = self.order()
        if isinstance(raw, bool) or not isinstance(raw, int | str) or not str(raw).isdigit():
            raise ValueError("i must be an item number")
        if int(raw) >= len(order):
            raise ValueError(f"item {int(raw)} is outside the queue of {len(order)} items")
        return int(raw), order[int(raw)]

    def _mine(self, annotator: str) -> dict[str, CriterionEvent]:
        return {item: by[annotator] for item, by in current_labels(self.store, annotator).items() if annotator in by}

    def progress(self, annotator: str) -> dict[str, Any]:
        mine, order = self._mine(annotator), self.order()
        return {"done": sum(item in mine for item in order), "total": len(order)}

    def queue_view(self, annotator: str) -> dict[str, Any]:
        mine, items = self._mine(annotator), self._items()
        rows = [_row(i, items[item], mine.get(item)) for i, item in enumerate(self.order()) if item in items]
        settings = {"annotator": annotator, "seed": self.seed, "blind": self.blind}
        return {**settings, "items": rows, "progress": self.progress(annotator)}

    def item_view(self, annotator: str, index: int, item: str) -> dict[str, Any]:
        one = criterion_item(self.store, item)
        labels = current_labels(self.store, item=item).get(item, {})
        mine = labels.get(annotator)
        hidden = self.blind and mine is None
        verdicts = [
            {"run": v.run, "judge": v.judge, "label": v.label, "unscored": v.unscored, "votes": v.votes}
            for v in one.verdicts
        ]
        others = [
            {"annotator": who, "label": e.label, "reason": e.reason} for who, e in labels.items() if who != annotator
        ]
        return {
            "i": index, "item": item, "criterion": one.criterion, "ref": one.ref, "query_id": one.query_id,
            "about": one.about, "shown": one.shown, "judge_hidden": hidden, "verdicts": [] if hidden else verdicts,
            "mine": _label(mine), "others": [] if hidden else others,
        }  # fmt: skip

    def label(self, annotator: str, body: Mapping[str, Any]) -> dict[str, Any]:
        index, item = self.item_at(body.get("i"))
        label = self._judge_label(annotator, item) if body.get("accept_judge") is True else body.get("label")
        record_label(self.store, item, label, annotator=annotator, reason=body.get("reason"),
                     session=f"page:criteria:{self.seed}")  # fmt: skip
        return {"item": self.item_view(annotator, index, item), "progress": self.progress(annotator)}

    def _judge_label(self, annotator: str, item: str) -> str:
        if self.blind and annotator not in current_labels(self.store, annotator, item).get(item, {}):
            raise ValueError("blind mode: label the item yourself first; the judge's label shows after that")
        judge = criterion_item(self.store, item).judge_label()
        if judge is None:
            raise ValueError("the judge left this item unscored; label it yourself")
        return judge

    def undo(self, annotator: str) -> dict[str, Any]:
        event = undo_label(self.store, annotator, session=f"page:criteria:{self.seed}")
        order = self.order()
        index = order.index(event.item) if event is not None and event.item in order else None
        return {"undone": event is not None, "i": index, "progress": self.progress(annotator)}


def _row(index: int, one: CriterionItem, mine: CriterionEvent | None) -> dict[str, Any]:
    """A queue row: the item, its criterion and question, the annotator's label (None: not labelled)."""
    return {"i": index, "item": one.item, "criterion": one.criterion, "query_id": one.query_id,
            "label": mine.label if mine is not None else None}  # fmt: skip


def _label(event: CriterionEvent | None) -> dict[str, Any] | None:
    if event is None:
        return None
    return {"label": event.label, "reason": event.reason, "time": event.time}
