"""``report.md``: the evaluation as Markdown tables, for a pull request, a wiki or a terminal pager.

The verdict first (:mod:`assay.report.verdict`), then the content of the terminal's ``--verbose`` output, with every
metric (not only the headline ones) and a per-stratum table for each stratum field of each run. Text from the data is
escaped so that it can neither break a table (``|``, line breaks) nor be read as Markdown or raw HTML (``<script>``
stays text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from assay.formats.atomic import atomic_write_text
from assay.report import _agreement as agr
from assay.report import _diagnosis as diag
from assay.report import _format as fmt
from assay.report import _planning as plan
from assay.report import _system as sysr
from assay.report import panel as pn
from assay.report._conversations import conversation_lines
from assay.report._statistics import noise_lines
from assay.report._trajectory import trajectory_lines
from assay.report.verdict import build_verdict, primary_metric
from assay.results import AgreementBlock, Comparison, EvalResult, MetricSummary, RunResult

__all__ = ["md_escape", "render_markdown", "write_markdown"]

# "_" is left alone: inside a word it cannot start emphasis, and metric names are full of it.
_SPECIAL = re.compile(r"([\\`*\[\]<>|#~!])")


def md_escape(text: str) -> str:
    """Backslash-escape the characters Markdown (and its raw-HTML pass-through) would interpret; fold line breaks."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "") -> list[str]:
    """A Markdown table; ``align`` has one letter per column (``l``/``r``), left when missing."""
    marks = [("---:" if align[i : i + 1] == "r" else "---") for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, ""]


def render_markdown(result: EvalResult) -> str:
    """The whole report as one Markdown string."""
    lines = [*_header(result)]
    for run in result.runs:
        lines += _run_section(result, run)
    lines += _comparisons(result)
    lines += _noise(result)
    lines += _conversations(result)
    lines += _trajectories(result)
    lines += _preferences(result)
    lines += _criterion_labels(result)
    lines += _planning(result)
    lines += _diagnosis(result)
    lines += _agreement(result)
    lines += _judges(result)
    lines += _corrected(result)
    lines += _usage(result)
    lines += _system(result)
    return "\n".join(lines).rstrip() + "\n"


def write_markdown(result: EvalResult, path: str | Path) -> None:
    """Write :func:`render_markdown` to ``path`` atomically (nothing half-written is ever left)."""
    atomic_write_text(path, render_markdown(result))


def _header(result: EvalResult) -> list[str]:
    ks = ", ".join(str(k) for k in result.k_values) or "none"
    runs = ", ".join(md_escape(run.name) for run in result.runs)
    lines = [
        "# assay evaluation report",
        "",
        *_verdict(result),
        f"- **judge:** {md_escape(result.judge)}" if result.judge else f"- **{md_escape(fmt.NO_JUDGE)}**",
        *(f"- **judge card:** {md_escape(line)}" for line in fmt.judge_card_lines(result)),
        f"- **golden set:** {md_escape(result.golden)}",
        f"- **runs:** {runs}",
        f"- **k:** {ks} · intervals: {fmt.confidence_label(result)} bootstrap",
        *([f"- **labels:** {md_escape(labels)}"] if (labels := agr.labels_line(result)) else []),
        f"- **assay:** {md_escape(result.assay_version)} (results format {result.format_version})",
        "",
        "Means are over scored queries only; unscored queries are counted beside every mean, never averaged in as 0.",
        "",
    ]
    if result.warnings:
        lines += ["## Warnings", "", *(f"- {md_escape(w)}" for w in result.warnings), ""]
    return lines


def _verdict(result: EvalResult) -> list[str]:
    """The verdict block: its sentences as a list, then the caveats."""
    verdict = build_verdict(result)
    lines = ["## Verdict", "", *(f"- {md_escape(line)}" for line in verdict.lines), ""]
    if verdict.caveats:
        lines += ["Caveats:", "", *(f"- {md_escape(line)}" for line in verdict.caveats), ""]
    return [*lines, "## Settings", ""]


