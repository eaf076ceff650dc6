"""RAGAS test sets: JSONL and CSV with the column names of RAGAS's ``SingleTurnSample`` and ``Testset``.

A golden test set row (what RAGAS's test-set generator writes, plus the id column its ID-based context metrics read):

=========================  ======================================================================================
``user_input``             the question
``reference``              the reference answer (absent or empty when the golden set has none)
``reference_contexts``     texts of the relevant chunks, most relevant first
``reference_context_ids``  their chunk ids, in the same order (read by ``IDBasedContextPrecision`` / ``Recall``)
``synthesizer_name``       what made the question (RAGAS's ``Testset`` requires it): the name a RAGAS test set came
                           with, else ``assay_`` + the question type (``assay_factoid``, ``assay_multi_hop``)
``query_id``               assay's question id; RAGAS ignores unknown fields, ``assay import ragas`` reads it back
=========================  ======================================================================================

One JSONL file serves both RAGAS shapes (checked with ragas 0.4.3): ``Testset.from_jsonl`` pops ``synthesizer_name``
and reads the rest of the row as the ``SingleTurnSample`` (a ``TestsetSample``); ``EvaluationDataset.from_jsonl``
reads each row as a ``SingleTurnSample``, whose model ignores fields it does not know (``synthesizer_name``,
``query_id``). Its ``IDBasedContextRecall`` and ``IDBasedContextPrecision`` score the id columns. No header line:
RAGAS reads every line as a sample. ragas is not a dependency; tests check the file against a model of that schema.

In the CSV, list columns hold JSON arrays (RAGAS's own ``to_csv`` leaves lists as Python reprs and RAGAS 0.4 reads
no CSV: load it with pandas and ``json.loads`` the list columns, or use the JSONL). Reading accepts JSON arrays,
Python list literals (what pandas writes) and, for a single context, a bare string. Reading also accepts the names
of RAGAS 0.1 (``question``, ``ground_truth``) and ``id`` for ``query_id``. ``reference_tool_calls`` (RAGAS's tool
calls of a multi-turn sample: ``[{"name", "args"}]``; ``arguments`` for ``args`` and OpenAI's ``{"function": {"name",
"arguments": "<JSON>"}}`` are read too) becomes the question's reference tool calls. Other columns
(``synthesizer_name``, ``retrieved_contexts``, ``response``, ...) are kept in :attr:`RagasRow.extra`. Malformed rows
raise :class:`~assay.errors.FormatError` naming
the file and the line (for CSV the physical line where the row starts).
"""

from __future__ import annotations

import ast
import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.formats.atomic import atomic_write
from assay.formats.csv_rows import csv_rows
from assay.formats.jsonl import iter_json_lines
from assay.formats.progress import writing

__all__ = [
    "COLUMNS",
    "RAGAS_SCHEMA",
    "RagasRow",
    "RagasRunRow",
    "read_ragas",
    "read_ragas_run",
    "write_ragas_csv",
    "write_ragas_jsonl",
]

RAGAS_SCHEMA = "ragas 0.3 SingleTurnSample"
COLUMNS = ("query_id", "user_input", "reference", "reference_contexts", "reference_context_ids", "synthesizer_name")
_ALIASES = {"question": "user_input", "ground_truth": "reference", "id": "query_id"}
_LIST_COLUMNS = ("reference_contexts", "reference_context_ids")
_SHAPE = '{"user_input": "...", "reference": "...", "reference_contexts": ["..."]}'


@dataclass(frozen=True)
class RagasRow:
    """One test-set row; ``reference_context_ids`` is None when the file has no ids for the contexts."""

    line: int
    user_input: str
    reference: str | None
    reference_contexts: list[str]
    reference_context_ids: list[str] | None = None
    query_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    reference_tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (name, arguments)


def read_ragas(path: str | Path) -> list[RagasRow]:
    """Rows of a RAGAS test set, ``.jsonl`` or ``.csv`` (by the file's suffix)."""
    source = Path(path)
    suffix = source.suffix.lower()
    if suffix == ".csv":
        return [_row(source, line, obj) for line, obj in _csv_records(source)]
    if suffix in (".jsonl", ".json"):
        return [_row(source, line, obj) for line, obj in iter_json_lines(source, header="optional")]
    raise InputError(f"{source}: unknown RAGAS file type {suffix or '(none)'}; give a .jsonl or .csv file")


@dataclass(frozen=True)
class RagasRunRow:
    """One row of RAGAS evaluation data: a question, what the system retrieved (texts, ids when given) and said."""

    line: int
    user_input: str
    contexts: list[str]
    context_ids: list[str | None]
    response: str | None
    reference: str | None
    query_id: str | None


def read_ragas_run(path: str | Path) -> list[RagasRunRow]:
    """RAGAS evaluation data (``EvaluationDataset`` rows: ``user_input``, ``retrieved_contexts``, optional
    ``retrieved_context_ids``, ``response``, ``reference``), ``.jsonl`` or ``.csv``; list cells as for
    :func:`read_ragas`. A row without ``user_input``, or with ids not matching its contexts one to one, raises
    :class:`~assay.errors.FormatError` naming the file and line."""
    out = []
    for row in read_ragas(path):
        extra = dict(row.extra)
        contexts = _strings(Path(path), row.line, "retrieved_contexts", extra.pop("retrieved_contexts", None)) or []
        ids = _strings(Path(path), row.line, "retrieved_context_ids", extra.pop("retrieved_context_ids", None))
        if ids is not None and len(ids) != len(contexts):
            problem = f"{len(ids)} retrieved_context_ids for {len(contexts)} retrieved_contexts"
            raise FormatError(path, row.line, problem, "one id per context, in the same order")
        response = extra.get("response")
        if response is not None and not isinstance(response, str):
            raise FormatError(path, row.line, f"'response' is a {type(response).__name__}", "the answer as a string")
        pairs: list[str | None] = list(ids) if ids is not None else [None] * len(contexts)
        out.append(RagasRunRow(row.line, row.user_input, contexts, pairs, response or None, row.reference,
                               row.query_id))  # fmt: skip
    return out


