"""The terminal output of an evaluation (rich): a one-screen summary by default, everything with ``verbose``.

The summary (at most 60 lines for four runs at 80 columns, every table row on one line): the header, the verdict
(:mod:`assay.report.verdict`: the lead, the ranking with letters, the judge's trust, cost and latency, the caveats),
a run x metric matrix of the summary metrics (the primary, then one per group, :func:`assay.results.summary_metrics`),
a metric x pair matrix of the comparisons (the sign of b − a, ``*`` where significant), the evaluator's warnings,
and where the rest is. Of the caveats, the summary prints the :data:`TERMINAL_CAVEATS` most severe (the unscored share
always among them, :func:`assay.report.verdict.first_caveats`) and then "N more in REPORT" (the ``report`` file when
one was written, else report.html and results.json); ``verbose`` prints them all.

``verbose`` (``assay eval --verbose``) prints the verdict, then the warnings, whole sentences, above the figures and
verdicts they qualify. Per run: the run counts worth a warning, judged@k, and a table of the headline metrics, one
line each at 80 columns (mean, interval, scored and unscored counts), with the reasons of the unscored ones listed
under it. For two or more runs: the primary metric's comparisons (one row per pair, with effect sizes and the
family-adjusted interval), then the secondary metrics' verdicts. Then judge-versus-human agreement (or one line
saying how to audit), corrected (PPI) metrics with the audit size for tighter intervals, and what the judge cost.
The full picture is in ``report.html`` and ``report.md``.
"""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from assay.metrics.diagnosis import SHARED_NAMES
from assay.report import _agreement as agr
from assay.report import _diagnosis as diag
from assay.report import _format as fmt
from assay.report import _planning as plan
from assay.report import _system as sysr
from assay.report import panel as pn
from assay.report._conversations import conversation_lines
from assay.report._statistics import noise_lines
from assay.report.verdict import build_verdict, first_caveats, primary_metric
from assay.results import (
    OFFLINE_WARNING,
    AgreementSummary,
    Comparison,
    EvalResult,
    MetricSummary,
    PanelAgreement,
    RunResult,
    Verdict,
    summary_metrics,
)

__all__ = ["TERMINAL_CAVEATS", "render_terminal"]

# caveats the summary prints, the most severe first; the rest are counted (three keep four runs within 60 lines)
TERMINAL_CAVEATS = 3


def render_terminal(result: EvalResult, console: Console, *, verbose: bool = False, report: Path | None = None) -> None:
    """Print the summary of ``result`` on ``console`` (everything with ``verbose``). ``report``: the report file
    written with it, named where the caveats left out are. Text from the data is never read as rich markup."""
    console.print(_header(result, cards=verbose))  # the summary's verdict says what the judge card says
    console.print()
    _print_verdict(console, build_verdict(result), room=None if verbose else TERMINAL_CAVEATS, report=report)
    if not verbose:
        _print_summary(console, result)
        return
    console.print()
    for warning in result.warnings:  # above the figures and verdicts they qualify
        console.print(Text(f"warning: {warning}", style="yellow"))
    in_diagnosis = {row.metric for row in diag.module_rows(result)} - set(SHARED_NAMES.values())
    headline = [name for name in fmt.headline_metrics(result) if name not in in_diagnosis]  # shown below instead
    for run in result.runs:
        _print_run(console, result, run, headline)
    for table in _comparisons(result, headline):
        console.print()
        console.print(table)
    _print_noise(console, result)
    _print_conversations(console, result)
    _print_planning(console, result)
    if diag.has_diagnosis(result):
        console.print()
        _print_diagnosis(console, result)
    console.print()
    advice = agr.not_audited(result) if result.agreement is None else None
    if advice is not None:
        console.print(Text(advice, style="dim"))
    elif result.agreement is not None:
        console.print(_agreement(result.agreement))
    if result.judges is not None:
        console.print()
        console.print(_judges(result.judges))
    if result.corrected:
        console.print()
        console.print(_corrected(result))
        for item in result.corrected:
            console.print(Text(f"  {item.run} {item.metric}: {agr.audit_cell(item)}", style="dim"))
    if result.usage:
        console.print()
        console.print(_usage(result))
    if sysr.system_rows(result):
        console.print()
        console.print(_system(result))


