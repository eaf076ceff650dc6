"""A small golden set with real document text for the tests of runs that name passages by text or offsets.

Three Markdown documents; each paragraph is a chunk with its offsets (``chunk.text == doc.text[start:end]``). Three
questions, each with one evidence quote and graded chunks (q1: the returns paragraph 3, the refund paragraph 1, the
exceptions paragraph 0; q2: the tent's weight paragraph 3, its flysheet paragraph 0; q3: the express paragraph 3,
the standard paragraph 1). Chunks without a label for a question are unlabelled for it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from assay.formats.golden import GoldenSet
from assay.types import Chunk, Document, Manifest, Provenance, Question, RelevanceLabel

TIME = datetime(2025, 1, 1, tzinfo=UTC)
DOCS = {
    "returns": (
        "# Returns\n\nCustomers may return any unused item within 30 days of delivery for a full refund.\n\n"
        "Refunds are issued to the original payment method within 5 business days.\n\n## Exceptions\n\n"
        "Clearance items and opened software cannot be returned."
    ),
    "tent": (
        "# Brackenhow tent\n\nThe Brackenhow 4 tent weighs 3.2 kg and sleeps four people.\n\n"
        "Its flysheet is rated to 3000 mm of water pressure.\n\nPitch the inner tent first in dry weather."
    ),
    "shipping": (
        "# Shipping\n\nStandard shipping takes 3 to 5 business days.\n\n"
        "Express shipping costs $12 and arrives the next day."
    ),
}
QUESTIONS = {
    "q1": ("How long do customers have to return an item?", "within 30 days of delivery", "returns"),
    "q2": ("How much does the Brackenhow 4 tent weigh?", "weighs 3.2 kg", "tent"),
    "q3": ("How much does express shipping cost?", "Express shipping costs $12", "shipping"),
}
GRADES = {
    "q1": {"returns#1": 3, "returns#2": 1, "returns#4": 0},
    "q2": {"tent#1": 3, "tent#2": 0},
    "q3": {"shipping#2": 3, "shipping#1": 1},
}


def paragraphs(doc_id: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each paragraph (blank-line separated) of a document, headings included."""
    text = DOCS[doc_id]
    out, start = [], 0
    for part in text.split("\n\n"):
        out.append((start, start + len(part)))
        start += len(part) + 2
    return out


def chunk_id(doc_id: str, ordinal: int) -> str:
    return f"{doc_id}#{ordinal}"


def chunk_text(cid: str) -> str:
    doc_id, ordinal = cid.split("#")
    start, end = paragraphs(doc_id)[int(ordinal)]
    return DOCS[doc_id][start:end]


def paragraph_chunks(pages: dict[str, str]) -> list[Chunk]:
    """Pages cut into chunks at blank lines, ids ``doc#ordinal``, with their offsets, documents in id order."""
    out = []
    for doc_id, text in sorted(pages.items()):
        start = 0
        for ordinal, part in enumerate(text.split("\n\n")):
            out.append(Chunk(id=f"{doc_id}#{ordinal}", doc_id=doc_id, ordinal=ordinal, text=part, start=start,
                             end=start + len(part)))  # fmt: skip
            start += len(part) + 2
    return out


def make_passages_golden() -> GoldenSet:
    docs = [Document(id=d, source=f"{d}.md", text=t, content_hash=d) for d, t in DOCS.items()]
    chunks = [
        Chunk(id=chunk_id(d, i), doc_id=d, ordinal=i, text=DOCS[d][s:e], start=s, end=e)
        for d in DOCS
        for i, (s, e) in enumerate(paragraphs(d))
    ]
    questions = [
        Question(id=q, text=text, source_doc_ids=[doc], evidence=[quote], reference_answer=quote)
        for q, (text, quote, doc) in QUESTIONS.items()
    ]
    qrels = [
        RelevanceLabel(
            query_id=q, chunk_id=c, grade=g, provenance=Provenance(source="judge", model="fixture", time=TIME)
        )
        for q, grades in GRADES.items()
        for c, g in grades.items()
    ]
    return GoldenSet(Manifest(assay_version="test"), docs, chunks, questions, qrels, [])


def save_passages_golden(folder: Path) -> Path:
    make_passages_golden().save(folder)
    return folder
