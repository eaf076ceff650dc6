"""Planning through the CLI: ``assay eval --detect`` fills ``planning`` in results.json and the three reports, and
``assay build --dry-run --detect`` prints the questions and documents to ask for, from stated assumptions or from a
pilot's results.json; bad input gets one clear line."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import good_lines, save_golden, weak_lines, write_run

from assay.cli import main
from assay.results import EvalResult

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "tiny"
DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "corpus"


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("plan")
    golden = save_golden(tmp / "golden")
    good, weak = write_run(tmp / "good.jsonl", good_lines()), write_run(tmp / "weak.jsonl", weak_lines())
    result = run("eval", golden, good, weak, "-o", tmp / "report", "--no-judge", "--n-boot", "200",
                 "--detect", "0.1", "--detect", "0.03", "--verbose")  # fmt: skip
    assert result.exit_code == 0, result.output
    return tmp / "report", result.output


def test_eval_detect_plans_for_the_given_differences(report: tuple[Path, str]) -> None:
    out, printed = report
    results = EvalResult.model_validate_json((out / "results.json").read_text())
    assert results.settings["detect"] == [0.1, 0.03]
    plans = results.planning
    assert plans and {p.effect for p in plans} >= {0.03, 0.1}
    assert all((p.metric, p.a, p.b) == (results.primary_metric, "good", "weak") for p in plans)
    for plan in plans:
        z = norm.ppf(1 - plan.alpha / 2) + norm.ppf(0.8)
        exact = z**2 * plan.sd**2 * plan.design_effect / plan.effect**2
        assert plan.questions == math.ceil(exact) and plan.clusters is None  # one question per document here
    assert [p.questions for p in plans] == [268, 25]  # sd 0.175 of the differences, at 0.03 and 0.1
    assert f"planning: Questions needed to detect a difference on {results.primary_metric}" in printed
    assert plans[0].sentence[:40] in printed
    markdown = (out / "report.md").read_text()
    assert "## Planning" in markdown and all(p.sentence.split(" you need")[0] in markdown for p in plans)
    html = (out / "report.html").read_text()
    assert '<section id="planning">' in html and plans[-1].sentence.split(" you need")[0] in html


def test_eval_refuses_a_difference_of_zero(tmp_path: Path) -> None:
    golden = save_golden(tmp_path / "golden")
    good = write_run(tmp_path / "good.jsonl", good_lines())
    result = run("eval", golden, good, "-o", tmp_path / "r", "--no-judge", "--detect", "0")
    assert result.exit_code == 1 and "--detect takes differences on the metric's scale above 0" in result.output
    assert not (tmp_path / "r").exists()


def test_build_dry_run_without_a_pilot_states_the_assumption(tmp_path: Path) -> None:
    result = run("build", DEMO, "-o", tmp_path / "g", "--judge", "offline", "--dry-run", "--detect", "0.02")
    assert result.exit_code == 0, result.output
    z = norm.ppf(0.975) + norm.ppf(0.8)
    n = math.ceil(z**2 * 0.25**2 * 1.1 / 0.02**2)
    assert "assumed (no --pilot): sd of the per-question differences 0.25 and design effect 1 + (m - 1) x 0.1" in (
        result.output
    )
    assert f"to detect 0.02: about {n:,} accepted questions from {math.ceil(n / 2):,} documents" in result.output
    assert "the corpus has 32 documents: at 2 per document that is at most 64 questions" in result.output
    assert not (tmp_path / "g").exists()


def test_build_dry_run_plans_from_a_pilot_at_the_builds_questions_per_document(
    tmp_path: Path, report: tuple[Path, str]
) -> None:
    pilot = report[0] / "results.json"
    plan = EvalResult.model_validate_json(pilot.read_text()).planning[0]
    result = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--dry-run", "--per-doc", "3",
                 "--detect", "0.05", "--pilot", pilot)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"from the pilot {pilot}: sd {plan.sd:.3f}" in result.output
    assert "at 3 questions per document" in result.output and "to detect 0.05: about" in result.output
    assert "the corpus has 1 documents" in result.output


def test_build_refuses_a_pilot_that_is_not_a_results_json(tmp_path: Path) -> None:
    bad = tmp_path / "bm25.jsonl"
    bad.write_text('{"query_id": "q1", "retrieved": []}\n')
    result = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--dry-run", "--pilot", bad)
    assert result.exit_code == 1
    assert f"--pilot {bad}: not a results.json written by assay eval" in result.output
    assert "dry run:" not in result.output  # refused before the estimate


def test_build_detect_needs_the_dry_run(tmp_path: Path) -> None:
    result = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--detect", "0.02")
    assert result.exit_code == 1 and "give --dry-run too" in result.output and not (tmp_path / "g").exists()
    result = run("build", TINY, "-o", tmp_path / "g", "--judge", "offline", "--dry-run", "--detect", "0")
    assert result.exit_code == 2 and "--detect" in result.output