def _print_verdict(console: Console, verdict: Verdict, *, room: int | None, report: Path | None) -> None:
    """The verdict: a title, its sentences as bullets, then the caveats (each sentence wraps under its bullet): all
    of them when ``room`` is None, else the first ``room`` and a line saying where the others are."""
    console.print(Text("Verdict", style="bold"))
    for line in verdict.lines:
        console.print(Text(f"• {line}"), overflow="fold")
    shown, left = (verdict.caveats, 0) if room is None else first_caveats(verdict.caveats, room)
    for caveat in shown:
        console.print(Text(f"! {caveat}", style="yellow"), overflow="fold")
    if left:
        where = str(report) if report is not None else "report.html and results.json"
        console.print(Text(f"! {left} more caveat{'s' if left > 1 else ''} in {where}", style="yellow"),
                      overflow="fold")  # fmt: skip


SUMMARY_PAIRS = 6  # pair columns of the summary's comparison matrix at most; the leader's pairs first


def _print_summary(console: Console, result: EvalResult) -> None:
    """The summary after the verdict: the metric matrix, the comparison matrix, the warnings, where the rest is."""
    headline = fmt.headline_metrics(result)
    shown = summary_metrics(headline, build_verdict(result).metric)
    runs = _summary_runs(result, console.width)
    console.print()
    console.print(
        Text(
            f"Means over the scored questions, {shown[0] if shown else 'the primary'} first "
            f"({fmt.confidence_label(result)} intervals in report.html)",
            style="bold",
        ),
        overflow="fold",
    )
    console.print(_metric_matrix(shown, runs, console.width))
    compared = _pair_matrix(result, shown, console.width)
    if compared is not None:
        number = ", ".join(f"{i} {run.name}" for i, run in enumerate(result.runs, 1))
        pairs = len({(c.a, c.b) for c in result.comparisons})
        left = pairs - _pair_room(console.width)
        more = f"; {left} more pairs in report.html" if left > 0 else ""
        console.print()
        console.print(Text(f"Comparisons: b − a, * significant (adjusted in its family); runs {number}{more}",
                           style="bold"), overflow="fold")  # fmt: skip
        console.print(compared)
    brief = _noise_brief(result)
    if brief:
        console.print(Text(brief, style="dim"), overflow="fold")
    for warning in result.warnings:
        if warning != OFFLINE_WARNING:  # the verdict's first caveat says it
            console.print(Text(f"warning: {warning}", style="yellow"))
    console.print()
    more = " (and the runs left out)" if len(runs) < len(result.runs) else ""
    console.print(Text(f"Every metric, stratum and question{more}: report.html; --verbose prints them here.",
                       style="dim"))  # fmt: skip


