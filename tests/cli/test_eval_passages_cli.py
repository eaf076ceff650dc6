"""``assay eval`` with runs that name passages by text (issue 20): a user's own chunking scores what its passages
hold, bad items stop with the file and line and nothing written, RAGAS CSV works as a run, and the pytest plugin takes
runs as lists of dicts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import write_run
from passages_fixture import DOCS, chunk_text, save_passages_golden

from assay.cli import main

pytest_plugins = ["pytester"]


def run(*args: str | Path, verbose: bool = True) -> Any:
    """The command; ``assay eval`` with --verbose (every table: these tests read them), unless told otherwise."""
    extra = ["--verbose"] if verbose and args[:1] == ("eval",) else []
    return CliRunner().invoke(main, [str(a) for a in args] + extra)


def windows(text: str, size: int = 60, step: int = 45) -> list[str]:
    """Character windows, cut inside words, as a user's splitter makes them."""
    return [text[i : i + size] for i in range(0, max(1, len(text) - size + step), step)]


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return save_passages_golden(tmp_path / "golden")


def test_own_chunking_by_text_is_located_and_scored(golden: Path, tmp_path: Path) -> None:
    """The reported issue: 60-character windows by text were worth 0; now they are located and labelled."""
    passages = [w for text in DOCS.values() for w in windows(text)]
    lines = []
    for qid, needle in (("q1", "30 days"), ("q2", "3.2 kg"), ("q3", "$12")):
        hits = [p for p in passages if needle in p] + [p for p in passages if needle not in p][:4]
        lines.append({"query_id": qid, "retrieved": [{"id": f"w{i}", "text": p} for i, p in enumerate(hits)]})
    path = write_run(tmp_path / "mine.jsonl", lines)
    out = tmp_path / "report"
    result = run("eval", golden, path, "-o", out, "--no-judge", "-k", "1,5", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "results.json").read_text())["runs"][0]
    assert saved["counts"]["unknown_chunk_ids"] == 0
    assert set(saved["counts"]["matched_by"]) == {"exact"}
    assert saved["metrics"]["span_recall@1"]["mean"] > 0 and saved["metrics"]["recall@1000t"]["mean"] > 0
    assert "passages:" in result.output and "exact" in result.output
    rows = [json.loads(line) for line in (out / "passages.jsonl").read_text().splitlines()[1:]]
    first = next(r for r in rows if r["query_id"] == "q2" and r["rank"] == 1)
    assert first["match"] == "exact" and first["doc_id"] == "tent" and first["labelled_by"] in ("rule", "chunk")
    assert "3.2 kg" in DOCS["tent"][first["start"] : first["end"]]


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({"score": 1.0}, "has no id, text or offsets"),
        ({"doc_id": "tent", "start": 0, "end": 10_000}, "outside document 'tent'"),
        ({"doc_id": "nowhere", "start": 0, "end": 5}, "unknown doc_id 'nowhere'"),
    ],
)
def test_a_bad_item_names_file_and_line_and_writes_nothing(
    golden: Path, tmp_path: Path, item: dict[str, Any], problem: str
) -> None:
    path = write_run(tmp_path / "bad.jsonl", [{"query_id": "q1", "retrieved": ["returns#1"]}, {"query_id": "q2",
                     "retrieved": [item]}])  # fmt: skip
    out = tmp_path / "report"
    before = sorted(p.name for p in golden.iterdir())
    result = run("eval", golden, path, "-o", out, "--judge", "offline")
    assert result.exit_code == 1
    assert f"{path}:3" in result.output and problem in result.output
    assert not out.exists() and sorted(p.name for p in golden.iterdir()) == before


def test_ragas_csv_is_a_run_and_a_row_without_question_is_an_error(golden: Path, tmp_path: Path) -> None:
    table = tmp_path / "ragas.csv"
    contexts = json.dumps([chunk_text("tent#1")])
    table.write_text(
        "user_input,retrieved_contexts,response\n"
        f'"How much does the Brackenhow 4 tent weigh?","{contexts.replace(chr(34), chr(34) * 2)}",3.2 kg\n',
        encoding="utf-8",
    )
    out = tmp_path / "report"
    result = run("eval", golden, table, "-o", out, "--no-judge", "-k", "1", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "results.json").read_text())["runs"][0]
    assert saved["counts"]["queries_evaluated"] == 1 and saved["counts"]["with_answer"] == 1
    assert saved["metrics"]["P@1"]["mean"] == 1.0
    table.write_text('retrieved_contexts,response\n"[]",x\n', encoding="utf-8")
    bad = run("eval", golden, table, "-o", tmp_path / "other", "--no-judge")
    assert bad.exit_code == 1 and f"{table}:2" in bad.output and "user_input" in bad.output


def test_pytest_plugin_takes_runs_as_lists(golden: Path, pytester: pytest.Pytester) -> None:
    rows = [{"query_id": "q2", "retrieved": [{"text": chunk_text("tent#1")}]}]
    pytester.makepyfile(
        f"""
        def test_gate(assay_eval):
            ev = assay_eval({str(golden)!r}, [("mine", {rows!r})], k_values=(1,), n_boot=200)
            ev.assert_metric("P@1", at_least=1.0, statistic="mean", run="mine")
        """
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
