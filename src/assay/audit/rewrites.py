"""People's corrections of a conversation turn's standalone rewrite: kept in the store with provenance, written to
the golden set, and the labels graded against the old rewrite flagged as stale.

A turn's question (``questions.jsonl``) holds the turn's standalone rewrite as its text, and the relevance labels
are for that rewrite (TREC CAsT). On the audit page a person may correct it (key ``w``). The rule:

1. A correction is an event in the store's ``rewrites`` table (append-only): the question, its conversation, the text
   before and after, the reason, the annotator, the time, and the id of the store's latest label event at that
   moment (``after_event``). A turn's current rewrite is its latest correction, whoever made it; a turn without one
   keeps the generator's.
2. The current rewrites are written into the golden folder after each correction and whenever a store is opened:
   the question's text in questions.jsonl becomes the rewrite; the turn's ``rewrite_provenance`` in
   conversations.jsonl is source ``human``, the annotator, the reason as rationale, and the time; the question's
   ``flags["rewrite_corrected"]`` keeps the generator's rewrite (``previous``), and ``flags["stale_labels"]`` counts
   the question's items whose labels are stale (step 3) at the time of writing.
3. **Stale labels.** A label of an item (question, chunk) was graded against an earlier rewrite when the question's
   rewrite was corrected after the item's latest label event (judge or person): ``after_event`` >= that event's id.
   Such items are not kept silently as if nothing changed: the page marks them stale (on the item and in the queue)
   and puts them first when it builds an annotator's queue (at the page's start; a queue already open keeps its
   order so the position of a label in progress never moves). A person's grade after the correction, or a judge
   label imported later, makes the item current again.
4. **The two files move together.** A correction is committed in the store first (step 1, one SQLite transaction),
   then step 2 writes questions.jsonl and conversations.jsonl as one (:meth:`~assay.formats.golden.GoldenSet.update`
   with :func:`assay.formats.atomic.atomic_files`): both are staged beside their targets, a record of the two
   renames is written (the commit point), then both are renamed. A crash before the record leaves both old files,
   and the store's correction is written at the next opening of the store, and before ``assay run`` or ``assay eval
   --target`` asks a system (:func:`assay.audit.access.write_pending_rewrites`; step 2 again: it is idempotent); a
   crash between the renames leaves the record, and every load of the golden set
   (:meth:`~assay.formats.golden.GoldenSet.load`) finishes the renames before reading, or, in a folder it cannot
   write, refuses to read with the fix. So no reader sees a turn's text and its provenance disagree, and no
   correction is lost.

The order of events, not the clock, decides what is stale (step 3), so a wrong system clock cannot hide a stale label.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from assay.audit.records import MAX_REASON, Item
from assay.audit.store import LabelStore, _now
from assay.errors import AuditError
from assay.formats.golden import GoldenSet
from assay.types import Provenance

__all__ = [
    "MAX_REWRITE",
    "RewriteEvent",
    "current_rewrites",
    "join_rewrites",
    "record_rewrite",
    "rewrite_events",
    "stale_first",
    "stale_items",
]

MAX_REWRITE = 1000


@dataclass(frozen=True)
class RewriteEvent:
    """One correction of a turn's rewrite, as stored."""

    id: int
    query_id: str
    conversation_id: str
    previous: str
    text: str
    reason: str | None
    annotator: str
    time: str
    after_event: int
    session: str | None

    def provenance(self) -> Provenance:
        """The turn's ``rewrite_provenance`` once this correction is current."""
        return Provenance(
            source="human", annotator=self.annotator, rationale=self.reason, time=datetime.fromisoformat(self.time)
        )