def _summary_runs(result: EvalResult, width: int) -> list[RunResult]:
    """The runs that fit as columns (8 characters each beside a 27-character metric column): the first ones by the
    primary metric's place when they do not all fit."""
    room = max(1, (width - 27) // 9)
    if len(result.runs) <= room:
        return list(result.runs)
    order = [place.run for place in build_verdict(result).places]
    by_name = {run.name: run for run in result.runs}
    return [by_name[name] for name in order[:room]]


def _matrix() -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("metric", no_wrap=True, overflow="ellipsis", max_width=26)
    return table


def _metric_matrix(names: list[str], runs: list[RunResult], width: int) -> Table:
    """Run x metric: the mean of each summary metric per run (the best in bold), the primary first."""
    table = _matrix()
    room = max(8, min(16, (width - 28) // max(len(runs), 1) - 1))  # a run's name gets what the columns leave
    for run in runs:
        table.add_column(Text(run.name), justify="right", no_wrap=True, overflow="ellipsis", max_width=room)
    for name in names:
        values = [run.metrics.get(name) for run in runs]
        best = max((s.mean for s in values if s is not None and s.mean is not None), default=None)
        cells = [Text("—" if s is None else fmt.fmt_mean(s).replace("unscored", "n/a"),
                      style="bold" if s is not None and s.mean is not None and s.mean == best and len(runs) > 1 else "")
                 for s in values]  # fmt: skip
        table.add_row(Text(name), *cells)
    return table


def _pair_matrix(result: EvalResult, names: list[str], width: int) -> Table | None:
    """Metric x pair: b − a per pair of runs (runs numbered in a caption), ``*`` where significant in its family."""
    comps = [c for c in result.comparisons if c.metric in names]
    if not comps:
        return None
    number = {run.name: i for i, run in enumerate(result.runs, 1)}
    leader = build_verdict(result).places[0].run
    pairs = sorted(
        dict.fromkeys((c.a, c.b) for c in comps), key=lambda p: (leader not in p, number[p[0]], number[p[1]])
    )
    room = _pair_room(width)
    table = _matrix()
    for a, b in pairs[:room]:
        table.add_column(f"{number[b]}−{number[a]}", justify="right", no_wrap=True)
    found = {(c.metric, c.a, c.b): c for c in comps}
    for name in [n for n in names if any(c.metric == n for c in comps)]:
        cells = []
        for a, b in pairs[:room]:
            c = found.get((name, a, b))
            text = "—" if c is None else f"{c.delta:+.3f}{'*' if c.significant else ' '}"
            cells.append(Text(text, style="green" if c is not None and c.significant else ""))
        table.add_row(Text(name), *cells)
    return table


def _pair_room(width: int) -> int:
    """Pair columns that fit beside the metric column (9 characters each)."""
    return max(1, min(SUMMARY_PAIRS, (width - 27) // 9))


def _noise_brief(result: EvalResult) -> str | None:
    """One line for the summary: what the intervals count beyond independent questions (the sentences: --verbose)."""
    parts = []
    clustering = result.clustering
    if clustering is not None and clustering.clusters < clustering.questions:
        deff = f", design effect {clustering.design_effect:.2f}" if clustering.design_effect is not None else ""
        parts.append(f"{clustering.clusters} clusters of questions{deff}")
    repeated = [run.name for run in result.runs if run.repeats is not None]
    if repeated:
        parts.append(f"{len(repeated)} run(s) asked repeatedly")
    if result.judge_noise is not None and result.judge_noise.changed is not None:
        parts.append(f"judge re-asked: {100 * result.judge_noise.changed:.0f}% of grades changed")
    return f"Intervals count {'; '.join(parts)} (--verbose says more)." if parts else None


def _print_noise(console: Console, result: EvalResult) -> None:
    """How the noise was counted (:mod:`assay.report._statistics`), one sentence a line."""
    lines = noise_lines(result, primary_metric(result))
    if lines:
        console.print()
    for line in lines:
        console.print(Text(line), overflow="fold")


def _print_conversations(console: Console, result: EvalResult) -> None:
    """The conversations (:mod:`assay.report._conversations`), one sentence a line."""
    lines = conversation_lines(result)
    if lines:
        console.print()
    for line in lines:
        console.print(Text(line), overflow="fold")


def _print_planning(console: Console, result: EvalResult) -> None:
    """The planning's intro and its first sentences (:mod:`assay.report._planning`)."""
    lines = plan.planning_lines(result)
    if not lines:
        return
    console.print()
    console.print(Text(f"planning: {lines[0]}", style="dim"))
    for sentence in lines[1 : 1 + plan.TERMINAL_PLANS]:
        console.print(Text(f"  {sentence}"))
    if len(lines) - 1 > plan.TERMINAL_PLANS:
        console.print(Text(f"  ({len(lines) - 1 - plan.TERMINAL_PLANS} more in report.md)", style="dim"))


def _header(result: EvalResult, *, cards: bool = True) -> Text:
    text = Text()
    text.append("assay evaluation", style="bold")
    text.append(f"  ·  assay {result.assay_version}  ·  golden {result.golden}\n")
    text.append(f"judge: {result.judge}" if result.judge else fmt.NO_JUDGE, style="" if result.judge else "yellow")
    ks = ", ".join(str(k) for k in result.k_values)
    text.append(f"  ·  k = {ks}  ·  {len(result.runs)} run(s)")
    labels = agr.labels_line(result)
    if labels is not None:
        text.append(f"  ·  labels: {labels}")
    for line in fmt.judge_card_lines(result) if cards else []:
        found = result.judge_card is not None and result.judge_card.found
        text.append(f"\n{line}", style="" if found else "yellow")
    return text


def _print_run(console: Console, result: EvalResult, run: RunResult, headline: list[str]) -> None:
    console.print()
    title = Text()
    title.append(run.name, style="bold cyan")
    title.append(f"  {run.path}  ·  {run.counts.queries_evaluated} queries evaluated", style="dim")
    console.print(title)
    for note in fmt.count_notes(run.counts):
        style = "yellow" if note.warning else "dim"
        console.print(Text(f"  {'!' if note.warning else 'i'} {note.value} {note.label}", style=style))
    for line in (fmt.fmt_judged(run), fmt.fmt_passages(run)):
        if line:
            console.print(Text(f"  {line}", style="dim"))
    shown = [(name, run.metrics[name]) for name in headline if name in run.metrics]
    console.print(_run_table(result, shown))
    for name, summary in shown:  # the reasons go under the table, so each metric keeps one line at 80 columns
        if summary.n_unscored:
            console.print(Text(f"  {name}: {fmt.fmt_unscored(summary)}", style="yellow"))


def _run_table(result: EvalResult, shown: list[tuple[str, MetricSummary]]) -> Table:
    """One line per metric: mean, interval, scored and unscored counts (the reasons are printed below it)."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("metric", no_wrap=True)
    table.add_column("mean", justify="right", no_wrap=True)
    table.add_column(f"{fmt.confidence_label(result)} interval", no_wrap=True)
    table.add_column("scored", justify="right", no_wrap=True)
    table.add_column("unscored", justify="right", no_wrap=True)
    for name, summary in shown:
        table.add_row(
            Text(name),
            Text(fmt.fmt_mean(summary), style="bold" if summary.mean is not None else "yellow"),
            Text(fmt.fmt_interval(summary.low, summary.high)),
            Text(str(summary.n_scored)),
            Text(str(summary.n_unscored), style="yellow" if summary.n_unscored else "dim"),
        )
    return table


def _comparisons(result: EvalResult, headline: list[str]) -> list[Table]:
    """The primary metric's family (one row per pair, with effect sizes), then the secondary metrics' verdicts."""
    chosen = [c for c in result.comparisons if c.primary or c.metric in headline or not headline]
    families = fmt.by_metric(chosen)
    if not families:
        return []
    tables = [_primary_table(families[0])]
    if len(families) > 1:
        tables.append(_secondary_table([c for family in families[1:] for c in family]))
    return tables


def _styled(comp: Comparison) -> tuple[Text, Text, Text]:
    style = "green" if comp.significant else ""
    return (
        Text(fmt.fmt_delta(comp), style=style),
        Text(fmt.fmt_p(comp.p_adjusted), style=style),
        Text(fmt.short_verdict(comp), style="" if comp.significant else "dim"),
    )


_NUMBERS = ("n", "d_z", "W/T/L", "p", "p adj.")
_FOLDED = ("b vs a", "metric", "verdict")  # the others never wrap


def _table(title: str, columns: tuple[str, ...]) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", title_style="bold", pad_edge=False)
    for name in columns:
        folded = name in _FOLDED
        table.add_column(name, no_wrap=not folded, overflow="fold", justify="right" if name in _NUMBERS else "left")
    return table


def _primary_table(comps: list[Comparison]) -> Table:
    """One row per pair with effect sizes and both p-values; the verdict sentences go in the caption."""
    first = comps[0]
    role = "primary metric" if first.primary else "metric"
    title = f"{first.metric} ({role}): paired randomization test, {fmt.correction_label(first)}"
    table = _table(title, ("b vs a", "b − a [adjusted interval]", "d_z", "W/T/L", "p", "p adj."))
    for comp in comps:
        delta, p_adj, _ = _styled(comp)
        d_z = "—" if comp.d_z is None else f"{comp.d_z:+.2f}"
        table.add_row(Text(f"{comp.b} vs {comp.a}"), delta, Text(d_z), Text(f"{comp.wins}/{comp.ties}/{comp.losses}"),
                      Text(fmt.fmt_p(comp.p_value)), p_adj)  # fmt: skip
    caption = Text(
        f"n = {first.n} queries; W/T/L = queries where b is above/equal/below a; p unadjusted, p adj. "
        f"{fmt.correction_label(first)}; {_mc(comps)}",
        style="dim",
    )
    for comp in comps:
        caption.append(f"\n• {fmt.verdict_text(comp)}", style="green" if comp.significant else "")
    table.caption = caption
    table.caption_justify = "left"
    return table


def _mc(comps: list[Comparison]) -> str:
    """``exact`` or ``B = 10,000, MC se <= 0.0010`` (the largest Monte Carlo error of the family's adjusted p)."""
    worst = max(comps, key=lambda c: c.p_mc_error or 0.0)
    return fmt.fmt_mc(worst).replace("MC se", "MC se <=") if len(comps) > 1 else fmt.fmt_mc(worst)


def _secondary_table(comps: list[Comparison]) -> Table:
    table = _table("Secondary metrics, each corrected over its own pairs of runs",
                   ("metric", "b vs a", "b − a [adjusted interval]", "p adj.", "verdict"))  # fmt: skip
    for comp in comps:
        delta, p_adj, verdict = _styled(comp)
        table.add_row(Text(comp.metric), Text(f"{comp.b} vs {comp.a}"), delta, p_adj, verdict)
    return table


def _print_diagnosis(console: Console, result: EvalResult) -> None:
    """The modules' scores per run (↑ higher is better, ↓ lower), the strongest differences, where the examples are."""
    title = f"Diagnosis (RAGChecker's claim-level metrics, mean [{fmt.confidence_label(result)}])"
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", title_style="bold", pad_edge=False)
    table.add_column("module", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    for run in result.runs:
        table.add_column(Text(run.name), no_wrap=True)
    previous = ""
    for row in diag.module_rows(result):
        cells = [Text(_short(s)) for s in row.summaries]
        module = row.module if row.module != previous else ""
        previous = row.module
        table.add_row(Text(module), Text(f"{row.arrow} {row.label}"), *cells)
    console.print(table)
    for item in diag.differences(result, top=3):
        c = item.comparison
        verdict = f"{item.better} better" if item.better else "no reliable difference"
        line = (
            f"  {c.b} − {c.a} on {item.label}: {c.delta:+.3f} {fmt.fmt_interval(c.low, c.high)}, "
            f"p adj. {fmt.fmt_p(c.p_adjusted)}: {verdict}"
        )
        console.print(Text(line, style="green" if item.better else "dim"))
    shown = len(result.diagnosis_examples)
    if shown:
        console.print(
            Text(f"  {shown} example claims by failure category: report.html, section Diagnosis", style="dim")
        )


def _short(summary: MetricSummary | None) -> str:
    if summary is None:
        return "—"
    if summary.mean is None:
        return fmt.fmt_mean(summary)
    return f"{fmt.fmt_mean(summary)} [{fmt.fmt_value(summary.low, 2)}, {fmt.fmt_value(summary.high, 2)}]"


def _corrected(result: EvalResult) -> Table:
    title = "Corrected with human audit labels (prediction-powered inference, PPI++)"
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", title_style="bold", pad_edge=False)
    for name in ("run", "metric", "judge only", "corrected [interval]", "human only", "audited"):
        table.add_column(name, no_wrap=True)
    for item in result.corrected:
        table.add_row(
            Text(item.run),
            Text(item.metric),
            Text(fmt.fmt_value(item.judge_only)),
            Text(f"{fmt.fmt_value(item.estimate)} {fmt.fmt_interval(item.low, item.high)}"),
            Text(f"{fmt.fmt_interval(item.classical_low, item.classical_high) or '—'}"),
            Text(f"{item.n_audited}/{item.n_audited + item.n_unaudited}"),
        )
    return table


def _agreement(summary: AgreementSummary) -> Table:
    """The judge-versus-human figures with intervals, and between annotators when there are several."""
    title = f"{agr.summary_line(summary)} Confusion matrix, histograms and strata: report.html"
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", title_style="bold", pad_edge=False)
    table.add_column("statistic", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("interval", no_wrap=True)
    for row in agr.stat_rows(summary.overall):
        table.add_row(Text(row.label), Text(row.value, style="bold"), Text(row.interval))
    for row in agr.human_rows(summary):
        table.add_row(Text(f"between annotators: {row.label}"), Text(row.value), Text(row.interval))
    return table


def _judges(agreement: PanelAgreement) -> Table:
    """Agreement between the judges of a panel: the summary and each judge (numbered) as the title, a row per pair of
    judges named by their numbers, so long model names do not squeeze the figures."""
    number = {model: str(i) for i, model in enumerate(agreement.judges, 1)}
    judges = [
        f"{number[j.model]}. {line}" for j, line in zip(agreement.per_judge, pn.judge_lines(agreement), strict=True)
    ]
    title = "\n".join([f"Judges: {pn.summary_line(agreement)}", *judges])
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", title_style="bold", pad_edge=False)
    for name in pn.PAIR_COLUMNS:
        table.add_column(name, justify="left" if name == "judges" else "right")
    for pair, row in zip(agreement.pairs, pn.pair_rows(agreement), strict=True):
        first, second = (number[model] for model in pair.judges)
        table.add_row(Text(f"{first} vs {second}"), *(Text(cell) for cell in row[1:]))
    return table


def _usage(result: EvalResult) -> Table:
    table = Table(title="Judge usage", box=box.SIMPLE_HEAD, title_justify="left", title_style="bold", pad_edge=False)
    for name in ("stage", "calls", "cached", "unscored", "prompt tokens", "completion tokens", "cost"):
        table.add_column(name, justify="left" if name == "stage" else "right")
    for stage, usage in result.usage.items():
        cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
        cells = (usage.calls, usage.cached, usage.unscored, usage.prompt_tokens, usage.completion_tokens)
        table.add_row(Text(stage), *(Text(f"{value:,}") for value in cells), Text(cost))
    return table


def _system(result: EvalResult) -> Table:
    """Latency, failures, tokens and cost of each run written by ``assay run``."""
    table = Table(title="System under test", box=box.SIMPLE_HEAD, title_justify="left", title_style="bold",
                  pad_edge=False)  # fmt: skip
    for name in sysr.HEADER:
        table.add_column(name, justify="left" if name in ("run", "target", "label", "failed") else "right")
    for row in sysr.system_rows(result):
        table.add_row(*(Text(cell) for cell in row))
    return table
