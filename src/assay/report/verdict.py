"""The verdict: the answer first, built in one place from an :class:`~assay.results.EvalResult`.

The terminal, Markdown and HTML reports only render the :class:`~assay.results.Verdict` this module builds (and
``results.json`` carries it). It says, one sentence each:

1. **the lead**: which run leads on the primary metric, its mean and interval, and against the runner-up the
   delta with its family-adjusted interval, adjusted p and n, and whether the evidence supports the lead (the
   comparison is significant); with one run, that run's figure, since there is nothing to compare;
2. **the ranking**: every run by its mean with its letters, a compact letter display over the whole significance
   matrix (:mod:`assay.metrics.letters`): runs that share a letter are not reliably different, runs that share none
   are; a pair not compared (``--baseline``) counts as not distinguished and the sentence says how many there are.
   Places follow the letters' rule (:func:`_places`): two significantly different runs never share one, however
   long a chain of ties links them. With conversations, **what the history is worth**: each history gain (a turns
   run minus its rewrites run) on the dependent turns and on the standalone ones;
3. **the judge's trust**: its card's headline figures and the agreement with people on audited labels, or
   "unmeasured" with the command that measures it;
4. **cost and latency** of each system whose run recorded them (``assay run``);
5. **caveats**: every caveat of :mod:`assay.report.caveats` that applies, most severe first.

Without a judge, when a compared run's text within the budget is mostly unlabelled, no verdict is given: the lead is
not called supported, the headline says why and the ranking lists the means (:mod:`~assay.report._budget`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from assay.metric_names import lower_is_better
from assay.metrics import MetricError
from assay.metrics.letters import compact_letters
from assay.report._budget import means, unjudged_runs, withheld
from assay.report._format import fmt_delta, fmt_interval, fmt_p, fmt_value, headline_metrics, ranked_runs
from assay.report.caveats import Facts, caveats_of
from assay.results import (
    Comparison,
    EvalResult,
    HistoryGain,
    MetricSummary,
    SystemCost,
    Verdict,
    VerdictLead,
    VerdictPlace,
)

__all__ = ["better", "build_verdict", "primary_metric"]


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
    unjudged = unjudged_runs(result, metric)  # no verdict without judgement: no place earned by a test
    places = _places(result, metric, [] if unjudged else comps)
    lead = _lead(places, comps, metric)
    if unjudged and lead is not None:
        lead = lead.model_copy(update={"supported": False})
    facts = Facts(result, metric, comps, None if unjudged else lead)
    trust, measured = _judge(result)
    systems = _systems(result)
    caveats = caveats_of(facts)
    return Verdict(
        metric=metric,
        runs=len(result.runs),
        lead=lead,
        places=places,
        judge_measured=measured,
        systems=systems,
        headline=withheld(result, lead, metric) if unjudged else _headline(result, metric, places, lead, comps),
        ranking=means(places, metric) if unjudged else _ranking(places, comps, metric),
        judge=trust,
        cost=_cost(systems),
        caveats=caveats,
        history=[_history(gain) for gain in result.history_gain],
        preference=result.preferences.sentence if result.preferences is not None else None,
        criteria=_criteria(result),
    )


_KAPPA = {"kappa": "kappa", "weighted_kappa": "weighted kappa"}


def _criteria(result: EvalResult) -> str | None:
    """The judged criteria that people validated (enough of their verdicts audited), with their agreement and
    interval; the others are a caveat (:func:`assay.report.caveats.unvalidated_criteria`)."""
    shown = []
    for one in result.criterion_agreement:
        if one.validated:
            k = one.kappa
            corrected = f", PPI-corrected means for {len(one.ppi)} run(s)" if one.ppi else ""
            shown.append(f"criterion:{one.criterion} {_KAPPA[one.statistic]} {fmt_value(k.value)} "
                         f"{fmt_interval(k.low, k.high)} on {one.n} audited items{corrected}")  # fmt: skip
    return f"Judged criteria against people: {'; '.join(shown)}." if shown else None


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


def better(metric: str | None) -> float:
    """+1 when a higher ``metric`` is better, -1 when a lower one is (:func:`assay.metric_names.lower_is_better`)."""
    return -1.0 if metric is not None and lower_is_better(metric) else 1.0


def _places(result: EvalResult, metric: str | None, comps: list[Comparison]) -> list[VerdictPlace]:
    """Runs best first (:func:`_order`: by the paired differences on the questions each pair both scored, then by
    mean; unscored last), each with its letters, its place and its ties:

    1. the runs with a mean are lettered from the whole significance matrix (:func:`compact_letters`): two runs share
       no letter exactly when their comparison is significant; a pair not compared counts as not distinguished;
    2. walking down that order, a run keeps the current place when no run already at it differs significantly from
       it, else it takes the next place: the runs at one place are pairwise not distinguished, and two significantly
       different runs never share a place, however long a chain of ties links them;
    3. a run with no mean gets no letter and the place after every run with one;
    4. its ties are the runs it was compared with and found not reliably different from."""
    if metric is None:
        return []
    summaries = {run.name: run.metrics.get(metric) for run in result.runs}
    scored = _order(metric, summaries, comps)
    ranked = [(name, summaries[name]) for name in [*scored, *(n for n in summaries if n not in scored)]]
    pairs = [(c.a, c.b) for c in comps if c.significant and {c.a, c.b} <= set(scored)]
    try:
        letters = compact_letters(scored, pairs)
    except MetricError:  # too many crossing groups to letter: places alone (step 2 still holds)
        letters = {}
    differ = {frozenset(pair) for pair in pairs}
    numbers = _place_numbers([name for name, _ in ranked], scored, differ)
    by_pair = {frozenset((c.a, c.b)): c for c in comps}
    return [VerdictPlace(run=name, mean=s.mean if s else None, low=s.low if s else None, high=s.high if s else None,
                         place=numbers[name], groups=letters.get(name, ""), ties=_ties(name, ranked, by_pair))
            for name, s in ranked]  # fmt: skip


def _order(metric: str, summaries: dict[str, MetricSummary | None], comps: list[Comparison]) -> list[str]:
    """The runs with a mean, best first. Each step takes, among the runs left, the best by mean (ties keep the runs'
    order) of those no run left is ahead of on the questions the two both scored (the paired difference of their
    comparison); when every run left is behind another (paired differences that go round in a circle, possible only
    when the runs scored different questions), the best by mean of those no run left is significantly ahead of, else
    of all. When every run scored the same questions this is the order of the means (a paired difference is then the
    difference of the means); when they did not, a run whose own mean is higher on questions the other never scored
    is not put ahead of a run that beats it on the questions both scored."""
    sign = better(metric)
    means = {name: s.mean for name, s in summaries.items() if s is not None and s.mean is not None}
    by_mean = sorted(means, key=lambda name: -sign * means[name])
    ahead: set[tuple[str, str]] = set()  # (winner, loser) on the paired difference
    significant: set[tuple[str, str]] = set()
    for c in comps:
        gain = sign * c.delta  # > 0: b is ahead of a
        if gain:
            pair = (c.b, c.a) if gain > 0 else (c.a, c.b)
            ahead.add(pair)
            if c.significant:
                significant.add(pair)
    order: list[str] = []
    left = list(by_mean)
    while left:
        free = [r for r in left if not any((o, r) in ahead for o in left)]
        free = free or [r for r in left if not any((o, r) in significant for o in left)] or left
        order.append(free[0])
        left.remove(free[0])
    return order


def _place_numbers(ranked: list[str], scored: list[str], differ: set[frozenset[str]]) -> dict[str, int]:
    """Steps 2 and 3 of :func:`_places`: a run joins the current place unless it differs from a run already at it."""
    numbers: dict[str, int] = {}
    at: list[str] = []  # the runs at the current place
    place = 1
    for name in scored:
        if any(frozenset((name, other)) in differ for other in at):
            place, at = place + 1, []
        numbers[name] = place
        at.append(name)
    return {name: numbers.get(name, place + 1 if scored else 1) for name in ranked}


def _ties(
    name: str, ranked: list[tuple[str, MetricSummary | None]], by_pair: dict[frozenset[str], Comparison]
) -> list[str]:
    """The runs ``name`` was compared with and found not reliably different from, in the ranking's order."""
    return [other for other, _ in ranked if (c := by_pair.get(frozenset((name, other)))) and not c.significant]


