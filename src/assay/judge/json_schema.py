"""The output schema a structured judge call sends: an output model's JSON schema in the subset OpenAI's strict
``json_schema`` mode accepts (:func:`strict_schema`). The constraints strict mode drops are still checked, by pydantic
on our side, when the answer is validated against the model (:mod:`assay.judge.outputs`).
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

__all__ = ["strict_schema"]


# Keywords OpenAI's strict mode rejects (numeric and length constraints); checked by pydantic on our side instead.
_UNSUPPORTED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "default",
)


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the subset OpenAI strict ``json_schema`` mode accepts.

    Every object lists all its properties as required and sets ``additionalProperties: false``; numeric, length and
    default keywords are removed, and an integer range of at most 10 values (``0..3``, ``1..5``) becomes an ``enum``
    so the model is still held to the scale. ``$defs``/``$ref`` are kept (strict mode supports them).
    """
    schema = copy.deepcopy(model.model_json_schema())
    _strictify(schema)
    return schema


def _strictify(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _strictify(item)
        return
    if not isinstance(node, dict):
        return
    low, high = node.get("minimum"), node.get("maximum")
    if isinstance(low, int) and isinstance(high, int) and node.get("type") == "integer" and 0 <= high - low < 10:
        node["enum"] = list(range(low, high + 1))
    for key in _UNSUPPORTED:
        node.pop(key, None)
    if node.get("type") == "object" and "properties" in node:
        node["required"] = list(node["properties"])
        node["additionalProperties"] = False
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for prop in value.values():
                _strictify(prop)
        elif isinstance(value, dict | list):
            _strictify(value)