def _summary_cells(summary: MetricSummary) -> list[str]:
    unscored = md_escape(fmt.fmt_unscored(summary)) if summary.n_unscored else "0"
    return [
        fmt.fmt_mean(summary),
        fmt.fmt_interval(summary.low, summary.high),
        str(summary.n_scored),
        unscored,
    ]


def _run_section(result: EvalResult, run: RunResult) -> list[str]:
    lines = [f"## Run: {md_escape(run.name)}", "", f"File: {md_escape(run.path)}", ""]
    c = run.counts
    lines += [
        f"{c.queries_evaluated} queries evaluated from {c.lines} lines; {c.with_answer} with an answer.",
        "",
    ]
    notes = fmt.count_notes(run.counts)
    lines += [f"- {'**warning:** ' if n.warning else ''}{n.value} {n.label}" for n in notes]
    judged = fmt.fmt_judged(run)
    lines += [*([""] if notes else []), *([f"Label completeness: {judged}", ""] if judged else [])]
    passages = fmt.fmt_passages(run)
    lines += [md_escape(passages[0].upper() + passages[1:]), ""] if passages else []
    rows = [[md_escape(name), *_summary_cells(summary)] for name, summary in run.metrics.items()]
    header = ["metric", "mean", f"{fmt.confidence_label(result)} interval", "scored", "unscored (why)"]
    lines += ["### Metrics", "", *_table(header, rows, "lrlrl")]
    for field, values in run.strata.items():
        lines += _stratum_table(result, run, field, values)
    return lines


def _stratum_cell(summary: MetricSummary | None) -> str:
    if summary is None:
        return "—"
    cell = f"{fmt.fmt_mean(summary)} {fmt.fmt_interval(summary.low, summary.high)} n={summary.n_scored}".strip()
    if summary.n_unscored:
        cell += f", {md_escape(fmt.fmt_unscored(summary))}"
    return cell


def _stratum_table(
    result: EvalResult, run: RunResult, field: str, values: dict[str, dict[str, MetricSummary]]
) -> list[str]:
    metrics = fmt.strata_metrics(run, fmt.headline_metrics(result))
    header = ["metric", *(f"{md_escape(field)} = {md_escape(value)}" for value in values)]
    rows = [[md_escape(m), *(_stratum_cell(values[v].get(m)) for v in values)] for m in metrics]
    return [f"### By {md_escape(field)}", "", *_table(header, rows)]


def _comparisons(result: EvalResult) -> list[str]:
    """The primary metric's family first, then each secondary metric's family; the wording of _format."""
    if not result.comparisons:
        return []
    lines = ["## Comparisons", "", md_escape(fmt.comparison_intro(result)), ""]
    for comps in fmt.by_metric(result.comparisons):
        first = comps[0]
        role = "primary metric" if first.primary else "secondary metric"
        title = f"### {md_escape(first.metric)} ({role}): {md_escape(fmt.correction_label(first))}"
        lines += [title, "", *_table(*_comparison_rows(comps), "lrlrrrrrll")]
    return lines


def _noise(result: EvalResult) -> list[str]:
    """How the noise was counted (:mod:`assay.report._statistics`): clusters, repeats, the judge asked again."""
    lines = noise_lines(result, primary_metric(result))
    return ["## What the intervals count", "", *(f"- {md_escape(line)}" for line in lines), ""] if lines else []


def _conversations(result: EvalResult) -> list[str]:
    """The conversations (:mod:`assay.report._conversations`): measures per run, history gain."""
    lines = conversation_lines(result)
    return ["## Conversations", "", *(f"- {md_escape(line)}" for line in lines), ""] if lines else []


