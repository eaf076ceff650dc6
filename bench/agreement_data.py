"""Test collections with human labels for bench/agreement.py: CISI (SMART format), BEIR and TREC folders.

A :class:`Collection` holds passages (one per document: its title and body joined, the title also kept apart for
the title-only retriever), the query texts, and the human labels as ``{query_id: {doc_id: grade}}``. Human
relevance is binary here: a pair is relevant when its grade is >= 1 (CISI lists relevant pairs only; graded
collections are reduced so); pairs the humans did not judge count as not relevant, as in classic experiments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from assay.pipelines.transfer.imports import import_beir, import_trec
from assay.types import Chunk

__all__ = ["Collection", "load_folder", "read_cisi", "read_smart"]

_FIELD = re.compile(r"^\.([A-Z])(?:\s+(\S+))?\s*$")


@dataclass
class Collection:
    """Passages, queries and human grades of one test collection."""

    name: str
    chunks: list[Chunk]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    titles: dict[str, str] = field(default_factory=dict)

    def judged_queries(self) -> list[str]:
        """Queries with at least one relevant document (grade >= 1) and some text, in id order."""
        return sorted(
            (q for q, docs in self.qrels.items() if any(g >= 1 for g in docs.values()) and self.queries.get(q)),
            key=_natural,
        )

    def relevant(self, query_id: str, doc_id: str) -> bool:
        return self.qrels.get(query_id, {}).get(doc_id, 0) >= 1


def _natural(value: str) -> tuple[int, str]:
    return (int(value), "") if value.isdigit() else (1 << 62, value)


def read_smart(path: Path) -> dict[str, dict[str, str]]:
    """Records of a SMART-format file (``.I id`` then ``.T``/``.W``/... fields) as ``{id: {field: text}}``."""
    records: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    name = ""
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        match = _FIELD.match(line)
        if match and match.group(1) == "I":
            if not match.group(2):
                raise ValueError(f"{path}:{number}: '.I' without an id; each record starts with '.I <id>'")
            current, name = {}, ""
            records[match.group(2)] = current
        elif match:
            name = match.group(1)
        elif current is not None and name:
            current.setdefault(name, []).append(line)
    return {rid: {k: " ".join(" ".join(v).split()) for k, v in rec.items()} for rid, rec in records.items()}


def read_cisi(folder: Path) -> Collection:
    """CISI from ``folder`` (CISI.ALL, CISI.QRY, CISI.REL; see its README)."""
    docs = read_smart(folder / "CISI.ALL")
    queries = {qid: rec.get("W", "") for qid, rec in read_smart(folder / "CISI.QRY").items()}
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate((folder / "CISI.REL").read_text().splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 2:
            raise ValueError(f"{folder / 'CISI.REL'}:{number}: expected 'query_id doc_id ...'")
        qrels.setdefault(fields[0], {})[fields[1]] = 1
    return _from_records("cisi", docs, queries, qrels)


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
    topics file, and a corpus .jsonl or folder, found by their names)."""
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
    found = sorted(p for p in folder.iterdir() if any(h in p.name.casefold() for h in hints))
    if not found:
        raise ValueError(
            f"{folder}: no file named like {' / '.join(hints)}; a TREC folder needs a qrels file, a queries or "
            f"topics file and a corpus (.jsonl or folder); a BEIR folder needs corpus.jsonl"
        )
    return found[0]
