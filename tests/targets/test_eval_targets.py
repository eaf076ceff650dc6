"""The evaluation side: the system summary read from a run (percentiles checked by hand), the reports' System
section and quality-vs-latency plot, ``assay eval --target``, and ``assay.evaluate`` over functions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from targets_fixture import make_golden

import assay
from assay.cli import main
from assay.errors import NothingProduced
from assay.pipelines.evaluate.runs.read import load_run
from assay.pipelines.evaluate.scoring.system import system_summary


def _write(path: Path, header: dict[str, Any], lines: list[dict[str, Any]]) -> Path:
    rows = [json.dumps({"assay": "runs", "version": 1, **header}), *map(json.dumps, lines)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_summary_percentiles_failures_tokens_and_cost(tmp_path: Path) -> None:
    lines = [
        {"query_id": "q1", "retrieved": ["c1"], "latency_ms": 100.0, "usage": {"prompt_tokens": 10, "cost_usd": 0.25}},
        {"query_id": "q2", "retrieved": ["c2"], "latency_ms": 400.0, "usage": {"completion_tokens": 7}},
        {"query_id": "q3", "retrieved": ["c3"], "latency_ms": 200.0},
        {"query_id": "q4", "retrieved": ["c4"], "latency_ms": 300.0, "usage": {"prompt_tokens": 5, "cost_usd": 0.5}},
        {"query_id": "q5", "error": {"kind": "timeout", "message": "no answer within 1 s"}},
        {"query_id": "q6", "error": {"kind": "http_status", "message": "HTTP 500"}},
        {"query_id": "q7", "error": {"kind": "timeout", "message": "no answer within 1 s"}},
    ]
    head = {
        "target": "http://h/x",
        "label": "v3",
        "started": "2025-01-01T00:00:00+00:00",
        "ended": "2025-01-01T00:01:00+00:00",
    }
    summary = system_summary(load_run(_write(tmp_path / "run.jsonl", head, lines), make_golden(7)))
    assert summary is not None
    assert (summary.target, summary.label, summary.lines, summary.failed) == ("http://h/x", "v3", 7, 3)
    assert summary.failures == {"timeout": 2, "http_status": 1}
    # sorted 100, 200, 300, 400: p50 halfway between 200 and 300; p95 at rank 0.95 * 3 = 2.85: 300 + 0.85 * 100
    assert summary.latency_ms == pytest.approx({"p50": 250.0, "p95": 385.0, "mean": 250.0, "max": 400.0})
    assert (summary.prompt_tokens, summary.completion_tokens) == (15, 7)
    assert summary.cost_usd == pytest.approx(0.75)


def test_a_run_without_system_fields_has_no_summary(tmp_path: Path) -> None:
    plain = _write(tmp_path / "run.jsonl", {}, [{"query_id": "q1", "retrieved": ["c1"]}])
    assert system_summary(load_run(plain, make_golden())) is None
    (tmp_path / "run.txt").write_text("q1 Q0 c1 1 2.0 x\n", encoding="utf-8")
    assert system_summary(load_run(tmp_path / "run.txt", make_golden())) is None


APP = """
def answer(question, query_id):
    if query_id == "q4":
        raise RuntimeError("index offline")
    cost = {"prompt_tokens": 100, "completion_tokens": 20, "cost_usd": 0.001}
    return {"retrieved": ["c" + query_id[1:], "c1"], "answer": "yes", "usage": cost}

def slow(question, query_id):
    return {"retrieved": ["c1"], "answer": "no"}