def _trajectories(result: EvalResult) -> list[str]:
    """The trajectories (:mod:`assay.report._trajectory`): each run's paths, the differences between runs."""
    lines = trajectory_lines(result)
    return ["## Trajectories", "", *(f"- {md_escape(line)}" for line in lines), ""] if lines else []


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _preferences(result: EvalResult) -> list[str]:
    """``--pairwise``: each pair's wins, ties and losses, the judge's consistency across orders and first-position
    rate, the model's probability with its interval; then the Bradley-Terry strengths."""
    found = result.preferences
    if found is None:
        return []
    intro = (f"Criterion {md_escape(found.ref)}; each pair of answers judged in both orders, {md_escape(found.ties)}. "
             f"Bradley-Terry over {found.questions} questions in {found.clusters} clusters; P(A preferred) with its "
             f"{found.pair_confidence:.1%} interval (adjusted for {len(found.pairs)} pairs).")  # fmt: skip
    header = ["A", "B", "wins", "ties", "losses", "unscored", "P(A preferred)", "same in both orders",
              "first position chosen", "verdict"]  # fmt: skip
    rows = [[md_escape(p.run_a), md_escape(p.run_b), str(p.wins), str(p.ties), str(p.losses), str(p.unscored),
             f"{p.prob:.2f} [{p.low:.2f}, {p.high:.2f}]", _rate(p.consistency), _rate(p.first_position),
             md_escape(f"{p.better} preferred" if p.better else "not told apart")] for p in found.pairs]  # fmt: skip
    strengths = [[md_escape(s.run), f"{s.strength:+.3f} [{s.low:+.3f}, {s.high:+.3f}]"] for s in found.strengths]
    return ["## Pairwise preferences", "", intro, "", *_table(header, rows, "llrrrrrrrl"),
            *_table(["run", f"strength (log scale, {found.confidence:.0%} interval)"], strengths, "lr")]  # fmt: skip


def _criterion_labels(result: EvalResult) -> list[str]:
    """How often each judged criterion's labels were given, per run (the verdicts are in results.json)."""
    if not result.criterion_verdicts:
        return []
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for v in result.criterion_verdicts:
        label = v.label if v.label is not None else f"unscored ({v.unscored})"
        mine = counts.setdefault((v.ref, v.run), {})
        mine[label] = mine.get(label, 0) + 1
    rows = [[md_escape(ref), md_escape(run), md_escape(", ".join(f"{k} {n}" for k, n in sorted(given.items())))]
            for (ref, run), given in counts.items()]  # fmt: skip
    return ["## Judged criteria", "", "Labels given per run (each verdict, its reason and votes: results.json, "
            "criterion_verdicts; criteria.csv).", "", *_table(["criterion", "run", "labels"], rows, "lll"),
            *_criterion_agreement(result)]  # fmt: skip


def _left(unscored: int) -> str:
    return f" (and {unscored} audited items the judge left unscored, not compared)" if unscored else ""


def _criterion_agreement(result: EvalResult) -> list[str]:
    """Each judged criterion against people (``assay audit --criteria``): the agreement with its interval, the
    confusion matrix, and each run's PPI-corrected mean."""
    lines: list[str] = []
    for one in result.criterion_agreement:
        state = "validated" if one.validated else f"not validated: {one.n} of {one.needed} items audited"
        k, pct, name = one.kappa, one.percent, agr.CRITERION_STATISTIC[one.statistic]
        lines += [f"### criterion:{md_escape(one.criterion)} against people ({state})", "",
                  f"{name} {fmt.fmt_value(k.value)} {fmt.fmt_interval(k.low, k.high)}, exact "
                  f"agreement {fmt.fmt_value(pct.value)} {fmt.fmt_interval(pct.low, pct.high)}, on {one.n} audited "
                  f"items{_left(one.judge_unscored)}.", ""]  # fmt: skip
        header = ["judge \\ people", *(md_escape(label) for label in one.labels)]
        rows = [[md_escape(label), *(str(c) for c in counts)] for label, counts in zip(one.labels, one.confusion,
                                                                                     strict=True)]  # fmt: skip
        lines += _table(header, rows, "l" + "r" * len(one.labels))
        if one.ppi:
            ppi_rows = [[md_escape(c.run), fmt.fmt_value(c.judge_only),
                         f"{fmt.fmt_value(c.estimate)} {fmt.fmt_interval(c.low, c.high)}", str(c.n_audited),
                         str(c.n_unaudited)] for c in one.ppi]  # fmt: skip
            lines += _table(["run", "judge only", "PPI-corrected mean", "audited", "not audited"], ppi_rows, "lrrrr")
    return lines


