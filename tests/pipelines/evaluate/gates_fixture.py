"""A golden set of long chunks and runs that cut the same text short, for the gates' half-a-unit rule.

Six documents of three chunks of exactly :data:`CHUNK` (1,200) characters each, joined by a blank line (offsets
given). Question ``q{i}`` asks about document ``d{i}``: chunk ``d{i}#0`` is graded 3 and holds the evidence quote in
its first :data:`PIECE` characters, ``d{i}#1`` is graded 1, ``d{i}#2`` graded 0. The runs:

* :func:`chunk_lines`: ``d{i}#0, d{i}#1, d{i}#2`` by id, then ``d{i+1}#0``: the relevant text first, the ideal order;
* :func:`piece_lines`: the very same text in the same order, cut into pieces of :data:`PIECE` (300) characters given
  by offsets: a median passage of 300 characters, a quarter of a chunk;
* :func:`mixed_lines`: the first piece of ``d{i}#0`` (the evidence inside: graded 3 by rule, a quarter of its chunk),
  then ``d{i}#1`` (graded 1) and ``d{i}#2`` (graded 0) by id, then a text found in no document: median passage 1,200.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.formats.golden import GoldenSet
from assay.types import Chunk, Document, Manifest, Provenance, Question, RelevanceLabel

TIME = datetime(2025, 1, 1, tzinfo=UTC)
N = 6
CHUNK = 1200
PIECE = 300
GAP = 2  # the blank line between chunks
GRADES = (3, 1, 0)
WORDS = ("amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heath", "indigo", "juniper", "kelp")


def evidence(i: int) -> str:
    return f"The pump model P{i}7 delivers {40 + i} litres a minute."


def chunk_text(i: int, c: int) -> str:
    """Exactly :data:`CHUNK` characters of distinct sentences; chunk 0 opens with the evidence quote."""
    words = []
    n = 0
    while len(" ".join(words)) < CHUNK:
        words.append(f"Doc{i} part{c} line{n} tells of {WORDS[(n + i + c) % len(WORDS)]} number {n * 13 + i}.")
        n += 1
    body = " ".join(words)
    return ((evidence(i) + " " + body) if c == 0 else body)[:CHUNK]


def span(i: int, c: int) -> tuple[int, int]:
    start = c * (CHUNK + GAP)
    return start, start + CHUNK


def make_golden() -> GoldenSet:
    docs = [Document(id=f"d{i}", source=f"d{i}.md", text="\n\n".join(chunk_text(i, c) for c in range(3)),
                     content_hash=f"d{i}") for i in range(N)]  # fmt: skip
    chunks = [Chunk(id=f"d{i}#{c}", doc_id=f"d{i}", ordinal=c, text=chunk_text(i, c), start=span(i, c)[0],
                    end=span(i, c)[1]) for i in range(N) for c in range(3)]  # fmt: skip
    questions = [Question(id=f"q{i}", text=f"How many litres a minute does pump P{i}7 deliver?",
                          source_doc_ids=[f"d{i}"], evidence=[evidence(i)], reference_answer=evidence(i))
                 for i in range(N)]  # fmt: skip
    qrels = [RelevanceLabel(query_id=f"q{i}", chunk_id=f"d{i}#{c}", grade=g,
                            provenance=Provenance(source="human", annotator="fixture", time=TIME))
             for i in range(N) for c, g in enumerate(GRADES)]  # fmt: skip
    return GoldenSet(Manifest(assay_version="test"), docs, chunks, questions, qrels, [])


def save_golden(folder: Path) -> Path:
    make_golden().save(folder)
    return folder


def _pieces(i: int, c: int) -> list[dict[str, Any]]:
    start, end = span(i, c)
    return [{"doc_id": f"d{i}", "start": s, "end": min(s + PIECE, end)} for s in range(start, end, PIECE)]


def chunk_lines() -> list[dict[str, Any]]:
    return [{"query_id": f"q{i}", "retrieved": [f"d{i}#0", f"d{i}#1", f"d{i}#2", f"d{(i + 1) % N}#0"]}
            for i in range(N)]  # fmt: skip


def piece_lines() -> list[dict[str, Any]]:
    out = []
    for i in range(N):
        pieces = [*_pieces(i, 0), *_pieces(i, 1), *_pieces(i, 2), *_pieces((i + 1) % N, 0)]
        out.append({"query_id": f"q{i}", "retrieved": pieces})
    return out


def mixed_lines() -> list[dict[str, Any]]:
    nowhere = {"text": "A sentence that stands in no golden document at all, about kites."}
    return [{"query_id": f"q{i}", "retrieved": [_pieces(i, 0)[0], f"d{i}#1", f"d{i}#2", nowhere]} for i in range(N)]
