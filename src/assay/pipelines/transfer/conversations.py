"""Conversational golden sets to RAGAS multi-turn samples, DeepEval conversational test cases and TREC CAsT.

Export (``assay export --to ragas-multiturn|deepeval|cast``; a golden set without ``conversations.jsonl`` is an
error naming the fix):

===================  ================================================================================================
``ragas-multiturn``  ``ragas_multiturn.jsonl``: one RAGAS ``MultiTurnSample`` per judged turn (ragas 0.4.3):
                     ``user_input`` the conversation up to that turn as messages (``{"type": "human"|"ai",
                     "content"}``, earlier turns, context turns included, answered by their reference answers: the
                     reference history), ``reference`` the turn's reference answer, ``reference_topics`` absent.
                     Each human message's ``metadata`` holds assay's ``query_id``, ``rewrite``, ``dependency`` and
                     ``depends_on_history`` (a context turn's also ``judged: false`` and ``dropped``); the row holds
                     ``conversation_id``, ``turn`` and ``query_id`` (RAGAS ignores unknown fields). A context turn has
                     no row of its own (it is no test item), so one after the last judged turn is in no row.
``deepeval``         ``deepeval.json``: a list of DeepEval ``ConversationalTestCase`` (deepeval 4.3.1) fields, one per
                     conversation: ``name`` (its id), ``scenario``, ``expected_outcome`` (the last reference
                     answer), ``turns`` in the OpenAI role format (``user`` = utterance, ``assistant`` = reference
                     answer with ``retrieval_context``: the texts of the chunks graded >= ``min_grade``, default 2,
                     most relevant first; empty for a context turn, which has no labels), turn ``metadata`` as
                     above, and ``metadata.assay`` (ids). Context turns are turns of the case like the others.
``cast``             ``topics.json`` in the TREC CAsT shape (``[{number, title, turn: [{number, raw_utterance,
                     manual_rewritten_utterance, query_id, dependency}]}]``), ``qrels.txt`` per turn with the CAsT
                     id ``{conversation}_{turn}`` (``qid 0 chunk grade``; all scored grades, or >= ``min_grade``)
                     and ``topics.tsv`` (``{conversation}_{turn}<TAB>rewrite``). As in CAsT, a context turn
                     (unjudged) is a turn of its topic and a line of ``topics.tsv`` with no qrels.
===================  ================================================================================================

Import is :mod:`assay.pipelines.transfer.conversations_import`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.errors import InputError
from assay.formats.golden import GoldenSet
from assay.formats.topics import write_topics
from assay.formats.trec import write_qrels
from assay.types import Conversation, Turn

__all__ = [
    "CONVERSATION_FORMATS",
    "cast_id",
    "write_cast",
    "write_deepeval",
    "write_ragas_multiturn",
]

CONVERSATION_FORMATS = ("ragas-multiturn", "deepeval", "cast")


def _conversations(golden: GoldenSet) -> list[Conversation]:
    if not golden.conversations:
        raise InputError(
            "this golden set has no conversations (no conversations.jsonl): build them with assay build DOCS -o "
            "golden/ --conversations N, or export its questions with --to ragas|beir|trec"
        )
    return golden.conversations


def _meta(golden: GoldenSet, turn: Turn) -> dict[str, Any]:
    meta = {
        "query_id": turn.question_id,
        "rewrite": golden.turn_texts(turn)[0],
        "dependency": turn.dependency,
        "depends_on_history": turn.depends_on_history,
    }
    return meta if turn.judged else {**meta, "judged": False, "dropped": turn.dropped}


def cast_id(conversation: Conversation, index: int) -> str:
    """The CAsT id of turn ``index`` (0-based): ``{conversation id}_{turn number}``."""
    return f"{conversation.id}_{index + 1}"


def write_ragas_multiturn(golden: GoldenSet, path: Path) -> int:
    """One MultiTurnSample row per turn (module docstring); the number of rows."""
    rows = []
    for conversation in _conversations(golden):
        messages: list[dict[str, Any]] = []
        for n, turn in enumerate(conversation.turns, start=1):
            answer = golden.turn_texts(turn)[1]
            messages.append({"content": turn.utterance, "type": "human", "metadata": _meta(golden, turn)})
            if turn.judged:
                rows.append(
                    {
                        "user_input": [dict(m) for m in messages],
                        "reference": answer,
                        "conversation_id": conversation.id,
                        "turn": n,
                        "query_id": turn.question_id,
                    }
                )
            messages.append({"content": answer, "type": "ai"})
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return len(rows)


def _contexts(golden: GoldenSet, qid: str, min_grade: int) -> list[str]:
    grades = golden.qrels_map().get(qid, {})
    ranked = sorted((cid for cid, g in grades.items() if g >= min_grade), key=lambda cid: (-grades[cid], cid))
    return [golden.chunk(cid).text for cid in ranked if golden.has_chunk(cid)]


def write_deepeval(golden: GoldenSet, path: Path, min_grade: int = 2) -> int:
    """One ConversationalTestCase per conversation (module docstring); the number of cases."""
    cases = []
    for conversation in _conversations(golden):
        turns: list[dict[str, Any]] = []
        for turn in conversation.turns:
            turns.append({"role": "user", "content": turn.utterance, "metadata": _meta(golden, turn)})
            turns.append(
                {
                    "role": "assistant",
                    "content": golden.turn_texts(turn)[1],
                    "retrieval_context": _contexts(golden, turn.question_id, min_grade) if turn.judged else [],
                    "metadata": {"query_id": turn.question_id},
                }
            )
        cases.append(
            {
                "name": conversation.id,
                "scenario": conversation.scenario,
                "expected_outcome": turns[-1]["content"] if turns else None,
                "turns": turns,
                "metadata": {
                    "assay": {"conversation_id": conversation.id, "source_doc_ids": conversation.source_doc_ids}
                },
            }
        )
    path.write_text(json.dumps(cases, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return len(cases)


def write_cast(golden: GoldenSet, folder: Path, min_grade: int | None = None) -> dict[str, int]:
    """``topics.json``, ``qrels.txt`` and ``topics.tsv`` (module docstring); records per file."""
    topics, tsv = [], []
    rows: dict[str, dict[str, int]] = {}
    grades = golden.qrels_map()
    for conversation in _conversations(golden):
        items = []
        for i, turn in enumerate(conversation.turns):
            rewrite = golden.turn_texts(turn)[0]
            items.append(
                {
                    "number": i + 1,
                    "raw_utterance": turn.utterance,
                    "manual_rewritten_utterance": rewrite,
                    "query_id": turn.question_id,
                    "dependency": turn.dependency,
                }
            )
            tsv.append((cast_id(conversation, i), rewrite))
            if turn.judged:  # a context turn is in the topics, with no qrels (CAsT's unjudged turns)
                table = grades.get(turn.question_id, {})
                rows[cast_id(conversation, i)] = {c: g for c, g in table.items() if min_grade is None or g >= min_grade}
        topics.append({"number": conversation.id, "title": conversation.scenario or "", "turn": items})
    (folder / "topics.json").write_text(json.dumps(topics, ensure_ascii=False, indent=1) + "\n", "utf-8")
    lines = write_qrels(folder / "qrels.txt", rows)
    write_topics(folder / "topics.tsv", tsv)
    return {"topics.json": len(topics), "qrels.txt": lines, "topics.tsv": len(tsv)}


# ------------------------------------------------------------------------------------------------------ import