def _row(path: Path, line: int, raw: Mapping[str, Any]) -> RagasRow:
    obj = {_ALIASES.get(k, k): v for k, v in raw.items()}
    question = obj.pop("user_input", None)
    if not isinstance(question, str) or not question.strip():
        raise FormatError(path, line, "no question in 'user_input' (a non-empty string)", _SHAPE)
    reference = obj.pop("reference", None)
    if reference is not None and not isinstance(reference, str):
        raise FormatError(path, line, f"'reference' is a {type(reference).__name__}", "a string answer")
    contexts = _strings(path, line, "reference_contexts", obj.pop("reference_contexts", None)) or []
    ids = _strings(path, line, "reference_context_ids", obj.pop("reference_context_ids", None))
    if ids is not None and len(ids) != len(contexts):
        problem = f"{len(ids)} reference_context_ids for {len(contexts)} reference_contexts"
        raise FormatError(path, line, problem, "one id per context, in the same order")
    query_id = obj.pop("query_id", None)
    query_id = None if query_id in (None, "") else str(query_id)
    calls = _tool_calls(path, line, obj.pop("reference_tool_calls", None))
    return RagasRow(line, question, reference or None, contexts, ids, query_id, obj, calls)


_CALL_SHAPE = '[{"name": "calculator", "args": {"expression": "2 + 2"}}]'


def _tool_calls(path: Path, line: int, value: Any) -> list[tuple[str, dict[str, Any]]]:
    """``reference_tool_calls`` as (name, arguments): RAGAS's ``{"name", "args"}``, ``{"name", "arguments"}`` or
    OpenAI's ``{"function": {"name", "arguments"}}``, arguments an object or a string holding one; in a CSV cell, a
    JSON array."""
    if value is None or value in ("", []):
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise FormatError(path, line, "'reference_tool_calls' is not JSON", _CALL_SHAPE) from None
    if not isinstance(value, list):
        raise FormatError(path, line, f"'reference_tool_calls' is a {type(value).__name__}", _CALL_SHAPE)
    out = []
    for i, raw in enumerate(value, start=1):
        call = raw.get("function", raw) if isinstance(raw, dict) else None
        name = call.get("name") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(name, str) or not name.strip():
            raise FormatError(path, line, f"reference tool call {i} has no name", _CALL_SHAPE)
        arguments = call.get("args", call.get("arguments"))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                arguments = None
        arguments = {} if arguments is None and "args" not in call and "arguments" not in call else arguments
        if not isinstance(arguments, dict):
            raise FormatError(path, line, f"the arguments of reference tool call {i} ({name}) are not a JSON object",
                              _CALL_SHAPE)  # fmt: skip
        out.append((name, arguments))
    return out


def _strings(path: Path, line: int, column: str, value: Any) -> list[str] | None:
    """A list column as strings: a list, or in CSV a JSON array, a Python list literal or one bare string."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = _parse_list_cell(value)
    if not isinstance(value, list):
        raise FormatError(path, line, f"'{column}' is a {type(value).__name__}", "a list of strings")
    bad = [v for v in value if isinstance(v, bool) or not isinstance(v, str | int)]
    if bad:
        raise FormatError(path, line, f"'{column}' holds a {type(bad[0]).__name__}", "a list of strings")
    return [str(v) for v in value]


def _parse_list_cell(cell: str) -> Any:
    text = cell.strip()
    if not text.startswith("["):
        return [cell]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return [cell]  # a context that merely starts with "["


def _csv_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(path, None, f"bytes that are not UTF-8 at byte {exc.start}", "a UTF-8 CSV file") from None
    except OSError as exc:
        raise FormatError(path, None, f"cannot read: {exc.strerror}", "a readable CSV file") from None
    rows = csv_rows(path, text)  # a quote that swallows rows is an error at its line
    header = next(rows, (1, []))[1]
    for start, cells in rows:
        if len(cells) > len(header):
            raise FormatError(path, start, "more cells than header columns", "one cell per column")
        if any(cells):
            yield start, {k: v for k, v in zip(header, cells, strict=False) if k}


# --------------------------------------------------------------------------------------------------- writing


def write_ragas_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write rows as JSONL (one object per line, keys in :data:`COLUMNS` order, then ``reference_tool_calls`` where
    a row has some), atomically; returns the count."""
    count = 0
    with atomic_write(path) as out:
        for row in writing(path, rows):
            calls = {"reference_tool_calls": row["reference_tool_calls"]} if row.get("reference_tool_calls") else {}
            out.write(json.dumps({k: row.get(k) for k in COLUMNS} | calls, ensure_ascii=False) + "\n")
            count += 1
    return count


def write_ragas_csv(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write rows as CSV with a header of :data:`COLUMNS` (and ``reference_tool_calls`` when a row has some); list
    cells are JSON arrays, None is an empty cell."""
    held = list(rows)
    columns = (*COLUMNS, "reference_tool_calls") if any(r.get("reference_tool_calls") for r in held) else COLUMNS
    count = 0
    with atomic_write(path) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in writing(path, held):
            writer.writerow([_cell(row.get(k)) for k in columns])
            count += 1
    return count


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
