"""Whether a conversational system contradicts itself: each turn's answer checked against the answers the same run
gave earlier in the conversation (prompt ``contradiction``).

The rule, per run and conversation turn (the turn's question in the run, with an answer):

1. The earlier answers are the run's answers to the conversation's earlier turns, in turn order, each with the
   turn's utterance as the user typed it and its turn number (from 1); an earlier turn the run failed or left
   without an answer is skipped. A context turn (unjudged: never checked itself) counts as an earlier turn when the
   run has its line (``assay run --history own`` asks it; :attr:`~.runs.loaded.LoadedRun.context`).
2. A turn with no earlier answer (the first turn, or every earlier one unanswered) is not checked: ``contradiction``
   is absent, neither 0 nor 1.
3. A checked turn without an answer of its own is unscored (``empty answer``, ``system_failed``, or ``no answers in
   this run``); otherwise one judge call (cached per
   request like every call) gives ``contradiction`` = 1 when the answer contradicts an earlier answer, 0 when not,
   and unscored with the judge's failure kind when the call fails: never silently 0 or 1.

The per-conversation rate is :func:`assay.pipelines.evaluate.scoring.conversations.contradiction_rates`.
"""

from __future__ import annotations

from typing import Any

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.loaded import LoadedRun

__all__ = ["CONTRADICTION_PROMPT", "earlier_answers", "read_contradiction"]

CONTRADICTION_PROMPT = "contradiction"


def earlier_answers(golden: GoldenSet, run: LoadedRun) -> dict[str, list[dict[str, Any]]]:
    """Steps 1 and 2: per turn of ``run`` that has an earlier answer, the earlier answers as the prompt's ``earlier``
    variable (``id``: the turn number, ``question``: the utterance, ``text``: the run's answer)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for conversation in golden.conversations:
        before: list[dict[str, Any]] = []
        for number, turn in enumerate(conversation.turns, 1):
            if turn.question_id in run.lines and before:
                out[turn.question_id] = list(before)
            line = run.lines.get(turn.question_id) or run.context.get(turn.question_id)
            answer = line.given_answer if line is not None else None
            if answer is not None:
                before.append({"id": str(number), "question": turn.utterance, "text": answer})
    return out


def read_contradiction(data: dict[str, Any]) -> float:
    """Step 3: the judge's verdict as the metric's value."""
    return 1.0 if data["contradicts"] else 0.0
