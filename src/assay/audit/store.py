"""The audit label store: an append-only SQLite log of label events inside the golden folder.

Every label, from the judge or a person, is an event; nothing is updated or deleted. The current label of an item
(a (query_id, chunk_id) pair; the chunk id may name a judged passage of passages.jsonl, a span label) for one
annotator is a fold over that annotator's events for the item, oldest first: a ``label`` event pushes a grade, an
``undo`` event pops the label it names, and the current label is the top of the stack (latest wins). An undo is
itself an event that carries the grade it restores, so the history is complete.

Judge labels are keyed by (item, model, prompt) so that several judge prompts (pointwise, listwise, repeats) keep
separate current labels; people are keyed by (item, annotator name). Sources: ``judge`` (imported from the golden
set's qrels and passages on every open, idempotent: the import key is a hash of the label), ``human`` (the audit
page) and ``imported`` (a CSV edited in a spreadsheet). The schema has not changed for span labels: a passage id sits
in the ``chunk_id`` column. A label event carries its quotes (``quotes``, a JSON list; migration ``004_quotes``):
the judge's as its label gave them, a person's exactly as they saved them (:mod:`assay.audit.quoting`). People's
corrections of a conversation turn's rewrite are a table of their own (``rewrites``, append-only too;
:mod:`assay.audit.rewrites`).

The schema, as named migrations, is :mod:`assay.audit.schema`'s.

Concurrency: WAL journal, a busy timeout, one short connection per call and ``BEGIN IMMEDIATE`` around every write,
so two writers (threads or processes) serialise and neither loses a label.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from assay.audit.records import (
    HUMAN_ROLE,
    JUDGE_ROLE,
    AuditedPair,
    CurrentLabel,
    Item,
    StoredEvent,
    current_of,
    first_judge,
    fold,
    judge_events,
    strata_of,
)
from assay.audit.schema import MIGRATIONS
from assay.errors import AuditError
from assay.text import canonical_json, content_hash
from assay.types import LabelEvent, Question, RelevanceLabel

__all__ = ["STORE_NAME", "AuditedPair", "CurrentLabel", "LabelStore", "StoredEvent"]

STORE_NAME = "audit.sqlite"


class LabelStore:
    """The label store at ``path`` (usually ``GOLDEN/audit.sqlite``); created and migrated on first use."""

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._migrate()

    @classmethod
    def in_folder(cls, golden_dir: str | Path, *, timeout: float = 30.0) -> LabelStore:
        """The store of a golden folder (``audit.sqlite`` inside it)."""
        return cls(Path(golden_dir) / STORE_NAME, timeout=timeout)

    # -- connections and migrations -------------------------------------------------------------------------------

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection for reads (rows as ``sqlite3.Row``); the store's companions (audit/rewrites.py) use it too."""
        try:
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise AuditError(f"{self.path}: cannot open the label store ({exc}); check the folder is writable") from exc
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A connection inside ``BEGIN IMMEDIATE``: committed on success, rolled back on any error."""
        with self.connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _migrate(self) -> None:
        if not self.path.parent.is_dir():
            raise AuditError(f"{self.path.parent}: no such folder; pass the golden-set folder")
        with self.connect() as conn:
            conn.execute("PRAGMA journal_mode = WAL")
        with self.transaction() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
            applied = {row["name"] for row in conn.execute("SELECT name FROM migrations")}
            for name, sql in MIGRATIONS:
                if name in applied:
                    continue
                for statement in (s for s in sql.split(";") if s.strip()):
                    conn.execute(statement)
                conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, _now()))

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the store's write lock (``BEGIN IMMEDIATE``) around work outside the store that must not interleave
        with another writer's, such as rewriting passages.jsonl from the store's grades; other writers wait, readers
        do not."""
        with self.transaction():
            yield

    def migrations(self) -> list[str]:
        """Names of the applied migrations, in the order they were applied."""
        with self.connect() as conn:
            return [row["name"] for row in conn.execute("SELECT name FROM migrations ORDER BY rowid")]

    # -- writing --------------------------------------------------------------------------------------------------

    def import_judge_labels(self, labels: Iterable[RelevanceLabel]) -> int:
        """Add the judge labels of a golden set's qrels as ``judge`` events; labels seen before are skipped. A label
        a panel of judges combined adds one event more per judge's vote (under that judge's model).

        Returns the number of new events. Unscored labels become events with grade NULL and the unscored reason.
        """
        added = 0
        with self.transaction() as conn:
            for label in labels:
                key = content_hash(canonical_json(label.model_dump(mode="json")), 16)
                if conn.execute("SELECT 1 FROM imported WHERE key = ?", (key,)).fetchone():
                    continue
                events = judge_events(label)
                ids = [_insert(conn, event, kind="label", undoes=None, session=None, queue=None) for event in events]
                conn.execute("INSERT INTO imported VALUES (?, ?)", (key, ids[0]))
                added += len(ids)
        return added

    def record(self, event: LabelEvent, *, session: str | None = None, queue: str | None = None) -> StoredEvent:
        """Append one label event and return it as stored (with its id)."""
        _check_event(event)
        with self.transaction() as conn:
            event_id = _insert(conn, event, kind="label", undoes=None, session=session, queue=queue)
            return _stored(conn, event_id)

    def record_many(self, events: Iterable[LabelEvent], *, session: str | None = None) -> int:
        """Append several events in one transaction: all of them or none."""
        count = 0
        with self.transaction() as conn:
            for event in events:
                _check_event(event)
                _insert(conn, event, kind="label", undoes=None, session=session, queue=None)
                count += 1
        return count

    def undo(self, annotator: str, *, session: str | None = None) -> StoredEvent | None:
        """Undo ``annotator``'s latest label that is still in effect; None when there is nothing to undo.

        Appends an ``undo`` event naming the undone event and carrying the grade (and reason) it restores, which
        is the annotator's previous label of that item, or NULL when there was none.
        """
        with self.transaction() as conn:
            rows = conn.execute(
                "SELECT * FROM events WHERE annotator = ? AND source != 'judge' ORDER BY id", (annotator,)
            )
            stacks = fold(_row_event(row) for row in rows)
            tops = [stack[-1] for stack in stacks.values() if stack]
            if not tops:
                return None
            target = max(tops, key=lambda e: e.id)
            stack = stacks[target.fold_key]
            previous = stack[-2] if len(stack) > 1 else None
            restored = LabelEvent(
                query_id=target.query_id,
                chunk_id=target.chunk_id,
                grade=previous.grade if previous else None,
                reason=previous.reason if previous else None,
                quotes=list(previous.quotes) if previous and previous.quotes is not None else None,
                source=target.source,
                annotator=annotator,
                prompt=target.prompt,
            )
            event_id = _insert(conn, restored, kind="undo", undoes=target.id, session=session, queue=None)
            return _stored(conn, event_id)

    # -- reading --------------------------------------------------------------------------------------------------

    def events(self) -> list[StoredEvent]:
        """Every event, oldest first."""
        with self.connect() as conn:
            return [_row_event(row) for row in conn.execute("SELECT * FROM events ORDER BY id")]

    def history(self, query_id: str, chunk_id: str) -> list[StoredEvent]:
        """Every event of one item (all annotators and judges, undos included), oldest first."""
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT * FROM events WHERE query_id = ? AND chunk_id = ? ORDER BY id", (query_id, chunk_id)
            )
            return [_row_event(row) for row in rows]

    def item_labels(self, query_id: str, chunk_id: str) -> list[CurrentLabel]:
        """The current labels of one item (every annotator and judge prompt)."""
        stacks = fold(self.history(query_id, chunk_id))
        return [current_of(stack[-1]) for stack in stacks.values() if stack]

    def current_labels(
        self, *, source: str | None = None, annotator: str | None = None, role: str | None = None
    ) -> list[CurrentLabel]:
        """The current label of every (item, annotator) (and judge prompt), in item order.

        ``source`` keeps labels whose latest event has that source; ``role`` is ``judge`` or ``human`` (human and
        imported); ``annotator`` keeps one annotator. Items whose label was undone down to nothing are left out.
        """
        with self.connect() as conn:
            if annotator is None:
                rows = conn.execute("SELECT * FROM events ORDER BY id")
            else:  # the annotator is part of every fold key: fold only theirs (the page asks on every label)
                rows = conn.execute("SELECT * FROM events WHERE annotator = ? ORDER BY id", (annotator,))
            stacks = fold(_row_event(row) for row in rows)
        labels = [current_of(stack[-1]) for stack in stacks.values() if stack]
        if source is not None:
            labels = [lab for lab in labels if lab.source == source]
        if role is not None:
            labels = [lab for lab in labels if (lab.source == "judge") == (role == JUDGE_ROLE)]
        return sorted(labels, key=lambda lab: (lab.query_id, lab.chunk_id, lab.annotator, lab.prompt or ""))

    def items(self) -> list[Item]:
        """Every item that has a judge label, in the order the judge labels were imported."""
        with self.connect() as conn:
            rows = conn.execute("SELECT query_id, chunk_id, MIN(id) AS first FROM events GROUP BY 1, 2 ORDER BY 3")
            return [(row["query_id"], row["chunk_id"]) for row in rows]

    def annotators(self) -> list[str]:
        """Names of the people who have a current label, sorted."""
        return sorted({lab.annotator for lab in self.current_labels(role=HUMAN_ROLE) if lab.grade is not None})

    def audited_pairs(
        self,
        questions: Mapping[str, Question] | None = None,
        *,
        annotator: str | None = None,
        judge_prompt: str | None = None,
        one_per_item: bool = False,
    ) -> list[AuditedPair]:
        """Items a person graded, each with the judge's grade: the input of agreement statistics and PPI.

        The judge grade is the current label of ``judge_prompt`` when given, else of the first judge label imported
        for the item (the golden set's qrels); it is None when the judge left the item unscored (count those, do not
        score them). One pair per (item, annotator); with ``one_per_item`` several annotators of an item collapse
        to the lower median of their grades (annotator ``"consensus"``). ``strata`` holds the question's type and
        difficulty, the judge grade, and the question's scalar metadata, for per-stratum figures.
        """
        current = self.current_labels()
        judge = first_judge(current, judge_prompt)
        humans = [lab for lab in current if lab.source != "judge" and lab.grade is not None and lab.item in judge]
        if annotator is not None:
            humans = [lab for lab in humans if lab.annotator == annotator]
        grades: dict[Item, dict[str, int]] = {}
        for lab in humans:
            grades.setdefault(lab.item, {})[lab.annotator] = lab.grade  # type: ignore[assignment]
        pairs: list[AuditedPair] = []
        for item, by_person in sorted(grades.items()):
            judge_grade, prompt = judge[item].grade, judge[item].prompt
            strata = strata_of(questions, item[0], judge_grade)
            if one_per_item and len(by_person) > 1:
                rows = [("consensus", int(statistics.median_low(by_person.values())))]
            else:
                rows = sorted(by_person.items())
            for name, grade in rows:
                pairs.append(AuditedPair(item[0], item[1], name, judge_grade, grade, prompt, strata))
        return pairs

    # -- queues ---------------------------------------------------------------------------------------------------

    def saved_queue(self, annotator: str, queue: str, seed: int) -> list[Item] | None:
        """The recorded order of an annotator's queue, or None when no session used it yet."""
        with self.connect() as conn:
            session_id = _session_id(conn, annotator, queue, seed)
            return None if session_id is None else _session_items(conn, session_id)

    def save_queue(self, annotator: str, queue: str, seed: int, items: list[Item]) -> list[Item]:
        """Record a queue's order; if another process recorded it first, keep and return theirs, plus new items."""
        with self.transaction() as conn:
            session_id = _session_id(conn, annotator, queue, seed)
            if session_id is None:
                cursor = conn.execute(
                    "INSERT INTO sessions (annotator, queue, seed, created) VALUES (?, ?, ?, ?)",
                    (annotator, queue, seed, _now()),
                )
                session_id, known = cursor.lastrowid, []
            else:
                known = _session_items(conn, session_id)
            seen = set(known)
            fresh = [item for item in items if item not in seen]
            conn.executemany(
                "INSERT INTO session_items VALUES (?, ?, ?, ?)",
                [(session_id, len(known) + i, q, c) for i, (q, c) in enumerate(fresh)],
            )
            return known + fresh