def _planning(result: EvalResult) -> list[str]:
    """The planning's intro and every sentence (:mod:`assay.report._planning`)."""
    lines = plan.planning_lines(result)
    if not lines:
        return []
    return ["## Planning", "", md_escape(lines[0]), "", *(f"- {md_escape(line)}" for line in lines[1:]), ""]


def _diagnosis(result: EvalResult) -> list[str]:
    """RAGChecker's modules per run, the strongest differences, and example claims per failure category."""
    if not diag.has_diagnosis(result):
        return []
    level = fmt.confidence_label(result)
    intro = f"Claim-level metrics (RAGChecker), mean [{level} interval]; ↑ higher is better, ↓ lower is better."
    header = ["module", "metric", *(md_escape(run.name) for run in result.runs)]
    rows = [
        [row.module, f"{row.arrow} {row.label}", *(_summary_text(s) for s in row.summaries)]
        for row in diag.module_rows(result)
    ]
    lines = ["## Diagnosis", "", intro, "", *_table(header, rows, "ll" + "r" * len(result.runs))]
    found = diag.differences(result)
    if found:
        lines += ["### Strongest differences", ""]
        for item in found:
            c = item.comparison
            verdict = f"{md_escape(item.better)} better" if item.better else "no reliable difference"
            lines.append(f"- {md_escape(c.b)} − {md_escape(c.a)}, {item.label}: {c.delta:+.3f} "
                         f"{fmt.fmt_interval(c.low, c.high)}, p adj. {fmt.fmt_p(c.p_adjusted)}: {verdict}")  # fmt: skip
        lines.append("")
    for group in diag.example_groups(result):
        lines += [f"### {md_escape(group.run)}: {group.title}", ""]
        for e in group.examples:
            chunk = f" Chunk {md_escape(e.chunk_id)}: {md_escape((e.chunk_text or '')[:200])}" if e.chunk_id else ""
            lines.append(f"- {md_escape(e.query_id)}, claim: {md_escape(e.claim)} — {md_escape(e.verdict)}. "
                         f"Judge: {md_escape(e.reason)}.{chunk}")  # fmt: skip
        lines.append("")
    return lines


def _summary_text(summary: MetricSummary | None) -> str:
    if summary is None:
        return "—"
    return f"{fmt.fmt_mean(summary)} {fmt.fmt_interval(summary.low, summary.high)}".strip()


def _comparison_rows(comps: list[Comparison]) -> tuple[list[str], list[list[str]]]:
    header = ["b vs a", "n", "b − a [adjusted interval]", "d_z", "wins/ties/losses", "p (unadjusted)", "p adj."]
    header += ["interval level", "randomization", "verdict"]
    rows = [
        [
            f"{md_escape(c.b)} vs {md_escape(c.a)}",
            str(c.n),
            fmt.fmt_delta(c),
            "—" if c.d_z is None else f"{c.d_z:+.2f}",
            f"{c.wins}/{c.ties}/{c.losses}",
            md_escape(fmt.fmt_p(c.p_value)),
            f"**{md_escape(fmt.fmt_p(c.p_adjusted))}**" if c.significant else md_escape(fmt.fmt_p(c.p_adjusted)),
            fmt.fmt_level(c),
            md_escape(fmt.fmt_mc(c)),
            md_escape(fmt.verdict_text(c)),
        ]
        for c in comps
    ]
    return header, rows


def _corrected(result: EvalResult) -> list[str]:
    if not result.corrected:
        return []
    header = ["run", "metric", "judge only", "corrected (PPI++)", "interval", "human labels only", "λ", "audited"]
    header.append("for a tighter interval")
    rows = [
        [
            md_escape(c.run),
            md_escape(c.metric),
            fmt.fmt_value(c.judge_only),
            fmt.fmt_value(c.estimate),
            fmt.fmt_interval(c.low, c.high),
            fmt.fmt_interval(c.classical_low, c.classical_high) or "—",
            fmt.fmt_value(c.lambda_, 2),
            f"{c.n_audited} of {c.n_audited + c.n_unaudited}",
            md_escape(agr.audit_cell(c)),
        ]
        for c in result.corrected
    ]
    intro = (
        "Judge means corrected with human audit labels by prediction-powered inference. The last column is the "
        "PPI++ sample size for a narrower interval, from the spread and judge-human correlation of the audited pairs."
    )
    return ["## Corrected metrics", "", intro, "", *_table(header, rows, "llrrllrrl")]


