"""The graded pairs a judge card is built from: a golden set's labelled pairs, or a SMART collection (CISI) pooled.

Each :class:`ProbeItem` is a (question, passage) pair with the people's grade when there is one and a reference
notion of relevance the probes pick passages by: ``relevant`` True, False, or None (not used where the probes
need a side). From people's labels: grade >= 1 is relevant, 0 is not. From judge labels (a golden set built by a
judge): grade >= 2 is relevant, 0 is not, 1 is neither. Queries are drawn with a seeded RNG, so the same source,
seed and size give the same items.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from assay.corpus.pooling import Bm25Index
from assay.errors import InputError
from assay.formats.golden import GoldenSet
from assay.formats.smart import is_smart_folder, read_smart_folder
from assay.types import Chunk

__all__ = ["ProbeItem", "ProbeSource", "load_source", "pool_smart", "sample_golden"]

SMART_POOL_DEPTH = 10


@dataclass(frozen=True)
class ProbeItem:
    """One (question, passage) pair; ``human`` is the people's grade (None without one)."""

    query_id: str
    question: str
    chunk_id: str
    text: str
    human: int | None
    relevant: bool | None


@dataclass(frozen=True)
class ProbeSource:
    """The items drawn from a source, what the source is, and whether the people's grades are graded (0-3)."""

    kind: str  # "golden" | "smart"
    path: str
    items: list[ProbeItem]
    human_graded: bool

    @property
    def labelled(self) -> list[ProbeItem]:
        """Items with a people's grade."""
        return [item for item in self.items if item.human is not None]


def _draw(query_ids: Iterable[str], queries: int, seed: int) -> list[str]:
    ordered = sorted(query_ids)
    random.Random(f"judge-check:{seed}").shuffle(ordered)
    return sorted(ordered[:queries])


def sample_golden(golden: GoldenSet, path: str, *, queries: int, seed: int) -> ProbeSource:
    """The standing scored labels of ``queries`` questions of ``golden`` drawn with ``seed``."""
    chunks = {c.id: c.text for c in golden.chunks}
    texts = {q.id: q.text for q in golden.questions}
    standing = [label for label in golden.standing() if label.grade is not None and label.query_id in texts]
    chosen = set(_draw({label.query_id for label in standing}, queries, seed))
    items = []
    for label in standing:
        if label.query_id not in chosen or label.grade is None:
            continue
        human = label.provenance.source == "human"
        relevant = label.grade >= 1 if human else (True if label.grade >= 2 else False if label.grade == 0 else None)
        grade = label.grade if human else None
        items.append(
            ProbeItem(label.query_id, texts[label.query_id], label.chunk_id, chunks[label.chunk_id], grade, relevant)
        )
    graded = any(item.human is not None and item.human >= 2 for item in items)
    return ProbeSource("golden", path, items, graded)


def pool_smart(folder: Path, *, queries: int, seed: int) -> ProbeSource:
    """A SMART collection's judged queries (drawn with ``seed``), each with its BM25 top 10 over title and body;
    a pooled document the people listed is grade 1, any other grade 0 (as classic pooled experiments count)."""
    collection = read_smart_folder(folder)
    chunks = [
        Chunk(id=doc_id, doc_id=doc_id, ordinal=0, text=f"{title}\n{body}".strip())
        for doc_id, (title, body) in collection.documents.items()
        if (title or body).strip()
    ]
    judged = [q for q, docs in collection.qrels.items() if docs and collection.queries.get(q)]
    index = Bm25Index.build(chunks)
    texts = {c.id: c.text for c in chunks}
    items = []
    for qid in _draw(judged, queries, seed):
        question = collection.queries[qid]
        for doc_id, _ in index.search(question, SMART_POOL_DEPTH):
            grade = collection.qrels[qid].get(doc_id, 0)
            items.append(ProbeItem(qid, question, doc_id, texts[doc_id], grade, grade >= 1))
    return ProbeSource("smart", str(folder), items, False)


def load_source(path: Path, *, queries: int, seed: int) -> ProbeSource:
    """A golden-set folder (``manifest.json``) or a SMART folder (``*.all``); anything else raises with the fix."""
    if (path / "manifest.json").is_file():
        return sample_golden(GoldenSet.load(path), str(path), queries=queries, seed=seed)
    if is_smart_folder(path):
        return pool_smart(path, queries=queries, seed=seed)
    raise InputError(
        f"--labels {path}: neither a golden set (manifest.json) nor a SMART collection (*.all, *.qry, *.rel); "
        "for TREC or BEIR qrels make a golden set first with `assay import trec|beir ... --source human`"
    )
