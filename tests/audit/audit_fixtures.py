"""Builds a small golden folder for the audit tests: questions, chunks (one holding script payloads), judge labels."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from assay.formats.golden import GoldenSet
from assay.types import (
    Chunk,
    Conversation,
    Document,
    Manifest,
    Passage,
    Provenance,
    Question,
    RelevanceLabel,
    Turn,
    Unscored,
)

PAYLOAD = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2; alert(1)">'
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def judge_label(qid: str, cid: str, grade: int | None, prompt: str = "relevance@1", minute: int = 0) -> RelevanceLabel:
    unscored = Unscored(reason="no JSON in the reply") if grade is None else None
    prov = Provenance(
        source="judge",
        model="fake/judge",
        prompt=prompt,
        rationale=f"judge says {grade}",
        time=T0 + timedelta(minutes=minute),
    )
    return RelevanceLabel(query_id=qid, chunk_id=cid, grade=grade, provenance=prov, unscored=unscored)


def build_golden(folder: Path, *, n_chunks: int = 12, listwise: bool = True) -> Path:
    """Two questions x ``n_chunks`` chunks; judge grades cycle 0..3, one unscored; a listwise prompt disagrees once."""
    doc = Document(id="doc1", source="doc1.md", text="text", content_hash="h")
    chunks = [
        Chunk(
            id=f"c{i:02d}",
            doc_id="doc1",
            ordinal=i,
            text=f"Chunk {i} about refunds.",
            heading_path=["Policy", f"Part {i}"],
        )
        for i in range(n_chunks)
    ]
    chunks[3] = chunks[3].model_copy(update={"text": f"Refunds. {PAYLOAD}"})
    questions = [
        Question(
            id="q1", text="What is the refund window?", type="factoid", difficulty="easy", reference_answer="30 days"
        ),
        Question(
            id="q2", text="How do refunds compare?", type="comparison", difficulty="hard", reference_answer="<b>x</b>"
        ),
    ]
    qrels = [judge_label(q.id, c.id, (i + j) % 4) for j, q in enumerate(questions) for i, c in enumerate(chunks)]
    qrels[5] = judge_label("q1", "c05", None)
    if listwise:
        qrels.append(judge_label("q1", "c01", 3, prompt="relevance-listwise@1"))  # pointwise said 1
    golden = GoldenSet(
        manifest=Manifest(assay_version="0.1.0"), documents=[doc], chunks=chunks, questions=questions, qrels=qrels
    )
    golden.save(folder)
    return folder


GUIDE = (
    "# Refund guide\n\nThis guide explains how refunds work for orders placed online and in our stores.\n\n"
    "Refunds are paid to the original card within 30 days of the return reaching our warehouse. "
    "Gift cards are refunded as store credit.\n\nExchanges follow the same rules as returns."
)
SPAN = "Refunds are paid to the original card within 30 days"
NOWHERE = "A text that no golden document holds, retrieved by some run."


def span_id() -> str:
    start = GUIDE.index(SPAN)
    return f"p:guide:{start}-{start + len(SPAN)}"


def add_spans(folder: Path) -> Path:
    """Add a document with real text and passages.jsonl as ``assay eval`` writes it: a located passage (span label
    of q1 graded 1 and of q2 graded 0 by the judge) and one found in no document (q1: 2)."""
    golden = GoldenSet.load(folder)
    golden.documents.append(Document(id="guide", source="guide.md", title="Refund guide", text=GUIDE, content_hash="g"))
    start = GUIDE.index(SPAN)
    located = Passage(id=span_id(), text=SPAN, match="exact", doc_id="guide", start=start, end=start + len(SPAN),
                      score=1.0)  # fmt: skip
    nowhere = Passage(id="t:0123abcd", text=NOWHERE, match="unmatched")
    labels = [judge_label("q1", located.id, 1, minute=5), judge_label("q2", located.id, 0, minute=5),
              judge_label("q1", nowhere.id, 2, minute=5)]  # fmt: skip
    golden.add_passage_labels([located, nowhere], labels)
    golden.save(folder, overwrite=True)
    return folder


def add_conversation(folder: Path) -> Path:
    """Make q1 and q2 the two turns of conversation conv1: q2 is typed "and how do they compare?" and leans on q1."""
    golden = GoldenSet.load(folder)
    first = Turn(question_id="q1", utterance="What is the refund window?")
    second = Turn(
        question_id="q2",
        utterance="and how do they compare?",
        depends_on_history=True,
        dependency="ellipsis",
        rewrite_provenance=Provenance(source="generator", model="fake/judge", time=T0),
    )
    golden.conversations = [Conversation(id="conv1", turns=[first, second], scenario="refunds")]
    golden.update(folder, ("conversations",))
    return folder


def add_context_turn(folder: Path) -> Path:
    """:func:`add_conversation`, then a context turn (unjudged, no question) ``conv1-t2`` between q1 and q2."""
    golden = GoldenSet.load(add_conversation(folder))
    context = Turn(question_id="conv1-t2", utterance="and for gift cards?", judged=False, dropped="leakage",
                   rewrite="What is the refund window for gift cards?", answer="None: no refunds.")  # fmt: skip
    golden.conversations[0].turns.insert(1, context)
    golden.update(folder, ("conversations",))
    return folder


def add_judge_quotes(folder: Path) -> Path:
    """The judge's pointwise label of (q1, c02) ("Chunk 2 about refunds.", graded 2) quotes "about refunds", and a
    paraphrase that is not in the chunk ("money comes back")."""
    golden = GoldenSet.load(folder)
    for label in golden.qrels:
        if (label.query_id, label.chunk_id, label.provenance.prompt) == ("q1", "c02", "relevance@1"):
            label.quotes = ["about refunds", "money comes back"]
    golden.update(folder, ("qrels",))
    return folder
