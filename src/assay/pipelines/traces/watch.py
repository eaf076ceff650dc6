"""Follow a growing OTLP export and keep a rolling evaluation of a sample of its traces: ``assay traces watch``.

One pass (``--once`` does one; otherwise one every ``--every`` seconds):

1. **Files**: the export file, or every ``*.json`` / ``*.jsonl`` file of the export folder (by name). Each is read
   from its cursor (inode and byte offset) to its last newline: a partial last line (the exporter is still writing
   it) is left for the next pass. A file whose inode changed, or that is shorter than its cursor (rotated or
   truncated), is read from the start, and the pass says so. The files are JSON lines, one OTLP request a line, as
   the OpenTelemetry collector's file exporter writes them; a line that is not one raises
   :class:`~assay.errors.FormatError` naming the file and line, and nothing of the pass is kept.
2. **Traces**: the spans read (plus those held from earlier passes) are grouped by trace id; a trace is complete
   once its root span (no parent) has arrived, since a root span ends, and is exported, last. The spans of
   incomplete traces are held in the cursor for the next pass. Complete traces are read by the rules of
   :mod:`assay.formats.traces`.
3. **Sample**: a trace is kept when ``crc32(trace id) < RATE * 2**32``: the same traces whatever the order, the
   machine or the restarts. A kept trace is matched to a golden question as ``assay import traces --golden`` does
   (query id, else question text); unmatched ones are counted.
4. **Run**: ``watch-run.jsonl`` in the output folder holds one line per golden question, its latest trace (as
   ``assay import traces`` keeps it); a trace id already in it is never added again.
5. **Evaluation**: when the run changed, it is evaluated against the golden set without a judge (the golden
   labels only) and the report written to the output folder.
6. **Cursor**: ``watch-cursor.json`` (per file: path, inode, offset, line; the held spans; the counts) is written
   last, atomically (temporary file and rename), after the run: a pass stopped before it is read again and adds
   nothing twice (step 4), and a pass that completed is never read again.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.formats.atomic import atomic_write_text
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import write_jsonl
from assay.formats.otlp import Span, read_span_lines
from assay.formats.traces import Trace, traces_of
from assay.pipelines.traces.imports import latest_per_question, match_traces, run_line

__all__ = ["CURSOR_NAME", "RUN_NAME", "WatchPass", "sampled", "watch_once"]

CURSOR_NAME = "watch-cursor.json"
RUN_NAME = "watch-run.jsonl"
CURSOR_VERSION = 1
_SUFFIXES = (".json", ".jsonl")


@dataclass
class WatchPass:
    """What one pass read and did."""

    files: int = 0
    lines: int = 0
    traces: int = 0
    sampled: int = 0
    matched: int = 0
    held_spans: int = 0
    run_lines: int = 0
    evaluated: bool = False
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
) -> WatchPass:
    """One pass over ``source`` (a file or a folder) into the folder ``out``; see the module docstring.
    ``evaluate`` is called with the run's path when the run changed."""
    if not 0 < rate <= 1:
        raise InputError(f"--sample {rate}: give a rate above 0 and at most 1 (the share of traces evaluated)")
    folder = Path(out)
    cursor = _load_cursor(folder / CURSOR_NAME)
    done = WatchPass()
    spans = [_span(raw) for raw in cursor["held"]]
    for path in _files(Path(source)):
        done.files += 1
        spans += _read_new(path, cursor["files"], done)
    complete, held = _complete(spans)
    traces = traces_of(complete, Path(source)).traces if complete else []
    done.traces, done.held_spans = len(traces), len(held)
    kept = [t for t in traces if sampled(t.trace_id, rate)]
    done.sampled = len(kept)
    changed = _update_run(folder / RUN_NAME, golden, kept, done)
    if changed and evaluate is not None:
        evaluate(folder / RUN_NAME)
        done.evaluated = True
    totals = cursor["totals"]
    for key, value in (("traces", done.traces), ("sampled", done.sampled), ("matched", done.matched)):
        totals[key] = totals.get(key, 0) + value
    done.totals = dict(totals)
    cursor["held"] = [dataclasses.asdict(s) for s in held]
    atomic_write_text(folder / CURSOR_NAME, json.dumps(cursor, indent=1) + "\n")
    return done


