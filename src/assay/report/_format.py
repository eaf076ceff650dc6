"""Shared wording and number formatting for the terminal, Markdown and HTML reports.

Every report says the same things the same way: a mean with its interval, how many queries were scored and how many
were not (and why), the run counts worth a warning, judged@k, and a plain sentence for each comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from assay.results import (
    Comparison,
    EvalResult,
    JudgeCardSummary,
    MetricSummary,
    RunCounts,
    RunResult,
    VerdictPlace,
)
from assay.results import headline_k as results_headline_k
from assay.results import headline_metrics as results_headline_metrics

__all__ = [
    "NO_JUDGE",
    "RANKED",
    "CountNote",
    "all_metrics",
    "by_metric",
    "by_pair",
    "comparison_intro",
    "confidence_label",
    "correction_label",
    "count_notes",
    "fmt_bound",
    "fmt_delta",
    "fmt_effect",
    "fmt_interval",
    "fmt_judged",
    "fmt_level",
    "fmt_mc",
    "fmt_mean",
    "fmt_p",
    "fmt_passages",
    "fmt_share",
    "fmt_unscored",
    "fmt_value",
    "headline_k",
    "headline_metrics",
    "judge_label",
    "ranked_runs",
    "short_verdict",
    "strata_metrics",
    "verdict_text",
]

NO_JUDGE = "no judge: trec_eval convention (unjudged = not relevant)"


@dataclass(frozen=True)
class CountNote:
    """A run count worth showing: its label, its value, and whether it is a warning (else information)."""

    label: str
    value: int
    warning: bool


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))


def by_pair(comparisons: Iterable[Comparison]) -> list[list[Comparison]]:
    """The comparisons grouped by pair of runs ``(a, b)``: pairs in first-seen order, each group in the order given."""
    groups: dict[tuple[str, str], list[Comparison]] = {}
    for comparison in comparisons:
        groups.setdefault((comparison.a, comparison.b), []).append(comparison)
    return list(groups.values())


def by_metric(comparisons: Iterable[Comparison]) -> list[list[Comparison]]:
    """The comparisons grouped by metric (one family each): the primary metric first, then first-seen order."""
    groups: dict[str, list[Comparison]] = {}
    for comparison in sorted(comparisons, key=lambda c: not c.primary):
        groups.setdefault(comparison.metric, []).append(comparison)
    return list(groups.values())


def all_metrics(result: EvalResult) -> list[str]:
    """Every metric name of every run, in the order the evaluator wrote them (first run first)."""
    return _unique(name for run in result.runs for name in run.metrics)


def headline_k(result: EvalResult) -> int | None:
    """The cut-off shown in summaries (:func:`assay.results.headline_k` holds the rule)."""
    return results_headline_k(result.k_values)


def headline_metrics(result: EvalResult) -> list[str]:
    """The metrics a summary shows (:func:`assay.results.headline_metrics` holds the rule; the
    metrics named in the settings, by ``-m`` or ``--fail-under``, are shown too)."""
    named = [*(result.settings.get("metrics") or ()), *(result.settings.get("also") or ())]
    return results_headline_metrics(all_metrics(result), result.k_values, named)


def strata_metrics(run: RunResult, wanted: list[str]) -> list[str]:
    """The metrics of ``wanted`` that appear in any stratum of ``run`` (in ``wanted``'s order), else all of them."""
    present = _unique(m for values in run.strata.values() for summaries in values.values() for m in summaries)
    chosen = [m for m in wanted if m in present]
    return chosen or present


def fmt_value(value: float | None, digits: int = 3) -> str:
    """A metric value with ``digits`` decimals; None (no value) as an em dash; a value that rounds to zero from
    below shows as 0, not -0."""
    if value is None:
        return "—"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def fmt_mean(summary: MetricSummary) -> str:
    """The mean, or ``unscored`` when no query could be scored."""
    return "unscored" if summary.mean is None else fmt_value(summary.mean)


def fmt_interval(low: float | None, high: float | None) -> str:
    """``[0.501, 0.705]``, or an empty string when there is no interval."""
    if low is None or high is None:
        return ""
    return f"[{fmt_value(low)}, {fmt_value(high)}]"


def fmt_unscored(summary: MetricSummary) -> str:
    """``2 unscored (timeout 1, invalid_output 1)``; ``0 unscored`` when all were scored.

    Reasons are listed most frequent first; a count that the reasons do not add up to is shown as ``unknown``.
    """
    if summary.n_unscored == 0:
        return "0 unscored"
    reasons = sorted(summary.unscored_reasons.items(), key=lambda item: (-item[1], item[0]))
    missing = summary.n_unscored - sum(count for _, count in reasons)
    if missing > 0:
        reasons.append(("unknown", missing))
    listed = ", ".join(f"{reason} {count}" for reason, count in reasons)
    return f"{summary.n_unscored} unscored ({listed})"


def fmt_p(p_value: float) -> str:
    """A p-value with three decimals, or ``<0.001``."""
    return "<0.001" if p_value < 0.001 else f"{p_value:.3f}"


def fmt_share(share: float | None) -> str:
    """A share as a whole percentage (``97%``); None as an em dash."""
    return "—" if share is None else f"{100 * share:.0f}%"


def fmt_judged(run: RunResult) -> str:
    """``judged@1 100% · judged@3 97% · ...`` in k order, or an empty string when not measured."""
    items = sorted(run.judged_at_k.items(), key=lambda item: int(item[0]) if item[0].isdigit() else 0)
    return " · ".join(f"judged@{k} {fmt_share(share)}" for k, share in items)


def fmt_passages(run: RunResult) -> str:
    """How a run's passages were matched and labelled, and their length, when the run names passages by text or
    offsets (``passages: 120 exact · 30 approximate · 3 unmatched; labels: ...; length median 600 chars``); an
    empty string for a run of golden chunk ids only."""
    by_id_only = set(run.counts.matched_by) <= {"id"} and set(run.passage_labels) <= {"chunk"}
    if by_id_only:
        return ""
    matched = " · ".join(f"{n} {'by id' if how == 'id' else how}" for how, n in run.counts.matched_by.items())
    words = {"chunk": "golden chunk", "rule": "carried over", "stored": "judged before", "judged": "judged now"}
    labels = " · ".join(f"{n} {words.get(how, how)}" for how, n in sorted(run.passage_labels.items()))
    sizes = run.passage_lengths
    length = (f"; length median {sizes['median']:.0f} chars (p25 {sizes['p25']:.0f}, p75 {sizes['p75']:.0f})"
              if sizes else "")  # fmt: skip
    return f"passages: {matched}; labels of the top k: {labels}{length}"


def confidence_label(result: EvalResult) -> str:
    """``95%`` from ``settings["confidence"]`` (default 0.95), for interval headers."""
    level = result.settings.get("confidence", 0.95)
    return f"{100 * level:g}%" if isinstance(level, int | float) else "95%"


def judge_label(result: EvalResult) -> str:
    """The judge model, or the trec_eval convention when the evaluation ran without a judge."""
    return result.judge or NO_JUDGE


_EMPTY_LISTS = "empty retrieved lists"
_WARN_COUNTS = (
    ("unknown_query_ids", "unknown query ids"),
    ("unknown_chunk_ids", "unknown chunk ids"),
    ("duplicate_ids", "duplicate ids"),
    ("empty_retrieved", _EMPTY_LISTS),
    ("missing_queries", "golden questions missing from the run"),
    ("failed", "questions the system failed on (0 on recall-type answer measures, else unscored)"),
    ("empty_answers", "empty answers (0 on recall-type answer measures, else unscored)"),
    ("unmatched_rows", "RAGAS rows matching no golden question"),
)


def count_notes(counts: RunCounts) -> list[CountNote]:
    """The non-zero counts worth a warning, then the labels judged during this evaluation and the context turns read
    (information)."""
    notes = [CountNote(label, getattr(counts, field), True) for field, label in _WARN_COUNTS]
    notes = [note for note in notes if note.value and not (counts.passage_free and note.label == _EMPTY_LISTS)]
    if counts.passage_free:  # an answer-only run: its empty lists are no retrieval failure
        notes.append(CountNote("answers with no passages (ranking, budget and passage measures unscored)",
                               counts.queries_evaluated - counts.failed, False))  # fmt: skip
    if counts.labels_judged_now:
        notes.append(CountNote("labels judged now", counts.labels_judged_now, False))
    if counts.context_turns:
        notes.append(CountNote("context turns asked for the history (not scored)", counts.context_turns, False))
    return notes


def correction_label(comparison: Comparison) -> str:
    """What a comparison's p and interval were corrected over: ``Holm over 3 pairs``, ``Tukey HSD over 3 pairs``,
    ``unadjusted``; results format 1 (Holm across the metrics of one pair) says so."""
    if comparison.family_size == 0:
        return "Holm across the metrics of the pair (results format 1)"
    if comparison.correction == "none":
        return "unadjusted"
    name = {"holm": "Holm", "tukey": "Tukey HSD"}.get(comparison.correction, comparison.correction)
    return f"{name} over {comparison.family_size} pair{'s' if comparison.family_size != 1 else ''}"


def comparison_intro(result: EvalResult) -> str:
    """One paragraph: the test, the family, the correction, and how the interval relates to the verdict."""
    if not result.comparisons:
        return ""
    first = result.comparisons[0]
    if first.family_size == 0:
        return "Paired randomization test per metric; p adjusted by Holm across the metrics of a pair (format 1)."
    baseline = result.settings.get("baseline")
    pairs = f"each run against {baseline}" if isinstance(baseline, str) else "every pair of runs"
    correction = {"holm": "Holm's step-down", "tukey": "randomized Tukey HSD", "none": "no correction"}
    lead = result.primary_metric
    primary = f" The primary metric, {lead}, leads; the others are secondary." if lead else ""
    how = {
        "holm": "the inverted randomization test at the level of the Holm step that decided it (interval level)",
        "tukey": "simultaneous over the family, from the same randomization distribution of the largest gap",
    }
    interval = (
        f"The interval beside each verdict is adjusted in the same family ({how[first.correction]}), so it "
        "excludes 0 exactly when the difference is significant."
        if first.correction in how
        else "Intervals and p are unadjusted (no correction over the pairs); an interval excludes 0 exactly when p "
        "is significant."
    )
    return (
        f"Paired randomization tests over the queries both runs scored. One family per metric: {pairs}, corrected by "
        f"{correction.get(first.correction, first.correction)} within the family (metrics are not pooled).{primary} "
        f"{interval} p is the pair's own (unadjusted) p; p adj. is the family-adjusted one."
    )


def fmt_bound(value: float) -> str:
    """An interval bound with 3 decimals; a non-zero bound that would show as 0.000 keeps two significant digits
    (so a significant interval never reads as touching 0)."""
    return fmt_value(value) if value == 0 or abs(value) >= 0.0005 else f"{value:.1e}"


def fmt_delta(comparison: Comparison) -> str:
    """``+0.052 [0.013, 0.091]``: the mean difference b - a with its family-adjusted interval."""
    return f"{comparison.delta:+.3f} [{fmt_bound(comparison.low)}, {fmt_bound(comparison.high)}]"


def fmt_effect(comparison: Comparison) -> str:
    """``d_z 0.41 · 12/30/8`` (standardized effect; wins/ties/losses of b against a)."""
    d_z = "—" if comparison.d_z is None else f"{comparison.d_z:+.2f}"
    return f"d_z {d_z} · {comparison.wins}/{comparison.ties}/{comparison.losses}"


def fmt_mc(comparison: Comparison) -> str:
    """``exact`` or ``B = 12,000, MC se 0.0012``: how the p-value was drawn and its Monte Carlo error."""
    if comparison.exact:
        return "exact"
    if not comparison.resamples:
        return ""
    return f"B = {comparison.resamples:,}, MC se {comparison.p_mc_error or 0:.4f}"


def fmt_level(comparison: Comparison) -> str:
    """``98.3%``: the confidence of the comparison's adjusted interval (empty when not recorded)."""
    level = comparison.interval_confidence
    return "" if level is None else f"{100 * level:.3g}%"


def short_verdict(comparison: Comparison) -> str:
    """The verdict in a few words (the row already shows the delta, its interval and p)."""
    if not comparison.significant:
        return "no reliable difference"
    return f"{comparison.b if comparison.delta > 0 else comparison.a} better"


def verdict_text(comparison: Comparison) -> str:
    """The evaluator's verdict sentence, or one written from the numbers when it left the verdict empty."""
    if comparison.verdict.strip():
        return comparison.verdict
    label = correction_label(comparison)
    if not comparison.significant:
        return (
            f"No reliable difference between {comparison.b} and {comparison.a} on {comparison.metric} "
            f"(p adj. = {fmt_p(comparison.p_adjusted)}, {label})."
        )
    better, worse = (comparison.b, comparison.a) if comparison.delta > 0 else (comparison.a, comparison.b)
    return (
        f"{better} is better than {worse} on {comparison.metric} by {abs(comparison.delta):.3f} "
        f"(p adj. = {fmt_p(comparison.p_adjusted)}, {label})."
    )


def judge_card_lines(result: EvalResult) -> list[str]:
    """The judge card beside the metrics: its headline figures (with where it came from and any note), or the plain
    statement that the judge in use has none; then the same for each other judge of a panel; nothing without a
    judge."""
    cards = [result.judge_card] if result.judge_card is not None else []
    return [line for card in [*cards, *result.panel_cards] for line in _card_lines(card)]


def _card_lines(card: JudgeCardSummary) -> list[str]:
    if not card.found:
        return [card.note or f"no judge card for this judge (looked in {card.where})"]
    figures = "; ".join(f"{label}: {value}" for label, value in card.figures.items())
    lines = [f"judge card of {card.model} ({card.created}, {card.where}): {figures}"]
    return lines + ([card.note] if card.note else [])


RANKED = 8  # runs named in a ranking sentence; the rest are counted


def ranked_runs(places: Sequence[VerdictPlace], cell: Callable[[VerdictPlace], str]) -> str:
    """The first :data:`RANKED` places as ``cell`` writes each, comma-separated, then how many more there are."""
    shown = ", ".join(cell(p) for p in places[:RANKED])
    return shown + (f" … and {len(places) - RANKED} more" if len(places) > RANKED else "")
