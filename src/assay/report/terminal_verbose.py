"""Everything ``assay eval --verbose`` prints in the terminal below the verdict (:mod:`assay.report.terminal` prints
the header and the verdict above it).

The warnings first, whole sentences, above the figures and verdicts they qualify. Per run: the run counts worth a
warning, judged@k, and a table of the headline metrics, one line each at 80 columns (mean, interval, scored and
unscored counts), with the reasons of the unscored ones listed under it. For two or more runs: the primary metric's
comparisons (one row per pair, with effect sizes and the family-adjusted interval), then the secondary metrics'
verdicts. Then how the noise was counted, the conversations, the planning, the diagnosis, judge-versus-human
agreement (or one line saying how to audit), the panel's agreement, corrected (PPI) metrics with the audit size for
tighter intervals, what the judge cost and the system side of the runs. The full picture is in ``report.html`` and
``report.md``.
"""

from __future__ import annotations

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
from assay.report._trajectory import trajectory_lines
from assay.report.verdict import primary_metric
from assay.results import AgreementSummary, Comparison, EvalResult, MetricSummary, PanelAgreement, RunResult

__all__ = ["print_details"]


def _print_sentences(console: Console, lines: list[str]) -> None:
    """One sentence a line, after a blank line (nothing when there is none): the noise
    (:mod:`assay.report._statistics`), the conversations (:mod:`assay.report._conversations`), the trajectories
    (:mod:`assay.report._trajectory`)."""
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


def print_details(console: Console, result: EvalResult) -> None:
    """Everything below the verdict, in the order of the module docstring."""
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
    _print_sentences(console, noise_lines(result, primary_metric(result)))
    _print_sentences(console, conversation_lines(result))
    _print_sentences(console, trajectory_lines(result))
    _print_planning(console, result)
    if diag.has_diagnosis(result):
        console.print()
        _print_diagnosis(console, result)
    console.print()
    _print_labels(console, result)
    _print_costs(console, result)


def _print_labels(console: Console, result: EvalResult) -> None:
    """How far the labels can be trusted: agreement with people (or how to audit), between a panel's judges, and the
    metrics corrected with the audited labels."""
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


def _print_costs(console: Console, result: EvalResult) -> None:
    """What the judge cost, and the system side of the runs written by ``assay run``."""
    if result.usage:
        console.print()
        console.print(_usage(result))
    if sysr.system_rows(result):
        console.print()
        console.print(_system(result))


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
    for name in sysr.system_header(result):
        table.add_column(name, justify="left" if name in ("run", "target", "label", "failed", sysr.STEPS) else "right")
    for row in sysr.system_rows(result):
        table.add_row(*(Text(cell) for cell in row))
    return table
