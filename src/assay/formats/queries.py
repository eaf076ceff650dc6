"""Read a user's own questions for ``assay build --queries FILE``: a query log in one of four shapes.

* **plain text** (any other extension): one question per line. A blank line is an error naming the file and line
  (a log with holes is usually a log cut or joined wrongly; remove the blank lines to proceed); a final newline is
  fine.
* **CSV** (``.csv``, ``.tsv``): a header row with a question column (``question``, ``query`` or ``text``), and
  optionally ``id`` (or ``query_id``), ``timestamp`` (or ``time``) and ``count``. A quote never closed, or one
  that swallows a line reading as a row of its own, is an error at the line where it opened
  (:mod:`~assay.formats.csv_rows`), never two rows merged into one question.
* **JSONL** (``.jsonl``, ``.json``, ``.ndjson``): one object per line with ``question`` (or ``query`` / ``text``),
  optional ``id`` (or ``query_id``), ``timestamp`` and ``count``. A run file written by ``assay import traces`` is
  JSONL too: its header line is skipped and each line's ``question`` and ``trace_id`` (the id) are read.

``count`` (default 1) is how many times the question was asked; it must be a whole number of at least 1. Every
malformed line raises :class:`~assay.errors.FormatError` naming the file and line, before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.formats.csv_rows import csv_rows
from assay.formats.jsonl import is_header

__all__ = ["LoggedQuery", "read_queries"]

_QUESTION_KEYS = ("question", "query", "text")
_ID_KEYS = ("id", "query_id", "trace_id")
_TIME_KEYS = ("timestamp", "time")
_CSV = {".csv": ",", ".tsv": "\t"}
_JSONL = (".jsonl", ".json", ".ndjson")


@dataclass(frozen=True)
class LoggedQuery:
    """One line of a query log: the question as asked, its id (when the log has one), how often it was asked,
    when, and the line it came from."""

    text: str
    line: int
    id: str | None = None
    count: int = 1
    timestamp: str | None = None


def read_queries(path: str | Path) -> list[LoggedQuery]:
    """Every question of the log at ``path`` (see the module docstring for the shapes), in file order."""
    source = Path(path)
    if not source.is_file():
        raise InputError(f"{source}: no such query file (give --queries a text, CSV or JSONL file)")
    suffix = source.suffix.lower()
    if suffix in _CSV:
        out = list(_csv_queries(source, _CSV[suffix]))
    elif suffix in _JSONL:
        out = list(_jsonl_queries(source))
    else:
        out = list(_text_queries(source))
    if not out:
        raise InputError(f"{source}: the query file holds no question")
    return out


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(path, None, f"not UTF-8 text ({exc.reason})", "a UTF-8 text file") from None
    lines = text.splitlines()
    return lines


def _text_queries(path: Path) -> Iterator[LoggedQuery]:
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            raise FormatError(path, number, "an empty line", "one question per line (remove the blank lines)")
        yield LoggedQuery(text=line.strip(), line=number)


def _jsonl_queries(path: Path) -> Iterator[LoggedQuery]:
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            raise FormatError(path, number, "an empty line", "one JSON object per line")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(path, number, f"not JSON ({exc.msg})", "one JSON object per line") from None
        if number == 1 and is_header(obj):
            continue
        if not isinstance(obj, dict):
            raise FormatError(path, number, f"a JSON {type(obj).__name__}", 'an object like {"question": "..."}')
        yield _record(path, number, obj)


def _csv_queries(path: Path, delimiter: str) -> Iterator[LoggedQuery]:
    rows = csv_rows(path, "\n".join(_lines(path)), delimiter)
    header = [h.strip().lower() for h in next(rows, (1, []))[1]]
    if not any(key in header for key in _QUESTION_KEYS):
        raise FormatError(path, 1, f"no question column in the header {header}", "a column named question")
    for number, row in rows:
        if not any(cell.strip() for cell in row):
            raise FormatError(path, number, "an empty row", "one question per row")
        if len(row) != len(header):
            raise FormatError(path, number, f"{len(row)} fields", f"{len(header)} fields, as in the header")
        yield _record(path, number, dict(zip(header, row, strict=True)))


def _first(obj: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((obj[key] for key in keys if obj.get(key) not in (None, "")), None)


def _record(path: Path, number: int, obj: Mapping[str, Any]) -> LoggedQuery:
    text = _first(obj, _QUESTION_KEYS)
    if not isinstance(text, str) or not text.strip():
        raise FormatError(path, number, "no question", 'a non-empty "question" field')
    ident, stamp = _first(obj, _ID_KEYS), _first(obj, _TIME_KEYS)
    return LoggedQuery(
        text=" ".join(text.split()),
        line=number,
        id=None if ident is None else str(ident),
        count=_count(path, number, obj.get("count")),
        timestamp=None if stamp is None else str(stamp),
    )


def _count(path: Path, number: int, value: Any) -> int:
    if value is None or value == "":
        return 1
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = 0
    if isinstance(value, bool) or count < 1 or str(count) != str(value).strip():
        raise FormatError(path, number, f"count {value!r}", "a whole number of at least 1")
    return count
