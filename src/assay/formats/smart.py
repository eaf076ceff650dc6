"""SMART-format test collections (CISI, CACM as the Glasgow IR group distributes them): documents, queries, qrels.

A SMART file is a list of records, each opened by ``.I <id>`` and made of fields opened by a one-letter line
(``.T`` title, ``.W`` text, ``.A`` authors, ...). A folder holds the documents (``*.all``), the queries (``*.qry``
or ``query.text``) and the relevant pairs (``*.rel`` or ``qrels.text``: ``query_id doc_id ...`` per line; every
listed pair is relevant, grade 1). Ids are compared as numbers where they are numbers (CACM writes query 1 as
``01``). A malformed line raises :class:`FormatError` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from assay.errors import FormatError

__all__ = ["SmartCollection", "is_smart_folder", "read_smart", "read_smart_folder"]

_FIELD = re.compile(r"^\.([A-Z])(?:\s+(\S+))?\s*$")


@dataclass(frozen=True)
class SmartCollection:
    """Documents ``{id: (title, body)}``, query texts ``{id: text}`` and relevant pairs ``{query_id: {doc_id: 1}}``."""

    name: str
    documents: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def read_smart(path: Path) -> dict[str, dict[str, str]]:
    """Records of a SMART-format file as ``{id: {field letter: text}}`` (whitespace folded)."""
    records: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    name = ""
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        match = _FIELD.match(line)
        if match and match.group(1) == "I":
            if not match.group(2):
                raise FormatError(path, number, "'.I' without an id", "'.I <id>' at the start of each record")
            current, name = {}, ""
            records[match.group(2)] = current
        elif match:
            name = match.group(1)
        elif current is not None and name:
            current.setdefault(name, []).append(line)
    return {rid: {k: " ".join(" ".join(v).split()) for k, v in rec.items()} for rid, rec in records.items()}


def is_smart_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a SMART documents file (``*.all``)."""
    return folder.is_dir() and any(p.suffix.casefold() == ".all" for p in folder.iterdir())


def read_smart_folder(folder: Path, name: str | None = None) -> SmartCollection:
    """The collection in ``folder`` (see the module docstring for the file names)."""
    docs_path = _one(folder, (".all",))
    queries_path = _one(folder, (".qry", "query.text"))
    rel_path = _one(folder, (".rel", "qrels.text"))
    docs = {_id(k): (v.get("T", ""), v.get("W", "")) for k, v in read_smart(docs_path).items()}
    queries = {_id(qid): rec.get("W", "") for qid, rec in read_smart(queries_path).items()}
    qrels: dict[str, dict[str, int]] = {}
    for path, number, fields in _rows(rel_path):
        if len(fields) < 2:
            raise FormatError(path, number, f"{len(fields)} field(s)", "'query_id doc_id ...'")
        qrels.setdefault(_id(fields[0]), {})[_id(fields[1])] = 1
    return SmartCollection(name or folder.name.casefold(), docs, queries, qrels)


def _rows(path: Path) -> Iterator[tuple[Path, int, list[str]]]:
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        if fields := line.split():
            yield path, number, fields


def _id(value: str) -> str:
    return str(int(value)) if value.isdigit() else value


def _one(folder: Path, hints: tuple[str, ...]) -> Path:
    names = {p: p.name.casefold() for p in folder.iterdir()}
    found = sorted(p for p, name in names.items() if any(name.endswith(h) for h in hints) and "readme" not in name)
    if not found:
        raise FormatError(
            folder, None, f"no file named like {' / '.join(hints)}", "a SMART folder: *.all, *.qry, *.rel"
        )
    return found[0]