def _lead(places: list[VerdictPlace], comps: list[Comparison], metric: str | None) -> VerdictLead | None:
    """The first run against the runner-up, else against the closest run it was compared with, over the questions
    both scored; None when there is no such comparison, or when the first run is behind some run it was compared
    with (paired differences that go round in a circle: no run leads). The lead is supported when the comparison is
    significant in the leader's favour."""
    if len(places) < 2 or places[0].mean is None:
        return None
    leader = places[0].run
    found = next((c for p in places[1:] if (c := _pair(comps, leader, p.run)) is not None), None)
    if found is None:
        return None
    if any(better(metric) * c.delta * (1.0 if c.b == leader else -1.0) < 0 for c in comps if leader in (c.a, c.b)):
        return None
    sign = 1.0 if found.b == leader else -1.0
    low, high = sorted((_turn(found.low, sign), _turn(found.high, sign)))
    d_z = None if found.d_z is None else _turn(found.d_z, sign)
    mine, theirs = (found.mean_b, found.mean_a) if found.b == leader else (found.mean_a, found.mean_b)
    return VerdictLead(leader=leader, other=found.a if found.b == leader else found.b, delta=_turn(found.delta, sign),
                       low=low, high=high, p_adjusted=found.p_adjusted, n=found.n,
                       supported=found.significant and better(metric) * sign * found.delta > 0, d_z=d_z,
                       leader_mean=mine, other_mean=theirs,
                       shared=found.n < max(found.n_a, found.n_b))  # fmt: skip


def _turn(value: float, sign: float) -> float:
    """A figure of a comparison seen from the leader's side (``sign`` -1: the leader is its run a); a 0 stays 0, never
    -0.0, which would print as a leader's "-0.000" over a run it ties with."""
    return sign * value + 0.0


