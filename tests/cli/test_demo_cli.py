"""``assay demo`` end to end: bundled corpus -> golden set (offline judge) -> audit store -> report, well under a
minute, no network (the test network guard is on)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from click.testing import CliRunner

from assay.audit.store import LabelStore
from assay.cli import main
from assay.cli.demo import demo_root
from assay.formats.golden import GoldenSet


def test_demo_refuses_a_non_empty_folder_without_overwrite(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = CliRunner().invoke(main, ["demo", "-o", str(tmp_path)])
    assert result.exit_code == 1 and "--overwrite" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_demo_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    out.mkdir()
    (out / "notes.txt").write_text("an earlier file")
    started = time.perf_counter()
    result = CliRunner().invoke(main, ["demo", "-o", str(out), "--overwrite"])
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    assert elapsed < 60
    text = " ".join(result.output.split())
    assert "offline judge: a lexical baseline, not an LLM" in text
    assert f"Open the report: {out / 'report' / 'report.html'}" in text

    golden = GoldenSet.load(out / "golden")
    assert golden.questions and golden.qrels
    runs = sorted(p.stem for p in (demo_root() / "runs").glob("*.jsonl"))
    results = json.loads((out / "report" / "results.json").read_text())
    assert sorted(r["name"] for r in results["runs"]) == runs
    assert results["judge"] == "offline"
    for run in results["runs"]:
        assert run["counts"]["unknown_query_ids"] == 0 and run["counts"]["unknown_chunk_ids"] == 0
        assert run["metrics"]["ndcg@10"]["n_scored"] > 0
    assert results["comparisons"], "three runs are compared pairwise"

    humans = LabelStore.in_folder(out / "golden").current_labels(role="human")
    csv_rows = (demo_root() / "human_labels.csv").read_text().strip().splitlines()[1:]
    assert len(humans) == len(csv_rows)
    assert results["corrected"], "the hand-labelled sample corrects pair precision"
    assert (out / "report" / "support_matrix.jsonl").is_file()
