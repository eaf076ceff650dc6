"""Pins of the tools file (the mutation habit): each error's whole message (file, tool, problem, fix), what a tool
without a description or required arguments reads as, the size bound, and the schema checks' wording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import FormatError
from assay.formats.tools import MAX_TOOLS_BYTES, ToolSpec, read_tools

SHAPE = '[{"name": "calculator", "description": "...", "parameters": {"type": "object", "properties": {...}}}]'


def _write(tmp_path: Path, items: Any) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("items", "line", "problem"),
    [
        ([{"name": "a"}, "calc"], 2, "tool 2 is a str"),
        ([{"name": "a"}, {"name": "  "}], 2, "tool 2 has no name"),
        ([{"name": "a", "description": 3}], 1, "tool 1 (a): the description is a int"),
        ([{"name": "a", "parameters": []}], 1, "tool 1 (a): parameters are not the JSON schema of an object"),
        ([{"name": "a", "parameters": {"required": [1]}}], 1, "tool 1 (a): 'required' is not a list of names"),
    ],
)
def test_each_error_names_the_file_the_tool_and_the_fix(tmp_path: Path, items: Any, line: int, problem: str) -> None:
    path = _write(tmp_path, items)
    with pytest.raises(FormatError) as caught:
        read_tools(path)
    assert str(caught.value) == f"{path}:{line}: {problem} (expected {SHAPE})"


def test_a_repeated_name_says_to_make_names_unique(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"name": "a"}, {"type": "function", "function": {"name": "a"}}])
    with pytest.raises(FormatError) as caught:
        read_tools(path)
    assert str(caught.value) == f"{path}:2: tool 2: the name 'a' again (expected a unique name per tool)"


def test_a_file_that_cannot_be_read_or_is_too_big(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        read_tools(tmp_path / "missing.json")
    assert "cannot read the tools file" in str(caught.value) and caught.value.line is None
    whole = json.dumps([{"name": "a"}])
    at_bound = tmp_path / "bound.json"
    at_bound.write_text(whole + " " * (MAX_TOOLS_BYTES - len(whole)), encoding="utf-8")
    assert [t.name for t in read_tools(at_bound)] == ["a"]  # exactly the bound is read
    over = tmp_path / "over.json"
    over.write_text(whole + " " * (MAX_TOOLS_BYTES - len(whole) + 1), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_tools(over)
    assert str(caught.value) == f"{over}: the file is over {MAX_TOOLS_BYTES:,} bytes (expected a JSON list of tools)"


def test_what_a_tool_reads_as(tmp_path: Path) -> None:
    tools = read_tools(_write(tmp_path, [{"name": " bare "},
                                         {"name": "calc", "description": "Évaluer", "parameters": {
                                             "type": "object", "properties": {"e": {}}}}]))  # fmt: skip
    bare, calc = tools
    assert (bare.name, bare.description, dict(bare.parameters)) == ("bare", "", {})
    assert bare.as_dict() == {"name": "bare", "description": "", "parameters": {}}
    assert calc.description == "Évaluer" and calc.problem({}) is None  # nothing required
    assert calc.problem({"other": 1}) is None  # other arguments allowed unless the schema forbids them


def test_the_schema_checks_name_every_missing_and_unknown_argument() -> None:
    spec = ToolSpec("t", parameters={"properties": {"a": {}, "b": {}}, "required": ["a", "b"],
                                     "additionalProperties": False})  # fmt: skip
    assert spec.problem({}) == "t needs 'a', 'b'"
    assert spec.problem({"a": 1, "b": 2, "y": 0, "x": 0}) == "t has no parameter 'x', 'y'"
    closed = ToolSpec("u", parameters={"additionalProperties": False})  # no properties listed: nothing to check
    assert closed.problem({"z": 1}) is None


def test_the_file_level_errors_in_full(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(FormatError) as caught:
        read_tools(missing)
    assert str(caught.value) == (f"{missing}: cannot read the tools file (No such file or directory) "
                                 "(expected a readable JSON file)")  # fmt: skip
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"name": "a"},\n  {"name": }\n]', encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        read_tools(broken)
    assert caught.value.path == str(broken) and caught.value.line == 3 and caught.value.expected == SHAPE
    assert str(caught.value).startswith(f"{broken}:3: not JSON (")
    empty = _write(tmp_path, {"tools": []})
    with pytest.raises(FormatError) as caught:
        read_tools(empty)
    assert str(caught.value) == f"{empty}: no list of tools (expected {SHAPE})"
