"""How the evaluation's noise was counted, as plain sentences shared by the three reports: the clustering of the
questions (``EvalResult.clustering``), the repeats of the systems (``RunResult.repeats``) and the judge's own noise
(``EvalResult.judge_noise``). :func:`noise_lines` gives them in that order; each is one sentence, and nothing is said
where there is nothing to say (one question per document, one asking, no re-asked judge and no card figure).
"""

from __future__ import annotations

from assay.report._format import fmt_value
from assay.results import Clustering, EvalResult, JudgeNoise, RunResult

__all__ = ["clustering_line", "judge_noise_line", "noise_lines", "repeats_line"]


def _unit(by: str) -> str:
    return "source document" if by == "doc" else f"{by}" if by != "none" else "question"


def clustering_line(clustering: Clustering | None, metric: str | None) -> str | None:
    """The clustering, its design effect and its note; None when every question is its own cluster."""
    if clustering is None or clustering.clusters == clustering.questions:
        return None
    text = (
        f"Questions clustered by {_unit(clustering.by)}: {clustering.questions} questions in {clustering.clusters} "
        f"clusters (mean {clustering.mean_size:.1f}, largest {clustering.max_size})"
    )
    deff = clustering.design_effect
    if deff is not None and metric is not None and deff > 1:
        text += (
            f"; design effect {deff:.2f} on {metric}, so they weigh as about {clustering.questions / deff:.0f} "
            "independent questions"
        )
    elif deff is not None and metric is not None:
        text += f"; design effect {deff:.2f} on {metric}: no loss against independent questions"
    text += "; tests flip and intervals resample whole clusters."
    return text + (f" {clustering.note}" if clustering.note else "")


def repeats_line(run: RunResult, metric: str | None) -> str | None:
    """A repeated run: how much of the metric's variance is the system's own, and how far its mean moves."""
    repeats = run.repeats
    if repeats is None:
        return None
    text = f"{run.name} was asked every question {repeats.repeats} times; values are per-question means"
    split = repeats.metrics.get(metric or "")
    if split is not None and split.within_share is not None:
        text += (
            f"; on {metric}, {100 * split.within_share:.0f}% of the per-question variance is the system's own "
            f"(within a question: {fmt_value(split.within)}, between questions: {fmt_value(split.between)})"
        )
    spread = repeats.spread.get(metric or "")
    if spread is not None:
        text += f", and its mean moves by sd {fmt_value(spread)} from one asking to the next"
    return text + "."


def judge_noise_line(noise: JudgeNoise | None) -> str | None:
    """The judge asked again: how many grades changed and how far the primary metric moved."""
    if noise is None:
        return None
    if noise.source == "card":
        return noise.note
    if not noise.labels:
        return noise.note
    covered = f" ({100 * noise.coverage:.0f}% of them)" if noise.coverage is not None and noise.coverage < 1 else ""
    text = (
        f"The judge, asked {noise.repeats} more time(s) on {noise.labels} labels of the runs' top k{covered}, "
        f"changed {100 * (noise.changed or 0):.0f}% of its grades"
    )
    if noise.failed:
        text += f" ({noise.failed} re-asks came back unscored and kept the label)"
    if noise.sd:
        runs = ", ".join(f"{name} {fmt_value(sd)}" for name, sd in noise.sd.items() if sd is not None)
        text += f"; {noise.metric} moved by sd {runs}"
    if noise.sd_delta:
        pairs = ", ".join(f"{pair} {fmt_value(sd)}" for pair, sd in noise.sd_delta.items() if sd is not None)
        text += f"; the deltas by sd {pairs}"
    text += "."
    if noise.coverage is not None and noise.coverage < 1:
        text += " The labels not re-asked kept theirs, so this is a lower bound."
    return text + (f" {noise.note}" if noise.note else "")


def noise_lines(result: EvalResult, metric: str | None) -> list[str]:
    """Every sentence of this module that applies to ``result``, for the primary ``metric``."""
    lines = [clustering_line(result.clustering, metric)]
    lines += [repeats_line(run, metric) for run in result.runs]
    lines.append(judge_noise_line(result.judge_noise))
    return [line for line in lines if line]
