"""What the verdict says about each run's budget (:class:`~assay.results.BudgetFill`): how full it is, and whether
enough of its text is judged for a verdict without a judge.

1. **The budget read** (:func:`budget_of`): the primary metric's when it is a budget measure (``ndcg@1000t``:
   ``1000t``), else the first budget the runs were measured at.
2. **No verdict without judgement** (:func:`unjudged_runs`): when no judge was given and runs were compared, a run
   whose judged share of the budget (the median over its questions of the share of the text it shows within the
   budget that has a label, any grade) is below :data:`JUDGED_SHARE` may win or lose on text nobody judged (counted
   not relevant): the verdict withholds the lead and the ranking (:func:`withheld`, :func:`means`), and a caveat
   names each such run's share and how to judge the rest (:func:`unjudged_note`). With a judge nothing changes.
3. **The budget, filled or said** (:func:`unfilled_note`): a run filled below
   :data:`~assay.results.FILLED_SHARE` of the budget on most questions (more than half) is named with its median
   fill and the passages (k) that would fill it.
"""

from __future__ import annotations

from assay.metric_names import MetricName
from assay.report._format import fmt_value, ranked_runs
from assay.results import FILLED_SHARE, BudgetFill, EvalResult, VerdictLead, VerdictPlace

__all__ = ["JUDGED_SHARE", "budget_of", "means", "unfilled_note", "unjudged_note", "unjudged_runs", "withheld"]

JUDGED_SHARE = 0.8  # without a judge, a run whose budget text is judged below this share withholds the verdict


def budget_of(result: EvalResult, metric: str | None) -> str | None:
    """The budget the verdict reads (step 1); None when no run was measured at a budget."""
    cut = MetricName.parse(metric or "").cut or ""
    known = [name for run in result.runs for name in run.budget]
    return cut if cut in known else next(iter(known), None)


def _fills(result: EvalResult, metric: str | None) -> list[tuple[str, BudgetFill]]:
    budget = budget_of(result, metric)
    return [(run.name, run.budget[budget]) for run in result.runs if budget is not None and budget in run.budget]


def unjudged_runs(result: EvalResult, metric: str | None) -> list[tuple[str, float]]:
    """Without a judge and with runs compared, each run judged below :data:`JUDGED_SHARE`, with its share (step 2)."""
    if result.judge is not None or not result.comparisons:
        return []
    return [(name, fill.judged) for name, fill in _fills(result, metric)
            if fill.judged is not None and fill.judged < JUDGED_SHARE]  # fmt: skip


def withheld(result: EvalResult, lead: VerdictLead | None, metric: str | None) -> str:
    """The headline when the verdict is withheld: who has the highest mean, and why no verdict."""
    top = f"{lead.leader} has the highest {metric} ({lead.delta:+.3f} over {lead.other})" if lead else "No run leads"
    runs = ", ".join(name for name, _ in unjudged_runs(result, metric))
    return (f"{top}, but no verdict: without a judge, less than {100 * JUDGED_SHARE:.0f}% of the text {runs} "
            f"showed within the {budget_of(result, metric)} budget has a label, and unlabelled text counts as not "
            "relevant.")  # fmt: skip


def means(places: list[VerdictPlace], metric: str | None) -> str | None:
    """The ranking sentence when the verdict is withheld: the means in order, no mark between them."""
    if len(places) < 2:
        return None
    return f"Means on {metric} (no verdict): {ranked_runs(places, lambda p: f'{p.run} {fmt_value(p.mean)}')}."


def unjudged_note(result: EvalResult, metric: str | None) -> str | None:
    """The caveat of step 2: each run's judged share and the command that judges the rest."""
    unjudged = unjudged_runs(result, metric)
    if not unjudged:
        return None
    shown = ", ".join(f"{name} {100 * share:.0f}%" for name, share in unjudged)
    return (f"Judged share of the text within the {budget_of(result, metric)} budget (median over questions): "
            f"{shown}; below {100 * JUDGED_SHARE:.0f}% no verdict is given. Judge the rest with `assay eval "
            f"{result.golden} RUNS --judge MODEL` (or --judge offline, a lexical baseline).")  # fmt: skip


def unfilled_note(result: EvalResult, metric: str | None) -> str | None:
    """The caveat of step 3, or None when every run fills the budget on most questions."""
    short = [(name, fill) for name, fill in _fills(result, metric) if (fill.under or 0.0) > 0.5]
    if not short:
        return None
    shown = "; ".join(
        f"{name} a median {100 * fill.filled:.0f}% (under {100 * FILLED_SHARE:.0f}% on {100 * (fill.under or 0.0):.0f}%"
        " of questions" + (f"; `assay run --top-k {fill.k}` fills it)" if fill.k else ")")
        for name, fill in short
    )
    return f"Budget {budget_of(result, metric)} not filled, scored on what was retrieved: {shown}."