def _agreement(result: EvalResult) -> list[str]:
    summary = result.agreement
    if summary is None:
        advice = agr.not_audited(result)
        return [] if advice is None else ["## Judge vs human", "", md_escape(advice), ""]
    lines = ["## Judge vs human", "", md_escape(agr.summary_line(summary)), ""]
    rows = [[md_escape(r.label), r.value, r.interval, str(r.n)] for r in agr.stat_rows(summary.overall)]
    level = fmt.confidence_label(result)
    lines += _table(["statistic", "value", f"{level} bootstrap interval", "items"], rows, "lrlr")
    lines += _matrix(summary.overall)
    humans = agr.human_rows(summary)
    if humans and summary.between_humans is not None:
        names = ", ".join(md_escape(name) for name in summary.between_humans.annotators)
        rows = [[md_escape(r.label), r.value, md_escape(r.interval), str(r.n)] for r in humans]
        lines += [f"### Between annotators ({names})", "", *_table(["statistic", "value", "interval", "items"], rows)]
    for field, blocks in summary.strata.items():
        lines += _agreement_strata(field, blocks)
    return lines


def _judges(result: EvalResult) -> list[str]:
    """Agreement between the judges of a panel: the summary, each judge, a table with a row per pair of judges."""
    agreement = result.judges
    if agreement is None:
        return []
    lines = ["## Judges", "", md_escape(pn.summary_line(agreement)), ""]
    lines += [f"- {md_escape(line)}" for line in pn.judge_lines(agreement)]
    rows = [[md_escape(cell) for cell in row] for row in pn.pair_rows(agreement)]
    return [*lines, "", *_table(list(pn.PAIR_COLUMNS), rows, "lrrrrrrr")]


def _matrix(block: AgreementBlock) -> list[str]:
    header = ["judge \\ human", *(str(g) for g in range(len(block.human_histogram))), "judge total"]
    rows = [
        [f"**{grade}**", *(str(v) for v in row), str(block.judge_histogram[grade])]
        for grade, row in enumerate(block.confusion_matrix)
    ]
    rows.append(["**human total**", *(str(v) for v in block.human_histogram), str(sum(block.human_histogram))])
    intro = "Confusion matrix (rows: judge grade, columns: human grade); the totals are the two grade histograms."
    return ["### Confusion matrix", "", intro, "", *_table(header, rows, "lrrrrr")]


def _agreement_strata(field: str, blocks: dict[str, AgreementBlock]) -> list[str]:
    header = [md_escape(field), "items", *agr.STRATUM_STATS.values()]
    rows = [
        [md_escape(value), str(block.n), *(" ".join(agr.stat_text(block, key)) for key in agr.STRATUM_STATS)]
        for value, block in blocks.items()
    ]
    return [f"### Agreement by {md_escape(field)}", "", *_table(header, rows, "lr")]


def _usage(result: EvalResult) -> list[str]:
    if not result.usage:
        return []
    header = ["stage", "calls", "cached", "unscored", "prompt tokens", "completion tokens", "cost (USD)"]
    rows = [
        [
            md_escape(stage),
            *(f"{v:,}" for v in (u.calls, u.cached, u.unscored, u.prompt_tokens, u.completion_tokens)),
            "unknown" if u.cost_usd is None else f"{u.cost_usd:.4f}",
        ]
        for stage, u in result.usage.items()
    ]
    return ["## Judge usage", "", *_table(header, rows, "lrrrrrr")]


def _system(result: EvalResult) -> list[str]:
    """Latency, failures, tokens and cost of each run written by ``assay run`` (failed questions are unscored)."""
    rows = sysr.system_rows(result)
    if not rows:
        return []
    header = sysr.system_header(result)
    table = _table(header, [[md_escape(cell) for cell in row] for row in rows], "lllrlrrrrl"[: len(header)])
    return ["## System under test", "", *table]
