"""A team's own criteria in an evaluation: ``criterion:NAME`` per question from the Python API, the CLI and the
pytest plugin, compared and gated like any metric; unscored with the reason when a check cannot run; a judged
criterion unscored without a model judge (test_criteria_judged.py asks one through the fake server).

The golden set is evaluate_fixture's first four questions; the answers below are written by hand, so each value is
read off them: ``warranty`` (contains "warranty") passes on the fixture's answers ("The X warranty lasts N days...")
and fails on "is sold in stores... a lifetime guarantee"; ``cites`` passes on an answer ending "[1]" (each line
retrieves four passages) and fails on one with no marker or quotation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from evaluate_fixture import answer_text, good_lines, make_golden, qid, save_golden, weak_lines, write_run

from assay.cli import main
from assay.errors import ConfigError, FormatError
from assay.judge import make_judge
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.pipelines.evaluate.called import evaluate as evaluate_systems
from assay.results import QueryResult

N = 4
WARRANTY = '+++\nname = "warranty"\nversion = "1"\n[check]\nkind = "contains"\ntext = "warranty"\n+++\n'
CITES = '+++\nname = "cites"\nversion = "1"\n[check]\nkind = "cites"\n+++\n'
JUDGED = ('+++\nname = "grounded"\nversion = "1"\ninputs = ["question", "answer", "passages"]\n'
          'scale = "pass_fail"\n+++\nPass when every claim is in a passage.\n')  # fmt: skip


def _criteria(folder: Path, *texts: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for text in texts:
        name = text.split('name = "')[1].split('"')[0]
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return folder


def _cited() -> list[dict[str, Any]]:
    return [line | {"answer": f"{line['answer']} [1]"} for line in good_lines(N)]


def _plain() -> list[dict[str, Any]]:
    """The fixture's answers with no citation, and q00 with no answer at all."""
    lines = good_lines(N)
    del lines[0]["answer"]
    return lines


def _values(rows: list[QueryResult], run: str, metric: str) -> dict[str, float | None]:
    return {row.query_id: row.metrics.get(metric) for row in rows if row.run == run}


def _reasons(rows: list[QueryResult], run: str, metric: str) -> dict[str, str]:
    return {row.query_id: row.unscored[metric] for row in rows if row.run == run and metric in row.unscored}


def test_checks_add_criterion_values_per_question_and_judged_ones_wait_for_a_model(tmp_path: Path) -> None:
    folder = _criteria(tmp_path / "criteria", WARRANTY, CITES, JUDGED)
    result, rows = evaluate(make_golden(n=N), [("cited", _cited()), ("plain", _plain())], judge=make_judge("offline"),
                            settings=EvalSettings(n_boot=200, criteria=(folder,)))  # fmt: skip
    q = [qid(i) for i in range(N)]
    assert _values(rows, "cited", "criterion:warranty") == dict.fromkeys(q, 1.0)
    assert _values(rows, "cited", "criterion:cites") == dict.fromkeys(q, 1.0)
    assert _values(rows, "plain", "criterion:cites") == {q[0]: None, q[1]: 0.0, q[2]: 0.0, q[3]: 0.0}
    assert _reasons(rows, "plain", "criterion:cites") == {q[0]: "no answer for this question"}  # never 0
    assert _values(rows, "plain", "criterion:grounded") == dict.fromkeys(q)
    assert set(_reasons(rows, "plain", "criterion:grounded").values()) == {"needs a model judge"}
    means = {run.name: run.metrics for run in result.runs}
    assert means["cited"]["criterion:cites"].mean == 1.0
    assert means["plain"]["criterion:cites"].mean == 0.0
    plain = means["plain"]["criterion:cites"]
    assert (plain.n_scored, plain.n_unscored, plain.unscored_reasons) == (3, 1, {"no answer for this question": 1})
    compared = {c.metric for c in result.comparisons}
    assert "criterion:cites" in compared
    recorded = result.settings["criteria"]
    assert [(c["name"], c["kind"]) for c in recorded] == [("cites", "cites"), ("grounded", "judged"),
                                                          ("warranty", "contains")]  # fmt: skip
    assert all(len(c["content_hash"]) == 16 for c in recorded)


def test_a_criterion_leads_the_verdict_when_named_primary(tmp_path: Path) -> None:
    folder = _criteria(tmp_path / "criteria", WARRANTY)
    runs = {"good": good_lines(N), "weak": weak_lines(N)}
    result, _ = evaluate_systems(make_golden(n=N), runs, judge=None, n_boot=200, criteria=(folder / "warranty.md",),
                                 primary="criterion:warranty")  # fmt: skip
    assert result.primary_metric == "criterion:warranty"
    means = {run.name: run.metrics["criterion:warranty"].mean for run in result.runs}
    assert means == {"good": 1.0, "weak": 0.0}


def test_a_criterion_named_without_its_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"criterion:warranty: no criterion of that name was given .* -c FILE"):
        evaluate(make_golden(n=N), [("good", good_lines(N))], settings=EvalSettings(primary="criterion:warranty"))


def test_an_input_the_golden_set_lacks_is_refused_at_its_line(tmp_path: Path) -> None:
    folder = _criteria(tmp_path / "criteria", JUDGED.replace('"passages"]', '"passages", "history"]'))
    with pytest.raises(FormatError, match=r"grounded\.md:4: criterion grounded reads history") as caught:
        evaluate(make_golden(n=N), [("good", good_lines(N))], settings=EvalSettings(criteria=(folder,)))
    assert "fix:" in str(caught.value)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "golden": save_golden(tmp_path / "golden"),
        "good": write_run(tmp_path / "good.jsonl", good_lines()),
        "weak": write_run(tmp_path / "weak.jsonl", weak_lines()),
        "criteria": _criteria(tmp_path / "criteria", WARRANTY),
        "cites": _criteria(tmp_path / "more", CITES) / "cites.md",
    }


def test_the_cli_takes_files_and_folders_and_gates_on_a_criterion(files: dict[str, Path], tmp_path: Path) -> None:
    args = ["eval", str(files["golden"]), str(files["good"]), str(files["weak"]), "--no-judge", "--n-boot", "200",
            "-c", str(files["criteria"]), "-c", str(files["cites"]), "-o", str(tmp_path / "out")]  # fmt: skip
    passed = CliRunner().invoke(main, [*args, "--fail-under", "criterion:warranty=0.0"])
    assert passed.exit_code == 0, passed.output
    failed = CliRunner().invoke(main, [*args, "--fail-under", "criterion:warranty=0.5"])
    assert failed.exit_code == 1
    assert "criterion:warranty" in failed.output and "weak" in failed.output
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "criterion:warranty" in report and "criterion:cites" in report
    per_query = (tmp_path / "out" / "per_query.jsonl").read_text(encoding="utf-8")
    assert '"criterion:warranty": 0.0' in per_query and '"criterion:warranty": 1.0' in per_query


def test_the_help_names_the_option() -> None:
    out = CliRunner().invoke(main, ["eval", "--help"]).output
    assert "-c, --criterion FILE_OR_FOLDER" in out


def test_answer_text_is_what_the_warranty_check_reads() -> None:
    assert "warranty" in answer_text(0)  # the fixture's answers carry the word the check looks for
