"""``assay demo`` end to end: bundled corpus -> golden set (offline judge) -> audit store -> report, no network (the
test network guard is on). Its time is measured by ``bench/speed.py``, not asserted here."""

from __future__ import annotations

import html
import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from assay.audit.access import audited_pairs
from assay.audit.store import LabelStore
from assay.cli import main
from assay.cli.demo import demo_root
from assay.formats.golden import GoldenSet
from assay.metrics import agreement as ag
from assay.results import EvalResult


def test_demo_refuses_a_non_empty_folder_without_overwrite(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = CliRunner().invoke(main, ["demo", "-o", str(tmp_path)])
    assert result.exit_code == 1 and "--overwrite" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@dataclass(frozen=True)
class DemoRun:
    out: Path
    output: str  # the terminal output, whitespace folded


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """One demo run for the module (about ten seconds), into a folder that already holds a file."""
    out = tmp_path_factory.mktemp("demo")
    (out / "notes.txt").write_text("an earlier file")
    result = CliRunner().invoke(main, ["demo", "-o", str(out), "--overwrite"])
    assert result.exit_code == 0, result.output
    return DemoRun(out, " ".join(result.output.split()))


def test_demo_end_to_end(demo_run: DemoRun) -> None:
    out, text = demo_run.out, demo_run.output
    assert "offline judge: a lexical baseline, not an LLM" in text
    verdict = text.index("Verdict • ")
    assert text.index("golden set:") < verdict < text.index("Comparisons: b − a") < text.index("Open the report")
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


def test_demo_shows_agreement_of_the_hand_labels_and_audit_sizes(demo_run: DemoRun) -> None:
    out, text = demo_run.out, demo_run.output
    results = EvalResult.model_validate_json((out / "report" / "results.json").read_text())
    agreement = results.agreement
    assert agreement is not None and agreement.n_items == 50 and agreement.annotators
    # the same figures as `assay agreement` computes from the audit store: one computation behind both
    pairs = audited_pairs(out / "golden", one_per_item=True)
    judge = np.array([math.nan if p.judge_grade is None else p.judge_grade for p in pairs])
    human = np.array([p.human_grade for p in pairs], dtype=float)
    assert agreement.overall.cohen_kappa is not None
    assert agreement.overall.cohen_kappa.value == pytest.approx(ag.cohen_kappa(judge, human), abs=1e-6)
    assert agreement.overall.confusion_matrix == ag.confusion_matrix(judge, human).tolist()
    assert set(agreement.strata) >= {"type"}
    kappa = agreement.overall.cohen_kappa
    assert f"Cohen's kappa with people {kappa.value:.3f} [{kappa.low:.3f}, {kappa.high:.3f}] on 50 audited" in text
    markdown = (out / "report" / "report.md").read_text()
    assert f"Judge vs human on {agreement.overall.n} audited items" in markdown
    for item in results.corrected:
        assert [t.half_width for t in item.audit_targets] == [0.05, 0.025]
        assert all(t.n_needed is not None and t.n_needed >= 2 for t in item.audit_targets)
    first = results.corrected[0]
    needed = first.audit_targets[0].n_more
    assert needed is not None and f"audit ~{needed:,} more pairs for ±0.050" in markdown.replace("\\", "")
    page = (out / "report" / "report.html").read_text()
    assert 'id="agreement-matrix"' in page and f"audit ~{needed:,} more pairs for ±0.050" in html.unescape(page)
    assert "## Judge vs human" in markdown


@pytest.mark.browser
def test_demo_report_opens_in_chromium_without_errors(demo_run: DemoRun, browser: Any) -> None:
    """The report the real evaluator wrote (not the fixture) in headless Chromium: plots drawn, no console errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in {"error", "warning"} else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: None if r.url.startswith("file://") else problems.append(f"request: {r.url}"))
    page.goto((demo_run.out / "report" / "report.html").as_uri())
    page.wait_for_load_state("load")
    widths = page.eval_on_selector_all("svg.plot", "els => els.map(e => e.getBoundingClientRect().width)")
    assert len(widths) >= 5 and all(w > 300 for w in widths)
    page.click("nav a[href='#agreement']")
    assert page.is_visible("#agreement-stats") and page.is_visible("#agreement-matrix")
    total = page.eval_on_selector_all(
        "#agreement-matrix tbody tr:not(:last-child) td:not(.total)",
        "els => els.reduce((s, e) => s + +e.textContent, 0)",
    )
    results = EvalResult.model_validate_json((demo_run.out / "report" / "results.json").read_text())
    assert results.agreement is not None and total == results.agreement.overall.n
    page.click("#q-table thead th:text-is('query')")
    assert page.get_attribute("#q-table thead th:text-is('query')", "aria-sort") == "ascending"
    context.close()
    assert problems == []


def test_demo_shows_the_diagnosis(demo_run: DemoRun) -> None:
    """The offline judge answers claim_check, so the demo's three reports carry the diagnosis; the weak run (answers
    unrelated to the question) hallucinates, which the section says."""
    assert "claim_precision" in demo_run.output  # the diagnosis group's row of the summary
    report = demo_run.out / "report"
    result = EvalResult.model_validate_json((report / "results.json").read_text("utf-8"))
    weak = next(run for run in result.runs if run.name == "weak")
    others = [run.metrics["hallucination"].mean or 0.0 for run in result.runs if run.name != "weak"]
    assert (weak.metrics["hallucination"].mean or 0.0) >= 0.9 and weak.metrics["claim_precision"].n_scored > 0
    assert all(h < 0.5 for h in others)  # the demo's real systems mostly say what the passages say
    assert any(e.run == "weak" and e.category == "hallucination" for e in result.diagnosis_examples)
    assert "## Diagnosis" in (report / "report.md").read_text("utf-8")
    assert 'href="#diag-2-hallucination"' in (report / "report.html").read_text("utf-8")


def test_a_gate_on_a_lower_is_better_measure_fails_the_run_above_it(demo_run: DemoRun) -> None:
    """--fail-under hallucination=0.5 fails the run that hallucinates (weak, >= 0.9) and no other (< 0.5): for a
    measure where less is better the gate fails the runs above the bar, not below it."""
    from assay.cli._eval_report import check_fail_under

    result = EvalResult.model_validate_json((demo_run.out / "report" / "results.json").read_text("utf-8"))
    failures = check_fail_under(result, [("hallucination", 0.5)])
    assert len(failures) == 1 and failures[0].startswith("weak: hallucination = ") and failures[0].endswith("> 0.5")
    precision = check_fail_under(result, [("claim_precision", 0.5)])  # better higher: weak (about 0.06) is below
    assert any(f.startswith("weak: claim_precision = ") and f.endswith("< 0.5") for f in precision)


def test_demo_plans_how_many_questions_would_settle_each_comparison(demo_run: DemoRun) -> None:
    """Planning for every compared pair of the primary metric, in results.json, the summary and report.md."""
    report = demo_run.out / "report"
    results = EvalResult.model_validate_json((report / "results.json").read_text())
    pairs = {(c.a, c.b) for c in results.comparisons if c.primary}
    assert results.clustering is not None and results.planning
    assert {(p.a, p.b) for p in results.planning} == pairs
    assert {0.02, 0.05} <= {p.effect for p in results.planning}
    size = results.clustering.mean_size
    for plan in results.planning:
        assert plan.metric == results.primary_metric and " documents (now " in plan.sentence
        if "the fewest" not in plan.sentence:
            assert plan.clusters == math.ceil(plan.questions / size)
    assert "## Planning" in (report / "report.md").read_text()
    assert results.planning[0].sentence in (report / "report.md").read_text()


def untimed(text: str) -> str:
    """A JSON-lines file with its timestamps (``"time": "...Z"``) blanked: two runs differ only there."""
    return re.sub(r'"time": "[0-9T:.-]+Z"', '"time": ""', text)


def test_the_demo_under_an_ascii_locale_gives_the_same_golden_set_and_scores(
    demo_run: DemoRun, tmp_path: Path, ascii_locale_env: dict[str, str]
) -> None:
    out = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "assay", "demo", "-o", str(out)],
        capture_output=True,
        check=False,
        timeout=300,
        env=ascii_locale_env,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
    for name in ("documents.jsonl", "chunks.jsonl", "questions.jsonl", "qrels.jsonl", "nuggets.jsonl"):
        ascii_run, utf8_run = (untimed((d / "golden" / name).read_text(encoding="utf-8")) for d in (out, demo_run.out))
        assert ascii_run == utf8_run, name
    assert "°" in (out / "golden" / "documents.jsonl").read_text(encoding="utf-8")  # the corpus's degree signs
    ours, utf8 = (json.loads((d / "report" / "results.json").read_text(encoding="utf-8")) for d in (out, demo_run.out))
    assert [r["metrics"] for r in ours["runs"]] == [r["metrics"] for r in utf8["runs"]]
    ascii_html, utf8_html = ((d / "report" / "report.html").read_text(encoding="utf-8") for d in (out, demo_run.out))
    symbols = {c for c in utf8_html if ord(c) > 127}  # the report's bullets, minus signs, arrows
    assert symbols and {c for c in ascii_html if ord(c) > 127} == symbols
