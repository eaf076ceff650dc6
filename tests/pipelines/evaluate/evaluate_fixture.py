"""A small golden set and runs for the evaluator's tests, built by hand (not by assay build).

Twelve questions about twelve invented products. Each product has an answer chunk (the exact fact, graded 3), a
related chunk (same product, no answer, graded 1) and a care chunk (same product, unlabelled: the evaluator must judge
it). Each question has one reference claim, one vital and one okay nugget, and nugget support on its answer chunk.
Question types and difficulties alternate so strata have more than one query each.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.formats.golden import GoldenSet
from assay.types import (
    Chunk,
    Claim,
    Document,
    LabelSource,
    Manifest,
    Nugget,
    NuggetSupport,
    Provenance,
    Question,
    RelevanceLabel,
)

PRODUCTS = [
    ("Alder", "kettle", 14), ("Birch", "lantern", 30), ("Cedar", "stove", 45), ("Dunlin", "tent", 60),
    ("Eider", "jacket", 21), ("Fulmar", "backpack", 90), ("Gannet", "sleeping bag", 7), ("Heron", "headlamp", 12),
    ("Ibis", "water filter", 28), ("Jacana", "trekking pole", 5), ("Kestrel", "dry bag", 18), ("Linnet", "hammock", 40),
]  # fmt: skip
TYPES = ("factoid", "numeric", "procedural")
DIFFICULTIES = ("easy", "hard")
TIME = datetime(2025, 1, 1, tzinfo=UTC)


def qid(i: int) -> str:
    return f"q{i:02d}"


def answer_id(i: int) -> str:
    return f"d{i:02d}#0-ans"


def related_id(i: int) -> str:
    return f"d{i:02d}#1-rel"


def care_id(i: int) -> str:
    return f"d{i:02d}#2-care"


def answer_text(i: int) -> str:
    name, thing, days = PRODUCTS[i]
    return f"The {name} {thing} warranty lasts {days} days from the date of purchase."


def _chunks(i: int) -> list[Chunk]:
    name, thing, _ = PRODUCTS[i]
    doc = f"d{i:02d}"
    texts = [
        answer_text(i),
        f"The {name} {thing} comes in green and grey and ships in a recycled box.",
        f"Clean the {name} {thing} with mild soap and let it dry before storage.",
    ]
    ids = [answer_id(i), related_id(i), care_id(i)]
    return [
        Chunk(id=cid, doc_id=doc, ordinal=n, text=text) for n, (cid, text) in enumerate(zip(ids, texts, strict=True))
    ]


def _question(i: int) -> Question:
    name, thing, days = PRODUCTS[i]
    return Question(
        id=qid(i),
        text=f"How many days does the {name} {thing} warranty last?",
        type=TYPES[i % len(TYPES)],
        difficulty=DIFFICULTIES[i % 2],
        reference_answer=answer_text(i),
        source_doc_ids=[f"d{i:02d}"],
        source_chunk_ids=[answer_id(i)],
        claims=[Claim(id=f"{qid(i)}-c1", text=answer_text(i), supported_by=[answer_id(i)])],
        nuggets=[
            Nugget(id=f"{qid(i)}-n1", text=f"The {name} {thing} warranty lasts {days} days.", importance="vital"),
            Nugget(id=f"{qid(i)}-n2", text="The warranty starts at the date of purchase.", importance="okay"),
        ],
        metadata={"product": thing.split()[0]},
    )


def label(q: str, c: str, grade: int | None, source: LabelSource = "judge") -> RelevanceLabel:
    return RelevanceLabel(
        query_id=q, chunk_id=c, grade=grade, provenance=Provenance(source=source, model="fixture", time=TIME)
    )


def make_golden(source: LabelSource = "judge", n: int = len(PRODUCTS)) -> GoldenSet:
    """The golden set in memory; ``source`` is the provenance of its qrels (``human`` for imported human qrels)."""
    chunks = [c for i in range(n) for c in _chunks(i)]
    docs = [Document(id=f"d{i:02d}", source=f"d{i:02d}.md", text="", content_hash="x") for i in range(n)]
    qrels = [label(qid(i), answer_id(i), 3, source) for i in range(n)]
    qrels += [label(qid(i), related_id(i), 1, source) for i in range(n)]
    support = [NuggetSupport(query_id=qid(i), nugget_id=f"{qid(i)}-n1", chunk_ids=[answer_id(i)]) for i in range(n)]
    manifest = Manifest(assay_version="test")
    return GoldenSet(manifest, docs, chunks, [_question(i) for i in range(n)], qrels, support)


def save_golden(folder: Path, source: LabelSource = "judge") -> Path:
    make_golden(source).save(folder)
    return folder


def write_run(path: Path, lines: Iterable[dict[str, Any] | str], header: bool = True) -> Path:
    rows = [json.dumps({"assay": "runs", "version": 1})] if header else []
    rows += [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def good_lines(n: int = len(PRODUCTS), answers: bool = True) -> list[dict[str, Any]]:
    """Answer chunk first, then the care and related chunks, then a chunk of the next product; a faithful answer."""
    out = []
    for i in range(n):
        ranked = [answer_id(i), care_id(i), related_id(i), answer_id((i + 1) % n)]
        line: dict[str, Any] = {"query_id": qid(i), "retrieved": ranked}
        if answers:
            line |= {"answer": answer_text(i), "citations": [answer_id(i)]}
        out.append(line)
    return out


def weak_lines(n: int = len(PRODUCTS), answers: bool = True) -> list[dict[str, Any]]:
    """Other products' chunks first, the answer chunk fourth (or not at all for every third query)."""
    out = []
    for i in range(n):
        j = (i + 3) % n
        ranked = [related_id(j), care_id(j), related_id(i)] + ([answer_id(i)] if i % 3 else [])
        line: dict[str, Any] = {"query_id": qid(i), "retrieved": ranked}
        if answers:
            name, thing, _ = PRODUCTS[i]
            line["answer"] = f"The {name} {thing} is sold in stores. It has a lifetime guarantee on every part."
        out.append(line)
    return out


def pair_set(lines: Sequence[dict[str, Any]], depth: int) -> set[tuple[str, str]]:
    return {(line["query_id"], cid) for line in lines for cid in line["retrieved"][:depth]}
