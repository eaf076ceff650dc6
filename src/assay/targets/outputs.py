"""What a system returns, turned into the fields of a run line; and the failure of one call.

A system (a Python function, an HTTP endpoint's JSON after ``--map``, a command's stdout) returns a dict, an object
with the same attributes (a dataclass, a pydantic model, any object) or a plain string (the answer alone):

* ``retrieved``: ranked passages kept as the system gave them: chunk ids (``"c1"``), ``{"id", "score", "text"}``,
  ``{"text"}`` or ``{"doc_id", "start", "end"}`` objects; or ``contexts``: a list of passage texts, which becomes
  ``[{"text": s}, ...]`` in list order;
* ``answer`` (a string), ``citations`` (a list of strings);
* ``usage``: ``prompt_tokens``, ``completion_tokens``, ``cost_usd`` (numbers), written only when the system says;
* ``rewrite`` (or ``query``): the system's own standalone rewrite of a conversation's turn, a string (kept on the
  lines of turns only: :mod:`assay.targets.conversations`);
* ``steps``: what a system that searches several times did, in order, as a run line holds them
  (:class:`~assay.types.RetrievalStep`, :class:`~assay.types.ToolStep`, :class:`~assay.types.LlmStep`); or
  ``messages``, its chat messages with their tool calls, read into steps (and the answer and passages when the reply
  has none) by :mod:`assay.formats.messages`.

Anything else is an ``invalid_output`` failure that names what was wrong; a failure is recorded, never scored.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from assay.formats.jsonl import first_problem
from assay.formats.messages import MessagesError, steps_from_messages
from assay.types import Step

__all__ = ["USAGE_KEYS", "TargetFailure", "normalize", "resolve_pointer"]

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "cost_usd")
_FIELDS = ("retrieved", "contexts", "answer", "citations", "usage", "rewrite", "steps", "messages")
_STEPS: TypeAdapter[list[Step]] = TypeAdapter(list[Step])


class TargetFailure(Exception):
    """One call of the system failed: ``kind`` (timeout, http_status, connection, invalid_output, exception,
    exit_status), a message, and whether trying again may help (``transient``; ``retry_after`` in seconds)."""

    def __init__(self, kind: str, message: str, *, transient: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind, self.message, self.transient, self.retry_after = kind, message, transient, retry_after


def _invalid(message: str) -> TargetFailure:
    return TargetFailure("invalid_output", message)


def _as_mapping(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str):
        return {"answer": value}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dict(dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    found = {name: getattr(value, name) for name in _FIELDS if getattr(value, name, None) is not None}
    if not found:
        raise _invalid(f"returned a {type(value).__name__} without contexts, retrieved or answer")
    return found


def normalize(value: Any) -> dict[str, Any]:
    """The run-line fields (``retrieved``, ``answer``, ``citations``, optional ``usage``) of what a system returned."""
    data = _with_messages(_as_mapping(value))
    if data.get("retrieved") is not None and data.get("contexts") is not None:
        raise _invalid("returned both 'retrieved' and 'contexts': give one of them")
    if all(data.get(name) is None for name in ("retrieved", "contexts", "answer")):
        raise _invalid(f"returned none of contexts, retrieved, answer (keys: {sorted(data)[:8]})")
    out: dict[str, Any] = {"retrieved": _retrieved(data), "answer": _answer(data.get("answer"))}
    out["citations"] = _citations(data.get("citations"))
    usage = _usage(data.get("usage"))
    if usage:
        out["usage"] = usage
    rewrite = data.get("rewrite", data.get("query"))
    if isinstance(rewrite, str) and rewrite.strip():
        out["rewrite"] = rewrite
    if data.get("steps"):
        out["steps"] = _steps(data["steps"])
    return out


def _with_messages(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A reply with ``messages`` (an agent's chat messages) and no ``steps``: the steps read from them, and the answer
    and passages when the reply gives none (:mod:`assay.formats.messages`)."""
    if data.get("messages") is None or data.get("steps") is not None:
        return data
    try:
        found = steps_from_messages(_list(data["messages"], "messages"))
    except MessagesError as exc:
        raise _invalid(f"'messages': {exc}") from None
    out = {**data, "steps": found.steps}
    if out.get("answer") is None:
        out["answer"] = found.answer
    if out.get("retrieved") is None and out.get("contexts") is None:
        out["retrieved"] = found.context
    return out


def _steps(value: Any) -> list[dict[str, Any]]:
    """The steps as a run line writes them, checked (an unknown kind, a tool without a name or with arguments that
    are not JSON is an ``invalid_output`` failure naming the step)."""
    try:
        steps = _STEPS.validate_python(_list(value, "steps"))
    except ValidationError as exc:
        raise _invalid(f"'steps': {first_problem(exc)}") from None
    return [step.model_dump(exclude_none=True, exclude_defaults=True) for step in steps]


def _retrieved(data: Mapping[str, Any]) -> list[Any]:
    if data.get("contexts") is not None:
        contexts = _list(data["contexts"], "contexts")
        return [{"text": c} if isinstance(c, str) else _item(c, i) for i, c in enumerate(contexts)]
    return [_item(item, i) for i, item in enumerate(_list(data.get("retrieved") or [], "retrieved"))]


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise _invalid(f"'{name}' is a {type(value).__name__}, not a list")
    return list(value)


def _item(item: Any, index: int) -> Any:
    """A retrieved item as given: an id, or an object with an id, a text, or a document id with offsets."""
    if isinstance(item, str):
        return item
    if not isinstance(item, Mapping):
        raise _invalid(f"retrieved item {index} is a {type(item).__name__}: give an id, or an object with id or text")
    if not any(isinstance(item.get(key), str) for key in ("id", "text", "doc_id")):
        raise _invalid(f"retrieved item {index} has no 'id', 'text' or 'doc_id' string (keys: {sorted(item)[:6]})")
    score = item.get("score")
    if score is not None and not _number(score):
        raise _invalid(f"retrieved item {index} has score {score!r}, not a number")
    return dict(item)


def _answer(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _invalid(f"'answer' is a {type(value).__name__}, not a string")


def _citations(value: Any) -> list[str]:
    cited = _list(value if value is not None else [], "citations")
    if not all(isinstance(c, str) for c in cited):
        raise _invalid("'citations' holds something other than strings")
    return cited


def _usage(value: Any) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _invalid(f"'usage' is a {type(value).__name__}, not an object")
    return {key: value[key] for key in USAGE_KEYS if _number(value.get(key))}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at a JSON pointer (RFC 6901: ``/a/0/b``, ``~1`` for ``/``, ``~0`` for ``~``; ``""`` is the whole
    document); a missing member raises an ``invalid_output`` failure naming the pointer."""
    value = document
    for raw in pointer.split("/")[1:] if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, Mapping) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            raise _invalid(f"the response has nothing at {pointer!r} (stopped at {token!r})")
    return value
