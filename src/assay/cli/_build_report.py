"""What ``assay build`` shows: a progress bar per stage (:class:`StageProgress`), the dry run's table of calls, tokens
and cost (:func:`print_estimate`), what a build with ``--batch`` waits for (:func:`batch_rounds`), the next step after
``--stop-after questions`` (:func:`print_stopped`), and the summary of a finished build (:func:`print_summary`).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from assay.cli._app import warn
from assay.formats.golden import GoldenSet
from assay.judge.panel import Grader, Panel, judges_of, merged_usage
from assay.pipelines.agreement import panel_agreement
from assay.pipelines.bootstrap import BuildEstimate, BuildSettings
from assay.pipelines.bootstrap.estimate import ACCEPT_LOW, FILTER_PASS_LOW
from assay.report.panel import panel_lines

__all__ = ["StageProgress", "batch_rounds", "print_estimate", "print_stopped", "print_summary"]


_JUDGE_STAGES = ("generation", "conversation", "critic", "rewrite_check", "relevance", "draft", "support")


# (stage label, count keys shown in the summary)
_SUMMARY = (
    ("corpus", ("documents", "chunks", "files_skipped")),
    ("sampling", ("seeds", "type_fallback")),
    ("generation", ("generated", "dropped_by_generation_unscored")),
    (
        "conversation",
        ("conversation_seeds", "conversations_generated", "turns_generated", "dropped_by_conversation_unscored"),
    ),
    ("filters", ("dropped_by_evidence", "dropped_by_leakage", "flagged_leakage", "dropped_by_near_duplicate")),
    ("relabel", ("relabelled",)),
    ("critic", ("dropped_by_critic", "dropped_by_critic_unscored")),
    ("difficulty", ("difficulty_easy", "difficulty_medium", "difficulty_hard")),
    (
        "queries",
        (
            "log_lines",
            "log_groups",
            "log_clusters",
            "scrub_altered",
            "dropped_by_scrub",
            "masked_email",
            "masked_phone",
            "masked_card",
            "masked_iban",
            "masked_token",
        ),
    ),
    ("relevance", ("pooled_pairs", "qrels_unscored_pairs", "dropped_by_unanswerable_answered")),
    ("real questions", ("unanswerable_from_corpus", "drafted", "draft_unscored")),
    (
        "support",
        ("support_calls", "support_followup_calls", "support_joint", "support_unscored", "support_no_passages"),
    ),
    ("conversations", ("dropped_by_conversation_cut", "conversations_accepted", "turns_accepted", "context_turns")),
    ("result", ("accepted", "qrels", "nuggets")),
)


class StageProgress:
    """A rich progress bar per stage, with cache hits, tokens and cost of judge stages."""

    def __init__(self, judge: Grader, console: Console) -> None:
        self.judges = judges_of(judge)
        columns = (
            TextColumn("{task.fields[stage]:<14}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
        )
        self.bar = Progress(*columns, TimeElapsedColumn(), console=console, disable=not console.is_terminal)
        self.tasks: dict[str, TaskID] = {}

    def _text(self, stage: str) -> str:
        usage = merged_usage(one.usage for one in self.judges).get(stage)
        if stage not in _JUDGE_STAGES or usage is None:
            return ""
        cost = "cost unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
        tokens = usage.prompt_tokens + usage.completion_tokens
        return f"calls {usage.calls}  cached {usage.cached}  unscored {usage.unscored}  tokens {tokens}  {cost}"

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.bar.add_task("", total=max(total, 1), stage=stage)
        task = self.tasks[stage]
        self.bar.update(task, total=max(total, 1), completed=done if total else 1, description=self._text(stage))


def batch_rounds(settings: BuildSettings, stop_after: str | None) -> str:
    """What a build with --batch waits for: one batch round per judge stage, each after the one before."""
    stages = ["generation", *(["conversation"] if settings.conversations else [])]
    stages += [
        *(["critic"] if settings.critic else []),
        *(["rewrite_check"] if settings.critic and settings.conversations else []),
    ]
    if stop_after is None:
        stages += ["relevance", "support"]
    return (
        f"--batch: this build needs {len(stages)} batch rounds, one after another ({', '.join(stages)}), "
        + ("one more for support follow-ups if any, " if stop_after is None else "")
        + "and one more per stage whose failed requests are retried by --batch-retry batch; each round waits for "
        "the provider (up to 24 h). Stopping is safe: the same command picks up the submitted batches."
    )


def print_stopped(stage: GoldenSet, output: Path, corpus: tuple[Path, ...]) -> None:
    click.echo(
        f"stopped after questions: {len(stage.questions)} questions in {output / 'topics.tsv'} (qid<TAB>question) "
        f"and {output / 'questions.jsonl'}; chunk ids in {output / 'chunks.jsonl'}."
    )
    click.echo(
        "next: run your retrievers over topics.tsv (TREC or JSONL runs of chunk ids), then the same command without "
        f"--stop-after, another -o and --pool-run NAME=RUN for each (e.g. assay build {' '.join(map(str, corpus))} "
        "-o golden/ ... --pool-run es=es.trec)"
    )


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.3f}" if value < 100 else f"${value:,.0f}"


def _tokens(value: int) -> str:
    return f"{value / 1000:.0f}k" if value >= 10_000 else str(value)


def _span(low: str, high: str) -> str:
    return high if low == high else f"{low}-{high}"


def print_estimate(estimate: BuildEstimate, console: Console) -> None:
    click.echo(f"plan: {estimate.plan}", err=True)
    for warning in estimate.warnings:
        warn(warning)
    table = Table(title=f"dry run: {estimate.documents} documents, {estimate.chunks} chunks, {estimate.seeds} seeds")
    for column in ("stage", "calls", "cached", "prompt tokens", "cost", "how"):  # ranges: low-high
        table.add_column(column, justify="left" if column in ("stage", "how") else "right")
    for s in estimate.stages:
        cost = _money(s.cost_usd) if s.exact else _span(_money(s.cost_usd_low), _money(s.cost_usd))
        row = (_span(str(s.low), str(s.calls)), str(s.cached), _span(_tokens(s.low_tokens), _tokens(s.prompt_tokens)))
        table.add_row(s.stage, *row, cost, "exact" if s.exact else "range")
    cost = _span(_money(estimate.cost_usd_low), _money(estimate.cost_usd))
    if estimate.cost_usd is None:
        cost = "unknown (give --price)"
    tokens = _span(_tokens(estimate.prompt_tokens_low), _tokens(estimate.prompt_tokens))
    table.add_row("total", _span(str(estimate.calls_low), str(estimate.calls)), "", tokens, cost, "")
    out = Console()
    out.print(table)
    out.print(
        f"Ranges are estimates. low: {FILTER_PASS_LOW:.0%} of seeds pass the filters and {ACCEPT_LOW:.0%} are "
        "accepted, pools of a short question, one support call each; high: every seed accepted, pools at their cap "
        "(sources, neighbours, near-duplicates + --pool-k), every pooled chunk checked for support. Costs price each "
        "call's max_tokens of completion (a bound). Generation is counted exactly."
    )


def print_summary(golden: GoldenSet, judge: Grader, output: Path, console: Console) -> None:
    counts = golden.manifest.counts
    warnings: list[str] = list((golden.manifest.model_extra or {}).get("warnings", []))
    for warning in warnings:
        warn(warning)
    stages = Table(title="counts per stage")
    stages.add_column("stage")
    stages.add_column("counts")
    for stage, keys in _SUMMARY:
        shown = [f"{k}={counts[k]}" for k in keys if k in counts]
        stages.add_row(stage, "  ".join(shown))
    usage = Table(title=f"judge usage ({', '.join(one.model for one in judges_of(judge))})")
    for column in ("stage", "calls", "cached", "unscored", "prompt tokens", "completion tokens", "cost"):
        usage.add_column(column, justify="left" if column == "stage" else "right")
    for stage, u in golden.manifest.usage.items():
        cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
        usage.add_row(stage, *map(str, (u.calls, u.cached, u.unscored, u.prompt_tokens, u.completion_tokens)), cost)
    out = Console()
    out.print(stages)
    out.print(usage)
    if isinstance(judge, Panel):
        for one in judge.judges:
            click.echo(f"judge {one.model}: cost {'unknown' if one.cost is None else f'${one.cost:.4f}'}")
        agreement = panel_agreement(golden.qrels)
        for line in panel_lines(agreement) if agreement is not None else []:
            click.echo(line)
    click.echo(f"{len(warnings)} warning(s); wrote the golden set to {output}")
    click.echo(
        f"next: assay eval {output} RUN.jsonl -o report/  (score a retriever's run)  |  assay audit {output}  "
        f"(check judge labels by hand)  |  assay export {output} --to beir -o beir/"
    )
