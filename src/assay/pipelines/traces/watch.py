"""Follow a growing OTLP export and keep a rolling evaluation of a sample of its traces: ``assay traces watch``.

One pass (``--once`` does one; otherwise one every ``--every`` seconds):

0. **Recovery**: the cursor (``watch-cursor.json``) is the one record of what was read and counted, and of the run
   (step 6). A cursor marked *pending* comes from a pass stopped after its commit: its run is written again and
   evaluated in this pass (steps 7 and 8), so a kill at any point loses nothing and counts nothing twice. A cursor
   of version 1 (before fingerprints) is read on: its files trusted once, its run and counted traces the run file's.
1. **Files**: the export file, or every ``*.json`` / ``*.jsonl`` file of the export folder (by name). A file is
   known by its inode, its size, and fingerprints (SHA-256) of its first 4 KiB and of the 4 KiB just before the
   cursor: a file with another inode, shorter than the cursor, or whose fingerprints differ (replaced, even under
   the same inode as ext4 reuses them after ``rm``) is read from its start, and the pass says so. A JSON lines file
   is read from its cursor (byte offset) to its last newline, one line at a time in bounded memory: a partial last
   line (the exporter is still writing it) is left for the next pass, and is reread at most up to the line limit
   (``--max-line``), past which it is an error. A file whose first line opens one JSON document (a pretty-printed
   OTLP body, as ``assay import traces`` reads it) is read whole, and again whole when it changes. A file that
   cannot be read (not OTLP JSON, a bad line, no permission) raises :class:`~assay.errors.FormatError` naming the
   file and line when it is the only one watched; in a folder it is skipped, named in the pass's notes, and its
   cursor does not move, so the other files are read.
2. **Spans**: the spans read, plus those held from earlier passes, each (trace id, span id) once; spans of a trace
   already counted (its trace id in the cursor's record of the last 100,000 counted) are a collector's retry:
   counted as duplicates and dropped.
3. **Traces**: the spans are grouped by trace id; a trace is complete once its root span (no parent) has arrived,
   since a root span ends, and is exported, last. The spans of incomplete traces are held for the next pass, at
   most ``HELD_KEPT`` spans: past that, whole traces are let go, those whose last span ended first (ties by trace
   id), and counted as *abandoned* (a root span that never came: an exporter that drops spans would otherwise grow
   the cursor without bound).
   Complete traces are read by the rules of :mod:`assay.formats.traces`; each is counted once.
4. **Sample**: a trace is kept when ``crc32(trace id) < RATE * 2**32``: the same traces whatever the order, the
   machine or the restarts. A kept trace is matched to a golden question as ``assay import traces --golden`` does
   (query id, the same words, a near question); the pass counts them by kind, and the unmatched.
5. **Run** (in memory): one line per golden question, its latest trace (as ``assay import traces`` keeps it).
6. **Commit**: the cursor (per file: inode, size, offset, line, fingerprints; the held spans; the counted trace
   ids; the counts; the run's lines; *pending* when the run changed) is written atomically (temporary file and
   rename). A pass stopped before this point left the old cursor, and is done again whole by the next one.
7. **Run file**: ``watch-run.jsonl`` is written (atomically) from the cursor's run lines.
8. **Evaluation**: when pending, the run is evaluated against the golden set without a judge (the golden labels
   only) and the report written to the output folder; then the cursor is written again, no longer pending.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.formats.atomic import atomic_write_text
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import write_jsonl
from assay.formats.otlp import DEFAULT_MAX_LINE, Span, bounded_lines, first_line_is_whole, read_span_lines, read_spans
from assay.formats.traces import Trace, traces_of, unique_spans
from assay.pipelines.traces.imports import latest_per_question, run_line
from assay.pipelines.traces.matching import KINDS, match_traces

__all__ = ["CURSOR_NAME", "RUN_NAME", "Checkpoint", "WatchPass", "sampled", "watch_once"]

CURSOR_NAME = "watch-cursor.json"
RUN_NAME = "watch-run.jsonl"
CURSOR_VERSION = 2
COUNTED_KEPT = 100_000  # trace ids remembered as counted: a retry later than that many traces is counted again
HELD_KEPT = 200_000  # spans of incomplete traces held for later passes; past it the oldest traces are abandoned
FINGERPRINT = 4096  # bytes hashed at the start of a file and just before its cursor
_SUFFIXES = (".json", ".jsonl")

Checkpoint = Callable[[str], None]


@dataclass
class WatchPass:
    """What one pass read and did."""

    files: int = 0
    lines: int = 0
    traces: int = 0
    sampled: int = 0
    matched: int = 0
    held_spans: int = 0
    abandoned: int = 0  # incomplete traces let go to keep the held spans under HELD_KEPT
    duplicate_spans: int = 0
    run_lines: int = 0
    evaluated: bool = False
    kinds: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)


def sampled(trace_id: str, rate: float) -> bool:
    """Whether the trace is in the sample: its id's CRC-32 below ``rate`` of the 32-bit range."""
    return zlib.crc32(trace_id.encode("ascii")) < rate * 2**32