def record_rewrite(
    store: LabelStore,
    *,
    query_id: str,
    conversation_id: str,
    previous: str,
    text: Any,
    annotator: str,
    reason: Any = None,
    session: str | None = None,
) -> RewriteEvent:
    """Append a correction of question ``query_id``'s rewrite (``previous``: its text now). ``text`` must be new,
    non-empty text of at most :data:`MAX_REWRITE` characters; ``reason`` at most ``MAX_REASON`` (ValueError)."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_REWRITE:
        raise ValueError(f"the rewrite must be non-empty text of at most {MAX_REWRITE} characters")
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
        raise ValueError(f"reason must be text of at most {MAX_REASON} characters")
    if text.strip() == previous:
        raise ValueError(f"{query_id}: the rewrite is unchanged")
    if not annotator:
        raise AuditError(f"{query_id}: a correction of a rewrite needs an annotator name")
    with store.transaction() as conn:
        after = conn.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0]
        cursor = conn.execute(
            "INSERT INTO rewrites (query_id, conversation_id, previous, text, reason, annotator, time, after_event,"
            " session) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (query_id, conversation_id, previous, text.strip(), reason or None, annotator, _now(), after, session),
        )
        row = conn.execute("SELECT * FROM rewrites WHERE id = ?", (cursor.lastrowid,)).fetchone()
        return _row(row)


def rewrite_events(store: LabelStore, query_id: str | None = None) -> list[RewriteEvent]:
    """Every correction (of one question with ``query_id``), oldest first."""
    with store.connect() as conn:
        if query_id is None:
            rows = conn.execute("SELECT * FROM rewrites ORDER BY id")
        else:
            rows = conn.execute("SELECT * FROM rewrites WHERE query_id = ? ORDER BY id", (query_id,))
        return [_row(row) for row in rows]


def current_rewrites(events: Iterable[RewriteEvent]) -> dict[str, RewriteEvent]:
    """Step 1: the latest correction per question."""
    return {event.query_id: event for event in sorted(events, key=lambda e: e.id)}


def stale_items(store: LabelStore, items: Iterable[Item]) -> set[Item]:
    """Step 3: the items among ``items`` whose labels were graded against an earlier rewrite of their question."""
    current = current_rewrites(rewrite_events(store))
    wanted = [item for item in items if item[0] in current]
    if not wanted:
        return set()
    latest: dict[Item, int] = {}
    for event in store.events():
        if event.query_id in current:
            latest[event.query_id, event.chunk_id] = event.id
    return {item for item in wanted if latest.get(item, 0) <= current[item[0]].after_event}


def stale_first(store: LabelStore, items: Sequence[Item]) -> list[Item]:
    """``items`` with the stale ones first, each part in its own order (step 3's queue rule)."""
    stale = stale_items(store, items)
    return [item for item in items if item in stale] + [item for item in items if item not in stale]


def join_rewrites(store: LabelStore, golden_dir: str | Path) -> int:
    """Step 2: write the store's current rewrites into ``golden_dir``'s questions.jsonl and conversations.jsonl;
    returns how many turns changed (0: the files are left untouched). Runs under the store's write lock."""
    folder = Path(golden_dir)
    with store.exclusive():
        events = rewrite_events(store)
        if not events:
            return 0
        golden = GoldenSet.load(folder)
        stale = stale_items(store, store.items())
        first = {e.query_id: e.previous for e in reversed(events)}  # the generator's rewrite: the first "previous"
        changed = 0
        for qid, event in current_rewrites(events).items():
            changed += _apply(golden, event, first[qid], sum(item[0] == qid for item in stale))
        if changed:
            golden.update(folder, ("questions", "conversations"))  # the files replaced together (step 4)
        return changed


def _apply(golden: GoldenSet, event: RewriteEvent, original: str, stale: int) -> int:
    found = golden.turn_of(event.query_id)
    if found is None or not found[0].turns[found[1]].judged:
        return 0  # the golden set was rebuilt without this turn (or with it as a context turn): nothing to write into
    turn = found[0].turns[found[1]]
    question = golden.question(event.query_id)
    corrected = {"previous": original, "annotator": event.annotator, "time": event.time}
    provenance = event.provenance()
    same = (
        question.text == event.text
        and turn.rewrite_provenance == provenance
        and question.flags.get("rewrite_corrected") == corrected
        and question.flags.get("stale_labels") == stale
    )
    if same:
        return 0
    question.text = event.text
    question.flags["rewrite_corrected"] = corrected
    question.flags["stale_labels"] = stale
    turn.rewrite_provenance = provenance
    return 1


def _row(row: sqlite3.Row) -> RewriteEvent:
    return RewriteEvent(**{key: row[key] for key in row.keys()})  # noqa: SIM118 (sqlite3.Row needs keys())
