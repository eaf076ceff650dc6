"""The audit: people review the judge's labels on a local page, their labels kept in an append-only store beside
the golden set, and agreement between judge and people computed from them.

Modules, one line each:

- ``_golden``: the parts of a golden set the audit needs, indexed by id.
- ``access``: open a golden folder's label store with its judge labels imported; read the audited pairs.
- ``agreement``: judge-versus-human agreement, overall and per stratum, as JSON-ready data.
- ``app``: the audit page (plain JavaScript over a small JSON API, served by starlette on loopback).
- ``criteria``: judged criteria's verdicts queued for people, people's labels of them, and their agreement.
- ``criteria_page``: the page's criteria view: verdicts labelled with the keyboard.
- ``exchange``: labels in and out of the store (event log as JSONL, current labels as CSV, an edited CSV back in).
- ``pool``: people's grades of spans written into ``passages.jsonl``.
- ``queues``: the seeded order in which items are shown, recorded so a session resumes unchanged.
- ``quoting``: where a label's quotes stand in the text, and what a person's quotes must be.
- ``records``: the store's records and the pure fold of an item's events into its current label.
- ``rewrites``: people's corrections of a turn's standalone rewrite, and the labels they make stale.
- ``schema``: the store's SQLite schema as named migrations, applied in order on first use.
- ``security``: the page's guard (allowed hosts, CSRF token, same-origin check, size limits).
- ``spans``: what the page shows for a span label: the passage inside its document.
- ``store``: the append-only SQLite log of label events inside the golden folder.
- ``tables``: rich tables for ``assay agreement``.
"""
