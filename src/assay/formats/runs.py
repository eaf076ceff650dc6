"""JSONL runs for ranking metrics, and a reader that tells TREC runs from JSONL runs by their content.

A JSONL run has one line per query: ``{"query_id": ..., "retrieved": [...]}`` where ``retrieved`` is a ranked list
of ids (``"c1"``) or of objects ``{"id": "c1", "score": 12.5}`` (other keys such as ``text``, ``answer`` and
``citations`` are ignored here). Without scores the list order is the ranking (synthetic descending scores keep it
exactly); with scores, every item of the line must have one and trec_eval's order applies (score descending, ties by
id descending). An optional assay header line (``{"assay": "runs", "version": 1}``) is accepted.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from assay.errors import FormatError
from assay.formats.jsonl import iter_json_lines
from assay.formats.trec import read_run, run_table, trec_order
from assay.metrics import MetricError, Run

__all__ = ["read_any_run", "read_jsonl_run", "sniff_run_format"]

EXPECTED = 'a line like {"query_id": "q1", "retrieved": ["c1", "c2"]} or with items {"id": "c1", "score": 0.9}'


def _item(path: Path, line: int, item: Any) -> tuple[str, float | None]:
    if isinstance(item, str):
        return item, None
    if isinstance(item, dict) and isinstance(item.get("id"), str):
        score = item.get("score")
        if score is None:
            return item["id"], None
        if isinstance(score, (int, float)) and not isinstance(score, bool) and not math.isnan(score):
            return item["id"], float(score)
        raise FormatError(path, line, f"score {score!r} of item {item['id']!r} is not a number", EXPECTED)
    raise FormatError(path, line, f"retrieved item {item!r} is neither an id nor an object with an 'id'", EXPECTED)


def _scored(path: Path, line: int, obj: dict[str, Any]) -> tuple[str, dict[str, float]]:
    """One line as (query id, {docid: score}), with synthetic scores n..1 when the line has none."""
    qid, retrieved = obj.get("query_id"), obj.get("retrieved")
    if not isinstance(qid, str) or not isinstance(retrieved, list):
        raise FormatError(path, line, "missing 'query_id' (a string) or 'retrieved' (a list)", EXPECTED)
    items = [_item(path, line, x) for x in retrieved]
    with_score = sum(score is not None for _, score in items)
    if 0 < with_score < len(items):
        raise FormatError(path, line, f"{with_score} of {len(items)} items have a score", "scores on all or none")
    n = len(items)
    docs = {doc: (score if score is not None else float(n - i)) for i, (doc, score) in enumerate(items)}
    if len(docs) != n:
        raise FormatError(
            path, line, f"document {_repeated(items)!r} is listed twice for query {qid!r}", "each id once"
        )
    return qid, docs


def _repeated(items: list[tuple[str, float | None]]) -> str:
    seen: set[str] = set()
    for doc, _ in items:
        if doc in seen:
            return doc
        seen.add(doc)
    return ""


def read_jsonl_run(path: str | Path) -> Run:
    """Read a JSONL run into a :class:`~assay.metrics.Run`; a query on two lines is an error."""
    source = Path(path)
    table: dict[str, dict[str, float]] = {}
    first_line: dict[str, int] = {}
    for line, obj in iter_json_lines(source, kind="runs", header="optional"):
        qid, docs = _scored(source, line, obj)
        if qid in table:
            raise FormatError(
                source, line, f"query {qid!r} again (first at line {first_line[qid]})", "one line per query"
            )
        table[qid], first_line[qid] = docs, line
    if not table:
        raise FormatError(source, None, "no run lines", EXPECTED)
    if max(map(len, table.values())) > 2**24:
        raise FormatError(source, None, "a ranked list longer than 16,777,216 items", "shorter lists")
    try:
        return Run.from_dict(table)
    except MetricError as exc:
        raise FormatError(source, None, str(exc), EXPECTED) from None


def sniff_run_format(path: str | Path) -> str:
    """``"jsonl"`` for a ``.jsonl`` / ``.ndjson`` file or when the first non-blank character is ``{``, else ``"trec"``
    (so a broken line in a ``.jsonl`` run is reported as bad JSON, not as a short TREC line)."""
    if Path(path).suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl"
    try:
        with Path(path).open("rb") as handle:
            head = handle.read(4096).lstrip()
    except OSError as exc:
        raise FormatError(path, None, f"cannot open: {exc.strerror}", "a readable run file") from None
    return "jsonl" if head.startswith(b"{") else "trec"


def read_any_run(path: str | Path) -> Run:
    """Read a TREC or JSONL run, whichever the content is."""
    return read_jsonl_run(path) if sniff_run_format(path) == "jsonl" else read_run(path)


def ranked_lists(run: Run) -> dict[str, list[str]]:
    """A run's documents per query in trec_eval's order (useful for printing and exports)."""
    return {q: [doc for doc, _ in trec_order(docs)] for q, docs in run_table(run).items()}