def _figure(place: VerdictPlace) -> str:
    return f"{fmt_value(place.mean)} {fmt_interval(place.low, place.high)}".strip()


def _headline(
    result: EvalResult, metric: str | None, places: list[VerdictPlace], lead: VerdictLead | None,
    comps: list[Comparison],
) -> str:  # fmt: skip
    if metric is None or not places:
        return "No metric could be computed: nothing to compare."
    top = places[0]
    if len(places) == 1:
        summary = result.runs[0].metrics[metric]
        unscored = f" ({summary.n_unscored} unscored)" if summary.n_unscored else ""
        return (f"{top.run}: {metric} {_figure(top)} over {summary.n_scored} questions{unscored}; one run, so no "
                "comparison.")  # fmt: skip
    lower = " (lower is better)" if better(metric) < 0 else ""
    if lead is None and any(top.run in (c.a, c.b) for c in comps):  # compared, yet behind a run on shared questions
        return (f"No run leads on {metric}{lower}: each is behind another on the questions the two both scored "
                "(paired differences that go round in a circle, as runs scored on different questions can be); "
                "the ranking orders them as far as the paired differences allow.")  # fmt: skip
    if lead is None:
        best = "lowest" if lower else "highest"
        return f"{top.run} has the {best} {metric}, {_figure(top)}; the runs were not compared on it."
    gap = f"{lead.delta:+.3f} {fmt_interval(lead.low, lead.high)}"
    evidence = (  # never "the other is reliably better": the leader is not behind it on the questions both scored
        "the evidence supports the lead"
        if lead.supported
        else "the evidence does not support the lead: no reliable difference, a tie"
    )
    if lead.shared and lead.leader_mean is not None and lead.other_mean is not None:
        own = {run.name: run.metrics[metric].n_scored for run in result.runs if metric in run.metrics}
        return (f"{lead.leader} leads on {metric}{lower} on the {lead.n} questions both scored (of "
                f"{own.get(lead.leader, 0)} and {own.get(lead.other, 0)}): {fmt_value(lead.leader_mean)} against "
                f"{fmt_value(lead.other_mean)} for {lead.other}, {gap} (p adj. {fmt_p(lead.p_adjusted)}); "
                f"{evidence}.")  # fmt: skip
    return (f"{lead.leader} leads on {metric}{lower} with {_figure(top)}: {gap} over {lead.other} (p adj. "
            f"{fmt_p(lead.p_adjusted)}, n = {lead.n} questions); {evidence}.")  # fmt: skip


def _ranking(places: list[VerdictPlace], comps: list[Comparison], metric: str | None) -> str | None:
    """Every run by its mean with its letters, then what the letters mean and how many pairs were not compared."""
    if len(places) < 2:
        return None
    if not any(p.groups for p in places) and any(p.mean is not None for p in places):  # no letters: the places
        shown = ranked_runs(places, lambda p: f"{p.run} {fmt_value(p.mean)} (place {p.place})")
        return (f"Ranking on {metric}: {shown}; the significant differences cross too often for letters: runs "
                "at one place are not reliably different from each other.")  # fmt: skip
    text = ranked_runs(places, lambda p: f"{p.run} {fmt_value(p.mean)} ({p.groups or 'not ranked'})")
    lettered = [p.run for p in places if p.groups]
    compared = {frozenset((c.a, c.b)) for c in comps}
    missing = sum(frozenset(pair) not in compared for pair in itertools.combinations(lettered, 2))
    note = (f"; {missing} pair{'s' if missing != 1 else ''} not compared (--baseline, or too few questions both "
            "scored) count as not distinguished") if missing else ""  # fmt: skip
    return (f"Ranking on {metric}: {text}; runs that share a letter are not reliably different, runs that share no "
            f"letter are{note}{_apart(places, comps)}.")  # fmt: skip


def _apart(places: list[VerdictPlace], comps: list[Comparison]) -> str:
    """When some compared pair shares fewer questions than one of its runs scored: that the order and the letters
    come from the questions each pair both scored, and how many each run scored (its mean is over those)."""
    ranked = {p.run for p in places if p.mean is not None}
    counts: dict[str, int] = {}
    for c in comps:
        if {c.a, c.b} <= ranked and c.n < max(c.n_a, c.n_b):
            counts |= {c.a: c.n_a, c.b: c.n_b}
    if not counts:
        return ""
    shown = ", ".join(f"{p.run} {counts[p.run]}" for p in places if p.run in counts)
    return (
        f"; the runs scored different questions ({shown}): the order and the letters come from the paired "
        "differences on the questions each pair both scored, each mean from the run's own questions"
    )


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
    answers = f"`assay judge-check --judge {result.judge} --answers JUDGEMENTS -o card/`"
    if result.label_origin in ("human", "imported"):
        return (f"Relevance labels are the golden set's own ({result.label_origin}); the judge {result.judge} made "
                f"the answer metrics and is unmeasured: {answers} measures them against people's judgements of "
                f"answers, `assay judge-check --judge {result.judge} --labels {result.golden} -o card/` its "
                "relevance grades.", False)  # fmt: skip
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
