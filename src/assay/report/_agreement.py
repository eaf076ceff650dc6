"""Shared wording of the judge-versus-human agreement and the audit-size figures, for all three reports.

The numbers come from :class:`~assay.results.AgreementSummary` (computed by the evaluator from
the same audited pairs that correct the metrics) and from each
:class:`~assay.results.CorrectedMetric`'s ``audit_targets``; this module only words them, the same
way in the terminal, Markdown and HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.report._format import fmt_interval, fmt_value
from assay.results import (
    AgreementBlock,
    AgreementStat,
    AgreementSummary,
    CorrectedMetric,
    EvalResult,
)

__all__ = [
    "CRITERION_STATISTIC",
    "STATS",
    "STRATUM_STATS",
    "StatRow",
    "audit_cell",
    "human_rows",
    "not_audited",
    "stat_rows",
    "stat_text",
    "summary_line",
]

# a judged criterion's agreement statistic (CriterionAgreement.statistic), named for readers
CRITERION_STATISTIC = {"kappa": "Cohen's kappa", "weighted_kappa": "weighted kappa (quadratic)"}

STATS = {
    "percent_agreement": "percent agreement",
    "cohen_kappa": "Cohen's kappa",
    "weighted_kappa_linear": "weighted kappa (linear)",
    "weighted_kappa_quadratic": "weighted kappa (quadratic)",
    "krippendorff_alpha": "Krippendorff's alpha (ordinal)",
    "leniency": "leniency (judge − human grade)",
}
STRATUM_STATS = {
    "percent_agreement": "agreement",
    "cohen_kappa": "kappa",
    "weighted_kappa_quadratic": "quadratic kappa",
    "krippendorff_alpha": "alpha",
    "leniency": "leniency",
}


@dataclass(frozen=True)
class StatRow:
    """One statistic as text: its label, value, interval (empty when none) and the items it is over."""

    label: str
    value: str
    interval: str
    n: int


def _signed(stat: AgreementStat | None, key: str) -> str:
    if stat is None or stat.value is None:
        return "—"
    if key != "leniency":
        return fmt_value(stat.value)
    text = f"{stat.value:+.3f}"
    return "+0.000" if text == "-0.000" else text


def stat_text(block: AgreementBlock, key: str) -> tuple[str, str]:
    """(value, interval) of the statistic ``key`` of ``block``; leniency is signed, in grade units."""
    stat: AgreementStat | None = getattr(block, key)
    interval = "" if stat is None else fmt_interval(stat.low, stat.high)
    return _signed(stat, key), interval


def stat_rows(block: AgreementBlock) -> list[StatRow]:
    """Every judge-versus-human statistic of ``block`` as a row."""
    return [StatRow(label, *stat_text(block, key), block.n) for key, label in STATS.items()]


def human_rows(summary: AgreementSummary) -> list[StatRow]:
    """Agreement between annotators (empty with fewer than two): alpha, and Fleiss' kappa with more than two."""
    humans = summary.between_humans
    if humans is None:
        return []
    alpha = humans.krippendorff_alpha
    rows = [
        StatRow("Krippendorff's alpha (ordinal)", fmt_value(alpha.value), fmt_interval(alpha.low, alpha.high), alpha.n)
    ]
    if len(humans.annotators) > 2:
        fleiss = humans.fleiss_kappa
        if fleiss is None:
            rows.append(StatRow("Fleiss' kappa", "—", "no item graded by every annotator", 0))
        else:
            rows.append(
                StatRow("Fleiss' kappa", fmt_value(fleiss.value), fmt_interval(fleiss.low, fleiss.high), fleiss.n)
            )
    return rows


def summary_line(summary: AgreementSummary) -> str:
    """``Judge vs human on 50 audited items (alice, bob); 2 left unscored by the judge, not counted.``"""
    people = f" ({', '.join(summary.annotators)})" if summary.annotators else ""
    line = f"Judge vs human on {summary.overall.n} audited items{people}"
    if summary.overall.n_unscored:
        line += f"; {summary.overall.n_unscored} left unscored by the judge, not counted"
    return line + "."


def not_audited(result: EvalResult) -> str | None:
    """The one line shown when no judge label has a human grade, naming the command that audits them; None when the
    golden set has no judge label at all (labelled by people: nothing to audit, so no agreement section)."""
    if result.label_origin in ("human", "imported", "none"):
        return None
    if result.label_origin == "mixed" and result.settings.get("add_labels") is False:
        return (
            "No judge label has a human grade, so no judge-vs-human agreement and no corrected metrics. The judge "
            "labels of this evaluation were not saved (--no-add-labels): to audit a sample of them, evaluate "
            f"without it, then run `assay audit {result.golden}`."
        )
    if result.label_origin == "mixed":
        return (
            f"No judge label has a human grade yet, so no judge-vs-human agreement and no corrected metrics: audit "
            f"a sample of the judge's labels with `assay audit {result.golden}`, then evaluate again."
        )
    return (
        f"No human labels in this evaluation, so no judge-vs-human agreement and no corrected metrics: audit a "
        f"sample of the judge's labels with `assay audit {result.golden}`, then evaluate again."
    )


def labels_line(result: EvalResult) -> str | None:
    """``3,114 human`` or ``2,950 human, 164 judge (mixed)``: the golden set's labels by provenance source after
    this evaluation; None for results that do not record them."""
    if not result.label_sources:
        return None
    counts = ", ".join(f"{n:,} {source}" for source, n in result.label_sources.items())
    return counts + (" (mixed)" if result.label_origin == "mixed" else "")


def audit_cell(item: CorrectedMetric) -> str:
    """``audit ~120 more pairs for ±0.050 · audit ~530 more pairs for ±0.025``; a reached target reads
    ``±0.050 reached``; a target without an estimate says why."""
    parts = []
    for target in item.audit_targets:
        width = f"±{target.half_width:.3f}"
        if target.n_more is None:
            parts.append(f"{width}: {target.note or 'no estimate'}")
        elif target.n_more == 0:
            parts.append(f"{width} reached")
        else:
            parts.append(f"audit ~{target.n_more:,} more pairs for {width}")
    return " · ".join(parts) or "—"