def watch_once(
    source: str | Path,
    golden: GoldenSet,
    out: str | Path,
    rate: float = 1.0,
    evaluate: Callable[[Path], None] | None = None,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    checkpoint: Checkpoint | None = None,
) -> WatchPass:
    """One pass over ``source`` (a file or a folder) into the folder ``out``; see the module docstring.
    ``evaluate`` is called with the run's path when the run changed; ``checkpoint`` (tests) with each step's name."""
    if not 0 < rate <= 1:
        raise InputError(f"--sample {rate}: give a rate above 0 and at most 1 (the share of traces evaluated)")
    step = checkpoint or (lambda _name: None)
    folder = Path(out)
    cursor = _load_cursor(folder / CURSOR_NAME)
    done = WatchPass()
    spans = [_span(raw) for raw in cursor["held"]]
    for path in _files(Path(source)):
        done.files += 1
        spans += _read_file(path, cursor["files"], done, max_line, single=not Path(source).is_dir())
        step("read")
    complete, held = _complete(_fresh(spans, set(cursor["counted"]), done))
    held = _bounded(held, done)
    read = traces_of(complete, Path(source))
    done.notes += [w for w in [read.problems.warning()] if w]
    done.traces, done.held_spans = len(read.traces), len(held)
    kept = [t for t in read.traces if sampled(t.trace_id, rate)]
    done.sampled = len(kept)
    changed = _update_run(cursor, golden, kept, done)
    _count(cursor, done, read.traces, held, changed)
    step("commit")
    _save(folder, cursor)
    step("committed")
    if cursor["pending"]:
        done.run_lines = write_jsonl(folder / RUN_NAME, "runs", cursor["run"], header={"target": "traces watch"})
        step("run")
        if evaluate is not None:
            evaluate(folder / RUN_NAME)
            done.evaluated = True
            step("evaluated")
        cursor["pending"] = False
        _save(folder, cursor)
    return done


# ---------------------------------------------------------------------------------------------------- files


def _files(source: Path) -> list[Path]:
    if source.is_dir():
        return sorted(p for p in source.iterdir() if p.suffix in _SUFFIXES and p.is_file())
    if not source.exists():
        raise InputError(f"{source}: no such file or folder (give the OTLP export file, or the folder of them)")
    return [source]


def _read_file(path: Path, files: dict[str, Any], done: WatchPass, max_line: int, *, single: bool) -> list[Span]:
    """The new spans of one file, its cursor moved; in a folder, a file that cannot be read is skipped and named."""
    key = str(path.resolve())
    try:
        spans, lines, at = _read_new(path, files.get(key), done, max_line)
    except (FormatError, OSError) as exc:
        if single and isinstance(exc, OSError):
            raise FormatError(path, None, f"cannot read: {exc.strerror}") from None
        if single:
            raise
        done.notes.append(f"skipped {path} (the other files were read; its cursor did not move): {exc}")
        return []
    done.lines += lines
    files[key] = at
    return spans


