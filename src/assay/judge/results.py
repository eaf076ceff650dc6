"""What the judge hands back and how a model's answer is checked.

:class:`Judgement` is one judged item (a validated output or an :class:`Unscored`, and its cost); :class:`JudgeStats`
counts calls, cache hits and failures; :class:`Estimate` is a dry run's forecast. :func:`parse_output` validates a
model's text answer against the prompt's output model (code fences stripped); :func:`repair_messages` is the
follow-up turn of the one repair attempt; :func:`schema_instructions` is the schema appended to the prompt for servers
without structured output.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from assay.judge.base import TokenLogprob
from assay.judge.prompts import Prompt
from assay.types import Unscored

__all__ = [
    "Estimate",
    "JudgeStats",
    "Judgement",
    "cache_value",
    "cached_logprobs",
    "parse_output",
    "repair_messages",
    "schema_instructions",
]

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Judgement(Generic[T]):
    """One judged item: the validated output, or why there is none (``unscored``), and what it cost."""

    output: T | None
    unscored: Unscored | None
    cached: bool
    model: str
    prompt: str
    prompt_hash: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    # the answer's tokens with their probabilities, when the call asked for them (Judge.with_params(logprobs=True))
    # and the server gave them; kept in the cache with the answer
    logprobs: tuple[TokenLogprob, ...] | None = None

    @property
    def ok(self) -> bool:
        """True when there is a valid output."""
        return self.output is not None


@dataclass
class JudgeStats:
    """Counters over the judge's life: backend calls made, cache hits, deduplicated joins, retries, and the unscored
    answers by kind (``truncated``, ``loop``, ``too_long``, ``invalid_output``, ``backend_error``, ...)."""

    calls: int = 0
    cache_hits: int = 0
    deduped: int = 0
    retries: int = 0
    repairs: int = 0
    cut_kept: int = 0  # answers cut at their limit whose complete part stood (a grade cut while listing its quotes)
    cache_errors: int = 0
    unscored_kinds: Counter[str] = field(default_factory=Counter)

    @property
    def unscored(self) -> int:
        """Unscored answers of every kind."""
        return sum(self.unscored_kinds.values())

    def unscored_text(self) -> str:
        """``"1 loop, 2 truncated"`` (kinds in name order), or "" when nothing was unscored."""
        return ", ".join(f"{n} {kind}" for kind, n in sorted(self.unscored_kinds.items()) if n)


@dataclass(frozen=True)
class Estimate:
    """A dry-run estimate: calls to make, items already cached, prompt tokens, and an upper bound on cost.

    ``cost_usd`` prices the prompt tokens plus ``max_tokens`` completion tokens per call when the prompt sets
    ``max_tokens`` (else prompt tokens only); None when the model has no known price.
    """

    calls: int
    cached: int
    prompt_tokens: int
    cost_usd: float | None


_FENCE_LANGS = ("json", "JSON")


def _strip_fences(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body[3:]
        for lang in _FENCE_LANGS:
            if body.startswith(lang):
                body = body[len(lang) :]
        body = body.rsplit("```", 1)[0] if "```" in body else body
    return body.strip()


def parse_output(text: str, model: type[T]) -> T:
    """Validate a model's text answer against ``model``; code fences are stripped. Raises ValueError.

    A bare JSON object (the usual answer) is validated straight from the text by pydantic's JSON parser; anything
    else (fences, text that is not JSON, a schema mismatch) takes the slower path that says what is wrong.
    """
    try:
        return model.model_validate_json(text)
    except ValidationError:
        pass
    try:
        data = json.loads(_strip_fences(text))
    except json.JSONDecodeError as exc:
        raise ValueError(f"the answer is not JSON ({exc.msg} at char {exc.pos})") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors()[:5])
        raise ValueError(f"the answer does not match the schema ({problems})") from exc


_CUT_AT = re.compile(r',\s*"(\w+)"\s*:\s*\[')


def cut_output(text: str, model: type[T]) -> T | None:
    """The complete part of an answer cut at its token limit (a small model that loops while listing its quotes), when
    ``model`` says a trailing list may be dropped (its ``CUT_LIST`` names the field, which has a default): the text
    before that list, closed, validated. None when the cut fell before the list (or the model allows no cut)."""
    field = getattr(model, "CUT_LIST", None)
    if not field:
        return None
    found = next((m for m in _CUT_AT.finditer(text) if m.group(1) == field), None)
    start = text.find("{")
    if found is None or start < 0 or start > found.start():
        return None
    try:
        return model.model_validate_json(text[start : found.start()] + "}")
    except ValidationError:
        return None


def cache_value(output: BaseModel, tokens: Sequence[int], logprobs: Sequence[TokenLogprob] | None = None) -> str:
    """The cache entry of a valid answer: ``{"output": <the output as JSON>, "tokens": [prompt, completion]}``, and
    ``"logprobs": [[token, logprob, [[alternative, logprob], ...]], ...]`` when the answer has them."""
    head = f'{{"output":{output.model_dump_json()},"tokens":[{int(tokens[0])},{int(tokens[1])}]'
    if logprobs is None:
        return head + "}"
    rows = [[one.token, one.logprob, [list(alt) for alt in one.top]] for one in logprobs]
    return f'{head},"logprobs":{json.dumps(rows, ensure_ascii=False, separators=(",", ":"))}}}'


def cached_logprobs(stored: Any) -> tuple[TokenLogprob, ...] | None:
    """The ``logprobs`` of a cache entry (:func:`cache_value`); None when it has none or they do not read."""
    rows = stored.get("logprobs") if isinstance(stored, dict) else None
    if not isinstance(rows, list):
        return None
    try:
        return tuple(TokenLogprob(str(t), float(p), tuple((str(a), float(b)) for a, b in top)) for t, p, top in rows)
    except (TypeError, ValueError):
        return None


def schema_instructions(prompt: Prompt) -> str:
    """Text appended to the last message when the server cannot be asked for structured output."""
    schema = json.dumps(dict(prompt.schema), separators=(",", ":"))
    return f"\n\nAnswer with a single JSON object, no code fences, matching this JSON schema:\n{schema}"


def repair_messages(text: str, error: Exception) -> list[dict[str, str]]:
    """The two turns added for the one repair attempt: the invalid answer, and what was wrong with it."""
    return [
        {"role": "assistant", "content": text},
        {
            "role": "user",
            "content": f"That answer is not valid: {error}. Reply again with only the corrected JSON object.",
        },
    ]
