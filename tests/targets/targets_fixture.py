"""A small golden set for the runner's tests: ``n`` questions ``q1..qn`` about chunks ``c1..cn`` (built by hand)."""

from __future__ import annotations

from datetime import UTC, datetime

from assay.formats.golden import GoldenSet
from assay.types import Chunk, Document, Manifest, Provenance, Question, RelevanceLabel

TIME = datetime(2025, 1, 1, tzinfo=UTC)


def make_golden(n: int = 6) -> GoldenSet:
    """Question ``qi`` asks "what is fact i?"; chunk ``ci`` (document ``di``) holds the answer, graded 3."""
    docs = [
        Document(id=f"d{i}", source=f"d{i}.txt", text=f"Fact {i} is {i * 7}.", content_hash="h")
        for i in range(1, n + 1)
    ]
    chunks = [
        Chunk(id=f"c{i}", doc_id=f"d{i}", ordinal=0, text=f"Fact {i} is {i * 7}.", content_hash="h")
        for i in range(1, n + 1)
    ]
    questions = [
        Question(id=f"q{i}", text=f"what is fact {i}?", metadata={"topic": "odd" if i % 2 else "even"})
        for i in range(1, n + 1)
    ]
    source = Provenance(source="human", time=TIME)
    qrels = [RelevanceLabel(query_id=f"q{i}", chunk_id=f"c{i}", grade=3, provenance=source) for i in range(1, n + 1)]
    return GoldenSet(Manifest(assay_version="test", created=TIME), docs, chunks, questions, qrels)
