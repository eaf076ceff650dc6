"""The trajectories section of the reports: each run's paths in one sentence, from an evaluation of the trajectory
fixture (an agent that searched three times on the comparison question q4 and once on q2, beside a single search),
its figures worked out by hand from the fixture's character counts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from trajectory_fixture import AGENT, FRAGMENT, SINGLE, TENT, N, trajectory_golden

from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.report import render_markdown
from assay.report._trajectory import trajectory_lines
from assay.results import EvalResult


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> EvalResult:
    root = tmp_path_factory.mktemp("lines")
    runs = []
    agent = [*AGENT, {"query_id": "q2", "retrieved": ["tent#1"]}]  # q2: no steps, one search of its context
    for name, lines in {"agent": agent, "single": SINGLE}.items():
        path = root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        runs.append((name, path))
    done, _ = evaluate(trajectory_golden(), runs, settings=EvalSettings(n_boot=200, k_values=(5,)))
    return done


def test_each_run_is_one_sentence_of_its_paths(result: EvalResult) -> None:
    # q4: saw (47 + 22) / 89, 47 / 89 after the first search, dropped 47 / 89, 1 of 3 searches redundant;
    # q2: its tent paragraph, all of its relevant text, in its one search
    seen, first = ((TENT + FRAGMENT) / N + 1) / 2, (TENT / N + 1) / 2
    agent = (f"agent: 1 of 2 questions answered in steps; 2.0 searches and 0.5 tool calls per question; its searches "
             f"saw {seen:.3f} of the relevant text ({first:.3f} after the first); hop coverage 1.000: a hop never "
             f"searched on 0 of 1 questions with hops; evidence found but dropped on 1 questions (evidence_dropped "
             f"{TENT / N / 2:.3f}); looped on 0 questions; {1 / 6:.3f} of its searches redundant.")  # fmt: skip
    single = (f"single: 0 of 1 questions answered in steps; 1.0 searches and 0.0 tool calls per question; its "
              f"searches saw {TENT / N:.3f} of the relevant text ({TENT / N:.3f} after the first); hop coverage "
              "0.500: a hop never searched on 1 of 1 questions with hops; evidence found but dropped on 0 questions "
              "(evidence_dropped 0.000); looped on 0 questions; 0.000 of its searches redundant.")  # fmt: skip
    assert trajectory_lines(result)[:2] == [agent, single]


def test_the_markdown_report_has_the_section(result: EvalResult) -> None:
    text = render_markdown(result)
    assert "## Trajectories" in text
    assert "- agent: 1 of 2 questions answered in steps" in text
