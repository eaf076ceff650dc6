"""A tools file: the tools a system can call, for ``assay build --tools FILE`` to write reference tool calls.

JSON, a list of tools (or ``{"tools": [...]}``), each in OpenAI's function shape or bare::

    [{"type": "function", "function": {"name": "calculator", "description": "...",
      "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                     "required": ["expression"]}}},
     {"name": "order_status", "description": "...", "parameters": {...}}]

``name`` is required and unique; ``parameters``, when given, is a JSON schema of an object (``properties`` and
``required`` are read: a call must give every required argument, and none that is not a property when the schema
says ``"additionalProperties": false``). A file that cannot be read is one :class:`~assay.errors.FormatError`
naming the file, the tool (by its place in the list, as the line) and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import FormatError

__all__ = ["MAX_TOOLS_BYTES", "ToolSpec", "read_tools"]

MAX_TOOLS_BYTES = 1_000_000  # a tools file is a few kilobytes; a larger one is not one
_SHAPE = '[{"name": "calculator", "description": "...", "parameters": {"type": "object", "properties": {...}}}]'


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, description and parameters' JSON schema (empty: any arguments)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def problem(self, arguments: Mapping[str, Any]) -> str | None:
        """Why ``arguments`` are not a call of this tool (a required argument missing, an unknown one where the
        schema allows no other), or None."""
        properties = self.parameters.get("properties")
        known = set(properties) if isinstance(properties, Mapping) else None
        missing = [name for name in self.parameters.get("required", []) if name not in arguments]
        if missing:
            return f"{self.name} needs {', '.join(map(repr, missing))}"
        if known is not None and self.parameters.get("additionalProperties") is False:
            unknown = sorted(set(arguments) - known)
            if unknown:
                return f"{self.name} has no parameter {', '.join(map(repr, unknown))}"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}


def read_tools(path: str | Path) -> tuple[ToolSpec, ...]:
    """The tools of ``path`` (module docstring)."""
    where = Path(path)
    try:
        if where.stat().st_size > MAX_TOOLS_BYTES:
            raise FormatError(where, None, f"the file is over {MAX_TOOLS_BYTES:,} bytes", "a JSON list of tools")
        raw = json.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FormatError(where, None, f"cannot read the tools file ({exc.strerror})", "a readable JSON file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(where, getattr(exc, "lineno", None), f"not JSON ({exc})", _SHAPE) from None
    items = raw.get("tools") if isinstance(raw, dict) else raw
    if not isinstance(items, list) or not items:
        raise FormatError(where, None, "no list of tools", _SHAPE)
    tools: dict[str, ToolSpec] = {}
    for i, item in enumerate(items, start=1):
        tool = _tool(where, i, item)
        if tool.name in tools:
            raise FormatError(where, i, f"tool {i}: the name {tool.name!r} again", "a unique name per tool")
        tools[tool.name] = tool
    return tuple(tools.values())


def _tool(where: Path, i: int, item: Any) -> ToolSpec:
    spec = item.get("function", item) if isinstance(item, dict) else None
    if not isinstance(spec, dict):
        raise FormatError(where, i, f"tool {i} is a {type(item).__name__}", _SHAPE)
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise FormatError(where, i, f"tool {i} has no name", _SHAPE)
    description = spec.get("description")
    description = "" if description is None else description
    parameters = spec.get("parameters")
    parameters = {} if parameters is None else parameters  # an empty list is no schema: refused below
    if not isinstance(description, str):
        raise FormatError(where, i, f"tool {i} ({name}): the description is a {type(description).__name__}", _SHAPE)
    if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
        raise FormatError(where, i, f"tool {i} ({name}): parameters are not the JSON schema of an object", _SHAPE)
    required = parameters.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise FormatError(where, i, f"tool {i} ({name}): 'required' is not a list of names", _SHAPE)
    return ToolSpec(name.strip(), description, parameters)
