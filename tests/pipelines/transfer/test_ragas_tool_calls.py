"""``assay import ragas`` reads each row's ``reference_tool_calls`` into the question's reference tool calls, in
RAGAS's shape and OpenAI's, and refuses a call it cannot read with the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import FormatError
from assay.pipelines.transfer.imports import import_ragas


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_reference_tool_calls_in_ragas_and_openai_shapes(tmp_path: Path) -> None:
    rows = [
        {"user_input": "How much older is A than B?", "reference": "50 years.",
         "reference_tool_calls": [{"name": "search", "args": {"query": "A founded"}},
                                  {"function": {"name": "calculator", "arguments": '{"expression": "1950 - 1900"}'}}]},
        {"user_input": "Where is B?", "reference": "Oslo."},
    ]  # fmt: skip
    golden = import_ragas(_write(tmp_path / "t.jsonl", rows)).golden
    first, second = golden.questions
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("search", {"query": "A founded"}),
        ("calculator", {"expression": "1950 - 1900"}),
    ]
    assert all(c.provenance is not None and c.provenance.source == "imported" for c in first.tool_calls)
    assert second.tool_calls == []
    folder = tmp_path / "golden"
    golden.save(folder)
    lines = (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    assert "tool_calls" in lines[1] and "tool_calls" not in lines[2]  # written only where there are some


@pytest.mark.parametrize(
    ("calls", "said"),
    [
        ("not json", "'reference_tool_calls' is not JSON"),
        ({"name": "x"}, "'reference_tool_calls' is a dict"),
        ([{"args": {}}], "reference tool call 1 has no name"),
        ([{"name": "calc", "arguments": "2 +"}], "the arguments of reference tool call 1 (calc) are not a JSON object"),
    ],
)
def test_a_call_that_cannot_be_read_names_the_line(tmp_path: Path, calls: Any, said: str) -> None:
    rows = [{"user_input": "ok?"}, {"user_input": "Which?", "reference_tool_calls": calls}]
    with pytest.raises(FormatError) as caught:
        import_ragas(_write(tmp_path / "t.jsonl", rows))
    assert caught.value.line == 2 and said in str(caught.value)


def test_reference_tool_calls_survive_an_export_and_an_import(tmp_path: Path) -> None:
    from assay.pipelines.transfer import export_golden

    rows = [{"user_input": "How much older is A than B?", "reference": "50 years.",
             "reference_tool_calls": [{"name": "calculator", "args": {"expression": "1950 - 1900"}}]},
            {"user_input": "Where is B?", "reference": "Oslo."}]  # fmt: skip
    golden = import_ragas(_write(tmp_path / "t.jsonl", rows)).golden
    export_golden(golden, "ragas", tmp_path / "out")
    for name in ("ragas.jsonl", "ragas.csv"):
        again = import_ragas(tmp_path / "out" / name).golden
        assert [[(c.name, c.arguments) for c in q.tool_calls] for q in again.questions] == [
            [("calculator", {"expression": "1950 - 1900"})],
            [],
        ], name
