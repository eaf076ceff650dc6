"""Labels in and out of the store: the event log as JSONL, current human labels as CSV, and a CSV edited back in.

The CSV has the columns ``query_id, chunk_id, grade, reason, annotator, quotes`` followed by read-only context
columns (``judge_grade, judge_reason, question, chunk_text``) that the import ignores. ``quotes`` holds the label's
quotes, one per line of the cell (the sentences of the chunk that bear on the question); they are imported by the
page's rule (:mod:`assay.audit.quoting`: each must stand in the chunk's text, none on a grade 0), and a file without
that column says nothing about quotes (its rows carry none, and a row is unchanged on its grade and reason alone).
A spreadsheet round trip: export, fill or change grades, save as CSV (UTF-8; comma, semicolon or tab separated),
import. The import checks every row
first and writes nothing unless all rows are valid; a row with an empty grade is skipped, and a row equal to the
annotator's current label adds no event, so importing the same file twice changes nothing. A ``chunk_id`` may name
a judged passage (a span label, ``p:...`` or ``t:...``); its ``chunk_text`` is the passage's text, and its imported
grades join the pool in passages.jsonl (:func:`assay.audit.pool.join_pool`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from assay.audit._golden import GoldenView
from assay.audit.pool import join_pool
from assay.audit.quoting import item_text, person_quotes
from assay.audit.records import MAX_REASON, CurrentLabel, Item, check_annotator, first_judge
from assay.audit.store import LabelStore
from assay.errors import AuditError, FormatError
from assay.formats.atomic import atomic_write
from assay.formats.csv_rows import csv_rows
from assay.formats.tabular import neutralize
from assay.types import LabelEvent

__all__ = ["CSV_COLUMNS", "ImportResult", "export_csv", "export_jsonl", "import_csv"]

CSV_COLUMNS = ("query_id", "chunk_id", "grade", "reason", "annotator", "quotes")
CONTEXT_COLUMNS = ("judge_grade", "judge_reason", "question", "chunk_text")
_MAX_ERRORS = 20


@dataclass(frozen=True)
class ImportResult:
    """What an import did: events added, rows skipped for an empty grade, rows equal to the current label."""

    added: int
    blank: int
    unchanged: int


def export_jsonl(store: LabelStore, path: str | Path) -> int:
    """Write every event (undos included) as versioned JSONL; returns the number of events."""
    events = store.events()
    with atomic_write(path) as handle:
        handle.write(json.dumps({"assay": "label-events", "version": 1}) + "\n")
        for event in events:
            handle.write(json.dumps(event.__dict__, ensure_ascii=False, sort_keys=True) + "\n")
    return len(events)


def export_csv(
    store: LabelStore,
    path: str | Path,
    golden: GoldenView | None = None,
    *,
    annotator: str | None = None,
    include_unlabelled: bool = False,
) -> int:
    """Write the current human labels (one annotator's, or everyone's) as CSV; returns the number of rows.

    With ``include_unlabelled`` (needs ``annotator``) every judged item gets a row, with an empty grade where the
    annotator has no label yet: a sheet to fill in.
    """
    if include_unlabelled and annotator is None:
        raise AuditError("an empty sheet to fill in is per person; pass the annotator (--annotator NAME)")
    labels = [lab for lab in store.current_labels(role="human", annotator=annotator) if lab.grade is not None]
    judges = first_judge(store.current_labels(role="judge"))
    rows = [(lab.item, lab.grade, lab.reason, lab.annotator, lab.quotes) for lab in labels]
    if include_unlabelled and annotator is not None:
        done = {lab.item for lab in labels}
        rows += [(item, None, None, annotator, None) for item in store.items() if item not in done]
    rows.sort(key=lambda r: (r[0], r[3]))
    with atomic_write(path) as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS + CONTEXT_COLUMNS)
        for item, grade, reason, name, quotes in rows:
            judge = judges.get(item)
            context = _context(golden, item, judge)
            cells = [item[0], item[1], "" if grade is None else grade, reason or "", name]
            writer.writerow([*cells, neutralize("\n".join(quotes or ())), *context])
    return len(rows)


def import_csv(
    store: LabelStore, path: str | Path, golden: GoldenView, *, annotator: str | None = None
) -> ImportResult:
    """Import a CSV of human labels as ``imported`` events, all rows or none.

    ``annotator`` fills rows whose annotator cell is empty (and a file without that column). Raises AuditError
    listing every bad row as ``file:row: problem; fix`` (row numbers as a spreadsheet shows them, header = 1).
    """
    source = Path(path)
    events, blank, errors, quoted = _read_rows(source, golden, annotator)
    if errors:
        shown = "\n  ".join(errors[:_MAX_ERRORS])
        more = f"\n  ... and {len(errors) - _MAX_ERRORS} more" if len(errors) > _MAX_ERRORS else ""
        raise AuditError(f"{source}: {len(errors)} bad row(s), nothing imported:\n  {shown}{more}")
    current = {(lab.item, lab.annotator): lab for lab in store.current_labels(role="human")}
    fresh = [e for e in events if not _same(current.get(((e.query_id, e.chunk_id), e.annotator or "")), e, quoted)]
    store.record_many(fresh)
    spans = sorted({(e.query_id, e.chunk_id) for e in fresh if golden.is_span(e.chunk_id)})
    if spans:
        join_pool(store, golden.path, spans)
    return ImportResult(added=len(fresh), blank=blank, unchanged=len(events) - len(fresh))


def _read_rows(path: Path, golden: GoldenView, default: str | None) -> tuple[list[LabelEvent], int, list[str], bool]:
    """The rows' events, the number of rows with an empty grade, the errors, and whether the file has quotes."""
    events: list[LabelEvent] = []
    errors: list[str] = []
    seen: dict[tuple[str, str, str], int] = {}
    blank, quoted = 0, False
    for row_number, row in _rows(path, default):
        quoted = quoted or "quotes" in row
        try:
            event = _row_event(row, golden, default)
        except ValueError as exc:
            errors.append(f"{path}:{row_number}: {exc}")
            continue
        if event is None:
            blank += 1
            continue
        key = (event.query_id, event.chunk_id, event.annotator or "")
        if key in seen:
            errors.append(f"{path}:{row_number}: same item and annotator as row {seen[key]}; keep one of the two rows")
        seen[key] = row_number
        events.append(event)
    return events, blank, errors, quoted


