"""Query (topic) files: ``qid<TAB>text`` lines, JSONL, or classic TREC ``<top>`` topic files; and the TSV writer.

Which reader is used:

- ``.jsonl`` / ``.json``: one object per line with an id (``_id``, ``id``, ``query_id`` or ``qid``) and a text
  (``text``, ``query``, ``question`` or ``title``); BEIR's ``queries.jsonl`` is one of these.
- a file containing ``<top>``: TREC topics; the id is the ``<num>`` field (a ``Number:`` prefix dropped) and the
  text is the ``<title>`` field (a ``Topic:`` prefix dropped), which is what TREC runs are usually made from.
- anything else: ``qid<TAB>text`` per line (MS MARCO's ``queries.tsv``, assay's ``topics.tsv``); a line without a
  tab splits at its first whitespace.

Blank lines are skipped; a line without text, or a query id given twice, raises :class:`~assay.errors.FormatError`
naming the file and the line. :func:`write_topics` writes ``qid<TAB>text`` with whitespace in the text folded to
single spaces (so every query stays on one line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from assay.errors import FormatError
from assay.formats.atomic import atomic_write
from assay.formats.jsonl import iter_json_lines

__all__ = ["Topic", "read_topics", "write_topics"]

_ID_KEYS = ("_id", "id", "query_id", "qid")
_TEXT_KEYS = ("text", "query", "question", "title")
_TOP = re.compile(r"<top>(.*?)(?:</top>|(?=<top>)|\Z)", re.DOTALL | re.IGNORECASE)
_FIELD = re.compile(r"<(num|title)>(.*?)(?=<[a-z/]|\Z)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Topic:
    """A query id and its text, with the line it came from."""

    line: int
    id: str
    text: str


def read_topics(path: str | Path) -> list[Topic]:
    """The queries of ``path`` in file order (see the module docstring for the formats)."""
    source = Path(path)
    if source.suffix.lower() in (".jsonl", ".json"):
        topics = _json_topics(source)
    else:
        text = _read_text(source)
        topics = _sgml_topics(source, text) if "<top>" in text.lower() else _tsv_topics(source, text)
    _check_unique(source, topics)
    return topics


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(path, None, f"bytes that are not UTF-8 at byte {exc.start}", "a UTF-8 text file") from None
    except OSError as exc:
        raise FormatError(path, None, f"cannot read: {exc.strerror}", "a readable queries file") from None


def _json_topics(path: Path) -> list[Topic]:
    out = []
    for line, obj in iter_json_lines(path, header="optional"):
        qid = next((obj[k] for k in _ID_KEYS if obj.get(k) not in (None, "")), None)
        text = next((obj[k] for k in _TEXT_KEYS if isinstance(obj.get(k), str) and obj[k].strip()), None)
        if qid is None or isinstance(qid, bool | dict | list) or text is None:
            raise FormatError(path, line, "no query id or no query text", '{"_id": "q1", "text": "..."}')
        out.append(Topic(line, str(qid), " ".join(text.split())))
    return out


def _tsv_topics(path: Path, text: str) -> list[Topic]:
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        qid, sep, query = raw.partition("\t") if "\t" in raw else raw.strip().partition(" ")
        if not sep or not qid.strip() or not query.strip():
            raise FormatError(path, number, "a query id without text", "qid<TAB>query text")
        out.append(Topic(number, qid.strip(), " ".join(query.split())))
    return out


def _sgml_topics(path: Path, text: str) -> list[Topic]:
    out = []
    for block in _TOP.finditer(text):
        line = text.count("\n", 0, block.start()) + 1
        fields = {m.group(1).lower(): " ".join(m.group(2).split()) for m in _FIELD.finditer(block.group(1))}
        qid = re.sub(r"^number:\s*", "", fields.get("num", ""), flags=re.IGNORECASE)
        title = re.sub(r"^topic:\s*", "", fields.get("title", ""), flags=re.IGNORECASE)
        if not qid or not title:
            raise FormatError(path, line, "a <top> without <num> or <title>", "<top> <num> 301 <title> text </top>")
        out.append(Topic(line, qid, title))
    return out


def _check_unique(path: Path, topics: list[Topic]) -> None:
    seen: dict[str, int] = {}
    for topic in topics:
        if topic.id in seen:
            raise FormatError(
                path, topic.line, f"query id {topic.id!r} again (first on line {seen[topic.id]})", "unique query ids"
            )
        seen[topic.id] = topic.line


def write_topics(path: str | Path, topics: Iterable[tuple[str, str]]) -> int:
    """Write ``(qid, text)`` pairs as ``qid<TAB>text`` lines atomically; returns the count."""
    count = 0
    with atomic_write(path) as out:
        for qid, text in topics:
            out.write(f"{qid}\t{' '.join(text.split())}\n")
            count += 1
    return count
