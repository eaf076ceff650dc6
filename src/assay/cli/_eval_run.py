"""The work of ``assay eval`` once its options are read: the human labels of the audit store (:func:`audit_labels`),
the evaluation itself with the judge's progress bar (:func:`evaluate_runs`), the judged criteria's verdicts queued
for people (:func:`assay.audit.criteria.queue_verdicts`), and the dry run's table of calls and costs
(:func:`dry_run`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from assay.audit.criteria import people_labels, queue_verdicts
from assay.audit.pool import join_pool
from assay.audit.rewrites import join_rewrites
from assay.audit.store import STORE_NAME, LabelStore
from assay.cli._app import warn
from assay.cli._batch_options import batch_dry_run, batch_line, echo_batch_summary, start_batches
from assay.cli._eval_options import EvalOptions
from assay.cli._judge_options import check_context, dry_run_judge, judge_from_options
from assay.errors import AuditError
from assay.judge.panel import Grader, judges_of
from assay.judge.prompts import prompt_names
from assay.pipelines.evaluate import Evaluated, estimate_evaluation, evaluate_detailed
from assay.pipelines.evaluate.runs.given import NamedRun

__all__ = ["audit_labels", "criterion_labels", "dry_run", "evaluate_runs", "queue_criteria"]

# the build's prompts: an evaluation never calls them, so their context fit is not checked here
_BUILD_ONLY = ("question_generation", "question_critic", "conversation", "rewrite_check")


def audit_labels(
    golden: Path,
) -> tuple[dict[tuple[str, str], int] | None, dict[tuple[str, str], dict[str, int]]]:
    """The audit store's human grades: one per item (the lower median of annotators; None without a store), and
    every annotator's grade per item (for agreement between people). People's grades of spans are written into
    passages.jsonl first where it lacks them (:func:`assay.audit.pool.join_pool`), so the pool holds them, and
    people's corrections of conversation rewrites that an interrupted audit left unwritten into questions.jsonl and
    conversations.jsonl (:func:`assay.audit.rewrites.join_rewrites`), so the labels meet the rewrites they are for."""
    if not (golden / STORE_NAME).is_file():
        return None, {}
    store = LabelStore.in_folder(golden)
    join_rewrites(store, golden)
    join_pool(store, golden)
    one = {(p.query_id, p.chunk_id): p.human_grade for p in store.audited_pairs(one_per_item=True)}
    everyone: dict[tuple[str, str], dict[str, int]] = {}
    for p in store.audited_pairs():
        everyone.setdefault((p.query_id, p.chunk_id), {})[p.annotator] = p.human_grade
    return one, everyone


class _Bar:
    """A progress bar of judge calls with calls made, cache hits, tokens and cost so far."""

    def __init__(self, judge: Grader, console: Console) -> None:
        self.judges = judges_of(judge)
        columns = (TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"))
        self.bar = Progress(*columns, TimeElapsedColumn(), console=console, disable=not console.is_terminal)
        self.task: TaskID | None = None

    def _text(self) -> str:
        stats = [one.stats for one in self.judges]
        tokens = sum(u.prompt_tokens + u.completion_tokens for one in self.judges for u in one.usage.values())
        priced = all(one.price is not None for one in self.judges)
        cost = f"${self.judges[0].spent:.4f}" if priced else "cost unknown"
        calls, cached = sum(s.calls for s in stats), sum(s.cache_hits + s.deduped for s in stats)
        return f"calls {calls}  cached {cached}  unscored {sum(s.unscored for s in stats)}  tokens {tokens}  {cost}"

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.task is None:
            self.task = self.bar.add_task(self._text(), total=total)
        self.bar.update(self.task, completed=done, total=total, description=self._text())


def criterion_labels(golden: Path) -> dict[str, str]:
    """People's labels of judged criteria's verdicts (one per audited item); none without a store."""
    if not (golden / STORE_NAME).is_file():
        return {}
    return people_labels(LabelStore.in_folder(golden))


def queue_criteria(golden: Path, done: Evaluated, asked: EvalOptions) -> int:
    """The judged criteria's verdicts queued for people in GOLDEN/audit.sqlite; the number of new items."""
    if not done.criterion_items:
        return 0
    store = LabelStore.in_folder(golden)
    return queue_verdicts(store, asked.settings.loaded_criteria, done.result.criterion_verdicts, done.criterion_items)


def evaluate_runs(golden: Path, specs: Sequence[NamedRun], asked: EvalOptions) -> Evaluated:
    done = _evaluate(golden, specs, asked)
    try:
        added = queue_criteria(golden, done, asked)
    except AuditError as exc:
        warn(f"the judged criteria's verdicts were not queued for the audit: {exc}")
        added = 0
    if added:
        click.echo(f"{added} new criterion verdict(s) to audit: assay audit {golden} --criteria", err=True)
    return done


def _evaluate(golden: Path, specs: Sequence[NamedRun], asked: EvalOptions) -> Evaluated:
    humans, everyone = audit_labels(golden)
    people = criterion_labels(golden)
    settings = asked.settings
    if not asked.judging.specs:
        if not asked.no_judge:
            warn(
                "no --judge given, so trec_eval's convention holds (unjudged = not relevant) and no LLM metric is "
                "computed."
            )
        return evaluate_detailed(golden, list(specs), judge=None, settings=settings, human_labels=humans,
                                 annotations=everyone, criterion_labels=people)  # fmt: skip
    judge = judge_from_options(asked.judging)
    runners = start_batches(judge, asked.judging)
    if runners:
        click.echo(_BATCH_ROUNDS, err=True)
    check_context(judge, [name for name in prompt_names() if name not in _BUILD_ONLY])
    bar = _Bar(judge, Console(stderr=True))
    with bar.bar:
        done = evaluate_detailed(golden, list(specs), judge=judge, settings=settings, progress=bar,
                                 human_labels=humans, annotations=everyone, criterion_labels=people)  # fmt: skip
    echo_batch_summary(runners)
    return done


_BATCH_ROUNDS = (
    "--batch: this evaluation needs up to 2 batch rounds, one after another (the unlabelled chunks' relevance with "
    "the context, answer and nugget calls, then the diagnosis's claim checks), and one more per stage whose failed "
    "requests are retried by --batch-retry batch; each waits for the provider (up to 24 h). Stopping is safe: the "
    "same command picks up the submitted batches."
)


def dry_run(golden: Path, specs: Sequence[NamedRun], asked: EvalOptions, console: Console) -> None:
    if not asked.judging.specs:
        console.print("dry run without a judge: no calls to make")
        return
    estimator = dry_run_judge(asked.judging)
    direct = batch_dry_run(estimator, asked.judging)
    estimates = estimate_evaluation(golden, list(specs), estimator, asked.settings)
    table = Table(title="dry run: judge calls of this evaluation")
    for column in ("stage", "calls", "cached", "prompt tokens", "cost bound"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage, e in estimates.items():
        cost = "unknown (give --price)" if e.cost_usd is None else f"${e.cost_usd:.4f}"
        table.add_row(stage, str(e.calls), str(e.cached), str(e.prompt_tokens), cost)
    console.print(table)
    if asked.judging.batch:
        costs = [e.cost_usd for e in estimates.values()]
        total = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        click.echo(batch_line(estimator, total, direct))
