"""TREC qrels (``qid iter docid grade``) and runs (``qid Q0 docid rank score tag``): fast readers and writers.

Reading streams the file in blocks of whole lines and splits each block with numpy, so ten million lines take
seconds and memory stays near the size of the columns kept (docid bytes, scores, query indices). Fields are
separated by any whitespace; blank lines are skipped; there are no comments (trec_eval allows none). The iteration,
``Q0``, rank and tag columns are read but ignored, as trec_eval ignores them. A malformed line raises
:class:`~assay.errors.FormatError` with the file, the line number and what was expected: a wrong number of fields,
a score that is not a number (or NaN), a grade that is not an integer, or a docid repeated within a query.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.errors import FormatError
from assay.formats.atomic import atomic_write
from assay.metrics import Qrels, Run
from assay.metrics.judged import docid_hashes, find_duplicate

__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]

BLOCK_BYTES = 1 << 24
RUN_EXPECTED = "6 whitespace-separated fields: query_id Q0 doc_id rank score tag"
QRELS_EXPECTED = "4 whitespace-separated fields: query_id iteration doc_id grade"
Bytes = npt.NDArray[np.bytes_]


def _blocks(path: Path, block_bytes: int) -> Iterator[tuple[bytes, int]]:
    """Blocks of whole lines, each with the 1-based number of its first line."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise FormatError(path, None, f"cannot open: {exc.strerror}", "a readable file") from None
    with handle:
        rest, line = b"", 1
        while block := handle.read(block_bytes):
            data = rest + block
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut], line
                line += data.count(b"\n", 0, cut)
            rest = data[cut:]
        if rest:
            yield rest + b"\n", line


def _gather(buf: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]) -> Bytes:
    """The byte strings buf[starts:ends] as a fixed-width bytes array."""
    lengths = ends - starts
    width = int(lengths.max()) if len(lengths) else 1
    out = np.zeros((len(starts), width), dtype=np.uint8)
    for j in range(width):
        rows = np.flatnonzero(lengths > j)
        out[rows, j] = buf[starts[rows] + j]
    return out.view(f"S{width}").reshape(len(starts))


@dataclass
class _Block:
    lines: npt.NDArray[np.int64]
    columns: list[Bytes]


def _split(data: bytes, first_line: int, n_fields: int, keep: tuple[int, ...], *, path: Path, expected: str) -> _Block:
    """Split a block into records of ``n_fields`` fields; return line numbers and the ``keep`` columns."""
    buf = np.frombuffer(data, dtype=np.uint8)
    space = buf <= 32
    starts = np.flatnonzero(~space & np.concatenate([[True], space[:-1]]))
    ends = np.flatnonzero(~space & np.concatenate([space[1:], [True]])) + 1
    newlines = np.flatnonzero(buf == 10)
    counts = np.diff(np.searchsorted(starts, newlines), prepend=0)  # tokens per line (every block ends with \n)
    bad = np.flatnonzero((counts != 0) & (counts != n_fields))
    if len(bad):
        found = int(counts[bad[0]])
        raise FormatError(path, first_line + int(bad[0]), f"{found} field{'s' * (found != 1)}", expected)
    first_tokens = np.arange(0, len(starts), n_fields)
    lines = first_line + np.flatnonzero(counts).astype(np.int64)
    return _Block(lines, [_gather(buf, starts[first_tokens + c], ends[first_tokens + c]) for c in keep])


def _numbers(column: Bytes, lines: npt.NDArray[np.int64], kind: type, path: Path, what: str) -> npt.NDArray[Any]:
    """Parse a bytes column as float64 or int64; a bad token raises FormatError at its line."""
    try:
        values = column.astype(np.float64 if kind is float else np.int64)
    except ValueError:
        values = None
    if values is not None and (kind is not float or not np.isnan(values).any()):
        return values
    for token, line in zip(column.tolist(), lines.tolist(), strict=True):
        try:
            number = float(token) if kind is float else int(token)
        except ValueError:
            number = float("nan")
        if np.isnan(number):
            expected = "a number" if kind is float else "an integer"
            raise FormatError(path, line, f"{what} {token.decode(errors='replace')!r} is not {expected}", expected)
    raise FormatError(path, int(lines[0]), f"cannot parse the {what} column", what)


