"""A runs header may name its target, label, start and end; other kinds keep the strict header."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import FormatError
from assay.formats.jsonl import is_header, iter_json_lines, read_header, write_jsonl


def test_runs_header_fields_round_trip(tmp_path: Path) -> None:
    head = {"target": "cmd:app", "label": "v2", "started": "2025-01-01T00:00:00+00:00", "ended": None}
    write_jsonl(tmp_path / "run.jsonl", "runs", [{"query_id": "q1", "retrieved": ["c1"]}], header=head)
    read = read_header(tmp_path / "run.jsonl")
    assert read is not None and (read.target, read.label, read.started, read.ended) == (
        "cmd:app",
        "v2",
        head["started"],
        None,
    )
    assert [obj for _, obj in iter_json_lines(tmp_path / "run.jsonl", kind="runs")] == [
        {"query_id": "q1", "retrieved": ["c1"]}
    ]


def test_other_kinds_stay_strict(tmp_path: Path) -> None:
    assert is_header({"assay": "runs", "version": 1, "label": "x"})
    assert not is_header({"assay": "qrels", "version": 1, "label": "x"})
    with pytest.raises(ValueError, match="not allowed in a 'qrels' file"):
        write_jsonl(tmp_path / "q.jsonl", "qrels", [], header={"label": "x"})
    with pytest.raises(ValueError, match="not allowed in a 'runs' file"):
        write_jsonl(tmp_path / "r.jsonl", "runs", [], header={"secret": "x"})
    (tmp_path / "q.jsonl").write_text('{"assay": "qrels", "version": 1, "label": "x"}\n', encoding="utf-8")
    with pytest.raises(FormatError, match="no assay header line"):
        list(iter_json_lines(tmp_path / "q.jsonl", kind="qrels"))
