"""Shared helpers of the build tests: hand-made chunks and questions, a scripted backend per prompt."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

from assay.judge import Judge, Price
from assay.judge.base import ChatRequest
from assay.judge.limits import RetryPolicy
from assay.testing import FakeBackend
from assay.text import sentences, terms
from assay.types import Chunk, Question

_PASSAGE = re.compile(r'<passage-\w+ id="([^"]+)"[^>]*>\n(.*?)\n</passage-\w+>', re.DOTALL)


def chunk(doc: str, ordinal: int, text: str, heading: list[str] | None = None) -> Chunk:
    return Chunk(id=f"{doc}#{ordinal}", doc_id=doc, ordinal=ordinal, text=text, heading_path=heading or [])


def question(
    qid: str, text: str, *, qtype: str = "factoid", sources: list[str] | None = None, **extra: Any
) -> Question:
    sources = sources if sources is not None else []
    meta = {"seed_chunk_ids": list(sources), "evidence_chunk_ids": extra.pop("cited", list(sources))}
    return Question(id=qid, text=text, type=qtype, source_chunk_ids=sources, metadata=meta, **extra)


def passages_of(messages: list[dict[str, str]]) -> list[tuple[str, str]]:
    """(local id, text) of the passages in a rendered prompt's user message."""
    return [(pid, html.unescape(text)) for pid, text in _PASSAGE.findall(messages[-1]["content"])]


def scripted_answer(schema: str, messages: list[dict[str, str]], qtype: str = "factoid") -> str:
    """A valid answer for each build prompt, built from the passages in the messages (no model)."""
    passages = passages_of(messages)
    if schema == "GeneratedQuestion":
        used = passages[:2] if qtype in ("multi-hop", "comparison") else passages[:1]
        quotes = [(pid, sentences(text)[0]) for pid, text in used]
        topic = " ".join(terms(used[0][1])[:2])
        if qtype == "unanswerable":
            quotes = []
        return json.dumps(
            {
                "reason": "scripted",
                "question": f"Regarding {topic} ({qtype}), what is stated?",
                "answer": " ".join(q for _, q in quotes) or "The documents do not say.",
                "evidence": [{"passage_id": pid, "quote": q} for pid, q in quotes],
                "claims": [q for _, q in quotes],
                "nuggets": [{"text": q, "importance": "vital"} for _, q in quotes],
            }
        )
    if schema == "QuestionCritique":
        return json.dumps({"reason": "scripted", "answerable": 4, "self_contained": 4, "clear": 4})
    if schema == "RelevanceGrade":
        return json.dumps({"reason": "scripted", "grade": 2})
    if schema == "ListwiseRelevance":
        return json.dumps({"judgements": [{"id": pid, "reason": "scripted", "grade": 2} for pid, _ in passages]})
    if schema == "SupportAssignments":
        ids = re.findall(r'<statement-\w+ id="([^"]+)">', messages[-1]["content"])
        first = passages[0][0]
        items = [{"statement_id": s, "reason": "scripted", "support": "support", "passage_ids": [first]} for s in ids]
        return json.dumps({"assignments": items})
    raise AssertionError(f"no scripted answer for {schema}")


def backend_script(overrides: dict[str, Callable[[ChatRequest], Any]] | None = None) -> Callable[[ChatRequest], Any]:
    """A FakeBackend script: scripted answers per prompt, or ``overrides[prompt_name](request)``."""

    def answer(request: ChatRequest) -> Any:
        if overrides and request.prompt_name in overrides:
            return overrides[request.prompt_name](request)
        qtype = str(request.variables.get("question_type", "factoid"))
        return scripted_answer(request.schema_name or "", request.messages, qtype)

    return answer


def fake_judge(backend: FakeBackend, **kwargs: Any) -> Judge:
    """A judge on ``backend`` with a price (so budgets work) and retries that never sleep."""
    kwargs.setdefault("price", Price.per_million(1.0, 1.0))
    return Judge(backend, model="fake/model", retry=RetryPolicy.immediate(attempts=2), **kwargs)
