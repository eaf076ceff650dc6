"""The planning of an evaluation (``EvalResult.planning``) as plain lines, shared by the three reports.

:func:`planning_lines` gives the intro (power, test level, what the figures come from) first, then one sentence per
plan (:mod:`assay.pipelines.evaluate.statistics.planning` writes them); the terminal shows the first few, Markdown and
HTML all of them. Nothing when the result has no plans (results written before planning, or no per-question spread).
"""

from __future__ import annotations

from assay.results import EvalResult

__all__ = ["TERMINAL_PLANS", "planning_lines"]

TERMINAL_PLANS = 6  # sentences shown in the terminal; the rest are in report.md and report.html


def planning_lines(result: EvalResult) -> list[str]:
    """[intro, sentence, sentence, ...]; [] without plans."""
    plans = result.planning
    if not plans:
        return []
    first = plans[0]
    paired = any(p.b is not None for p in plans)
    levels = sorted({p.alpha for p in plans})
    level = f"{levels[0]:.3g}" if len(levels) == 1 else f"{levels[0]:.3g} to {levels[-1]:.3g}"
    if paired:
        basis = (
            "from each pair's observed sd of the per-question differences and design effect; the level is alpha / m "
            "for the family's m pairs (Holm's first step, conservative for the others)"
        )
    else:
        basis = (
            f"from {first.a}'s own per-question sd and design effect: the test of its mean against a fixed value "
            "(a threshold); a comparison with another system on the same questions needs fewer questions when the "
            "two agree per question, up to twice as many when they do not"
        )
    intro = (
        f"Questions needed to detect a difference on {first.metric} at {first.power:.0%} power, two-sided test at "
        f"level {level}, {basis}; documents at the current questions per document."
    )
    return [intro, *(p.sentence for p in plans)]
