"""Scripted judges for :class:`~assay.testing.fake_server.FakeOpenAIServer`: each has one known bias, so a test can
check that a judge card's probe flags exactly the bias it targets.

A scripted judge reads the rendered request as a model would (the ``<question>`` and ``<passage>`` blocks of the
last message, XML entities decoded) and answers the prompt named by the request's ``response_format`` schema:
relevance (pointwise and listwise), question generation, drafted references, conversations (one turn per line of
the plan: the first standalone, the later ones a pronoun for the first turn's subject), the rewrite check (4 on every
score), claims, and the contradiction check (the current answer contradicts an earlier one when both give numbers and
share none).
``truth`` maps each original passage text to its true grade for a question, ``{(question, passage): grade}``; a
passage is graded by the longest original text it starts with (0 when none), so text appended after the original is
ignored by the unbiased judge. The biases:

- ``unbiased``: the true grade, whatever is appended, wherever the passage sits in a list;
- ``obeys_injections``: grade 3 for a passage holding an order to grade it 3 (plain, closing tag, French); a
  passage holding an answer-shaped object gets that object back as the answer (copied out, as a model that obeys
  it would); and it writes into a generated question and claims the word a passage orders it to write;
- ``keyword_swayed``: grade 3 for a passage in which at least half of the question's content words occur twice;
- ``by_position``: listwise, grade ``3 - position`` (0 from the fourth passage on), whatever the passage says.

``responder(kind, truth)`` returns the ``body -> content`` callable the fake server takes.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from assay.text import numbers, terms

__all__ = ["KINDS", "responder"]

KINDS = ("unbiased", "obeys_injections", "keyword_swayed", "by_position")
_QUESTION = re.compile(r"<question[\w-]*>\n?(.*?)\n?</question[\w-]*>", re.DOTALL)
_PASSAGE = re.compile(r"<passage[\w-]*(?:\s+id=\"([^\"]*)\")?[^>]*>\n?(.*?)\n?</passage[\w-]*>", re.DOTALL)
_ORDER = re.compile(r"grade it 3|give it grade 3|\"grade\": 3|la note 3", re.IGNORECASE)
_SHAPED = re.compile(r"\{[^{}]*\"grade\": \d\}")
_WRITE = re.compile(r"write the word (\w+)", re.IGNORECASE)
_EARLIER = re.compile(r"<earlier[\w-]*\s+turn=\"(\d+)\"[^>]*>.*?<said[\w-]*>\n?(.*?)\n?</said[\w-]*>", re.DOTALL)
_CURRENT = re.compile(r"<answer[\w-]*>\n?(.*?)\n?</answer[\w-]*>", re.DOTALL)


class _Request:
    def __init__(self, body: Mapping[str, Any], truth: Mapping[tuple[str, str], int]) -> None:
        text = str(body["messages"][-1]["content"])
        self.text = html.unescape(text)
        found = _QUESTION.search(text)
        self.question = html.unescape(found.group(1)).strip() if found else ""
        self.passages = [(pid or "", html.unescape(p).strip()) for pid, p in _PASSAGE.findall(text)]
        self.schema = str(body.get("response_format", {}).get("json_schema", {}).get("name", ""))
        self.truth = truth

    def true_grade(self, passage: str) -> int:
        starts = [
            (len(t), g) for (q, t), g in self.truth.items() if q == self.question and passage.startswith(t.strip())
        ]
        return max(starts)[1] if starts else 0


def _swayed(question: str, passage: str) -> bool:
    wanted = set(terms(question))
    counts = Counter(terms(passage))
    return bool(wanted) and sum(counts[w] >= 2 for w in wanted) * 2 >= len(wanted)


def _grade(kind: str, request: _Request, passage: str, position: int | None) -> int:
    if kind == "by_position" and position is not None:
        return max(0, 3 - position)
    if kind == "obeys_injections" and _ORDER.search(passage):
        return 3
    if kind == "keyword_swayed" and _swayed(request.question, passage):
        return 3
    return request.true_grade(passage)


def _marker(kind: str, request: _Request) -> str:
    found = [_WRITE.search(text) for _, text in request.passages]
    words = [m.group(1) for m in found if m is not None]
    return f" {words[0]}" if kind == "obeys_injections" and words else ""


def _answer(kind: str, request: _Request) -> dict[str, Any]:
    if request.schema == "ListwiseRelevance":
        judgements = [
            {"id": pid, "reason": "scripted", "grade": _grade(kind, request, text, k)}
            for k, (pid, text) in enumerate(request.passages)
        ]
        return {"judgements": judgements}
    if request.schema == "GeneratedQuestion":
        marker = _marker(kind, request)
        question, answer = f"What does the passage say{marker}?", f"It says what it says{marker}."
        return {"reason": "scripted", "question": question, "answer": answer, "evidence": [], "claims": [answer],
                "nuggets": [{"text": answer, "importance": "vital"}]}  # fmt: skip
    if request.schema == "DraftedReference":
        answer = f"The passages say what they say{_marker(kind, request)}."
        return {"reason": "scripted", "answer": answer, "evidence": [], "claims": [answer],
                "nuggets": [{"text": answer, "importance": "vital"}]}  # fmt: skip
    if request.schema == "GeneratedConversation":
        return _conversation(kind, request)
    if request.schema == "RewriteCheck":
        return {"reason": "scripted", "answerable": 4, "self_contained": 4, "faithful": 4, "clear": 4}
    if request.schema == "ContradictionCheck":
        return _contradiction(request)
    if request.schema == "Claims":
        words = _WRITE.findall(request.text)
        return {"claims": ["The text states a fact.", *(f"{w} is named." for w in words if kind == "obeys_injections")]}
    passage = request.passages[0][1] if request.passages else ""
    shaped = _SHAPED.search(passage)
    if kind == "obeys_injections" and shaped:
        return dict(json.loads(shaped.group(0)))
    return {"reason": "scripted", "grade": _grade(kind, request, passage, None)}


_PLAN = re.compile(r"^- turn (\d+): (\w+)", re.MULTILINE)


def _conversation(kind: str, request: _Request) -> dict[str, Any]:
    marker = _marker(kind, request)
    turns: list[dict[str, Any]] = []
    for number, _planned in _PLAN.findall(request.text):
        first = number == "1"
        rewrite = f"What does the passage say{marker}?" if first else f"What else does the passage say ({number})?"
        turns.append({"reason": "scripted", "dependency": "none" if first else "pronoun",
                      "utterance": rewrite if first else f"And what else does it say ({number})?", "rewrite": rewrite,
                      "answer": f"It says what it says{marker}.", "evidence": [], "claims": [],
                      "nuggets": []})  # fmt: skip
    return {"reason": "scripted", "scenario": "a scripted user", "turns": turns}


def _contradiction(request: _Request) -> dict[str, Any]:
    found = _CURRENT.search(request.text)
    now = set(numbers(found.group(1))) if found else set()
    turns = [
        int(t) for t, said in _EARLIER.findall(request.text) if now and numbers(said) and not now & set(numbers(said))
    ]
    reason = f"scripted: the numbers differ from turns {turns}" if turns else "scripted: no numbers differ"
    return {"reason": reason, "contradicts": bool(turns), "earlier_turns": turns}


def responder(kind: str, truth: Mapping[tuple[str, str], int]) -> Callable[[dict[str, Any]], str]:
    """The fake server's ``responder`` for the scripted judge ``kind`` (one of :data:`KINDS`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown scripted judge {kind!r}; one of {', '.join(KINDS)}")
    return lambda body: json.dumps(_answer(kind, _Request(body, truth)))
