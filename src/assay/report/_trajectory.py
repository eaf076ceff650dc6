"""The trajectories of an evaluation as plain sentences shared by the three reports: per run, how many questions it
answered in steps, what its searches saw and what its answer kept, its hops, loops and redundant searches
(``RunResult.trajectories`` and the means of :data:`~assay.metric_names.TRAJECTORY_METRICS`),
then the significant differences between runs on those measures. Nothing is said when no run's lines carry steps.
"""

from __future__ import annotations

from assay.metric_names import TOOL_ARGS_JUDGED, TRAJECTORY_FAMILY
from assay.report._format import fmt_value
from assay.results import EvalResult, RunResult

__all__ = ["run_trajectory_line", "trajectory_lines"]


def _mean(run: RunResult, name: str) -> float | None:
    summary = run.metrics.get(name)
    return summary.mean if summary is not None else None


def run_trajectory_line(run: RunResult) -> str | None:
    """One run's paths in one sentence (None when it has no trajectory measure)."""
    paths = run.trajectories
    if paths is None:
        return None
    searches, tools = _mean(run, "searches"), _mean(run, "tool_calls")
    parts = [f"{run.name}: {paths.with_steps} of {paths.questions} questions answered in steps"]
    if searches is not None:
        parts.append(f"{searches:.1f} searches and {tools or 0.0:.1f} tool calls per question")
    seen, first = _mean(run, "trajectory_recall"), _mean(run, "first_search_recall")
    if seen is not None:
        parts.append(f"its searches saw {fmt_value(seen)} of the relevant text ({fmt_value(first)} after the first)")
    if paths.hop_questions:
        parts.append(f"hop coverage {fmt_value(_mean(run, 'hop_coverage'))}: a hop never searched on "
                     f"{paths.hops_missed} of {paths.hop_questions} questions with hops")  # fmt: skip
    dropped = _mean(run, "evidence_dropped")
    if dropped is not None:
        parts.append(f"evidence found but dropped on {paths.dropped} questions (evidence_dropped {fmt_value(dropped)})")
    f1 = _mean(run, "tool_name_f1")
    if f1 is not None:
        order, exact = _mean(run, "tool_order_f1"), _mean(run, "tool_args_exact")
        judged = _mean(run, TOOL_ARGS_JUDGED)
        also = f", judged equivalent {fmt_value(judged)}" if judged is not None else ""
        parts.append(f"tool calls against the references: name F1 {fmt_value(f1)}, in order {fmt_value(order)}, "
                     f"arguments exact {fmt_value(exact)}{also}")  # fmt: skip
    parts.append(f"looped on {paths.looped} questions")
    redundant = _mean(run, "redundant_searches")
    if redundant is not None:
        parts.append(f"{fmt_value(redundant)} of its searches redundant")
    return "; ".join(parts) + "."


def trajectory_lines(result: EvalResult) -> list[str]:
    """Every run's sentence, then the significant differences on the measures of a trajectory."""
    lines = [line for run in result.runs if (line := run_trajectory_line(run)) is not None]
    lines += [c.verdict for c in result.diagnosis_comparisons if c.metric in TRAJECTORY_FAMILY and c.significant]
    return lines
