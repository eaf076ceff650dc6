"""``assay eval`` reads its metric flags before any work: ``-k`` repeated merges, and a name given by ``-m``,
``--primary`` or ``--fail-under`` is checked for one run as for several, refused with the real names nearest it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from evaluate_fixture import good_lines, save_golden, weak_lines, write_run

from assay.cli import main
from assay.cli.eval import parse_k
from assay.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "example"


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    return {
        "golden": save_golden(tmp_path / "golden"),
        "good": write_run(tmp_path / "good.jsonl", good_lines()),
        "weak": write_run(tmp_path / "weak.jsonl", weak_lines()),
        "out": tmp_path / "report",
    }


@pytest.mark.parametrize(
    ("given", "k_values"),
    [(["10", "20"], (10, 20)), (["5,10"], (5, 10)), (["5,10", "20", "5"], (5, 10, 20)), ("3,1", (1, 3))],
)
def test_k_values_merge_over_repeats_and_commas(given: list[str] | str, k_values: tuple[int, ...]) -> None:
    assert parse_k(given) == k_values


def test_repeated_k_reaches_the_evaluation(setup: dict[str, Path]) -> None:
    s = setup
    result = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", "-k", "10", "-k", "3", "--n-boot", "200")
    assert result.exit_code == 0, result.output
    results = json.loads((s["out"] / "results.json").read_text())
    assert results["k_values"] == [3, 10]
    assert {"ndcg@3", "ndcg@10"} <= set(results["runs"][0]["metrics"])


@pytest.mark.parametrize(
    "flags",
    [["--primary", "ndcg@1O"], ["-m", "ndcg@1O"], ["--fail-under", "ndcg@1O=0.5"]],
    ids=["primary", "metric", "fail-under"],
)
@pytest.mark.parametrize("runs", [1, 2])
def test_a_mistyped_name_is_refused_before_any_work_with_the_real_names_nearest(
    setup: dict[str, Path], flags: list[str], runs: int
) -> None:
    s = setup
    # a judge whose server does not exist: the names are refused before anything would call it
    judge = ["--judge", "openai/gpt-4o-mini=http://127.0.0.1:9/v1", "--api-key", "k"]
    result = run("eval", s["golden"], *[s["good"], s["weak"]][:runs], "-o", s["out"], *judge, *flags)
    assert result.exit_code == 1, result.output
    close = re.search(r"close names: ([^.]*)\.", result.output)
    assert close is not None, result.output
    assert close.group(1).split(", ")[0] == "ndcg@10" and "ndcg@1O" not in close.group(1)
    assert not s["out"].exists()


def test_a_primary_family_or_judged_metric_without_a_judge_is_refused(setup: dict[str, Path]) -> None:
    s = setup
    family = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", "--primary", "nugget_recall")
    assert family.exit_code == 1 and "--primary nugget_recall: give one metric, not a family" in family.output
    judged = run("eval", s["golden"], s["good"], "-o", s["out"], "--no-judge", "--primary", "faithfulness")
    assert judged.exit_code == 1 and "--primary faithfulness: an LLM-judged metric needs --judge" in judged.output


def test_a_named_primary_is_computed_whatever_k_says(setup: dict[str, Path]) -> None:
    s = setup
    result = run("eval", s["golden"], s["good"], s["weak"], "-o", s["out"], "--no-judge", "-k", "10",
                 "--primary", "P@2", "--n-boot", "200")  # fmt: skip
    assert result.exit_code == 0, result.output
    results = json.loads((s["out"] / "results.json").read_text())
    assert results["primary_metric"] == "P@2" and 2 in results["k_values"]


def test_assay_metrics_offers_the_real_names_nearest_a_typo() -> None:
    result = run("metrics", EXAMPLE / "qrels.txt", EXAMPLE / "run.txt", "-m", "ndcg@1O")
    assert result.exit_code == 1
    assert "close names: ndcg@10, ndcg@1;" in result.output


def test_library_settings_check_the_primary_too() -> None:
    from assay.pipelines.evaluate import EvalSettings

    with pytest.raises(ConfigError, match=r"unknown metric 'map@1O'; close names: map@10"):
        EvalSettings(primary="map@1O").checked()
