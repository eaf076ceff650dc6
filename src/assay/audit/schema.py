"""The label store's SQLite schema, as named migrations: applied in order by :class:`~assay.audit.store.LabelStore`
on first use and recorded by name in its ``migrations`` table, so a store made by an older assay is brought up to
date when it is opened. A new migration is only ever appended; one already released is never edited.

``events`` is the append-only log of label events (``label`` and ``undo``), ``imported`` remembers which judge
labels were imported, ``sessions`` and ``session_items`` keep each annotator's seeded queue, ``rewrites`` the
people's corrections of a turn's rewrite; ``criterion_items``, ``criterion_verdicts`` and ``criterion_events`` hold the
judged criteria's verdicts queued for people and people's labels of them (:mod:`assay.audit.criteria`).
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]


# Named migrations, applied in order and recorded by name; a new one is only ever appended.
MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "001_events",
        """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('label', 'undo')),
            query_id TEXT NOT NULL,
            chunk_id TEXT NOT NULL,
            grade INTEGER CHECK (grade IS NULL OR grade BETWEEN -1 AND 3),
            reason TEXT,
            source TEXT NOT NULL CHECK (source IN ('generator', 'judge', 'human', 'imported')),
            annotator TEXT NOT NULL,
            prompt TEXT,
            time TEXT NOT NULL,
            undoes INTEGER REFERENCES events(id),
            session TEXT,
            queue TEXT
        );
        CREATE INDEX events_item ON events (query_id, chunk_id);
        CREATE INDEX events_annotator ON events (annotator);
        CREATE TABLE imported (key TEXT PRIMARY KEY, event_id INTEGER NOT NULL REFERENCES events(id));
        """,
    ),
    (
        "002_queues",
        """
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            annotator TEXT NOT NULL,
            queue TEXT NOT NULL,
            seed INTEGER NOT NULL,
            created TEXT NOT NULL,
            UNIQUE (annotator, queue, seed)
        );
        CREATE TABLE session_items (
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            position INTEGER NOT NULL,
            query_id TEXT NOT NULL,
            chunk_id TEXT NOT NULL,
            PRIMARY KEY (session_id, position)
        );
        """,
    ),
    (
        "003_rewrites",
        """
        CREATE TABLE rewrites (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            query_id TEXT NOT NULL,
            conversation_id TEXT NOT NULL,
            previous TEXT NOT NULL,
            text TEXT NOT NULL,
            reason TEXT,
            annotator TEXT NOT NULL,
            time TEXT NOT NULL,
            after_event INTEGER NOT NULL,
            session TEXT
        );
        CREATE INDEX rewrites_query ON rewrites (query_id);
        """,
    ),
    # a label's quotes as a JSON list of strings; NULL: the label says nothing finer than its grade
    ("004_quotes", "ALTER TABLE events ADD COLUMN quotes TEXT"),
    (
        "005_criteria",
        """
        CREATE TABLE criterion_items (
            item TEXT PRIMARY KEY,
            criterion TEXT NOT NULL,
            ref TEXT NOT NULL,
            query_id TEXT NOT NULL,
            scale TEXT NOT NULL,
            shown TEXT NOT NULL,
            added TEXT NOT NULL
        );
        CREATE INDEX criterion_items_ref ON criterion_items (ref);
        CREATE TABLE criterion_verdicts (
            item TEXT NOT NULL REFERENCES criterion_items(item),
            run TEXT NOT NULL,
            judge TEXT NOT NULL,
            label TEXT,
            unscored TEXT,
            votes TEXT NOT NULL,
            time TEXT NOT NULL,
            PRIMARY KEY (item, run, judge)
        );
        CREATE TABLE criterion_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('label', 'undo')),
            item TEXT NOT NULL REFERENCES criterion_items(item),
            label TEXT,
            reason TEXT,
            annotator TEXT NOT NULL,
            time TEXT NOT NULL,
            undoes INTEGER REFERENCES criterion_events(id),
            session TEXT
        );
        CREATE INDEX criterion_events_item ON criterion_events (item);
        """,
    ),
)