def _read_new(path: Path, at: dict[str, Any] | None, done: WatchPass, max_line: int) -> tuple[list[Span], int, Any]:
    """``(spans, lines read, the file's new cursor)``: from the cursor, or from the start of a file replaced."""
    with path.open("rb") as handle:
        stat = os.fstat(handle.fileno())  # the file opened, even if the name was taken by another since
        why = _replaced(handle, stat.st_ino, stat.st_size, at) if at is not None else None
        if why is not None:
            done.notes.append(f"{path} {why} since the last pass: read from the start.")
            at = None
        if at is not None and at["document"]:
            return [], 0, at  # a whole document already read, unchanged
        offset, line = (at["offset"], at["line"]) if at is not None else (0, 0)
        if offset == 0 and _is_document(handle, max_line):
            spans = read_spans(path, max_line).spans
            return spans, 0, _mark(handle, stat.st_ino, stat.st_size, stat.st_size, 0, document=True)
        handle.seek(offset)
        lines, end = [], offset
        for number, raw in bounded_lines(handle, path, max_line, line + 1):
            if not raw.endswith(b"\n"):
                break  # the exporter is still writing it: the next pass reads it whole
            lines.append((number, _decode(path, number, raw)))
            end += len(raw)
        spans = read_span_lines(path, lines).spans
        return spans, len(lines), _mark(handle, stat.st_ino, stat.st_size, end, line + len(lines), document=False)


def _replaced(handle: Any, inode: int, size: int, at: dict[str, Any]) -> str | None:
    """Why the file is not the one the cursor was taken on (None when it is the same, grown or not)."""
    if at["inode"] != inode:
        return "was replaced (another inode)"
    if size < at["offset"] or (at["document"] and size != at["size"]):
        return "shrank" if size < at["offset"] else "was rewritten (another size)"
    if at["head"] is not None and _fingerprints(handle, at["offset"]) != (at["head"], at["tail"]):
        return "was replaced (same inode, other bytes)"
    return None


def _mark(handle: Any, inode: int, size: int, offset: int, line: int, *, document: bool) -> dict[str, Any]:
    head, tail = _fingerprints(handle, offset)
    return {"inode": inode, "size": size, "offset": offset, "line": line, "head": head, "tail": tail,
            "document": document}  # fmt: skip


def _fingerprints(handle: Any, offset: int) -> tuple[str, str]:
    """SHA-256 (hex, 32 digits) of the first bytes and of the bytes just before ``offset`` (at most 4 KiB each)."""
    handle.seek(0)
    head = handle.read(min(offset, FINGERPRINT))
    handle.seek(max(0, offset - FINGERPRINT))
    tail = handle.read(min(offset, FINGERPRINT))
    return hashlib.sha256(head).hexdigest()[:32], hashlib.sha256(tail).hexdigest()[:32]


def _is_document(handle: Any, max_line: int) -> bool:
    """Whether the file's first non-blank line is whole (it has its newline) and opens a JSON document over many
    lines rather than being one JSON line."""
    handle.seek(0)
    for number, raw in bounded_lines(handle, Path(handle.name), max_line):
        if raw.strip():
            return raw.endswith(b"\n") and not first_line_is_whole(_decode(Path(handle.name), number, raw))
    return False


