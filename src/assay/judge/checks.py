"""Deterministic checks: the criteria that need no judge, read from the ``[check]`` table of a criterion file.

Each check reads the answer (and, for some, the question or the retrieved passages) and scores 1.0 when it passes,
0.0 when it does not; a Python callable may also give a number of its own. A check that cannot run on a question
(no answer, no passage to cite, a callable that raised) raises :class:`CannotRun` with the reason, and the question
is left unscored on it, never scored 0. The kinds (``kind = "..."``):

- ``contains`` / ``not_contains``: ``text`` (a string or a list of strings) all appear in the answer / none does;
  ``ignore_case`` (default false);
- ``regex``: ``pattern`` (Python ``re`` syntax) is found in the answer; ``ignore_case``;
- ``json_schema``: the answer (a ```json fence around it is allowed) is JSON that matches ``schema``, a table in the
  subset of JSON Schema of :data:`SCHEMA_KEYWORDS`; a keyword outside it is refused when the file is read rather
  than ignored;
- ``length``: ``min_chars``, ``max_chars``, ``min_words``, ``max_words`` (at least one), bounds included;
- ``cites``: the answer cites a retrieved passage, by a marker ``[n]`` with n from 1 to the number of passages, or by
  a quotation (in straight or curly double quotes) of at least ``min_quote_words`` words (default 4) found in a
  passage, compared case-folded with whitespace collapsed;
- ``python``: ``function = "module:function"``, called as ``function(question, answer, passages)`` with the passages
  a list of strings; a bool scores 1.0 or 0.0, a finite number scores itself.

:func:`parse_check` turns the table into a :class:`Check`; a bad table raises :class:`CheckSpecError` naming the key
at fault and the fix, which :mod:`assay.judge.criteria` turns into an error with the file's line.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CHECK_KINDS",
    "SCHEMA_KEYWORDS",
    "CannotRun",
    "Check",
    "CheckSpecError",
    "parse_check",
]

CHECK_KINDS = ("contains", "not_contains", "regex", "json_schema", "length", "cites", "python")
# the JSON Schema keywords the json_schema check understands; a schema with another keyword is refused
SCHEMA_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "minLength", "maxLength",
     "minimum", "maximum", "minItems", "maxItems", "description", "title"}
)  # fmt: skip
_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_MARKER = re.compile(r"\[(\d+)\]")
_QUOTE = re.compile(r"\"([^\"]+)\"|\u201c([^\u201d]+)\u201d")
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)
NO_ANSWER = "no answer for this question"
NO_PASSAGE = "no retrieved passage for this question"


class CheckSpecError(ValueError):
    """A ``[check]`` table that cannot work: ``key`` is the key at fault (None: the table), ``fix`` what to write."""

    def __init__(self, key: str | None, problem: str, fix: str) -> None:
        self.key = key
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem}; {fix}")


class CannotRun(Exception):
    """The check cannot run on this question; the message is the reason, recorded beside the unscored value."""


@dataclass(frozen=True)
class Check:
    """One parsed check: its ``kind``, the inputs it ``reads`` and how it scores (``score``)."""

    kind: str
    reads: tuple[str, ...]
    scorer: Callable[[str, str, Sequence[str]], float]

    def score(self, question: str, answer: str | None, passages: Sequence[str]) -> float:
        """1.0 or 0.0 (a callable's own number); :class:`CannotRun` with the reason when it cannot run here."""
        if answer is None or not answer.strip():
            raise CannotRun(NO_ANSWER)
        if "passages" in self.reads and self.kind == "cites" and not passages:
            raise CannotRun(NO_PASSAGE)
        return self.scorer(question, answer, passages)


def parse_check(table: Mapping[str, Any], folder: Path) -> Check:
    """The :class:`Check` of a ``[check]`` table (``folder``: the criterion file's, where a ``python`` check's module
    may live); :class:`CheckSpecError` for a table that cannot work."""
    kind = table.get("kind")
    if kind not in CHECK_KINDS:
        raise CheckSpecError(
            "kind", f"check kind {kind!r} is not one assay has", f"use one of {', '.join(CHECK_KINDS)}"
        )
    allowed = {"kind", *_OPTIONS[kind]}
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise CheckSpecError(unknown[0], f"unknown key {unknown[0]!r} for a {kind} check",
                             f"a {kind} check takes {', '.join(sorted(allowed))}")  # fmt: skip
    build = _BUILDERS[kind]
    return build(table, folder)


_OPTIONS: dict[str, tuple[str, ...]] = {
    "contains": ("text", "ignore_case"),
    "not_contains": ("text", "ignore_case"),
    "regex": ("pattern", "ignore_case"),
    "json_schema": ("schema",),
    "length": ("min_chars", "max_chars", "min_words", "max_words"),
    "cites": ("min_quote_words",),
    "python": ("function",),
}


def _flag(table: Mapping[str, Any], key: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise CheckSpecError(key, f"{key} must be true or false", f"write {key} = true")
    return value


def _texts(table: Mapping[str, Any]) -> tuple[str, ...]:
    value = table.get("text")
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
        raise CheckSpecError("text", "text must be a non-empty string or a list of them",
                             'write text = "refund" or text = ["refund", "policy"]')  # fmt: skip
    return tuple(texts)


def _contains(table: Mapping[str, Any], _folder: Path) -> Check:
    texts, fold = _texts(table), _flag(table, "ignore_case")
    wanted = [t.casefold() if fold else t for t in texts]
    negate = table["kind"] == "not_contains"

    def score(_question: str, answer: str, _passages: Sequence[str]) -> float:
        text = answer.casefold() if fold else answer
        found = [t in text for t in wanted]
        return float(not any(found)) if negate else float(all(found))

    return Check(str(table["kind"]), ("answer",), score)


def _regex(table: Mapping[str, Any], _folder: Path) -> Check:
    source = table.get("pattern")
    if not isinstance(source, str) or not source:
        raise CheckSpecError("pattern", "pattern must be a non-empty string",
                             "write pattern = '\\d+ days' (a TOML literal string keeps backslashes)")  # fmt: skip
    try:
        pattern = re.compile(source, re.IGNORECASE if _flag(table, "ignore_case") else 0)
    except re.error as exc:
        raise CheckSpecError("pattern", f"pattern {source!r} is not a valid regular expression ({exc})",
                             "fix the expression (Python re syntax)") from None  # fmt: skip
    return Check("regex", ("answer",), lambda _q, answer, _p: float(pattern.search(answer) is not None))


def _length(table: Mapping[str, Any], _folder: Path) -> Check:
    bounds: dict[str, int] = {}
    for key in _OPTIONS["length"]:
        if key in table:
            value = table[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise CheckSpecError(key, f"{key} must be a whole number >= 0", f"write {key} = 50")
            bounds[key] = value
    if not bounds:
        raise CheckSpecError(None, "a length check needs a bound", "add min_chars, max_chars, min_words or max_words")
    for unit in ("chars", "words"):
        low, high = bounds.get(f"min_{unit}"), bounds.get(f"max_{unit}")
        if low is not None and high is not None and low > high:
            raise CheckSpecError(f"max_{unit}", f"max_{unit} {high} is below min_{unit} {low}", "swap them")

    def score(_question: str, answer: str, _passages: Sequence[str]) -> float:
        sizes = {"chars": len(answer), "words": len(answer.split())}
        ok = all(
            (f"min_{u}" not in bounds or sizes[u] >= bounds[f"min_{u}"])
            and (f"max_{u}" not in bounds or sizes[u] <= bounds[f"max_{u}"])
            for u in sizes
        )
        return float(ok)

    return Check("length", ("answer",), score)


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def cites_passage(answer: str, passages: Sequence[str], min_quote_words: int = 4) -> bool:
    """Whether ``answer`` cites one of ``passages``: a marker ``[n]`` with 1 <= n <= len(passages), or a quotation of
    at least ``min_quote_words`` words found in a passage (case-folded, whitespace collapsed)."""
    if any(1 <= int(n) <= len(passages) for n in _MARKER.findall(answer)):
        return True
    texts = [_normal(p) for p in passages]
    for straight, curly in _QUOTE.findall(answer):
        quoted = _normal(straight or curly)
        if len(quoted.split()) >= min_quote_words and any(quoted in text for text in texts):
            return True
    return False


def _cites(table: Mapping[str, Any], _folder: Path) -> Check:
    least = table.get("min_quote_words", 4)
    if not isinstance(least, int) or isinstance(least, bool) or least < 1:
        raise CheckSpecError("min_quote_words", "min_quote_words must be a whole number >= 1",
                             "write min_quote_words = 4")  # fmt: skip
    return Check("cites", ("answer", "passages"), lambda _q, answer, passages: float(cites_passage(answer, passages,
                                                                                                   least)))  # fmt: skip


def _json_schema(table: Mapping[str, Any], _folder: Path) -> Check:
    schema = table.get("schema")
    if not isinstance(schema, dict):
        raise CheckSpecError("schema", "schema must be a table", 'write schema = { type = "object", required = ["a"] }')
    _check_schema(schema, "schema")

    def score(_question: str, answer: str, _passages: Sequence[str]) -> float:
        text = answer.strip()
        fenced = _FENCE.match(text)
        try:
            value = json.loads(fenced.group(1) if fenced else text)
        except ValueError:
            return 0.0
        return float(matches_schema(value, schema))

    return Check("json_schema", ("answer",), score)


def _check_schema(schema: Mapping[str, Any], where: str) -> None:
    unknown = sorted(set(schema) - SCHEMA_KEYWORDS)
    if unknown:
        raise CheckSpecError("schema", f"{where} uses {unknown[0]!r}, a JSON Schema keyword this check does not read",
                             f"use only {', '.join(sorted(SCHEMA_KEYWORDS))}")  # fmt: skip
    kinds = schema.get("type", [])
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        if kind not in _TYPES:
            raise CheckSpecError(
                "schema", f"{where}: type {kind!r} is not a JSON type", f"use one of {', '.join(_TYPES)}"
            )
    for name, sub in dict(schema.get("properties", {})).items():
        _check_schema(sub, f"{where}.properties.{name}")
    if isinstance(schema.get("items"), dict):
        _check_schema(schema["items"], f"{where}.items")
    if isinstance(schema.get("additionalProperties"), dict):
        _check_schema(schema["additionalProperties"], f"{where}.additionalProperties")


def _is_type(value: Any, kind: str) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "number": number,
        "integer": number and float(value).is_integer(),
        "boolean": isinstance(value, bool),
        "null": value is None,
    }[kind]


def matches_schema(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` (parsed JSON) matches ``schema``, read with the keywords of :data:`SCHEMA_KEYWORDS` as JSON
    Schema defines them."""
    kinds = schema.get("type")
    if kinds is not None and not any(_is_type(value, k) for k in ([kinds] if isinstance(kinds, str) else kinds)):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "const" in schema and value != schema["const"]:
        return False
    if isinstance(value, str) and not _within(len(value), schema, "minLength", "maxLength"):
        return False
    if _is_type(value, "number") and not _within(value, schema, "minimum", "maximum"):
        return False
    if isinstance(value, list):
        items = schema.get("items")
        return _within(len(value), schema, "minItems", "maxItems") and (
            not isinstance(items, dict) or all(matches_schema(v, items) for v in value)
        )
    if isinstance(value, dict):
        return _object_matches(value, schema)
    return True


def _within(size: float, schema: Mapping[str, Any], low: str, high: str) -> bool:
    return (low not in schema or size >= schema[low]) and (high not in schema or size <= schema[high])


def _object_matches(value: Mapping[str, Any], schema: Mapping[str, Any]) -> bool:
    properties = dict(schema.get("properties", {}))
    if any(key not in value for key in schema.get("required", [])):
        return False
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            if not matches_schema(item, properties[key]):
                return False
        elif extra is False or (isinstance(extra, dict) and not matches_schema(item, extra)):
            return False
    return True


@contextmanager
def _importable_from(folders: Sequence[Path]) -> Iterator[None]:
    """``folders`` first on ``sys.path`` for one import (a criterion's module beside its file or in the working
    folder), then ``sys.path`` as it was."""
    saved = list(sys.path)
    sys.path[:0] = [str(folder) for folder in folders]
    try:
        yield
    finally:
        sys.path[:] = saved


def _python(table: Mapping[str, Any], folder: Path) -> Check:
    ref = table.get("function")
    module_name, sep, attr = ref.partition(":") if isinstance(ref, str) else ("", "", "")
    if not (sep and module_name and attr):
        fix = 'write function = "my_checks:polite" (my_checks.py beside the file or importable)'
        raise CheckSpecError("function", f"function {ref!r} is not module:function", fix)
    try:
        with _importable_from([folder, Path.cwd()]):
            function = getattr(importlib.import_module(module_name), attr)
    except Exception as exc:  # whatever the import raises, the file names the fix
        fix = "put the module beside the criterion file or on PYTHONPATH, and check the name"
        problem = f"function {ref!r} cannot be imported ({type(exc).__name__}: {exc})"
        raise CheckSpecError("function", problem, fix) from None
    if not callable(function):
        raise CheckSpecError("function", f"{ref!r} is not callable", "name a function of the module")

    def score(question: str, answer: str, passages: Sequence[str]) -> float:
        try:
            value = function(question, answer, list(passages))
        except Exception as exc:  # the user's function failed on this question: unscored, with why
            raise CannotRun(f"{ref} raised {type(exc).__name__}: {exc}") from None
        if isinstance(value, bool):
            return float(value)
        if isinstance(value, (int, float)) and math.isfinite(value):
            return float(value)
        raise CannotRun(f"{ref} returned {value!r}, not a bool or a finite number")

    return Check("python", ("question", "answer", "passages"), score)


_BUILDERS: dict[str, Callable[[Mapping[str, Any], Path], Check]] = {
    "contains": _contains,
    "not_contains": _contains,
    "regex": _regex,
    "json_schema": _json_schema,
    "length": _length,
    "cites": _cites,
    "python": _python,
}
