"""The rules between the files of a golden set: every problem :meth:`GoldenSet.check
<assay.formats.golden.GoldenSet.check>` refuses, with its message.

1. A qrels label names a question and a chunk of the set.
2. A nugget support record names a question of the set, a nugget of that question, and chunks of the set.
3. A question's hops (a multi-hop question's evidence chunks, in order) name chunks of the set.
4. A conversation has a judged turn (unless it has no turns); no turn belongs to two conversations.
5. A judged turn names a question of the set; a context turn names none and carries its rewrite and answer.

Problems within one file (duplicate ids, spans, the manifest) are found while reading it
(:mod:`assay.formats.golden_files`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

from assay.errors import DatasetError
from assay.formats.golden_files import CONVERSATIONS
from assay.types import Conversation, NuggetSupport, Question, RelevanceLabel, Turn

__all__ = ["Checked", "check", "problems", "turn_problems"]


class Checked(Protocol):
    """What the rules read of a :class:`~assay.formats.golden.GoldenSet` (named here so that this module needs no
    import of it)."""

    @property
    def qrels(self) -> Sequence[RelevanceLabel]: ...

    @property
    def nuggets(self) -> Sequence[NuggetSupport]: ...

    @property
    def conversations(self) -> Sequence[Conversation]: ...

    @property
    def questions(self) -> Sequence[Question]: ...

    def has_question(self, query_id: str) -> bool: ...

    def has_chunk(self, chunk_id: str) -> bool: ...

    def question(self, query_id: str) -> Question: ...


def check(golden: Checked, where: str | Path = "golden set") -> None:
    """Raise :class:`DatasetError` if qrels or nugget support name questions, chunks or nuggets that are absent."""
    found = list(problems(golden))
    if found:
        shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
        raise DatasetError(f"{where}: {shown}. Fix: rebuild the golden set, or remove those records")


def problems(golden: Checked) -> Iterator[str]:
    """Every problem between the files of ``golden`` (the rules above, in order), as messages."""
    for i, label in enumerate(golden.qrels):
        if not golden.has_question(label.query_id):
            yield f"qrels.jsonl record {i + 1} names unknown question {label.query_id!r}"
        if not golden.has_chunk(label.chunk_id):
            yield f"qrels.jsonl record {i + 1} names unknown chunk {label.chunk_id!r}"
    for i, sup in enumerate(golden.nuggets):
        if not golden.has_question(sup.query_id):
            yield f"nuggets.jsonl record {i + 1} names unknown question {sup.query_id!r}"
        elif sup.nugget_id not in {n.id for n in golden.question(sup.query_id).nuggets}:
            yield f"nuggets.jsonl record {i + 1} names nugget {sup.nugget_id!r}, absent from {sup.query_id!r}"
        for cid in (*sup.chunk_ids, *sup.partial_chunk_ids):
            if not golden.has_chunk(cid):
                yield f"nuggets.jsonl record {i + 1} names unknown chunk {cid!r}"
    for i, question in enumerate(golden.questions):
        for cid in question.hops:
            if not golden.has_chunk(cid):
                yield f"questions.jsonl record {i + 1} ({question.id!r}) names unknown chunk {cid!r} among its hops"
    seen: dict[str, str] = {}
    for i, conversation in enumerate(golden.conversations):
        where = f"{CONVERSATIONS} record {i + 1}"
        if conversation.turns and not any(turn.judged for turn in conversation.turns):
            yield f"{where}: conversation {conversation.id!r} has no judged turn (only context turns)"
        for turn in conversation.turns:
            yield from turn_problems(golden, where, turn)
            if turn.question_id in seen:
                yield (f"{where}: {turn.question_id!r} is already a turn of conversation "
                       f"{seen[turn.question_id]!r}")  # fmt: skip
            seen[turn.question_id] = conversation.id


def turn_problems(golden: Checked, where: str, turn: Turn) -> Iterator[str]:
    """A judged turn names a question; a context turn names none and carries its rewrite and answer."""
    known = golden.has_question(turn.question_id)
    if turn.judged and not known:
        yield f"{where} names unknown question {turn.question_id!r}"
    if turn.judged:
        return
    if known:
        yield f"{where}: context turn {turn.question_id!r} (judged false) names a question of questions.jsonl"
    if not (turn.rewrite or "").strip() or turn.answer is None:
        yield f"{where}: context turn {turn.question_id!r} (judged false) needs its rewrite and answer"