def _session_id(conn: sqlite3.Connection, annotator: str, queue: str, seed: int) -> int | None:
    row = conn.execute(
        "SELECT id FROM sessions WHERE annotator = ? AND queue = ? AND seed = ?", (annotator, queue, seed)
    ).fetchone()
    return None if row is None else int(row["id"])


def _session_items(conn: sqlite3.Connection, session_id: int) -> list[Item]:
    rows = conn.execute(
        "SELECT query_id, chunk_id FROM session_items WHERE session_id = ? ORDER BY position", (session_id,)
    )
    return [(r["query_id"], r["chunk_id"]) for r in rows]


def _now() -> str:
    return datetime.now().astimezone().replace(microsecond=0).isoformat()


def _check_event(event: LabelEvent) -> None:
    if event.source == "judge":
        raise AuditError("judge labels come from the golden set's qrels; record human labels here (source='human')")
    if not event.annotator:
        raise AuditError(f"{event.query_id}/{event.chunk_id}: a human label needs an annotator name")


def _insert(
    conn: sqlite3.Connection,
    event: LabelEvent,
    *,
    kind: str,
    undoes: int | None,
    session: str | None,
    queue: str | None,
) -> int:
    cursor = conn.execute(
        "INSERT INTO events (kind, query_id, chunk_id, grade, reason, source, annotator, prompt, time, undoes,"
        " session, queue, quotes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            kind,
            event.query_id,
            event.chunk_id,
            event.grade,
            event.reason,
            event.source,
            event.annotator or "judge",
            event.prompt,
            event.time.isoformat(),
            undoes,
            session,
            queue,
            None if event.quotes is None else json.dumps(event.quotes, ensure_ascii=False),
        ),
    )
    return int(cursor.lastrowid or 0)


def _row_event(row: sqlite3.Row) -> StoredEvent:
    fields = {key: row[key] for key in row.keys()}  # noqa: SIM118 (sqlite3.Row needs keys())
    quotes = fields.pop("quotes", None)
    return StoredEvent(**fields, quotes=None if quotes is None else tuple(json.loads(quotes)))


def _stored(conn: sqlite3.Connection, event_id: int) -> StoredEvent:
    return _row_event(conn.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone())
