"""A golden set for the export/import tests: real ingest and chunking (overlapping chunks with offsets), pre-made
chunks without a document, an id with a space, seeded random labels from several sources, some unscored."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from assay.corpus import chunk_corpus, ingest
from assay.formats.golden import GoldenSet
from assay.text import content_hash
from assay.types import Claim, Document, Manifest, Nugget, Provenance, Question, RelevanceLabel, Unscored

GOOD = Path(__file__).parents[2] / "fixtures" / "corpus" / "good"
T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
SPACED_TEXT = "Opening hours: Monday to Friday, 9 to 17.\n\nClosed on public holidays."


def make_golden(seed: int = 7, *, every_question_scored: bool = True) -> GoldenSet:
    result = ingest(GOOD)
    spaced = Document(
        id="notes with space.txt", source="notes with space.txt", title="Hours", text=SPACED_TEXT,
        content_hash=content_hash(SPACED_TEXT), metadata={"format": "txt"},
    )  # fmt: skip
    documents = [*result.documents, spaced]
    chunks = chunk_corpus(documents, max_tokens=24, overlap=6, min_tokens=3) + result.chunks_given
    rng = random.Random(seed)
    questions = [_question(i, rng, [c.id for c in chunks]) for i in range(6)]
    labels = []
    for i, q in enumerate(questions):
        picked = rng.sample(chunks, 5)
        for j, chunk in enumerate(picked):
            grade = None if (j == 4 or (i == 5 and not every_question_scored)) else rng.randint(-1, 3)
            labels.append(_label(q.id, chunk.id, grade, rng.choice(["judge", "generator"]), rng))
            if rng.random() < 0.3:  # a human label on top, sometimes unscored
                labels.append(_label(q.id, chunk.id, rng.choice([0, 1, 2, 3, None]), "human", rng))
    spaced_chunk = next(c for c in chunks if c.doc_id == spaced.id)
    labels.append(_label("q0", spaced_chunk.id, 2, "human", rng))
    manifest = Manifest(assay_version="0.1.0", models={"judge": "offline"})
    return GoldenSet(manifest, documents, chunks, questions, labels)


def _question(i: int, rng: random.Random, chunk_ids: list[str]) -> Question:
    source = rng.choice(chunk_ids)
    return Question(
        id=f"q{i}",
        text=f"Question number {i}: what does the passage say?" if i != 3 else "=SUM(A1:A2) as a question?",
        type=["factoid", "numeric", "procedural", "multi-hop", "comparison", "unanswerable"][i],
        difficulty=["easy", "hard", None][i % 3],
        reference_answer=None if i == 5 else f"Answer {i}.",
        source_chunk_ids=[source],
        claims=[Claim(id=f"q{i}-c1", text=f"Claim {i}", supported_by=[source])],
        nuggets=[Nugget(id=f"q{i}-n1", text=f"nugget {i}", importance="okay")],
        metadata={"persona": "customer"},
        provenance=Provenance(source="generator", model="offline", prompt="question@1", time=T0),
    )


def _label(qid: str, cid: str, grade: int | None, source: str, rng: random.Random) -> RelevanceLabel:
    prov = Provenance(
        source=source, model="offline", rationale="because", time=T0 + timedelta(minutes=rng.randint(0, 99))
    )
    unscored = Unscored(reason="invalid output", raw="{") if grade is None else None
    return RelevanceLabel(query_id=qid, chunk_id=cid, grade=grade, provenance=prov, unscored=unscored)
