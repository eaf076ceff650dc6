"""`assay metrics` on the bundled example and on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "example"
QRELS, RUN, JSONL = (str(EXAMPLE / n) for n in ("qrels.txt", "run.txt", "run.jsonl"))


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["metrics", *args])
    return result.exit_code, result.stdout, result.stderr


def test_default_table() -> None:
    code, out, _ = invoke(QRELS, RUN)
    assert code == 0
    assert "ndcg@10" in out and "bpref" in out
    assert "4 queries evaluated; 1 in the qrels without a run entry" in out


def test_trec_format_names_as_given_and_hand_values() -> None:
    # q4: ranking c35 c31 c36 c32 c37 with c31:2 c32:1 c38:1 -> AP = (1/2 + 2/4) / 3 = 1/3.
    code, out, _ = invoke(QRELS, RUN, "-m", "map_cut_10", "-m", "P@5", "--per-query", "--format", "trec")
    assert code == 0
    lines = out.splitlines()
    assert "map_cut_10\tq4\t0.3333" in lines
    assert "P@5\tq4\t0.4000" in lines
    assert lines[-1] == "num_q\tall\t4"


def test_json_complete_and_jsonl_run_agree_with_trec_run() -> None:
    code, out, _ = invoke(QRELS, JSONL, "--format", "json", "--complete", "--per-query")
    assert code == 0
    doc = json.loads(out)
    assert doc["queries"] == 5 and doc["missing_from_run"] == 1 and doc["complete"] is True
    assert doc["per_query"]["q5"]["map"] == 0.0
    _, trec_out, _ = invoke(QRELS, RUN, "--format", "json", "--complete")
    assert json.loads(trec_out)["means"] == doc["means"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "nope@5"], "unknown measure 'nope@5'"),
        (["-m", "ndcg@10|g>=2"], "raw grades"),
    ],
)
def test_bad_measure_is_one_line_error(args: list[str], message: str) -> None:
    code, _, err = invoke(QRELS, RUN, *args)
    assert code == 1 and message in err and err.startswith("Error: ")


def test_malformed_run_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "run.txt"
    bad.write_text("q1 Q0 c01 1 1.0 x\nq1 Q0 c02 1.0 x\n")
    code, _, err = invoke(QRELS, str(bad))
    assert code == 1 and f"{bad}:2: 5 fields" in err


def test_json_writes_null_for_an_undefined_stderr(tmp_path: Path) -> None:
    # One query: its map is 1/1 = 1.0, and a standard error needs two queries, so it is NaN, written as null.
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.0 x\n")
    code, out, _ = invoke(str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "map", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["means"] == {"map": 1.0} and doc["stderr"] == {"map": None}


def test_bad_measure_fails_before_the_files_are_read(tmp_path: Path) -> None:
    bad = tmp_path / "run.txt"
    bad.write_text("q1 Q0 c01 1.0 x\n")  # malformed too: the measure name is checked first
    code, _, err = invoke(QRELS, str(bad), "-m", "nope@5")
    assert code == 1 and "unknown measure 'nope@5'" in err and "5 fields" not in err


def test_help_has_an_example() -> None:
    code, out, _ = invoke("--help")
    assert code == 0 and "assay metrics datasets/example/qrels.txt" in out
