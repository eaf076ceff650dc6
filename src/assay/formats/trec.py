"""TREC qrels (``qid iter docid grade``) and runs (``qid Q0 docid rank score tag``): fast readers and writers.

Reading streams the file in blocks of whole lines and splits and parses each block with numpy
(:mod:`assay.formats._columns`: scores parse exactly as ``float`` reads them), so ten million lines take a few
seconds and memory stays near the size of the columns kept (docid bytes, scores, a docid hash). Fields are
separated by any whitespace; blank lines are skipped; there are no comments (trec_eval allows none). The iteration,
``Q0``, rank and tag columns are read but ignored, as trec_eval ignores them. A malformed line raises
:class:`~assay.errors.FormatError` with the file, the line number and what was expected: a wrong number of fields,
a score that is not a number (or NaN), a grade that is not an integer, or a docid repeated within a query.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.errors import FormatError
from assay.formats._columns import Fields, blocks, parse_floats, parse_ints, split
from assay.formats.atomic import atomic_write
from assay.metrics import Qrels, Run
from assay.metrics.judged import docid_hashes, find_duplicate

__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]

BLOCK_BYTES = 1 << 24
RUN_EXPECTED = "6 whitespace-separated fields: query_id Q0 doc_id rank score tag"
QRELS_EXPECTED = "4 whitespace-separated fields: query_id iteration doc_id grade"
Bytes = npt.NDArray[np.bytes_]


def _fallback(fields: Fields, k: int, kind: type, path: Path, what: str) -> Callable[[Any], npt.NDArray[Any]]:
    """Parse field k of the masked records one by one with ``float``/``int``; a bad token raises at its line."""
    expected = "a number" if kind is float else "an integer"

    def parse(mask: Any) -> npt.NDArray[Any]:
        out = []
        for r in np.flatnonzero(mask).tolist():
            token = fields.token(r, k)
            try:
                number = kind(token)
            except ValueError:
                number = None
            if number is None or math.isnan(number):  # NaN is not a number a ranking can use
                problem = f"{what} {token.decode(errors='replace')!r} is not {expected}"
                raise FormatError(path, int(fields.lines[r]), problem, expected)
            out.append(number)
        return np.array(out, dtype=np.float64 if kind is float else np.int64)

    return parse


class _QueryIndex:
    """Query ids to dense indices in order of first appearance, one dict lookup per run of equal ids."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def runs(self, words: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(codes, counts) of the runs of equal query ids given as ``[records, n]`` words (``Fields.words``)."""
        if len(words) == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        differs = words[1:, 0] != words[:-1, 0]
        for i in range(1, words.shape[1]):
            differs |= words[1:, i] != words[:-1, i]
        heads = np.concatenate([[0], np.flatnonzero(differs) + 1])
        names = words[heads].view(f"S{8 * words.shape[1]}").reshape(len(heads)).tolist()
        codes = [self.ids.setdefault(q.decode("utf-8", "replace"), len(self.ids)) for q in names]
        return np.array(codes, dtype=np.int64), np.diff(np.append(heads, len(words)))

    def encode(self, words: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        """The code of every record's query id."""
        return np.repeat(*self.runs(words))


def _duplicate_error(path: Path, dup: tuple[int, int] | None, lines: list[Any], docids: Bytes, query: str) -> None:
    if dup is not None:
        first, second = (int(x) for x in np.concatenate(lines)[list(dup)])
        raise FormatError(
            path,
            max(first, second),
            f"document {docids[dup[1]].decode('utf-8', 'replace')!r} appears again for query {query!r} "
            f"(first at line {min(first, second)})",
            "each doc_id once per query; remove the repeated line",
        )


def _decode(docids: Bytes) -> npt.NDArray[np.str_]:
    """UTF-8 bytes to str; a plain cast when every byte is ASCII."""
    if not len(docids) or docids.view(np.uint8).max() < 128:
        return docids.astype(np.str_)
    return np.char.decode(docids, "utf-8", "replace")


def _read_columns(
    source: Path, block_bytes: int, kind: str, parse: Callable[[Fields], tuple[Any, ...]]
) -> tuple[list[Any], list[Any]]:
    """The columns ``parse`` makes of every block's records, concatenated over blocks, and each block's line numbers.

    ``kind`` is ``"run"`` (6 fields) or ``"qrels"`` (4 fields); ``parse`` sees the blocks in file order (a reader
    numbers query ids by first appearance).
    """
    n_fields, expected = (6, RUN_EXPECTED) if kind == "run" else (4, QRELS_EXPECTED)
    parts: list[tuple[Any, ...]] = []
    lines: list[Any] = []
    first = 1
    for data in blocks(source, block_bytes):
        fields = split(data, first, n_fields, path=source, expected=expected)
        first += fields.n_lines
        if len(fields):
            parts.append(parse(fields))
            lines.append(fields.lines)
    if not parts:
        raise FormatError(source, None, f"no {kind} lines", expected)
    return [np.concatenate(column) for column in zip(*parts, strict=True)], lines


def read_run(path: str | Path, *, block_bytes: int = BLOCK_BYTES) -> Run:
    """Read a TREC run file into a :class:`~assay.metrics.Run` (the rank column is ignored)."""
    source = Path(path)
    index = _QueryIndex()

    def parse(fields: Fields) -> tuple[Any, ...]:
        scores = parse_floats(fields.words(4), fields.lengths(4), _fallback(fields, 4, float, source, "score"))
        return (*index.runs(fields.words(0)), fields.strings(2), scores)

    (codes, counts, docids, scores), lines = _read_columns(source, block_bytes, "run", parse)
    run = Run.from_runs(list(index.ids), (codes, counts), scores, docids)
    dup = run.first_duplicate()
    _duplicate_error(source, dup, lines, docids, run.query_ids[int(run.qidx[dup[1]])] if dup else "")
    return run


def read_qrels(path: str | Path, *, block_bytes: int = BLOCK_BYTES) -> Qrels:
    """Read a TREC qrels file into :class:`~assay.metrics.Qrels`; grades are integers (negative allowed)."""
    source = Path(path)
    index = _QueryIndex()

    def parse(fields: Fields) -> tuple[Any, ...]:
        grades = parse_ints(fields.words(3), fields.lengths(3), _fallback(fields, 3, int, source, "grade"))
        return (index.encode(fields.words(0)), fields.strings(2), grades)

    (qidx, docids, grades), lines = _read_columns(source, block_bytes, "qrels", parse)
    names = list(index.ids)
    dup = find_duplicate(qidx, docid_hashes(docids), docids)
    _duplicate_error(source, dup, lines, docids, names[int(qidx[dup[1]])] if dup else "")
    rank_of = np.argsort(np.argsort(np.array(names, dtype=np.str_), kind="stable"))
    order = np.argsort(rank_of[qidx], kind="stable")
    counts = np.bincount(rank_of[qidx], minlength=len(names))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Qrels(sorted(names), offsets, _decode(docids[order]), grades[order].astype(np.int64))


def trec_order(docs: Mapping[str, float]) -> list[tuple[str, float]]:
    """trec_eval's order: score descending in float32, then docid descending."""
    return sorted(docs.items(), key=lambda item: (float(np.float32(item[1])), item[0]), reverse=True)


def write_run(path: str | Path, run: Run | Mapping[str, Mapping[str, float]], *, tag: str = "assay") -> int:
    """Write a TREC run atomically, queries sorted, ranks 1..n in trec_eval's order; returns lines written."""
    table = run if not isinstance(run, Run) else run_table(run)
    count = 0
    with atomic_write(path) as out:
        for qid in sorted(table):
            for rank, (doc, score) in enumerate(trec_order(table[qid]), start=1):
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


def run_table(run: Run) -> dict[str, dict[str, float]]:
    """A run back as ``{qid: {docid: score}}``, queries in the run's order."""
    if run.source is not None:
        return {q: dict(d) for q, d in run.source.items()}
    docs = run.docids_at(np.arange(len(run.scores), dtype=np.int64))
    table: dict[str, dict[str, float]] = {q: {} for q in run.query_ids}
    for q, d, s in zip(run.qidx.tolist(), docs, run.scores.tolist(), strict=True):
        table[run.query_ids[q]][d] = s
    return table
