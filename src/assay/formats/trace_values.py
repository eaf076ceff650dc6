"""Values read from trace attributes (:mod:`assay.formats.traces`): numbers, texts (plain or inside a JSON value),
flattened attributes as trees, chat messages; and :class:`AttributeProblems`, the tally of attribute values of the
wrong type, so that a value left out is counted and named in one warning instead of silently dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AttributeProblems",
    "assistant_text",
    "finite",
    "first_number",
    "last_user_message",
    "message_text",
    "messages",
    "text_value",
    "tree",
]

_SHOWN = 4  # kinds of problem named in the warning


@dataclass
class AttributeProblems:
    """Attribute values of the wrong type, per attribute and problem: how many, and the line of the first."""

    seen: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (attribute, problem) -> [count, line]

    def add(self, attribute: str, value: Any, expected: str, line: int) -> None:
        """Count ``value`` of ``attribute`` (at ``line``), which is not the ``expected`` kind of value."""
        key = (attribute, f"{_kind(value)} where {expected} belongs")
        held = self.seen.setdefault(key, [0, line])
        held[0] += 1

    def merge(self, other: AttributeProblems) -> None:
        """Add ``other``'s counts to these."""
        for key, (count, line) in other.seen.items():
            held = self.seen.setdefault(key, [0, line])
            held[0] += count

    def total(self) -> int:
        """How many values were of the wrong type."""
        return sum(count for count, _ in self.seen.values())

    def warning(self) -> str | None:
        """One sentence naming each attribute and problem with its count (the commonest first), or None."""
        if not self.seen:
            return None
        ranked = sorted(self.seen.items(), key=lambda item: (-item[1][0], item[0]))
        parts = [f"{attr}: {count} x {problem} (first at line {line})" for (attr, problem), (count, line) in ranked]
        more = f"; and {len(parts) - _SHOWN} more kind(s)" if len(parts) > _SHOWN else ""
        return (f"{self.total()} attribute value(s) of the wrong type, left out (the rest of each trace kept): "
                f"{'; '.join(parts[:_SHOWN])}{more}.")  # fmt: skip


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"a string {value[:20]!r}"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value}"
    return {list: "a list", dict: "an object", int: "an integer", float: "a number"}.get(type(value), "a value")


def finite(value: Any) -> float | None:
    """A number as a finite float, else None (a bool, a string, NaN or infinity)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def first_number(attrs: Mapping[str, Any], *keys: str) -> float | None:
    for key in keys:
        number = finite(attrs.get(key))
        if number is not None:
            return number
    return None


def text_value(value: Any, keys: Sequence[str]) -> str | None:
    """A text value, or from a JSON value: a string, the first of ``keys`` holding a non-empty string, else the
    only string value of an object."""
    if not isinstance(value, str) or not value.strip():
        return None
    stripped = value.strip()
    if not stripped.startswith(("{", '"')):
        return stripped
    try:
        parsed = json.loads(stripped)
    except ValueError:
        return stripped
    if isinstance(parsed, str):
        return parsed.strip() or None
    if not isinstance(parsed, dict):
        return None
    for key in keys:
        if isinstance(parsed.get(key), str) and parsed[key].strip():
            return str(parsed[key]).strip()
    strings = [v for v in parsed.values() if isinstance(v, str) and v.strip()]
    return strings[0].strip() if len(strings) == 1 else None


def tree(attrs: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The flat attributes under ``prefix.`` as nested dicts split on dots (``a.0.b`` -> ``{"0": {"b": ...}}``)."""
    out: dict[str, Any] = {}
    start = len(prefix) + 1
    for key, value in attrs.items():
        if not key.startswith(prefix) or key[len(prefix) : start] != ".":
            continue
        node = out
        *path, leaf = key[start:].split(".")
        for part in path:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[leaf] = value
    return out


def messages(attrs: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """GenAI messages: a JSON string, or flattened attributes (``key.0.role``)."""
    raw = attrs.get(key)
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return []
        return [m for m in parsed if isinstance(m, dict)] if isinstance(parsed, list) else []
    nodes = tree(attrs, key)
    return [nodes[k] for k in sorted((k for k in nodes if k.isdigit()), key=int) if isinstance(nodes[k], dict)]


def message_text(message: Mapping[str, Any]) -> str | None:
    """The text of a message: OpenInference's ``content`` / ``contents.N.message_content.text``, GenAI's
    ``parts`` of type text (``content``), or a plain ``content`` string."""
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        return content.strip()
    texts: list[str] = []
    contents = message.get("contents")
    if isinstance(contents, dict):
        for k in sorted((k for k in contents if k.isdigit()), key=int):
            text = contents[k].get("message_content", {}).get("text") if isinstance(contents[k], dict) else None
            texts += [text] if isinstance(text, str) else []
    parts = message.get("parts")
    if isinstance(parts, dict):
        parts = [parts[k] for k in sorted((k for k in parts if k.isdigit()), key=int)]
    if isinstance(parts, list):
        for part in parts:
            text = part.get("content", part.get("text")) if isinstance(part, dict) else None
            kind = part.get("type", "text") if isinstance(part, dict) else None
            texts += [text] if isinstance(text, str) and kind == "text" else []
    joined = "\n".join(t for t in texts if t.strip()).strip()
    return joined or None


def last_user_message(attrs: Mapping[str, Any], key: str) -> str | None:
    users = [m for m in messages(attrs, key) if m.get("role") == "user"]
    return message_text(users[-1]) if users else None


def assistant_text(attrs: Mapping[str, Any], key: str) -> str | None:
    texts = [message_text(m) for m in messages(attrs, key) if m.get("role") in (None, "assistant", "model")]
    joined = "\n".join(t for t in texts if t)
    return joined or None
