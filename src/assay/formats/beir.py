"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/SPLIT.tsv``, read and written.

::

    DIR/
      corpus.jsonl      {"_id": ..., "title": ..., "text": ..., "metadata": {...}}   one passage per line
      queries.jsonl     {"_id": ..., "text": ..., "metadata": {...}}
      qrels/test.tsv    header "query-id<TAB>corpus-id<TAB>score", then one integer-graded pair per line

Reading is strict where BEIR's own loader is silent: a line that is not a JSON object, an ``_id`` that is missing
or repeated, a ``text`` that is not a string, a qrels line without three tab-separated fields, a score that is not
an integer, or a (query, document) pair given twice raises :class:`~assay.errors.FormatError` naming the file and
the line. ``_id`` values may be JSON strings or integers (read as strings). The qrels header is optional (a first
line whose score column is not an integer and whose first field is ``query-id`` is taken as the header). A qrels
line split by spaces instead of tabs is accepted when it has exactly three fields.

Ids written to a BEIR file may not hold a tab, carriage return or newline (they would break the TSV):
:func:`escape_id` percent-encodes such characters, and the caller reports how many ids it changed.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import FormatError, InputError
from assay.formats.atomic import atomic_write
from assay.formats.jsonl import iter_json_lines
from assay.formats.progress import reading, writing

__all__ = [
    "CORPUS",
    "QRELS_HEADER",
    "QUERIES",
    "TSV_UNSAFE",
    "BeirDoc",
    "BeirQrel",
    "BeirQuery",
    "escape_id",
    "find_qrels",
    "read_corpus",
    "read_qrels_tsv",
    "read_queries",
    "write_beir",
]

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
QRELS_HEADER = ("query-id", "corpus-id", "score")
_CORPUS_SHAPE = '{"_id": "...", "title": "...", "text": "..."}'
_QUERY_SHAPE = '{"_id": "...", "text": "..."}'
_QRELS_SHAPE = "3 tab-separated fields: query-id corpus-id score (an integer)"
TSV_UNSAFE = re.compile(r"[\t\r\n]")


@dataclass(frozen=True)
class BeirDoc:
    """One line of ``corpus.jsonl``; ``line`` is its 1-based line number."""

    line: int
    id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BeirQuery:
    """One line of ``queries.jsonl``."""

    line: int
    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BeirQrel:
    """One line of a qrels TSV file."""

    line: int
    query_id: str
    doc_id: str
    score: int


def escape_id(value: str, unsafe: re.Pattern[str] = TSV_UNSAFE) -> str:
    """``value`` with every character matched by ``unsafe`` percent-encoded as UTF-8 (``"a\\tb"`` -> ``"a%09b"``)."""
    return unsafe.sub(lambda m: urllib.parse.quote(m.group(), safe=""), value)


# --------------------------------------------------------------------------------------------------- reading


def read_corpus(path: str | Path) -> list[BeirDoc]:
    """Every passage of a BEIR ``corpus.jsonl``, in file order (see the module docstring for the checks)."""
    source = Path(path)
    out: list[BeirDoc] = []
    seen: dict[str, int] = {}
    for line, obj in iter_json_lines(source, header="optional"):
        doc_id = _id(source, line, obj, seen, _CORPUS_SHAPE)
        title = obj.get("title") or ""
        if not isinstance(title, str):
            raise FormatError(source, line, f"'title' is a JSON {type(title).__name__}", "a string title")
        text = _text(source, line, obj, _CORPUS_SHAPE)
        out.append(BeirDoc(line, doc_id, text, title, _metadata(source, line, obj)))
    return out


def read_queries(path: str | Path) -> list[BeirQuery]:
    """Every query of a BEIR ``queries.jsonl``, in file order."""
    source = Path(path)
    out: list[BeirQuery] = []
    seen: dict[str, int] = {}
    for line, obj in iter_json_lines(source, header="optional"):
        query_id = _id(source, line, obj, seen, _QUERY_SHAPE)
        out.append(BeirQuery(line, query_id, _text(source, line, obj, _QUERY_SHAPE), _metadata(source, line, obj)))
    return out


def _id(path: Path, line: int, obj: dict[str, Any], seen: dict[str, int], shape: str) -> str:
    raw = obj.get("_id")
    if isinstance(raw, bool) or not isinstance(raw, str | int) or raw == "":
        raise FormatError(path, line, "no '_id' (a non-empty string or integer)", shape)
    value = str(raw)
    if value in seen:
        raise FormatError(path, line, f"_id {value!r} again (first on line {seen[value]})", "unique ids")
    seen[value] = line
    return value


