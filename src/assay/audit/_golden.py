"""The parts of a golden set the audit needs, indexed by id: questions, chunks, documents, judged passages, the
judge's labels of chunks (``qrels.jsonl``) and of spans (the labels of ``passages.jsonl``), and the conversation
turn of each question that is one (context turns too: they are in the history, never audit items, having no labels)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.formats.golden import GoldenSet
from assay.types import Chunk, Conversation, Document, Passage, Question, RelevanceLabel, Turn

__all__ = ["GoldenView", "load_golden"]


@dataclass
class GoldenView:
    """Questions, chunks, documents and passages by id, and the judge labels of the qrels and of the passages in file
    order (other sources left out). An item ``(query_id, chunk_id)`` names a chunk or, for a span label, a passage
    id (``p:{doc_id}:{start}-{end}``, or ``t:{hash}`` for a passage found in no document)."""

    path: Path
    questions: dict[str, Question] = field(default_factory=dict)
    chunks: dict[str, Chunk] = field(default_factory=dict)
    qrels: list[RelevanceLabel] = field(default_factory=list)
    documents: dict[str, Document] = field(default_factory=dict)
    passages: dict[str, Passage] = field(default_factory=dict)
    span_labels: list[RelevanceLabel] = field(default_factory=list)
    turns: dict[str, tuple[Conversation, int]] = field(default_factory=dict)

    def is_span(self, item_id: str) -> bool:
        """Whether ``item_id`` names a judged passage (a span label) rather than a golden chunk."""
        return item_id in self.passages and item_id not in self.chunks

    def turn_view(self, query_id: str) -> dict[str, Any] | None:
        """Question ``query_id`` as a conversation turn: its utterance, its standalone rewrite (the question's text)
        with who wrote it, and the history (each earlier turn's utterance, rewrite and reference answer, and whether
        it is judged: a context turn is not, and is no audit item); None for a single question."""
        if query_id not in self.turns:
            return None
        conversation, index = self.turns[query_id]
        turn = conversation.turns[index]
        history = [self._earlier(number, earlier) for number, earlier in enumerate(conversation.turns[:index], 1)]
        prov = turn.rewrite_provenance
        return {
            "conversation_id": conversation.id,
            "turn": index + 1,
            "turns": len(conversation.turns),
            "utterance": turn.utterance,
            "rewrite": self.questions[query_id].text if query_id in self.questions else None,
            "rewrite_source": prov.source if prov else None,
            "rewrite_annotator": prov.annotator if prov else None,
            "depends_on_history": turn.depends_on_history,
            "dependency": turn.dependency,
            "history": history,
        }

    def _earlier(self, number: int, turn: Turn) -> dict[str, Any]:
        """An earlier turn in a history: a judged turn's texts are its question's, a context turn's its own."""
        question = self.questions.get(turn.question_id) if turn.judged else None
        rewrite = question.text if question else turn.rewrite
        answer = question.reference_answer if question else turn.answer
        return {"turn": number, "utterance": turn.utterance, "rewrite": rewrite, "reference_answer": answer,
                "judged": turn.judged}  # fmt: skip

    def knows(self, item_id: str) -> bool:
        """Whether ``item_id`` is a chunk or a judged passage of the golden set."""
        return item_id in self.chunks or item_id in self.passages


def load_golden(path: str | Path) -> GoldenView:
    """Read a golden folder with :meth:`GoldenSet.load` (DatasetError / FormatError name what is wrong)."""
    golden = GoldenSet.load(path)
    judge = [label for label in golden.qrels if label.provenance.source == "judge"]
    spans = [label for p in golden.passages for label in p.labels if label.provenance.source == "judge"]
    return GoldenView(
        Path(path),
        {q.id: q for q in golden.questions},
        {c.id: c for c in golden.chunks},
        judge,
        {d.id: d for d in golden.documents},
        {p.id: p for p in golden.passages},
        spans,
        {turn.question_id: (c, i) for c in golden.conversations for i, turn in enumerate(c.turns)},
    )