def _decode(path: Path, number: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(path, number, f"bytes that are not UTF-8 at byte {exc.start + 1}", "UTF-8") from None


# ---------------------------------------------------------------------------------------------------- traces


def _fresh(spans: Sequence[Span], counted: set[str], done: WatchPass) -> list[Span]:
    """Each span once, and none of a trace already counted (a collector's retry)."""
    unique = [s for s in unique_spans(spans) if s.trace_id not in counted]
    done.duplicate_spans = len(spans) - len(unique)
    if done.duplicate_spans:
        done.notes.append(f"{done.duplicate_spans} span(s) read again (the same trace id and span id, or a trace "
                          "already counted: a collector's retry) counted once.")  # fmt: skip
    return unique


def _complete(spans: Sequence[Span]) -> tuple[list[Span], list[Span]]:
    """The spans of traces whose root span has arrived, and the others (held for the next pass)."""
    rooted = {s.trace_id for s in spans if s.parent_id is None}
    return [s for s in spans if s.trace_id in rooted], [s for s in spans if s.trace_id not in rooted]


def _bounded(held: list[Span], done: WatchPass, limit: int | None = None) -> list[Span]:
    """The held spans, at most ``limit`` (``HELD_KEPT``): whole traces let go, those whose last span ended first
    (ties by trace id), until the rest fit; the traces let go are counted and said."""
    limit = HELD_KEPT if limit is None else limit
    if len(held) <= limit:
        return held
    by_trace: dict[str, list[Span]] = {}
    for span in held:
        by_trace.setdefault(span.trace_id, []).append(span)
    oldest_first = sorted(by_trace, key=lambda t: (max(s.end_ns for s in by_trace[t]), t))
    let_go: set[str] = set()
    size = len(held)
    for trace_id in oldest_first:
        if size <= limit:
            break
        let_go.add(trace_id)
        size -= len(by_trace[trace_id])
    done.abandoned = len(let_go)
    done.notes.append(
        f"{len(let_go)} incomplete trace(s) abandoned: their root span never arrived and more than {limit:,} spans "
        "were held (the oldest let go first)."
    )
    return [s for s in held if s.trace_id not in let_go]


def _update_run(cursor: dict[str, Any], golden: GoldenSet, kept: list[Trace], done: WatchPass) -> bool:
    """Add the sampled traces to the cursor's run (one line per golden question, the latest trace); whether it
    changed."""
    matching = match_traces(kept, golden)
    done.matched = len(matching.named)
    done.kinds = {kind: matching.kinds[kind] for kind in KINDS if matching.kinds[kind]}
    if kept:
        done.notes.append("matched by kind: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in done.kinds.items()))
    if len(matching.named) < len(kept):
        done.notes.append(f"{len(kept) - len(matching.named)} sampled trace(s) match no golden question (left out).")
    by_query = {line["query_id"]: line for line in cursor["run"]}
    newest, _ = latest_per_question(matching.named)
    for qid, trace, _how in newest:
        held = by_query.get(qid)
        if held is None or (trace.start_ns, trace.trace_id) > (held.get("start_ns", 0), held["trace_id"]):
            by_query[qid] = run_line(qid, trace) | {"start_ns": trace.start_ns}
    merged = sorted(by_query.values(), key=lambda x: (x["start_ns"], x["trace_id"]))
    done.run_lines = len(merged)
    if not newest:
        return False
    cursor["run"] = merged
    return True


def _count(cursor: dict[str, Any], done: WatchPass, traces: list[Trace], held: list[Span], changed: bool) -> None:
    """The pass's counts, counted trace ids, held spans and pending flag put in the cursor (not yet written)."""
    totals = cursor["totals"]
    for key, value in (("traces", done.traces), ("sampled", done.sampled), ("matched", done.matched),
                       ("abandoned", done.abandoned)):  # fmt: skip
        totals[key] = totals.get(key, 0) + value
    done.totals = dict(totals)
    cursor["counted"] = (cursor["counted"] + [t.trace_id for t in traces])[-COUNTED_KEPT:]
    cursor["held"] = [dataclasses.asdict(s) for s in held]
    cursor["pending"] = cursor["pending"] or changed


# ---------------------------------------------------------------------------------------------------- cursor


def _save(folder: Path, cursor: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / CURSOR_NAME, json.dumps(cursor, indent=1) + "\n")


def _load_cursor(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"assay": "watch-cursor", "version": CURSOR_VERSION, "files": {}, "held": [], "counted": [],
                "totals": {}, "run": [], "pending": False}  # fmt: skip
    try:
        cursor = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, f"invalid JSON: {exc.msg}", "the cursor watch writes") from None
    if isinstance(cursor, dict) and cursor.get("version") == 1:
        return _upgrade(cursor, path.parent / RUN_NAME)
    if not isinstance(cursor, dict) or cursor.get("version") != CURSOR_VERSION:
        expected = "the cursor this version of watch writes (delete it to read every trace again)"
        raise FormatError(path, 1, f"not a watch cursor of version {CURSOR_VERSION}", expected)
    return cursor


def _upgrade(cursor: dict[str, Any], run: Path) -> dict[str, Any]:
    """A cursor of version 1 (before fingerprints, and with the run only in its file) as version 2: its files are
    trusted once (fingerprinted from this pass on), and its run and counted traces are the run file's."""
    lines = []
    if run.exists():
        with run.open(encoding="utf-8") as handle:
            lines = [json.loads(text) for number, text in enumerate(handle, start=1) if number > 1 and text.strip()]
    files = {key: at | {"size": at["offset"], "head": None, "tail": None, "document": False}
             for key, at in cursor.get("files", {}).items()}  # fmt: skip
    return cursor | {"version": CURSOR_VERSION, "files": files, "counted": [line["trace_id"] for line in lines],
                     "run": lines, "pending": False}  # fmt: skip


def _span(raw: dict[str, Any]) -> Span:
    return Span(**(raw | {"events": tuple((name, attrs) for name, attrs in raw.get("events", ()))}))
