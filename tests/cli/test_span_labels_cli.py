"""A person's grade of a span joins the pool (issue 28, deliverable 4), through the commands a user runs: a passage the
judge graded 0 is graded 3 by a person (`assay labels import`); `assay agreement` counts it, `assay eval` scores
every run against the pool that now holds the span as relevant, and `assay export --to trec` writes it."""

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
from assay.formats.golden import GoldenSet
from assay.types import Passage, Provenance, RelevanceLabel

SPAN = "inner tent first in dry weather"  # in the tent's last paragraph, a chunk with no label for q2


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    """The passages golden set, with the span judged 0 for q2 in passages.jsonl (as `assay eval` writes it)."""
    folder = save_passages_golden(tmp_path / "golden")
    start = DOCS["tent"].index(SPAN)
    passage = Passage(id=f"p:tent:{start}-{start + len(SPAN)}", text=SPAN, match="exact", doc_id="tent",
                      start=start, end=start + len(SPAN), score=1.0)  # fmt: skip
    judged = RelevanceLabel(query_id="q2", chunk_id=passage.id, grade=0,
                            provenance=Provenance(source="judge", model="offline", prompt="relevance@1"))  # fmt: skip
    gold = GoldenSet.load(folder)
    gold.add_passage_labels([passage], [judged])
    gold.update(folder, ("passages",))
    return folder


def recall(golden: Path, run_file: Path, out: Path) -> float:
    result = run("eval", golden, run_file, "-o", out, "--no-judge", "-m", "recall@1000c", "--n-boot", "100")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()[1:]]
    return float(next(r for r in rows if r["query_id"] == "q2")["metrics"]["recall@1000c"])


def test_a_human_grade_of_a_span_reaches_agreement_the_pool_and_the_export(golden: Path, tmp_path: Path) -> None:
    start = DOCS["tent"].index(SPAN)
    pid = f"p:tent:{start}-{start + len(SPAN)}"
    run_file = write_run(tmp_path / "run.jsonl", [{"query_id": "q2", "retrieved": [{"id": "w", "text": SPAN}]}])
    assert recall(golden, run_file, tmp_path / "before") == 0.0  # the judge's 0: no relevant character retrieved

    sheet = tmp_path / "sheet.csv"
    sheet.write_text(f"query_id,chunk_id,grade,reason\nq2,{pid},3,pitching advice counts\n", encoding="utf-8")
    imported = run("labels", "import", golden, sheet, "--annotator", "alice")
    assert imported.exit_code == 0, imported.output

    agreement = run("agreement", golden, "--format", "json", "--resamples", "100")
    assert agreement.exit_code == 0, agreement.output
    assert json.loads(agreement.output)["overall"]["confusion_matrix"][0][3] == 1  # judge 0, person 3

    # The pool for q2 now holds the weight paragraph (judge 3) and the span (person 3), which do not overlap; the
    # run retrieved the span alone: recall is the span's characters over both.
    def letters(text: str) -> int:  # a budget counts letters and digits
        return sum(ch.isalnum() for ch in text)

    relevant = letters(chunk_text("tent#1")) + letters(SPAN)
    assert recall(golden, run_file, tmp_path / "after") == pytest.approx(letters(SPAN) / relevant)
    # assay eval's own judge-vs-human section counts the span item too (judge 0, person 3)
    results = json.loads((tmp_path / "after" / "results.json").read_text())
    assert results["agreement"]["overall"]["confusion_matrix"][0][3] == 1

    exported = run("export", golden, "--to", "trec", "-o", tmp_path / "trec")
    assert exported.exit_code == 0, exported.output
    assert f"q2 0 {pid} 3" in (tmp_path / "trec" / "qrels.txt").read_text().splitlines()
    side = [json.loads(line) for line in (tmp_path / "trec" / "passages.jsonl").read_text().splitlines()]
    assert side == [{"id": pid, "doc_id": "tent", "start": start, "end": start + len(SPAN), "text": SPAN}]
    assert "judged passages" in exported.output
