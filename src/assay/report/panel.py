"""Wording of the agreement between the judges of a panel, the same in the terminal, Markdown, HTML and the command
summaries of ``assay grade`` and ``build``.

The figures come from :class:`~assay.results.PanelAgreement` (computed from the votes the golden
set's labels keep); this module only words them: one summary line, one line per judge, and a table with one row per
pair of judges.
"""

from __future__ import annotations

from assay.report._format import fmt_interval, fmt_value
from assay.results import AgreementStat, JudgePairAgreement, PanelAgreement

__all__ = ["PAIR_COLUMNS", "judge_lines", "pair_rows", "panel_lines", "summary_line"]

PAIR_COLUMNS = (
    "judges",
    "pairs",
    "agreement",
    "Cohen's kappa",
    "weighted kappa (linear)",
    "kappa, relevant >= 1",
    "kappa, relevant >= 2",
    "leniency (first − second)",
)


def _stat(stat: AgreementStat | None, *, signed: bool = False) -> str:
    if stat is None or stat.value is None:
        return "—"
    value = f"{stat.value:+.3f}" if signed else fmt_value(stat.value)
    interval = fmt_interval(stat.low, stat.high)
    return f"{value} {interval}".strip()


def _share(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.1f}%)" if whole else str(part)


def summary_line(agreement: PanelAgreement) -> str:
    """Who judged, how the grades were combined, and how often the judges disagreed, with the alpha."""
    rules = "/".join(agreement.combine) or "a panel rule"
    alpha = agreement.krippendorff_alpha
    fleiss = agreement.fleiss_kappa
    text = (
        f"{len(agreement.judges)} judges ({', '.join(agreement.judges)}), combined by {rules}, on "
        f"{agreement.n_pairs} pairs: they disagree on {_share(agreement.n_disagree, agreement.n_pairs)}, all "
        f"agree on {_share(agreement.n_unanimous, agreement.n_pairs)}, "
        f"{agreement.n_no_quorum} unscored for want of a majority of scored votes; "
        f"Krippendorff's alpha (ordinal) {_stat(alpha)}"
    )
    if alpha is not None:
        text += f" (n={alpha.n})"
    if fleiss is not None:
        text += f"; Fleiss' kappa {_stat(fleiss)} (n={fleiss.n})"
    return text


def judge_lines(agreement: PanelAgreement) -> list[str]:
    """One line per judge: scored, unscored by kind, grade histogram, and against people where pairs are audited."""
    lines = []
    for judge in agreement.per_judge:
        kinds = ", ".join(f"{n} {kind}" for kind, n in judge.unscored_kinds.items())
        histogram = "/".join(str(n) for n in judge.histogram)
        line = (
            f"{judge.model}: {judge.n_scored} scored, {judge.n_unscored} unscored{f' ({kinds})' if kinds else ''}; "
            f"grades 0/1/2/3: {histogram}"
        )
        people = agreement.with_people.get(judge.model)
        if people is not None:
            line += (
                f"; against people on {people.n} audited pairs: Cohen's kappa {_stat(people.cohen_kappa)}, "
                f"weighted kappa (linear) {_stat(people.weighted_kappa_linear)}, "
                f"leniency {_stat(people.leniency, signed=True)}"
            )
        lines.append(line)
    return lines


def pair_rows(agreement: PanelAgreement) -> list[list[str]]:
    """One row per pair of judges, in :data:`PAIR_COLUMNS` order."""
    return [_pair_row(pair) for pair in agreement.pairs]


def _pair_row(pair: JudgePairAgreement) -> list[str]:
    return [
        " vs ".join(pair.judges),
        str(pair.n),
        _stat(pair.percent_agreement),
        _stat(pair.cohen_kappa),
        _stat(pair.weighted_kappa_linear),
        _stat(pair.kappa_relevant_1),
        _stat(pair.kappa_relevant_2),
        _stat(pair.leniency, signed=True),
    ]


def panel_lines(agreement: PanelAgreement) -> list[str]:
    """Everything as plain lines (command summaries): the summary, each judge, each pair of judges."""
    pairs = [
        f"{judges} on {n} pairs: agreement {agree}, kappa {kappa}, weighted kappa {weighted}, kappa >= 1 {k1}, "
        f"kappa >= 2 {k2}, leniency {leniency}"
        for judges, n, agree, kappa, weighted, k1, k2, leniency in pair_rows(agreement)
    ]
    return [summary_line(agreement), *judge_lines(agreement), *pairs]
