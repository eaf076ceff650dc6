"""``assay grade``: relevance labels (0-3) for (question, chunk) pairs with an LLM judge or the offline judge."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from assay.aio import run_sync
from assay.cli._app import interrupted, main
from assay.cli._batch_options import batch_dry_run, batch_line, echo_batch_summary, start_batches
from assay.cli._judge_options import JudgeOptions, check_context, dry_run_judge, judge_from_options, panel_options
from assay.errors import NothingProduced
from assay.formats.atomic import atomic_write
from assay.formats.pairs import read_pairs as load_pairs
from assay.judge import Graded, Judge, Pair, grade_pairs_detailed
from assay.judge.guards import ECHO
from assay.judge.panel import Grader, Panel, judges_of
from assay.judge.relevance import LISTWISE_PROMPT, POINTWISE_PROMPT
from assay.judge.relevance_estimate import estimate_each, estimate_pairs
from assay.pipelines.agreement import panel_agreement
from assay.report.panel import panel_lines
from assay.types import Unscored

__all__ = ["grade", "read_pairs"]


def read_pairs(path: Path) -> list[Pair]:
    """The pairs of a pairs JSONL file (:mod:`assay.formats.pairs`: a bad line is a FormatError naming file:line)."""
    return [Pair(*(str(value) for value in (r.query_id, r.question, r.chunk_id, r.text))) for r in load_pairs(path)]


def _record(graded: Graded) -> dict[str, Any]:
    label = graded.label
    record: dict[str, Any] = {
        "query_id": label.query_id,
        "chunk_id": label.chunk_id,
        "grade": label.grade,
        "reason": label.provenance.rationale,
        "model": label.provenance.model,
        "prompt": label.provenance.prompt,
        "prompt_hash": label.provenance.prompt_hash,
        "cached": graded.cached,
    }
    if label.unscored is not None:
        record["unscored"] = label.unscored.model_dump(mode="json")
    if label.votes is not None:
        record["votes"] = [vote.model_dump(mode="json") for vote in label.votes]
    return record


def _tokens(judge: Judge) -> tuple[int, int]:
    """Prompt and completion tokens of the relevance stage so far."""
    usage = judge.usage.get("relevance")
    return (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)


def _summary(grader: Grader, graded: list[Graded]) -> list[str]:
    """One line for one judge; for a panel, one per judge, then the combined labels and the judges' agreement."""
    if not isinstance(grader, Panel):
        return [_judge_line(f"graded {len(graded)} pairs", grader, [g.label.unscored for g in graded])]
    lines = [
        _judge_line(f"judge {judge.model}", judge, [g.label.votes[i].unscored for g in graded if g.label.votes])
        for i, judge in enumerate(grader.judges)
    ]
    unscored = sum(g.label.grade is None for g in graded)
    cost = "unknown" if not grader.price_known else f"${grader.spent:.4f}"
    lines.append(
        f"graded {len(graded)} pairs by {grader.model}: {unscored} unscored (no more than half the judges scored "
        f"them); cost {cost} in all"
    )
    agreement = panel_agreement([g.label for g in graded])
    return [*lines, *(panel_lines(agreement) if agreement is not None else [])]


def _judge_line(head: str, judge: Judge, unscored: list[Unscored | None]) -> str:
    prompt_tokens, completion_tokens = _tokens(judge)
    cost = "unknown" if judge.cost is None else f"${judge.cost:.4f}"
    stats = judge.stats
    kinds = _kinds(judge, unscored)
    return (
        f"{head}: {stats.calls} calls, {stats.cache_hits + stats.deduped} cached, "
        f"{stats.retries} retries, {sum(kinds.values())} unscored{_kinds_text(kinds)}; tokens {prompt_tokens} in / "
        f"{completion_tokens} out; cost {cost}"
    )


def _kinds(judge: Judge, unscored: list[Unscored | None]) -> Counter[str]:
    """Unscored answers by kind: the judge's counts, and the answers it parsed that the relevance guard then refused
    (``echo``: an answer copied from inside the passage), which the judge counted as answered."""
    kinds = Counter(judge.stats.unscored_kinds)
    kinds[ECHO] += sum(u is not None and u.kind == ECHO for u in unscored)
    return +kinds


def _kinds_text(kinds: Counter[str]) -> str:
    """`` (2 truncated, 1 echo)``, or "" when nothing was unscored."""
    text = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    return f" ({text})" if text else ""


def _progress_text(grader: Grader) -> str:
    judges = judges_of(grader)
    tokens = sum(sum(_tokens(judge)) for judge in judges)
    cached = sum(j.stats.cache_hits + j.stats.deduped for j in judges)
    retries, unscored = sum(j.stats.retries for j in judges), sum(j.stats.unscored for j in judges)
    cost = "unknown" if any(j.price is None for j in judges) else f"${judges[0].spent:.4f}"
    return f"cached {cached}  retries {retries}  unscored {unscored}  tokens {tokens}  {cost}"