def broken(question):
    raise ValueError("down")
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_golden(4).save(tmp_path / "golden")
    (tmp_path / "eval_app.py").write_text(APP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _eval(*args: str) -> Any:
    return CliRunner().invoke(main, ["eval", "golden", *args, "--no-judge", "--n-boot", "100", "-k", "1,2"])


def test_eval_target_runs_then_reports_the_system(project: Path) -> None:
    result = _eval("--target", "app=python:eval_app:answer", "--target", "other=python:eval_app:slow",
                   "-o", "report", "--target-cache-dir", "cache", "--label", "v1")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "app: wrote report/runs/app.jsonl: 4 questions, 3 answered" in result.output.replace("\n", "")
    results = json.loads((project / "report" / "results.json").read_text())
    app, other = results["runs"]
    assert app["system"]["failures"] == {"exception": 1} and app["system"]["label"] == "v1"
    assert (app["system"]["prompt_tokens"], app["system"]["completion_tokens"]) == (300, 60)
    assert app["system"]["cost_usd"] == pytest.approx(0.003)
    assert other["system"]["failed"] == 0 and other["system"]["target"] == "python:eval_app:slow"
    markdown = (project / "report" / "report.md").read_text()
    assert "## System under test" in markdown
    assert "| app | python:eval_app:answer | v1 | 4 | 1 (1 exception) |" in markdown
    assert "| 300 + 60 | 0.0030 |" in markdown
    html = (project / "report" / "report.html").read_text()
    assert 'id="system"' in html and 'aria-label="ndcg@2 against median latency per run"' in html
    verdict = " ".join(result.output.split())  # the summary's verdict gives each system's cost and latency
    assert "Cost and latency: app $0.0030, p50" in verdict and "; other cost unknown, p50" in verdict


def test_one_timed_run_draws_no_latency_plot(project: Path) -> None:
    result = _eval("--target", "app=python:eval_app:slow", "-o", "report", "--target-cache-dir", "cache")
    assert result.exit_code == 0, result.output
    html = (project / "report" / "report.html").read_text()
    assert 'id="system"' in html and "against median latency" not in html


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give at least one RUN file or --target NAME=SPEC"),
        (("--target", "app=python:eval_app:slow"), "give -o REPORT_DIR"),
        (("--target", "python:eval_app:slow", "-o", "r"), "write NAME=SPEC"),
        (("--target", "bad=python:eval_app:broken", "-o", "r", "--target-cache-dir", "c"), "answered none of 4"),
    ],
)
def test_eval_target_errors(project: Path, args: tuple[str, ...], message: str) -> None:
    result = _eval(*args)
    assert result.exit_code == 1 and message in result.output, result.output
    assert not (project / "r" / "report.html").exists()


def test_python_api_evaluates_functions_beside_files(tmp_path: Path) -> None:
    golden = make_golden(4)
    golden.save(tmp_path / "golden")
    v1 = _write(tmp_path / "v1.jsonl", {}, [{"query_id": f"q{i}", "retrieved": ["c1"]} for i in range(1, 5)])

    def v2(question: str, query_id: str) -> dict[str, Any]:
        return {"retrieved": ["c" + query_id[1:]]}

    settings = assay.EvalSettings(k_values=(1,), metrics=("P@1",), n_boot=100)
    result, rows = assay.evaluate(tmp_path / "golden", {"v2": v2, "v1": v1}, settings=settings,
                                  run_dir=tmp_path / "runs")  # fmt: skip
    means = {run.name: run.metrics["P@1"].mean for run in result.runs}
    assert means == {"v2": 1.0, "v1": 0.25}  # v2 finds each question's chunk; v1 only q1's
    assert (tmp_path / "runs" / "v2.jsonl").is_file() and result.runs[0].system is not None
    assert result.runs[1].system is None and len(rows) == 8

    def down(question: str) -> str:
        raise ConnectionError("refused")

    with pytest.raises(NothingProduced, match="answered none of 4"):
        assay.evaluate(golden, [down], settings=settings, targets=assay.TargetSettings(attempts=1))


def test_assay_run_in_python(tmp_path: Path) -> None:
    done = assay.run(make_golden(2), lambda question: {"contexts": [question]}, tmp_path / "run.jsonl", label="x")
    assert [line["retrieved"] for line in done.lines] == [[{"text": "what is fact 1?"}], [{"text": "what is fact 2?"}]]
    assert done.header["label"] == "x" and done.path == tmp_path / "run.jsonl"
