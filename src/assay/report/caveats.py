"""The caveats of the verdict: each of :data:`CAVEATS` is a small function of the result (:class:`Facts`) that
returns one sentence or None. Every one that applies is kept, in the order of the tuple, which is the severity order
(the most severe first). The reports show them all; the terminal shows the first few (:func:`first_caveats`), the
unscored share always among them, and says how many more the report holds.

:mod:`assay.report.verdict` builds the verdict and its :class:`Facts`, and keeps the caveats this module returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assay.report._budget import unfilled_note, unjudged_note
from assay.report._format import fmt_value
from assay.results import Comparison, EvalResult, VerdictLead

__all__ = ["CAVEATS", "UNSCORED_LEAD", "Facts", "caveats_of", "first_caveats"]

UNSCORED_LEAD = "Unscored on "  # how the unscored-share caveat starts: the terminal always prints it
UNSCORED_NAMED = 4  # runs named in the unscored-share caveat (most unscored first); the rest are counted
Z_POWER = 1.959964 + 0.841621  # two-sided 5% and 80% power: n = (Z_POWER / d_z)^2 questions detect an effect d_z


@dataclass(frozen=True)
class Facts:
    """What the caveats read: the result, its primary metric, the comparisons on it and the lead."""

    result: EvalResult
    metric: str | None
    comparisons: list[Comparison]
    lead: VerdictLead | None


def offline_judge(facts: Facts) -> str | None:
    """The offline judge is a lexical baseline: its figures show how assay works, not how good the runs are."""
    if facts.result.judge is None or "offline" not in facts.result.judge.split(","):
        return None
    return "The judge is the offline lexical baseline, not an LLM: use --judge MODEL before trusting these figures."


def too_few_questions(facts: Facts) -> str | None:
    """A lead the evidence does not support: how many questions (and documents) a difference this size would need,
    from the evaluation's planning for the pair (design effect and family level included) when it has one, else from
    d_z alone."""
    lead = facts.lead
    if lead is None or lead.supported or lead.high < 0 or not lead.d_z:  # high < 0: reliable, the other way
        return None
    size = f"{abs(lead.delta):.3f} on {facts.metric}"
    targets = set(facts.result.settings.get("detect") or ())  # the rest of the pair's plans: its observed delta
    plan = next((p for p in facts.result.planning if p.metric == facts.metric and {p.a, p.b} == {lead.leader,
                 lead.other} and p.effect not in targets), None)  # fmt: skip
    if plan is not None:
        if plan.questions <= lead.n:
            return None
        clustering = facts.result.clustering
        unit = "documents" if clustering is None or clustering.by == "doc" else f"values of {clustering.by}"
        where = f" from about {plan.clusters:,} {unit}" if plan.clusters is not None else ""
        return (f"Too few questions for a difference this small: {size} needs about {plan.questions:,} "
                f"questions{where} to show at 80% power; there are {lead.n}.")  # fmt: skip
    needed = math.ceil((Z_POWER / abs(lead.d_z)) ** 2)
    if needed <= lead.n:
        return None
    return (f"Too few questions for a difference this small: {size} (d_z {abs(lead.d_z):.2f}) needs about "
            f"{needed:,} questions to show at 80% power; there are {lead.n}.")  # fmt: skip


def few_clusters(facts: Facts) -> str | None:
    """The questions come from few documents (or values of --cluster-by): the clustering's own note."""
    clustering = facts.result.clustering
    return None if clustering is None else clustering.note


def judge_noise(facts: Facts) -> str | None:
    """The judge's own noise is as large as half the lead's delta or more (``--judge-repeats``)."""
    noise, lead = facts.result.judge_noise, facts.lead
    if noise is None or lead is None or not noise.sd_delta:
        return None
    sd = noise.sd_delta.get(f"{lead.leader} - {lead.other}", noise.sd_delta.get(f"{lead.other} - {lead.leader}"))
    if sd is None or sd < 0.5 * abs(lead.delta):
        return None
    return (
        f"The judge's own noise moves the lead's delta by sd {sd:.3f} when it is asked again, against a lead "
        f"of {abs(lead.delta):.3f}: a more consistent judge (or a panel) is needed to trust the order."
    )


def cut_differently(facts: Facts) -> str | None:
    """Runs that cut their text differently are compared on text-based measures only."""
    if facts.result.cut_alike is not False:
        return None
    return (f"The runs cut their text differently: the verdict leads with {facts.metric}, and metrics over a number "
            "of passages get no verdict.")  # fmt: skip


