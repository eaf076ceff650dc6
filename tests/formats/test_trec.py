"""TREC qrels and run files: reading, writing, and errors that name file and line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assay.errors import FormatError
from assay.formats.trec import read_qrels, read_run, write_qrels, write_run
from assay.metrics import evaluate


def test_round_trip(tmp_path: Path) -> None:
    qrels = {"q2": {"é1": 2, "b": -1}, "q1": {"a": 0}}
    run = {"q1": {"a": 0.5, "c": 1.5}, "q2": {"é1": 3.0}}
    assert write_qrels(tmp_path / "q.txt", qrels) == 3
    assert write_run(tmp_path / "r.txt", run, tag="t") == 3
    assert read_qrels(tmp_path / "q.txt").to_dict() == {"q1": {"a": 0}, "q2": {"b": -1, "é1": 2}}
    lines = (tmp_path / "r.txt").read_text().splitlines()
    assert lines[0] == "q1 Q0 c 1 1.5 t"
    ev = evaluate(read_qrels(tmp_path / "q.txt"), read_run(tmp_path / "r.txt"), ["ndcg"])
    assert ev.per_query["ndcg"].tolist() == [0.0, 1.0]


def test_whitespace_blank_lines_and_ignored_rank(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("q1\t0  a 1\r\n\nq1 0 b 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 1.0 x\n\n   \nq1 Q0 b 1 2e0 x")  # ranks disagree with scores; no EOL
    ev = evaluate(read_qrels(tmp_path / "q.txt"), read_run(tmp_path / "r.txt"), ["map", "num_ret"])
    assert ev.means() == {"map": 1.0, "num_ret": 2.0}


@pytest.mark.parametrize(
    ("reader", "text", "line", "message"),
    [
        (read_run, "q1 Q0 a 1 1.0 x\nq1 Q0 b 2 1.0\n", 2, "5 fields"),
        (read_run, "q1 Q0 a 1 1.0 x\n\nq1 Q0 b 2 high x\n", 3, "score 'high' is not a number"),
        (read_run, "q1 Q0 a 1 nan x\n", 1, "is not a number"),
        (
            read_run,
            "q1 Q0 a 1 1.0 x\nq2 Q0 a 1 1.0 x\nq1 Q0 a 3 0.5 x\n",
            3,
            "document 'a' appears again for query 'q1'",
        ),
        (read_qrels, "q1 0 a 1\nq1 0 b\n", 2, "3 fields"),
        (read_qrels, "q1 0 a 1\nq1 0 b 1.5\n", 2, "grade '1.5' is not an integer"),
        (read_qrels, "q1 0 a 1\nq1 0 a 0\n", 2, "appears again"),
        (read_qrels, "q1 0 a 1\nq2 0 b 1\n\nq1 0 c x\n", 4, "grade 'x' is not an integer"),
    ],
)
def test_errors_name_file_and_line(
    tmp_path: Path, reader: Callable[..., object], text: str, line: int, message: str
) -> None:
    path = tmp_path / "input.txt"
    path.write_text(text)
    with pytest.raises(FormatError, match=message) as info:
        reader(path, block_bytes=16)  # small blocks: the line numbers must carry across blocks
    assert info.value.line == line and info.value.path == str(path)
    assert f"{path}:{line}" in str(info.value)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(FormatError, match="no run lines"):
        read_run(tmp_path / "empty.txt")
    with pytest.raises(FormatError, match="no qrels lines"):
        read_qrels(tmp_path / "empty.txt")
    with pytest.raises(FormatError, match="cannot open"):
        read_qrels(tmp_path / "absent.txt")
