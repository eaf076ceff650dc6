"""A trajectory in the report's explorer, in headless Chromium: a system that searched three times, called a tool and
answered shows each step (query, recall after it, relevant text new and lost, its passages with their grades), where
each hop was found, and the path's diagnosis."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from browser_page import opened_report
from trajectory_fixture import AGENT, SINGLE, search, trajectory_golden

from assay.pipelines.evaluate import EvalSettings, Evaluated, evaluate_detailed
from assay.report import write_report

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Evaluated, Path]:
    root = tmp_path_factory.mktemp("trajectory")
    looping = [*AGENT[0]["steps"], search("Brackenhow tent weight", "tent#1")]
    runs = []
    for name, lines in {"agent": [AGENT[0] | {"steps": looping}], "single": SINGLE}.items():
        path = root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        runs.append((name, path))
    done = evaluate_detailed(trajectory_golden(), runs, settings=EvalSettings(n_boot=200, k_values=(5,)))
    return done, write_report(done.result, root / "out", done.per_query, done.questions)["report.html"]


@pytest.fixture
def page(browser: Any, evaluated: tuple[Evaluated, Path]) -> Iterator[Any]:
    with opened_report(browser, evaluated[1]) as opened:
        yield opened


def test_the_explorer_shows_the_steps_hops_and_diagnosis_of_a_trajectory(
    page: Any, evaluated: tuple[Evaluated, Path]
) -> None:
    page.click("nav a[href='#explorer']")
    page.wait_for_selector("#x-view[data-ready='1']")
    page.fill("#x-search", "q4")
    page.wait_for_selector(".x-question[data-query='q4']")
    agent = ".x-run[data-run='agent']"
    kinds = page.eval_on_selector_all(f"{agent} li.x-step", "els => els.map(e => [e.value, e.dataset.kind])")
    assert kinds == [[1, "retrieval"], [2, "retrieval"], [3, "retrieval"], [4, "llm"], [5, "tool"], [6, "llm"],
                     [7, "retrieval"]]  # fmt: skip
    first = page.text_content(f"{agent} li.x-step:first-child p")
    view = next(q for q in evaluated[0].questions if q.query_id == "q4").runs[0]
    step = view.steps[0]
    assert first == (f"search: \u201cBrackenhow tent weight\u201d \u2014 recall after it {step.recall:.3f}, "
                     f"{step.added} relevant characters new, {step.lost} not in the final context")  # fmt: skip
    page.click(f"{agent} li.x-step:first-child summary")
    grades = page.eval_on_selector_all(f"{agent} li.x-step:first-child tr.x-passage", "rows => rows.map(r => "
                                       "[r.cells[0].textContent, r.dataset.grade])")  # fmt: skip
    assert grades == [["1", "3"], ["2", ""]]
    assert page.text_content(f"{agent} li.x-step:nth-child(5) p") == (
        'tool call: calculator({"expression": "3.2 * 2"})'
    )
    hops = page.eval_on_selector_all(f"{agent} ul.x-hops li", "els => els.map(e => e.textContent)")
    assert hops == ["hop 1 (tent#1): found by step 1", "hop 2 (shipping#2): found by step 3"]
    notes = page.eval_on_selector_all(f"{agent} .x-steps p.unscored", "els => els.map(e => e.textContent)")
    assert notes == view.path and len(notes) == 2
    assert page.query_selector(".x-run[data-run='single'] .x-steps") is None  # no steps, none shown
    assert page.problems == []
