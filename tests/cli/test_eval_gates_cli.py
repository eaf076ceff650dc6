"""``assay eval --fail-under`` on a golden set of 1,200-character chunks and a run of 300-character passages of the
same text (tests/pipelines/evaluate/gates_fixture.py): a measure counted in golden chunks exits 1 with the half-a-unit
rule and the budget measure to use; a gate without a metric is on the evaluation's primary (nDCG at the first budget
when the runs cut differently), which the same text in the ideal order passes (nDCG 1 by hand) and a higher bar
fails."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import write_run
from gates_fixture import chunk_lines, piece_lines, save_golden

from assay.cli import main
from assay.cli.eval import parse_fail_under
from assay.errors import ConfigError


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("gates")
    golden = save_golden(root / "golden")
    chunks = write_run(root / "chunks.jsonl", chunk_lines())
    pieces = write_run(root / "pieces.jsonl", piece_lines())
    return [str(golden), f"chunks={chunks}", f"pieces={pieces}", "-o", str(root / "out"), "--no-judge"]


def _eval(files: list[str], *gates: str) -> Any:
    args = ["eval", *files, "--n-boot", "200"] + [arg for gate in gates for arg in ("--fail-under", gate)]
    return CliRunner().invoke(main, args)


def test_a_unit_measure_for_short_passages_exits_1_with_the_reason(files: list[str]) -> None:
    result = _eval(files, "ndcg@10=0.1")
    assert result.exit_code == 1
    failed = result.output.split("fail-under: ", 1)[1]
    assert failed.startswith("pieces: ndcg@10 refused: it counts golden chunks")
    assert "(the half-a-unit rule); this run's median passage is 300 characters" in failed
    assert "Gate on ndcg@1000t instead" in failed
    assert "chunks:" not in failed  # whole chunks reach their units: ndcg@10 = 1 passes 0.1


def test_a_gate_without_a_metric_is_on_the_primary(files: list[str]) -> None:
    assert _eval(files, "0.99").exit_code == 0  # ndcg@1000t = 1 for both: the same text, relevant text first
    higher = _eval(files, "1.01")
    assert higher.exit_code == 1
    assert "fail-under: chunks: ndcg@1000t = 1.000 < 1.01; pieces: ndcg@1000t = 1.000 < 1.01" in higher.output


def test_fail_under_takes_a_bare_threshold() -> None:
    assert parse_fail_under(["0.6", "map=0.2"]) == [("", 0.6), ("map", 0.2)]
    for bad in ("=0.6", "ndcg@10", "ndcg@10=x"):
        with pytest.raises(ConfigError, match="or VALUE alone to gate on the evaluation's primary metric"):
            parse_fail_under([bad])
