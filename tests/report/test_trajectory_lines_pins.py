"""Pins of the trajectories sentence found by the mutation habit (scripts/mutation.sh): each optional part of a run's
sentence left out when its figure is missing, and only the significant differences on trajectory measures added.
The results are built by hand, so every figure is the one written here."""

from __future__ import annotations

from assay.report._trajectory import run_trajectory_line, trajectory_lines
from assay.results import Comparison, EvalResult, MetricSummary, RunResult, TrajectorySummary


def _run(name: str, paths: TrajectorySummary | None, **means: float | None) -> RunResult:
    metrics = {metric: MetricSummary(mean=mean) for metric, mean in means.items()}
    return RunResult(name=name, path=f"{name}.jsonl", metrics=metrics, trajectories=paths)


def test_a_run_without_trajectories_has_no_sentence() -> None:
    assert run_trajectory_line(_run("plain", None, searches=2.0, trajectory_recall=0.5)) is None


def test_a_run_with_no_measure_says_only_its_steps_and_loops() -> None:
    paths = TrajectorySummary(questions=3, with_steps=2, looped=1)
    said = "agent: 2 of 3 questions answered in steps; looped on 1 questions."
    assert run_trajectory_line(_run("agent", paths)) == said


def test_searches_without_tool_calls_count_no_tool_call_and_a_mean_of_none_is_left_out() -> None:
    paths = TrajectorySummary(questions=4, with_steps=4, hop_questions=2, hops_missed=1, dropped=3, looped=2)
    run = _run("agent", paths, searches=2.5, trajectory_recall=None, evidence_dropped=None, redundant_searches=None,
               hop_coverage=0.75)  # fmt: skip
    assert run_trajectory_line(run) == (
        "agent: 4 of 4 questions answered in steps; 2.5 searches and 0.0 tool calls per question; hop coverage 0.750: "
        "a hop never searched on 1 of 2 questions with hops; looped on 2 questions."
    )


def test_every_part_in_its_order() -> None:
    paths = TrajectorySummary(questions=5, with_steps=3, hop_questions=4, hops_missed=2, dropped=1, looped=0)
    run = _run("agent", paths, searches=1.5, tool_calls=0.4, trajectory_recall=0.8, first_search_recall=0.4,
               hop_coverage=0.5, evidence_dropped=0.125, redundant_searches=0.2)  # fmt: skip
    assert run_trajectory_line(run) == (
        "agent: 3 of 5 questions answered in steps; 1.5 searches and 0.4 tool calls per question; its searches saw "
        "0.800 of the relevant text (0.400 after the first); hop coverage 0.500: a hop never searched on 2 of 4 "
        "questions with hops; evidence found but dropped on 1 questions (evidence_dropped 0.125); looped on 0 "
        "questions; 0.200 of its searches redundant."
    )


def _comparison(metric: str, significant: bool, verdict: str) -> Comparison:
    return Comparison(a="single", b="agent", metric=metric, n=10, delta=0.1, low=0.05, high=0.15, p_value=0.01,
                      p_adjusted=0.02, significant=significant, verdict=verdict)  # fmt: skip


def test_the_lines_are_each_runs_sentence_then_the_significant_trajectory_differences() -> None:
    runs = [
        _run("agent", TrajectorySummary(questions=2, with_steps=2)),
        _run("plain", None),
        _run("single", TrajectorySummary(questions=2, with_steps=0, looped=1)),
    ]
    diagnosis = [
        _comparison("trajectory_recall", True, "agent saw more"),
        _comparison("evidence_dropped", False, "no difference in evidence dropped"),
        _comparison("context_noise", True, "agent has less noise"),
        _comparison("looped", True, "agent loops less"),
    ]
    result = EvalResult(assay_version="test", golden="g", judge=None, k_values=[5], runs=runs,
                        comparisons=[_comparison("searches", True, "from the main family")],
                        diagnosis_comparisons=diagnosis)  # fmt: skip
    assert trajectory_lines(result) == [
        "agent: 2 of 2 questions answered in steps; looped on 0 questions.",
        "single: 0 of 2 questions answered in steps; looped on 1 questions.",
        "agent saw more",
        "agent loops less",
    ]
