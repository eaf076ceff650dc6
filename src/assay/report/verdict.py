"""The verdict: the answer first, built in one place from an :class:`~assay.results.EvalResult`.

The terminal, Markdown and HTML reports only render the :class:`~assay.results.Verdict` this module builds (and
``results.json`` carries it). It says, one sentence each:

1. **the lead**: which run leads on the primary metric, its mean and interval, and against the runner-up the
   delta with its family-adjusted interval, adjusted p and n, and whether the evidence supports the lead (the
   comparison is significant); with one run, that run's figure, since there is nothing to compare;
2. **the ranking**: every run by its mean, ``>`` where the step down is significant, ``≈`` where it is not (a tie),
   ``?`` where the two runs were not compared (``--baseline``); with conversations, **what the history is worth**:
   each history gain (a turns run minus its rewrites run) on the dependent turns and on the standalone ones;
3. **the judge's trust**: its card's headline figures and the agreement with people on audited labels, or
   "unmeasured" with the command that measures it;
4. **cost and latency** of each system whose run recorded them (``assay run``);
5. **caveats**: each of :data:`CAVEATS` is a small function of the result that returns one sentence or None; every
   one that applies is kept, in the order of the tuple, which is the severity order (the most severe first). The
   reports show them all; the terminal shows the first few (:func:`first_caveats`), the unscored share always among
   them, and says how many more the report holds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assay.report._format import fmt_delta, fmt_interval, fmt_p, fmt_value, headline_metrics
from assay.results import (
    Comparison,
    EvalResult,
    HistoryGain,
    SystemCost,
    Verdict,
    VerdictLead,
    VerdictPlace,
)

__all__ = ["CAVEATS", "UNSCORED_LEAD", "Facts", "build_verdict", "first_caveats", "primary_metric"]

UNSCORED_LEAD = "Unscored on "  # how the unscored-share caveat starts: the terminal always prints it
UNSCORED_NAMED = 4  # runs named in the unscored-share caveat (most unscored first); the rest are counted
RANKED = 8  # runs named in the ranking sentence; the rest are counted
Z_POWER = 1.959964 + 0.841621  # two-sided 5% and 80% power: n = (Z_POWER / d_z)^2 questions detect an effect d_z


@dataclass(frozen=True)
class Facts:
    """What the caveats read: the result, its primary metric, the comparisons on it and the lead."""

    result: EvalResult
    metric: str | None
    comparisons: list[Comparison]
    lead: VerdictLead | None


def primary_metric(result: EvalResult) -> str | None:
    """The metric that leads: the evaluator's primary, else the one asked for (``--primary``), else ``ndcg@10``,
    else the first headline metric (with one run nothing is compared, so the evaluator names none)."""
    known = {name for run in result.runs for name in run.metrics}
    asked = result.settings.get("primary")
    if result.primary_metric is not None:
        return result.primary_metric
    for name in (asked if isinstance(asked, str) else None, "ndcg@10"):
        if name in known:
            return name
    return next(iter(headline_metrics(result)), None)


def build_verdict(result: EvalResult) -> Verdict:
    """The verdict of ``result`` (see the module docstring)."""
    metric = primary_metric(result)
    comps = [c for c in result.comparisons if c.metric == metric]
    places = _places(result, metric, comps)
    lead = _lead(places, comps)
    facts = Facts(result, metric, comps, lead)
    trust, measured = _judge(result)
    systems = _systems(result)
    caveats = [line for caveat in CAVEATS if (line := caveat(facts)) is not None]
    return Verdict(
        metric=metric,
        runs=len(result.runs),
        lead=lead,
        places=places,
        judge_measured=measured,
        systems=systems,
        headline=_headline(result, metric, places, lead),
        ranking=_ranking(places, comps, metric),
        judge=trust,
        cost=_cost(systems),
        caveats=caveats,
        history=[_history(gain) for gain in result.history_gain],
    )


# -- the lead and the ranking -------------------------------------------------------------------------------------


def _history(gain: HistoryGain) -> str:
    """What the history costs or gives the system: turns minus rewrites on the dependent turns, then the standalone
    ones (where nothing should change)."""
    mode = f" with the {gain.history} history" if gain.history else ""
    dep, alone = gain.dependent, gain.standalone
    if dep is None:
        told = "fewer than two turns that depend on the history were scored in both runs, so nothing is said"
    else:
        way = "it loses to coreference and ellipsis" if dep.delta < 0 else "the history helps it"
        called = way if dep.significant else "no reliable difference"
        told = (f"{fmt_delta(dep)} {gain.metric} on the {dep.n} turns that depend on the history "
                f"(p adj. {fmt_p(dep.p_adjusted)}: {called})")  # fmt: skip
    if alone is not None:
        steady = "a difference there too" if alone.significant else "no reliable difference, as expected"
        told += f", {alone.delta:+.3f} on the {alone.n} standalone ones ({steady})"
    return f"History: asked the raw turns{mode} rather than the standalone rewrites, {gain.turns} scores {told}."


def _pair(comps: Sequence[Comparison], one: str, other: str) -> Comparison | None:
    return next((c for c in comps if {c.a, c.b} == {one, other}), None)


def _places(result: EvalResult, metric: str | None, comps: list[Comparison]) -> list[VerdictPlace]:
    """Runs by their mean (highest first, unscored last; ties in mean keep the runs' order); a run shares the place
    of the run above it when their comparison is not significant (a tie), and takes the next place when it is or when
    the two were not compared."""
    if metric is None:
        return []
    by_pair = {frozenset((c.a, c.b)): c for c in comps}
    summaries = [(run.name, run.metrics.get(metric)) for run in result.runs]
    ranked = sorted(summaries, key=lambda item: -(item[1].mean if item[1] and item[1].mean is not None else -math.inf))
    places: list[VerdictPlace] = []
    for name, summary in ranked:
        place = 1
        if places:
            above = by_pair.get(frozenset((places[-1].run, name)))
            place = places[-1].place + (1 if above is None or above.significant else 0)
        ties = [other for other, _ in ranked if (c := by_pair.get(frozenset((name, other)))) and not c.significant]
        mean, low, high = (summary.mean, summary.low, summary.high) if summary else (None, None, None)
        places.append(VerdictPlace(run=name, mean=mean, low=low, high=high, place=place, ties=ties))
    return places


def _lead(places: list[VerdictPlace], comps: list[Comparison]) -> VerdictLead | None:
    """The leader against the runner-up, else against the closest run it was compared with."""
    if len(places) < 2 or places[0].mean is None:
        return None
    leader = places[0].run
    found = next((c for p in places[1:] if (c := _pair(comps, leader, p.run)) is not None), None)
    if found is None:
        return None
    sign = 1.0 if found.b == leader else -1.0
    low, high = sorted((sign * found.low, sign * found.high))
    d_z = None if found.d_z is None else sign * found.d_z
    return VerdictLead(leader=leader, other=found.a if found.b == leader else found.b, delta=sign * found.delta,
                       low=low, high=high, p_adjusted=found.p_adjusted, n=found.n, supported=found.significant,
                       d_z=d_z)  # fmt: skip


def _figure(place: VerdictPlace) -> str:
    return f"{fmt_value(place.mean)} {fmt_interval(place.low, place.high)}".strip()


def _headline(result: EvalResult, metric: str | None, places: list[VerdictPlace], lead: VerdictLead | None) -> str:
    if metric is None or not places:
        return "No metric could be computed: nothing to compare."
    top = places[0]
    if len(places) == 1:
        summary = result.runs[0].metrics[metric]
        unscored = f" ({summary.n_unscored} unscored)" if summary.n_unscored else ""
        return (f"{top.run}: {metric} {_figure(top)} over {summary.n_scored} questions{unscored}; one run, so no "
                "comparison.")  # fmt: skip
    if lead is None:
        return f"{top.run} has the highest {metric}, {_figure(top)}; the runs were not compared on it."
    gap = f"{lead.delta:+.3f} {fmt_interval(lead.low, lead.high)}"
    evidence = (
        "the evidence supports the lead"
        if lead.supported
        else "the evidence does not support the lead: no reliable difference, a tie"
    )
    return (f"{lead.leader} leads on {metric} with {_figure(top)}: {gap} over {lead.other} (p adj. "
            f"{fmt_p(lead.p_adjusted)}, n = {lead.n} questions); {evidence}.")  # fmt: skip


def _ranking(places: list[VerdictPlace], comps: list[Comparison], metric: str | None) -> str | None:
    if len(places) < 2:
        return None
    text, marks = f"{places[0].run} {fmt_value(places[0].mean)}", set()
    for above, below in itertools.pairwise(places[:RANKED]):
        found = _pair(comps, above.run, below.run)
        mark = "?" if found is None else ">" if found.significant else "≈"
        marks.add(mark)
        text += f" {mark} {below.run} {fmt_value(below.mean)}"
    if len(places) > RANKED:
        text += f" … and {len(places) - RANKED} more"
    legend = {">": ">: reliably better", "≈": "≈: a tie, no reliable difference", "?": "?: not compared"}
    return f"Ranking on {metric}: {text} ({'; '.join(legend[m] for m in ('>', '≈', '?') if m in marks)})."


# -- the judge, cost and latency ------------------------------------------------------------------------------------


def _judge(result: EvalResult) -> tuple[str, bool]:
    """The trust line and whether the judge was measured against people."""
    if result.judge is None:
        origin = "people's" if result.label_origin == "human" else "the golden set's"
        return (f"No judge: {origin} labels only; an unlabelled passage counts as not relevant (trec_eval), and "
                "judged@k says how complete the labels are.", False)  # fmt: skip
    parts = []
    card = result.judge_card
    if card is not None and card.found and card.figures:
        shown = "; ".join(f"{label} {value}" for label, value in list(card.figures.items())[:2])
        parts.append(f"judge card of {card.model}: {shown}" + (f" ({card.note})" if card.note else ""))
    kappa = result.agreement.overall.cohen_kappa if result.agreement is not None else None
    if result.agreement is not None and kappa is not None and kappa.value is not None:
        parts.append(f"Cohen's kappa with people {fmt_value(kappa.value)} {fmt_interval(kappa.low, kappa.high)} "
                     f"on {result.agreement.overall.n} audited labels")  # fmt: skip
    if parts:
        return f"Judge {result.judge}: " + "; ".join(parts) + ".", True
    if result.label_origin in ("human", "imported"):
        return (f"Relevance labels are the golden set's own ({result.label_origin}); the judge {result.judge} made "
                f"the answer metrics and is unmeasured: `assay judge-check --judge {result.judge} --labels "
                f"{result.golden} -o card/` measures it.", False)  # fmt: skip
    command = f"assay judge-check --judge {result.judge} --labels {result.golden} -o card/"
    return (f"Judge {result.judge}: no judge card for {result.judge} and no audited labels, so its trust is "
            f"unmeasured; measure it with `{command}`.", False)  # fmt: skip


def _systems(result: EvalResult) -> list[SystemCost]:
    out = []
    for run in result.runs:
        s = run.system
        if s is not None and (s.cost_usd is not None or s.latency_ms):
            out.append(SystemCost(run=run.name, cost_usd=s.cost_usd, p50_ms=s.latency_ms.get("p50"),
                                  p95_ms=s.latency_ms.get("p95")))  # fmt: skip
    return out


def _cost(systems: list[SystemCost]) -> str | None:
    if not systems:
        return None

    def one(s: SystemCost) -> str:
        cost = "cost unknown" if s.cost_usd is None else f"${s.cost_usd:,.4f}"
        latency = "" if s.p50_ms is None else f", p50 {s.p50_ms:,.0f} ms"
        latency += "" if s.p95_ms is None else f", p95 {s.p95_ms:,.0f} ms"
        return f"{s.run} {cost}{latency}"

    return "Cost and latency: " + "; ".join(one(s) for s in systems) + "."


# -- caveats: one small function each, in the severity order of CAVEATS (at the end) -------------------------------


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
    if lead is None or lead.supported or not lead.d_z:
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


# The severity order, most severe first: figures that say nothing of quality (a lexical judge), means over different
# questions (unscored), intervals narrower than the evidence (few clusters), a lead too small for the questions,
# a judge noisier than the lead, then how the runs were compared (cut differently).
CAVEATS: tuple[Callable[[Facts], str | None], ...] = (
    offline_judge, unscored_share, few_clusters, too_few_questions, judge_noise, cut_differently,
)  # fmt: skip