def _text(path: Path, line: int, obj: dict[str, Any], shape: str) -> str:
    text = obj.get("text")
    if not isinstance(text, str):
        found = "no 'text' field" if text is None else f"'text' is a JSON {type(text).__name__}"
        raise FormatError(path, line, found, shape)
    return text


def _metadata(path: Path, line: int, obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise FormatError(path, line, f"'metadata' is a JSON {type(meta).__name__}", "a JSON object or no metadata")
    return meta


def find_qrels(folder: str | Path, split: str = "test") -> Path:
    """``folder/qrels/SPLIT.tsv``; when absent, an :class:`InputError` listing the splits the folder has."""
    base = Path(folder)
    path = base / "qrels" / f"{split}.tsv"
    if path.is_file():
        return path
    found = sorted(p.stem for p in (base / "qrels").glob("*.tsv")) if (base / "qrels").is_dir() else []
    have = f"it has {', '.join(found)}" if found else "it has no qrels/*.tsv at all"
    raise InputError(f"{path} does not exist ({have}): choose a split with --split, or check that {base} is BEIR")


def read_qrels_tsv(path: str | Path) -> list[BeirQrel]:
    """The pairs of a BEIR qrels TSV file, in file order; a repeated pair raises naming both lines."""
    source = Path(path)
    out: list[BeirQrel] = []
    seen: dict[tuple[str, str], int] = {}
    for index, (line, fields) in enumerate(_tsv_rows(source)):
        if index == 0 and _is_header(fields):
            continue
        score = _score(source, line, fields[2])
        key = (fields[0], fields[1])
        if key in seen:
            first = seen[key]
            raise FormatError(
                source, line, f"pair {key[0]!r} {key[1]!r} again (first on line {first})", "each pair once"
            )
        seen[key] = line
        out.append(BeirQrel(line, fields[0], fields[1], score))
    return out


def _tsv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FormatError(path, None, f"cannot read: {exc.strerror}", "a readable qrels TSV file") from None
    meter = reading(path)
    for number, data in enumerate(raw.split(b"\n"), start=1):
        meter.add(len(data) + 1)
        try:
            text = data.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            raise FormatError(path, number, f"bytes that are not UTF-8 at column {exc.start + 1}", "UTF-8") from None
        if not text.strip():
            continue
        fields = text.split("\t")
        if len(fields) != 3:
            fields = text.split()
        if len(fields) != 3 or not all(fields):
            raise FormatError(path, number, f"{len(fields)} field{'s' * (len(fields) != 1)}", _QRELS_SHAPE)
        yield number, [f.strip() for f in fields]
    meter.finish()


def _is_header(fields: list[str]) -> bool:
    try:
        int(fields[2])
    except ValueError:
        return fields[0].lower() in ("query-id", "query_id", "qid", "query")
    return False


def _score(path: Path, line: int, token: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise FormatError(path, line, f"score {token!r} is not an integer", _QRELS_SHAPE) from None


# --------------------------------------------------------------------------------------------------- writing


def write_beir(
    folder: str | Path,
    corpus: Iterable[BeirDoc],
    queries: Iterable[BeirQuery],
    qrels: Iterable[BeirQrel],
    *,
    split: str = "test",
) -> dict[str, int]:
    """Write a BEIR folder (each file atomically); returns the number of lines per file.

    Ids are written as given: escape them first (:func:`escape_id`). ``line`` fields of the records are ignored.
    """
    base = Path(folder)
    docs = ({"_id": d.id, "title": d.title, "text": d.text, "metadata": d.metadata} for d in corpus)
    topics = ({"_id": q.id, "text": q.text, "metadata": q.metadata} for q in queries)
    counts = {
        CORPUS: _write_lines(base / CORPUS, docs, _size(corpus)),
        QUERIES: _write_lines(base / QUERIES, topics, _size(queries)),
    }
    name = f"qrels/{split}.tsv"
    with atomic_write(base / name) as out:
        out.write("\t".join(QRELS_HEADER) + "\n")
        counts[name] = 0
        for qrel in writing(base / name, qrels):
            out.write(f"{qrel.query_id}\t{qrel.doc_id}\t{int(qrel.score)}\n")
            counts[name] += 1
    return counts


def _size(records: Iterable[Any]) -> int | None:
    return len(records) if isinstance(records, Sized) else None


def _write_lines(path: Path, objects: Iterable[dict[str, Any]], total: int | None) -> int:
    count = 0
    with atomic_write(path) as out:
        for obj in writing(path, objects, total):
            out.write(json.dumps(obj, ensure_ascii=False) + "\n")
            count += 1
    return count
