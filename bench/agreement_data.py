"""Test collections with human labels for bench/agreement.py: SMART folders (CISI, CACM), Cranfield, BEIR, TREC.

A :class:`Collection` holds passages (one per document: its title and body joined, the title also kept apart for
the title-only retriever), the query texts, and the human labels as ``{query_id: {doc_id: grade}}``. Human
relevance is binary here: a pair is relevant when its grade is >= 1 (CISI lists relevant pairs only; graded
collections are reduced so); pairs the humans did not judge count as not relevant, as in classic experiments.
A graded collection (Cranfield, a BEIR or TREC folder with grades above 1) also says which pairs are strictly
relevant, grade >= 2, for the judge's own grade-2 cut.

Cranfield (``cran.all.1400``, ``cran.qry``, ``cranqrel``, as the Glasgow IR group distributes it) has two quirks,
handled here: its qrels number the queries 1..225 in file order, not by the ``.I`` numbers of ``cran.qry`` (which
skip: 001, 002, 004, 008, ... 365); and its relevance codes run the other way, Cleverdon's 1 "a complete answer"
to 4 "minimum interest" (-1: no interest). assay's 0-3 scale takes code 1 -> 3, 2 -> 2, 3 and 4 -> 1, -1 -> 0, so
the humans' grade >= 2 means "a complete answer or highly relevant".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from assay.formats.smart import read_smart
from assay.pipelines.transfer.imports import import_beir, import_trec
from assay.types import Chunk

__all__ = ["Collection", "load_folder", "read_cisi", "read_cranfield", "read_smart", "read_smart_folder"]


@dataclass
class Collection:
    """Passages, queries and human grades of one test collection."""

    name: str
    chunks: list[Chunk]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def graded(self) -> bool:
        """Whether the humans used more than one relevant grade (then :meth:`strict` means something)."""
        return any(g >= 2 for docs in self.qrels.values() for g in docs.values())

    def judged_queries(self) -> list[str]:
        """Queries with at least one relevant document (grade >= 1) and some text, in id order."""
        return sorted(
            (q for q, docs in self.qrels.items() if any(g >= 1 for g in docs.values()) and self.queries.get(q)),
            key=_natural,
        )

    def relevant(self, query_id: str, doc_id: str) -> bool:
        return self.qrels.get(query_id, {}).get(doc_id, 0) >= 1

    def strict(self, query_id: str, doc_id: str) -> bool:
        return self.qrels.get(query_id, {}).get(doc_id, 0) >= 2


def _natural(value: str) -> tuple[int, str]:
    return (int(value), "") if value.isdigit() else (1 << 62, value)


def read_cisi(folder: Path) -> Collection:
    """CISI from ``folder`` (CISI.ALL, CISI.QRY, CISI.REL; see its README)."""
    return read_smart_folder(folder, name="cisi")


def read_smart_folder(folder: Path, name: str | None = None) -> Collection:
    """A SMART-format collection: documents in ``*.all``, queries in ``*.qry`` or ``query.text``, relevant pairs in
    ``*.rel`` or ``qrels.text`` (``query_id doc_id ...`` per line; every listed pair is relevant). CISI and CACM
    come so. Ids are compared as numbers where they are numbers (CACM's qrels write query 1 as ``01``)."""
    docs_path = _one(folder, (".all",))
    queries_path = _one(folder, (".qry", "query.text"))
    rel_path = _one(folder, (".rel", "qrels.text"))
    docs = {_id(k): v for k, v in read_smart(docs_path).items()}
    queries = {_id(qid): rec.get("W", "") for qid, rec in read_smart(queries_path).items()}
    qrels: dict[str, dict[str, int]] = {}
    for where, fields in _rows(rel_path):
        if len(fields) < 2:
            raise ValueError(f"{where}: expected 'query_id doc_id ...'")
        qrels.setdefault(_id(fields[0]), {})[_id(fields[1])] = 1
    return _from_records(name or folder.name.casefold(), docs, queries, qrels)


def _rows(path: Path) -> Iterator[tuple[str, list[str]]]:
    """``("path:line", fields)`` for each non-blank line of a whitespace-separated file."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if fields := line.split():
            yield f"{path}:{number}", fields


def _id(value: str) -> str:
    return str(int(value)) if value.isdigit() else value


_CRANFIELD_GRADES = {"1": 3, "2": 2, "3": 1, "4": 1, "-1": 0, "5": 0}


def read_cranfield(folder: Path) -> Collection:
    """Cranfield from ``folder`` (cran.all.1400, cran.qry, cranqrel; the quirks are in the module's docstring)."""
    docs = read_smart(folder / "cran.all.1400")
    numbered = list(read_smart(folder / "cran.qry").values())
    queries = {str(position): rec.get("W", "") for position, rec in enumerate(numbered, start=1)}
    qrels: dict[str, dict[str, int]] = {}
    for where, fields in _rows(folder / "cranqrel"):
        if len(fields) != 3 or fields[2] not in _CRANFIELD_GRADES:
            raise ValueError(f"{where}: expected 'query_number doc_id code', code 1-4 or -1")
        if fields[0] not in queries:
            raise ValueError(f"{where}: query {fields[0]}, but cran.qry holds {len(queries)} queries")
        qrels.setdefault(fields[0], {})[fields[1]] = _CRANFIELD_GRADES[fields[2]]
    return _from_records("cranfield", docs, queries, qrels)


def _from_records(
    name: str, docs: dict[str, dict[str, str]], queries: dict[str, str], qrels: dict[str, dict[str, int]]
) -> Collection:
    chunks, titles = [], {}
    for doc_id, rec in docs.items():
        title, body = rec.get("T", ""), rec.get("W", "")
        text = f"{title}\n{body}".strip()
        if text:
            chunks.append(Chunk(id=doc_id, doc_id=doc_id, ordinal=0, text=text))
            titles[doc_id] = title
    return Collection(name, chunks, queries, qrels, titles)


def load_folder(path: Path) -> Collection:
    """A BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) or else a TREC folder (a qrels file, a queries or
    topics file, and a corpus .jsonl or folder, found by their names), or Cranfield or a SMART folder (CISI, CACM)."""
    if (path / "cran.all.1400").is_file():
        return read_cranfield(path)
    if any(p.suffix.casefold() == ".all" for p in path.iterdir()):
        return read_smart_folder(path)
    if (path / "corpus.jsonl").is_file() and (path / "qrels").is_dir():
        golden = import_beir(path).golden
    else:
        qrels = _one(path, ("qrels", "qrel", ".rel"))
        queries = _one(path, ("queries", "topics", ".qry"))
        corpus = _one(path, ("corpus", "docs", "documents"))
        golden = import_trec(qrels, queries, corpus).golden
    table: dict[str, dict[str, int]] = {}
    for label in golden.qrels:
        if label.grade is not None:
            table.setdefault(label.query_id, {})[label.chunk_id] = label.grade
    titles = {c.id: str(c.metadata.get("title") or "") for c in golden.chunks}
    for doc in golden.documents:
        titles.setdefault(doc.id, doc.title or "")
        if doc.title and not titles.get(doc.id):
            titles[doc.id] = doc.title
    queries = {q.id: q.text for q in golden.questions}
    return Collection(path.name, list(golden.chunks), queries, table, titles)


def _one(folder: Path, hints: tuple[str, ...]) -> Path:
    names = {p: p.name.casefold() for p in folder.iterdir()}
    found = sorted(p for p, name in names.items() if any(h in name for h in hints) and "readme" not in name)
    if not found:
        raise ValueError(
            f"{folder}: no file named like {' / '.join(hints)}; a TREC folder needs a qrels file, a queries or "
            f"topics file and a corpus (.jsonl or folder); a BEIR folder needs corpus.jsonl"
        )
    return found[0]