async def _run(judge: Grader, pairs: list[Pair], listwise: int | None, seed: int) -> list[Graded]:
    console = Console(stderr=True)
    columns = (TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"))
    with Progress(*columns, TimeElapsedColumn(), console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task(_progress_text(judge), total=len(pairs))

        def advance(_: Graded) -> None:
            progress.update(task, advance=1, description=_progress_text(judge))

        try:
            return await grade_pairs_detailed(judge, pairs, listwise=listwise, seed=seed, on_label=advance)
        finally:
            await judge.aclose()


@main.command()
@click.argument("pairs_file", metavar="PAIRS.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Labels JSONL.")
@panel_options
@click.option("--listwise", type=click.IntRange(1, 50), default=None, help="Grade N chunks of a question per call.")
@click.option("--seed", default=0, show_default=True, help="Seed of the listwise shuffle.")
@click.option("--dry-run", is_flag=True, help="Count calls, cached pairs, tokens and cost; call nothing.")
def grade(
    *, pairs_file: Path, output: Path, listwise: int | None, seed: int, dry_run: bool, judging: JudgeOptions
) -> None:
    """Grade (question, chunk) pairs for relevance on the 0-3 TREC DL / UMBRELA scale.

    Each input line has query_id, question, chunk_id and text. Each output line has query_id, chunk_id, grade
    (0-3, or null when the judge could not score it: see "unscored"), reason, model, prompt and cached. Answers
    are cached, so a rerun (or an interrupted run) pays only for pairs never judged before.

    With several --judge, every pair is graded by each judge (each cached on its own) and the grades are combined
    by --combine; each line then carries "votes" (each judge's grade and reason), and the summary gives the
    agreement between the judges (Krippendorff's alpha, Cohen's kappa per pair of judges).

    \b
    Examples:
      assay grade pairs.jsonl -o labels.jsonl --judge offline
      assay grade pairs.jsonl -o labels.jsonl --judge openai/gpt-4o-mini --dry-run
      assay grade pairs.jsonl -o labels.jsonl --judge openai/gpt-4o-mini --batch   # half price, within 24 h
      assay grade pairs.jsonl -o labels.jsonl --judge hosted_vllm/Qwen2.5-7B --api-base http://gpu:8000/v1 \\
          --concurrency 64 --listwise 5
      assay grade pairs.jsonl -o labels.jsonl --judge openai/gpt-4o-mini --judge anthropic/claude-3-5-haiku-latest \\
          --judge openai/gpt-4.1-mini --combine majority   # a panel: each judge's vote on every line
    """
    pairs = read_pairs(pairs_file)
    if dry_run:
        _dry_run(dry_run_judge(judging), pairs, listwise, seed, judging)
        return
    judge = judge_from_options(judging)
    runners = start_batches(judge, judging)
    check_context(judge, [LISTWISE_PROMPT if listwise else POINTWISE_PROMPT])
    try:
        graded = run_sync(lambda: _run(judge, pairs, listwise, seed))
    except KeyboardInterrupt:
        interrupted(f"nothing was written to {output}; {judging.kept()}: rerun the same command to resume.")
    with atomic_write(output) as handle:
        for item in graded:
            handle.write(json.dumps(_record(item), ensure_ascii=False) + "\n")
    for line in _summary(judge, graded):
        click.echo(line)
    echo_batch_summary(runners)
    click.echo(f"wrote {output}")
    if graded and all(item.label.grade is None for item in graded):
        kinds = Counter(item.label.unscored.kind for item in graded if item.label.unscored is not None)
        raise NothingProduced(
            f"every one of the {len(graded)} pairs is unscored{_kinds_text(kinds)}: the judge cannot "
            f"grade with this model or these settings; each line of {output} gives its reason and fix"
        )


def _dry_run(judge: Grader, pairs: list[Pair], listwise: int | None, seed: int, judging: JudgeOptions) -> None:
    direct = batch_dry_run(judge, judging)
    estimate = estimate_pairs(judge, pairs, listwise=listwise, seed=seed)
    click.echo(
        f"dry run: {len(pairs)} pairs, {estimate.cached} cached, {estimate.calls} calls to make, "
        f"~{estimate.prompt_tokens} prompt tokens, cost {_bound(estimate.cost_usd)}"
    )
    if isinstance(judge, Panel):
        for model, each in estimate_each(judge, pairs, listwise=listwise, seed=seed):
            click.echo(
                f"  judge {model}: {each.cached} cached, {each.calls} calls, ~{each.prompt_tokens} prompt tokens, "
                f"cost {_bound(each.cost_usd)}"
            )
    if judging.batch:
        click.echo(batch_line(judge, estimate.cost_usd, direct))


def _bound(cost: float | None) -> str:
    return "unknown (no price for this model; give --price)" if cost is None else f"<= ${cost:.4f}"