class _QueryIndex:
    """Query ids to dense indices in order of first appearance, one dict lookup per run of equal ids."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def encode(self, qids: Bytes) -> npt.NDArray[np.int64]:
        if len(qids) == 0:
            return np.empty(0, dtype=np.int64)
        heads = np.concatenate([[0], np.flatnonzero(qids[1:] != qids[:-1]) + 1])
        codes = [self.ids.setdefault(q.decode("utf-8", "replace"), len(self.ids)) for q in qids[heads].tolist()]
        return np.repeat(np.array(codes, dtype=np.int64), np.diff(np.append(heads, len(qids))))


def _duplicate_error(path: Path, run_or_qrels: tuple[Any, Any, Bytes, Any], lines: Any, names: list[str]) -> None:
    """``run_or_qrels`` is (qidx, hashes, docids, key order or None)."""
    qidx, hashes, docids, order = run_or_qrels
    dup = find_duplicate(qidx, hashes, docids, order)
    if dup is not None:
        first, second = (int(lines[i]) for i in dup)
        doc, query = docids[dup[1]].decode("utf-8", "replace"), names[int(qidx[dup[1]])]
        raise FormatError(
            path,
            max(first, second),
            f"document {doc!r} appears again for query {query!r} (first at line {min(first, second)})",
            "each doc_id once per query; remove the repeated line",
        )


def read_run(path: str | Path, *, block_bytes: int = BLOCK_BYTES) -> Run:
    """Read a TREC run file into a :class:`~assay.metrics.Run` (the rank column is ignored)."""
    source = Path(path)
    index = _QueryIndex()
    parts: list[tuple[Any, ...]] = []
    for data, first in _blocks(source, block_bytes):
        block = _split(data, first, 6, (0, 2, 4), path=source, expected=RUN_EXPECTED)
        qids, docs, score_col = block.columns
        scores = _numbers(score_col, block.lines, float, source, "score")
        parts.append((index.encode(qids), docs, docid_hashes(docs), scores, block.lines))
    if not parts:
        raise FormatError(source, None, "no run lines", RUN_EXPECTED)
    qidx, docids, hashes, scores, lines = (np.concatenate([p[i] for p in parts]) for i in range(5))
    names = list(index.ids)
    run = Run.from_entries(names, qidx, scores, docids, hashes)
    _duplicate_error(source, (qidx, hashes, docids, run.key_order), lines, names)
    return run


def read_qrels(path: str | Path, *, block_bytes: int = BLOCK_BYTES) -> Qrels:
    """Read a TREC qrels file into :class:`~assay.metrics.Qrels`; grades are integers (negative allowed)."""
    source = Path(path)
    index = _QueryIndex()
    parts: list[tuple[Any, ...]] = []
    for data, first in _blocks(source, block_bytes):
        block = _split(data, first, 4, (0, 2, 3), path=source, expected=QRELS_EXPECTED)
        qids, docs, grade_col = block.columns
        grades = _numbers(grade_col, block.lines, int, source, "grade")
        parts.append((index.encode(qids), docs, grades, block.lines))
    if not parts:
        raise FormatError(source, None, "no qrels lines", QRELS_EXPECTED)
    qidx, docids, grades, lines = (np.concatenate([p[i] for p in parts]) for i in range(4))
    names = list(index.ids)
    _duplicate_error(source, (qidx, docid_hashes(docids), docids, None), lines, names)
    rank_of = np.argsort(np.argsort(np.array(names, dtype=np.str_), kind="stable"))
    order = np.argsort(rank_of[qidx], kind="stable")
    counts = np.bincount(rank_of[qidx], minlength=len(names))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    decoded = np.char.decode(docids[order], "utf-8", "replace")
    return Qrels(sorted(names), offsets, decoded, grades[order].astype(np.int64))


def _trec_order(docs: Mapping[str, float]) -> list[tuple[str, float]]:
    """trec_eval's order: score descending in float32, then docid descending."""
    return sorted(docs.items(), key=lambda item: (float(np.float32(item[1])), item[0]), reverse=True)


def write_run(path: str | Path, run: Run | Mapping[str, Mapping[str, float]], *, tag: str = "assay") -> int:
    """Write a TREC run atomically, queries sorted, ranks 1..n in trec_eval's order; returns lines written."""
    table = run if not isinstance(run, Run) else _run_dict(run)
    count = 0
    with atomic_write(path) as out:
        for qid in sorted(table):
            for rank, (doc, score) in enumerate(_trec_order(table[qid]), start=1):
                out.write(f"{qid} Q0 {doc} {rank} {score!r} {tag}\n")
                count += 1
    return count


def write_qrels(path: str | Path, qrels: Qrels | Mapping[str, Mapping[str, int]]) -> int:
    """Write TREC qrels atomically (iteration column 0), queries and docids sorted; returns lines written."""
    table = qrels.to_dict() if isinstance(qrels, Qrels) else qrels
    count = 0
    with atomic_write(path) as out:
        for qid in sorted(table):
            for doc in sorted(table[qid]):
                out.write(f"{qid} 0 {doc} {int(table[qid][doc])}\n")
                count += 1
    return count


def _run_dict(run: Run) -> dict[str, dict[str, float]]:
    if run.source is not None:
        return {q: dict(d) for q, d in run.source.items()}
    docs = run.docids_at(np.arange(len(run.scores), dtype=np.int64))
    table: dict[str, dict[str, float]] = {q: {} for q in run.query_ids}
    for q, d, s in zip(run.qidx.tolist(), docs, run.scores.tolist(), strict=True):
        table[run.query_ids[q]][d] = s
    return table