def unscored_share(facts: Facts) -> str | None:
    """Every run with any question unscored on the primary metric, with its share: the most unscored first (ties in
    the runs' order), :data:`UNSCORED_NAMED` named and the rest counted; "all N runs" when every run has the same
    share."""
    if facts.metric is None:
        return None
    shares = [(run.name, s.n_unscored / (s.n_scored + s.n_unscored)) for run in facts.result.runs
              if (s := run.metrics.get(facts.metric)) is not None and s.n_unscored]  # fmt: skip
    if not shares:
        return None
    lead = f"{UNSCORED_LEAD}{facts.metric} (left out of the means, never counted as 0): "
    if len(shares) == len(facts.result.runs) > 1 and len({share for _, share in shares}) == 1:
        return f"{lead}all {len(shares)} runs {_percent(shares[0][1])}."
    worst = sorted(shares, key=lambda item: -item[1])
    shown = ", ".join(f"{name} {_percent(share)}" for name, share in worst[:UNSCORED_NAMED])
    left = worst[UNSCORED_NAMED:]
    runs = "run" if len(left) == 1 else "runs"
    more = f" and {len(left)} more {runs} at {_percent(left[0][1])} or less" if left else ""
    return f"{lead}{shown}{more}."


def unjudged_text(facts: Facts) -> str | None:
    """No verdict without judgement: each run's judged share of the budget and how to judge the rest."""
    return unjudged_note(facts.result, facts.metric)


def budget_unfilled(facts: Facts) -> str | None:
    """Runs that fill the budget on few questions: their median fill and the k that would fill it."""
    return unfilled_note(facts.result, facts.metric)


def other_runs_text(facts: Facts) -> str | None:
    """Runs whose score moved because other runs brought relevant text the judge read (the one way a run's score
    depends on the runs evaluated with it): which, and their mean alone."""
    shifts = [s for s in facts.result.pool_shifts if s.deltas and any(s.deltas.values())]
    if not shifts:
        return None
    shown = "; ".join(f"{s.run} on {len(s.questions)} question(s), {fmt_value(s.alone_mean)} alone" for s in shifts[:4])
    more = f"; and {len(shifts) - 4} more runs" if len(shifts) > 4 else ""
    return (f"Other runs' passages made the judge find relevant text some runs never retrieved, which moved their "
            f"{shifts[0].metric}: {shown}{more} (the warnings name the questions).")  # fmt: skip


def unvalidated_criteria(facts: Facts) -> str | None:
    """Judged criteria are a model's reading of the team's words: until people's labels of enough of a criterion's
    verdicts (the evaluation's ``min_audited``) have been compared with the judge's, say so, with how many more to
    audit (``assay audit --criteria``); pairwise preferences have no audit of their own yet."""
    result = facts.result
    audit = int(result.settings.get("min_audited", 10))
    measured = {one.criterion: one for one in result.criterion_agreement}
    names = []
    for name in dict.fromkeys(v.criterion for v in result.criterion_verdicts):
        found = measured.get(name)
        if found is None or not found.validated:
            names.append(f"criterion:{name} ({found.n if found is not None else 0} of {audit} audited)")
    if result.preferences is not None:
        names.append(f"pairwise ({result.preferences.criterion})")
    if not names:
        return None
    return (f"{', '.join(names)} not validated: audit {audit} items of each against people before trusting "
            f"{'it' if len(names) == 1 else 'them'} (assay audit GOLDEN --criteria; its judge's consistency, "
            "verbosity and injection: assay judge-check --criterion).")  # fmt: skip


def _percent(share: float) -> str:
    """A share as a whole percentage that never reads 0% or 100% when it is not: ``<1%``, ``>99%``."""
    if share < 0.005:
        return "<1%"
    if 0.995 <= share < 1.0:
        return ">99%"
    return f"{100 * share:.0f}%"


def first_caveats(caveats: Sequence[str], room: int) -> tuple[list[str], int]:
    """The caveats a short output prints and how many it leaves out:

    1. the first ``room`` caveats, in their severity order;
    2. when the unscored share (it starts with :data:`UNSCORED_LEAD`) falls past them, it takes the last place;
    3. the count left out is every caveat not printed.
    """
    if room < 1:
        raise ValueError(f"room for caveats must be 1 or more, got {room}")
    shown = list(caveats[:room])
    unscored = next((line for line in caveats[room:] if line.startswith(UNSCORED_LEAD)), None)
    if unscored is not None:
        shown[-1] = unscored
    return shown, len(caveats) - len(shown)


# The severity order, most severe first: figures that say nothing of quality (a lexical judge), no verdict where
# the text is mostly unlabelled, means over different questions (unscored), intervals narrower than the evidence
# (few clusters), a lead too small for the questions, a judge noisier than the lead, scores moved by other runs'
# text, then how the runs were compared (cut differently, a budget a run does not fill).
CAVEATS: tuple[Callable[[Facts], str | None], ...] = (
    offline_judge, unjudged_text, unscored_share, few_clusters, too_few_questions, judge_noise, other_runs_text,
    unvalidated_criteria, cut_differently, budget_unfilled,
)  # fmt: skip


def caveats_of(facts: Facts) -> list[str]:
    """Every caveat that applies to ``facts``, most severe first."""
    return [line for caveat in CAVEATS if (line := caveat(facts)) is not None]
