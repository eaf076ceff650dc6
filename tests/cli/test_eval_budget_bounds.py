"""``assay eval -b`` with budgets larger than the corpus, up to absurd ones: no traceback, one note per clamped budget
in the terminal and in results.json, the figures those of the corpus's size."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from passages_fixture import save_passages_golden

from assay.cli import main

CORPUS = 415  # letters and digits of the fixture's documents (counted in tests/pipelines/evaluate/test_budget_fill.py)


@pytest.mark.parametrize("budget", ["100000000000t", "1" + "0" * 40 + "t"])
def test_a_huge_budget_is_clamped_and_said_without_a_traceback(tmp_path: Path, budget: str) -> None:
    golden = save_passages_golden(tmp_path / "golden")
    run = tmp_path / "r.jsonl"
    run.write_text(json.dumps({"query_id": "q2", "retrieved": ["tent#1"]}) + "\n", encoding="utf-8")
    out = tmp_path / "report"
    args = ["eval", str(golden), str(run), "-o", str(out), "-b", budget, "-k", "1", "--cluster-by", "none"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"Budget {budget} (" in said and f"measured at {CORPUS} characters" in said
    results = json.loads((out / "results.json").read_text())
    assert sum(f"Budget {budget} (" in w for w in results["warnings"]) == 1
    row = json.loads((out / "per_query.jsonl").read_text().splitlines()[-1])
    assert row["metrics"][f"P@{budget}"] == pytest.approx(47 / CORPUS)  # tent#1: 47 relevant characters
