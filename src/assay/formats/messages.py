"""A system's conversation with its model as a list of messages, turned into the steps of a run line.

An agent built on a chat API leaves a message list: the user's question, assistant messages that call tools, the
tools' replies, the final answer. A run line may carry that list as ``messages`` instead of ``steps``; two shapes are
read, and may be mixed:

- OpenAI chat messages: ``{"role": "user" | "assistant" | "tool" | "system", "content": ...}``; an assistant
  message's ``tool_calls`` are ``[{"id", "type": "function", "function": {"name", "arguments"}}]`` (arguments a
  JSON string), a tool message answers one by ``tool_call_id``;
- RAGAS multi-turn samples: ``{"type": "human" | "ai" | "tool", "content": ...}``, an ``ai`` message's
  ``tool_calls`` are ``[{"name", "args"}]`` (args an object) and a ``tool`` message answers the earliest call not
  yet answered.

The rules (:func:`steps_from_messages`):

1. Each assistant message is a model call (an ``llm`` step, with ``usage`` tokens when the message has them).
2. Each tool call is a ``tool`` step with its name, arguments and the output of the tool message that answers it
   (none when no message does).
3. A tool call is a *search* (a ``retrieval`` step) when its output is a JSON list of passages: strings, or objects
   with a ``text``, ``content``, ``page_content`` or ``id``; its query is the arguments' ``query``, ``question``,
   ``q``, ``input`` or ``search_query``, else their only string. What a tool is called does not decide it.
4. The answer is the last assistant message's text when that message calls no tool.
5. The context is the passages of every search, in the order they came, each once (by id, else by text): what the
   model had read when it answered.

Content given as a list of parts (``[{"type": "text", "text": ...}]``) is joined. A message of the wrong shape, a
tool call without a name or with arguments that are not a JSON object raises :class:`MessagesError` naming the
message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FromMessages", "MessagesError", "steps_from_messages"]

_QUERY_KEYS = ("query", "question", "q", "input", "search_query")
_TEXT_KEYS = ("text", "content", "page_content")
_ASSISTANT = {"assistant", "ai"}
_TOOL = {"tool"}


class MessagesError(ValueError):
    """A message list that cannot be read; the message names the message (from 0) and what is wrong."""


@dataclass
class FromMessages:
    """What a message list says: the steps (as a run line's ``steps`` holds them), the answer, the context."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    answer: str | None = None
    context: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Call:
    step: dict[str, Any]
    id: str | None
    answered: bool = False


def steps_from_messages(messages: Sequence[Any]) -> FromMessages:
    """The steps, answer and context of ``messages`` by the rules of the module docstring."""
    out, calls = FromMessages(), list[_Call]()
    last_assistant: tuple[str | None, bool] | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise MessagesError(f"message {index} is a {type(message).__name__}, not an object")
        role = message.get("role", message.get("type"))
        if role in _ASSISTANT:
            out.steps.append(_llm(message))
            mine = [_call(index, i, raw) for i, raw in enumerate(_list(message.get("tool_calls"), index))]
            calls += mine
            out.steps += [call.step for call in mine]
            last_assistant = (_text(message.get("content")), bool(mine))
        elif role in _TOOL:
            _answer_call(calls, message, index)
    for call in calls:
        _classify(call.step)
    out.answer = last_assistant[0] if last_assistant is not None and not last_assistant[1] else None
    out.context = _context(out.steps)
    return out


def _list(value: Any, index: int) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MessagesError(f"message {index}: tool_calls is a {type(value).__name__}, not a list")
    return value


def _llm(message: Mapping[str, Any]) -> dict[str, Any]:
    step: dict[str, Any] = {"kind": "llm"}
    usage = message.get("usage") or message.get("response_metadata", {}).get("token_usage")
    if isinstance(usage, Mapping):
        for key, names in (("prompt_tokens", ("prompt_tokens", "input_tokens")),
                           ("completion_tokens", ("completion_tokens", "output_tokens"))):  # fmt: skip
            value = next((usage[n] for n in names if isinstance(usage.get(n), int) and usage[n] >= 0), None)
            if value is not None:
                step[key] = value
    return step


def _call(index: int, position: int, raw: Any) -> _Call:
    """A tool call of either shape as a ``tool`` step (its output is set when a tool message answers it)."""
    where = f"message {index}, tool call {position}"
    if not isinstance(raw, Mapping):
        raise MessagesError(f"{where} is a {type(raw).__name__}, not an object")
    nested = raw.get("function")
    function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else raw
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise MessagesError(f"{where} has no name")
    arguments = function.get("arguments", function.get("args"))
    parsed = _arguments(arguments, where)
    call_id = raw.get("id")
    return _Call({"kind": "tool", "name": name, "arguments": parsed}, call_id if isinstance(call_id, str) else None)


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise MessagesError(f"{where}: arguments {value[:60]!r} are not JSON") from None
    if not isinstance(value, dict):
        raise MessagesError(f"{where}: arguments are a {type(value).__name__}, not a JSON object")
    return value


def _answer_call(calls: list[_Call], message: Mapping[str, Any], index: int) -> None:
    """Set the output of the call ``message`` answers: by ``tool_call_id``, else the earliest unanswered one."""
    wanted = message.get("tool_call_id")
    open_calls = [c for c in calls if not c.answered]
    call = next((c for c in open_calls if wanted is not None and c.id == wanted), None)
    if call is None and wanted is None and open_calls:
        call = open_calls[0]
    if call is None:
        raise MessagesError(f"message {index} is a tool reply to no call"
                            + (f" (no tool call has id {wanted!r})" if wanted is not None else ""))  # fmt: skip
    call.answered = True
    output = message.get("content")
    call.step["output"] = output if isinstance(output, str) else json.dumps(output, sort_keys=True)


def _classify(step: dict[str, Any]) -> None:
    """Rule 3: a tool step whose output is a list of passages becomes a retrieval step, in place."""
    passages = _passages(step.get("output"))
    if passages is None:
        return
    arguments = step["arguments"]
    query = next((arguments[k] for k in _QUERY_KEYS if isinstance(arguments.get(k), str)), None)
    strings = [v for v in arguments.values() if isinstance(v, str)]
    query = query if query is not None else (strings[0] if len(strings) == 1 else None)
    name = step["name"]
    step.clear()
    step.update({"kind": "retrieval", "tool": name, "retrieved": passages} | ({"query": query} if query else {}))


def _passages(output: Any) -> list[dict[str, Any]] | None:
    if not isinstance(output, str):
        return None
    try:
        parsed = json.loads(output)
    except ValueError:
        return None
    if not isinstance(parsed, list) or not parsed:
        return None
    items = [_passage(x) for x in parsed]
    return None if any(item is None for item in items) else [item for item in items if item is not None]


def _passage(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        return {"text": value}
    if not isinstance(value, Mapping):
        return None
    text = next((value[k] for k in _TEXT_KEYS if isinstance(value.get(k), str)), None)
    ident = value.get("id")
    ident = str(ident) if isinstance(ident, str | int) and not isinstance(ident, bool) else None
    if text is None and ident is None:
        return None
    found: dict[str, Any] = {"id": ident, "text": text}
    score = value.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool):
        found["score"] = float(score)
    return {k: v for k, v in found.items() if v is not None}


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    return None


def _context(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rule 5: the searches' passages in order, each once (by id, else by text)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for step in steps:
        for passage in step.get("retrieved", []) if step["kind"] == "retrieval" else []:
            key = ("id", passage["id"]) if "id" in passage else ("text", passage["text"])
            if key not in seen:
                seen.add(key)
                out.append({k: v for k, v in passage.items() if k != "score"})
    return out