def _rows(path: Path, default: str | None) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows as dicts with their spreadsheet row number; checks the header."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise AuditError(f"{path}: no such file; export one with: assay labels export GOLDEN -o {path.name}") from exc
    except UnicodeDecodeError as exc:
        raise AuditError(f"{path}: not UTF-8 text; in the spreadsheet save as 'CSV UTF-8'") from exc
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first.count)
    records = _records(path, text, delimiter)
    header = [name.strip() for name in next(records, [])]
    required = ["query_id", "chunk_id", "grade"] + ([] if default else ["annotator"])
    missing = [name for name in required if name not in header]
    if missing:
        raise AuditError(
            f"{path}:1: the header lacks {', '.join(missing)}; the first row must name the columns "
            f"{', '.join(CSV_COLUMNS)} (or pass --annotator for a file without an annotator column)"
        )
    for number, values in enumerate(records, start=2):  # one spreadsheet row per record, however many lines it spans
        if values:  # a blank line: an empty row
            yield number, {key: values[i].strip() if i < len(values) else "" for i, key in enumerate(header)}


def _records(path: Path, text: str, delimiter: str) -> Iterator[list[str]]:
    """The file's records; a quote that swallows rows (:mod:`assay.formats.csv_rows`) is an error at its line."""
    try:
        yield from (cells for _, cells in csv_rows(path, text, delimiter))
    except FormatError as exc:
        raise AuditError(str(exc)) from None


def _row_event(row: dict[str, str], golden: GoldenView, default: str | None) -> LabelEvent | None:
    """One row as an event, None for an empty grade; ValueError says what is wrong and how to fix it."""
    query_id, chunk_id = row.get("query_id", ""), row.get("chunk_id", "")
    if query_id not in golden.questions:
        raise ValueError(f"query_id {query_id!r} is not a question of the golden set; copy the id from an export")
    if not golden.knows(chunk_id):
        raise ValueError(
            f"chunk_id {chunk_id!r} is not a chunk or judged passage of the golden set; copy the id from an export"
        )
    raw = row.get("grade", "")
    if raw == "":
        return None
    grade = _grade(raw)
    reason = row.get("reason") or None
    if reason is not None and len(reason) > MAX_REASON:
        raise ValueError(f"reason has {len(reason)} characters; shorten it to at most {MAX_REASON}")
    quotes = person_quotes(_cell_quotes(row), item_text(golden, chunk_id), grade)
    name = row.get("annotator") or default
    if not name:
        raise ValueError("annotator is empty; fill in the annotator's name or pass --annotator NAME")
    try:
        name = check_annotator(name)
    except AuditError as exc:
        raise ValueError(str(exc)) from exc
    return LabelEvent(query_id=query_id, chunk_id=chunk_id, grade=grade, reason=reason, source="imported",
                      annotator=name, quotes=quotes)  # fmt: skip


def _cell_quotes(row: dict[str, str]) -> list[str] | None:
    """The quotes cell as a list, one quote per non-empty line; None when the file has no quotes column."""
    if "quotes" not in row:
        return None
    return [line for line in row["quotes"].splitlines() if line.strip()]


def _grade(raw: str) -> int:
    try:
        value = float(raw.replace(",", "."))
    except ValueError:
        value = -99.0
    if value not in (0.0, 1.0, 2.0, 3.0):
        raise ValueError(f"grade {raw!r} is not 0, 1, 2 or 3; write a whole number 0-3, or leave it empty to skip")
    return int(value)


def _same(current: CurrentLabel | None, event: LabelEvent, quoted: bool) -> bool:
    if current is None or current.grade != event.grade or (current.reason or None) != event.reason:
        return False
    return not quoted or tuple(current.quotes or ()) == tuple(event.quotes or ())


def _context(golden: GoldenView | None, item: Item, judge: CurrentLabel | None) -> list[str]:
    question = golden.questions.get(item[0]) if golden else None
    chunk = (golden.chunks.get(item[1]) or golden.passages.get(item[1])) if golden else None
    judge_grade = "" if judge is None else ("unscored" if judge.grade is None else str(judge.grade))
    cells = [(judge.reason or "") if judge else "", question.text if question else "", chunk.text if chunk else ""]
    return [judge_grade, *(neutralize(cell) for cell in cells)]