# ---------------------------------------------------------------------------------------------------- steps


def _files(source: Path) -> list[Path]:
    if source.is_dir():
        return sorted(p for p in source.iterdir() if p.suffix in _SUFFIXES and p.is_file())
    if not source.exists():
        raise InputError(f"{source}: no such file or folder (give the OTLP export file, or the folder of them)")
    return [source]


def _read_new(path: Path, files: dict[str, dict[str, int]], done: WatchPass) -> list[Span]:
    """The spans of the whole lines of ``path`` past its cursor; the cursor moved to the last newline."""
    stat = path.stat()
    key = str(path.resolve())
    at = files.get(key)
    if at is not None and (at["inode"] != stat.st_ino or stat.st_size < at["offset"]):
        why = "was replaced (another inode)" if at["inode"] != stat.st_ino else "shrank"
        done.notes.append(f"{path} {why} since the last pass: read from the start.")
        at = None
    offset, line = (at["offset"], at["line"]) if at is not None else (0, 0)
    with path.open("rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    lines = []
    for number, raw in enumerate(data[:end].splitlines(), start=line + 1):
        try:
            lines.append((number, raw.decode("utf-8-sig" if number == 1 else "utf-8")))
        except UnicodeDecodeError as exc:
            raise FormatError(path, number, f"bytes that are not UTF-8 at byte {exc.start + 1}", "UTF-8") from None
    read = read_span_lines(path, lines)
    done.lines += len(lines)
    files[key] = {"inode": stat.st_ino, "offset": offset + end, "line": line + len(lines)}
    return read.spans


def _complete(spans: Sequence[Span]) -> tuple[list[Span], list[Span]]:
    """The spans of traces whose root span has arrived, and the others (held for the next pass)."""
    rooted = {s.trace_id for s in spans if s.parent_id is None}
    return [s for s in spans if s.trace_id in rooted], [s for s in spans if s.trace_id not in rooted]


def _update_run(path: Path, golden: GoldenSet, kept: list[Trace], done: WatchPass) -> bool:
    """Add the sampled traces to the run (one line per golden question, the latest trace); whether it changed."""
    lines = _read_run(path)
    known = {line["trace_id"] for line in lines}
    fresh = [t for t in kept if t.trace_id not in known]
    named = match_traces(fresh, golden)
    done.matched = len(named)
    if len(named) < len(fresh):
        done.notes.append(f"{len(fresh) - len(named)} sampled trace(s) match no golden question (left out).")
    if not named:
        done.run_lines = len(lines)
        return False
    by_query: dict[str, tuple[str, Any]] = {line["query_id"]: (line["query_id"], line) for line in lines}
    newest, _ = latest_per_question(named)
    for qid, trace, _how in newest:
        held = by_query.get(qid)
        if held is None or (trace.start_ns, trace.trace_id) > (held[1].get("start_ns", 0), held[1]["trace_id"]):
            by_query[qid] = (qid, run_line(qid, trace) | {"start_ns": trace.start_ns})
    merged = sorted((line for _, line in by_query.values()), key=lambda x: (x["start_ns"], x["trace_id"]))
    done.run_lines = write_jsonl(path, "runs", merged, header={"target": "traces watch"})
    return True


def _read_run(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            obj = json.loads(text) if text.strip() else None
            if number == 1 or obj is None:
                continue
            if not isinstance(obj, dict) or "trace_id" not in obj or "query_id" not in obj:
                raise FormatError(path, number, "a line without trace_id and query_id", "a run written by watch")
            out.append(obj)
    return out


def _load_cursor(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"assay": "watch-cursor", "version": CURSOR_VERSION, "files": {}, "held": [], "totals": {}}
    try:
        cursor = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, f"invalid JSON: {exc.msg}", "the cursor watch writes") from None
    if not isinstance(cursor, dict) or cursor.get("version") != CURSOR_VERSION:
        raise FormatError(path, 1, "not a watch cursor of version 1", "the cursor watch writes (delete it to "
                          "read every trace again)")  # fmt: skip
    return cursor


def _span(raw: dict[str, Any]) -> Span:
    return Span(**(raw | {"events": tuple((name, attrs) for name, attrs in raw.get("events", ()))}))
