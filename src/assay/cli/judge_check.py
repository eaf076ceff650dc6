"""``assay judge-check``: a judge card (agreement with people, consistency, position, length, keyword stuffing,
injected instructions, cost) for one judge and prompt set; with ``--answers``, an answer judge card (the judge's
answer measures against people's judgements of answers)."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from assay.aio import run_sync
from assay.cli._app import main
from assay.cli._judge_options import JudgeOptions, check_context, judge_options, one_dry_run_judge, one_judge
from assay.cli.cache import resolve_cache_dir
from assay.errors import ConfigError
from assay.formats.answer_judgements import read_answer_judgements
from assay.judge import Judge
from assay.judge.client import Estimate
from assay.judge.criteria import load_criteria
from assay.pipelines.judgecheck import CheckSettings, JudgeCard, check_judge, estimate_check, load_source, write_card
from assay.pipelines.judgecheck.answers import estimate_answers, measure_answers, write_answer_card
from assay.pipelines.judgecheck.answers import headline as answer_headline
from assay.pipelines.judgecheck.criterion import (
    estimate_criterion_card,
    measure_criterion,
    write_criterion_card,
)
from assay.pipelines.judgecheck.criterion import headline as criterion_headline
from assay.pipelines.judgecheck.lookup import card_home
from assay.pipelines.judgecheck.plan import LISTWISE, POINTWISE
from assay.pipelines.judgecheck.render import format_figure, headline
from assay.pipelines.judgecheck.source import ProbeSource

__all__ = ["judge_check"]


async def _run(judge: Judge, source: ProbeSource, settings: CheckSettings) -> JudgeCard:
    console = Console(stderr=True)
    columns = (TextColumn("probing"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"))
    with Progress(*columns, TimeElapsedColumn(), console=console, disable=not console.is_terminal) as bar:
        task = bar.add_task("", total=None)

        def advance(kind: str, done: int, total: int) -> None:
            s, usage = judge.stats, judge.usage.values()
            tokens = sum(u.prompt_tokens + u.completion_tokens for u in usage)
            cost = "cost unknown" if judge.price is None else f"${judge.spent:.4f}"
            counts = f"calls {s.calls}  cached {s.cache_hits + s.deduped}  unscored {s.unscored}"
            text = f"{kind}  {counts}  tokens {tokens}  {cost}"
            bar.update(task, completed=done, total=total, description=text)

        try:
            return await check_judge(judge, source, settings, advance)
        finally:
            await judge.aclose()


def _print_estimates(estimates: dict[str, Estimate], what: str) -> None:
    for kind, e in estimates.items():
        click.echo(f"  {kind:<26} {e.calls:>5} calls to make, {e.cached:>5} cached, ~{e.prompt_tokens} prompt tokens")
    costs = [e.cost_usd for e in estimates.values()]
    cost = (
        "unknown (no price for this model; give --price)" if None in costs else f"<= ${sum(c or 0 for c in costs):.4f}"
    )
    calls = sum(e.calls for e in estimates.values())
    click.echo(f"dry run: {what}, {calls} calls to make in all, cost {cost}")


PROBE_OPTIONS = ("queries", "repeats", "per_probe", "groups")


def _check_answers(ctx: click.Context, labels: Path | None, answers: Path | None) -> None:
    if (labels is None) == (answers is None):
        raise ConfigError("give --labels (graded passages: a relevance card) or --answers (people's judgements of "
                          "answers: an answer card), one of the two")  # fmt: skip
    if answers is not None:
        given = [f"--{n.replace('_', '-')}" for n in PROBE_OPTIONS
                 if ctx.get_parameter_source(n) is not ParameterSource.DEFAULT]  # fmt: skip
        if given:
            raise ConfigError(f"{', '.join(given)} tune(s) the relevance probes of --labels; --answers asks no probe")


def _criterion_card(criterion_file: Path, answers: Path, output: Path, dry_run: bool, judging: JudgeOptions) -> None:
    (criterion,) = load_criteria([criterion_file])
    if not criterion.judged:
        raise ConfigError(f"{criterion_file}: criterion {criterion.name} is a deterministic check; --criterion "
                          "measures a judged one (scale, steps or tree)")  # fmt: skip
    judgements = read_answer_judgements(answers)
    if dry_run:
        estimates = estimate_criterion_card(judgements, criterion, one_dry_run_judge(judging))
        _print_estimates(estimates, f"criterion {criterion.name} on {judgements.source}")
        return
    judge = one_judge(judging)
    if judge.model == "offline":
        raise ConfigError("--criterion needs a model judge (--judge MODEL): the offline judge has no reading of a "
                          "team's criterion")  # fmt: skip
    card = measure_criterion(judgements, criterion, judge)
    for line in criterion_headline(card):
        click.echo(line)
    written = write_criterion_card(card, output)
    click.echo(f"wrote {', '.join(str(p) for p in written)}")


def _answer_card(answers: Path, output: Path, dry_run: bool, judging: JudgeOptions) -> None:
    judgements = read_answer_judgements(answers)
    what = f"{len(judgements.answers)} rated answers" if judgements.answers else f"{len(judgements.pairs)} pairs"
    if dry_run:
        _print_estimates(estimate_answers(judgements, one_dry_run_judge(judging)), f"{what} ({judgements.source})")
        return
    judge = one_judge(judging)
    card = measure_answers(judgements, judge, judging.specs[0])
    for line in answer_headline(card):
        click.echo(line)
    written = write_answer_card(card, output)
    click.echo(f"wrote {', '.join(str(p) for p in written)} ({what}, {judgements.source})")


@main.command("judge-check")
@click.option(
    "--labels",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Graded pairs to probe: a golden set (its people's labels give agreement) or a SMART folder (CISI).",
)
@click.option(
    "--answers",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="People's judgements of answers (MTRAG or RAGChecker JSON, or JSONL): an answer card instead.",
)
@click.option(
    "--criterion",
    "criterion_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="With --answers: a judged criterion file (criteria/NAME.md) to measure on those answers: consistency, "
    "verbosity and injection (criterion.json, criterion.md).",
)
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False, path_type=Path), help="Card folder.")
@judge_options
@click.option("--queries", default=20, show_default=True, type=click.IntRange(1), help="Questions drawn from --labels.")
@click.option("--seed", default=0, show_default=True, help="Seed of the draws (questions, filler, groups).")
@click.option("--repeats", default=2, show_default=True, type=click.IntRange(0, 10), help="Asks past the cache.")
@click.option("--per-probe", default=40, show_default=True, type=click.IntRange(1), help="Passages per probe.")
@click.option("--groups", default=8, show_default=True, type=click.IntRange(0), help="Listwise groups (position).")
@click.option("--dry-run", is_flag=True, help="Count calls, cached items, tokens and cost per kind; call nothing.")
@click.pass_context
def judge_check(
    ctx: click.Context,
    *,
    labels: Path | None,
    answers: Path | None,
    criterion_file: Path | None,
    output: Path,
    queries: int,
    seed: int,
    repeats: int,
    per_probe: int,
    groups: int,
    dry_run: bool,
    judging: JudgeOptions,
) -> None:
    """Measure a judge before trusting it: write a judge card (card.json, card.md, card.html).

    Grades pairs drawn from --labels, then the same passages altered one way each: padded with unrelated
    sentences, stuffed with the question's words, carrying injected orders (plain, JSON-shaped, a closing tag,
    French); listwise groups in every order; the same items asked again past the cache; orders to write a marker
    into generated questions and claims. With people's grades, agreement (kappas, leniency, confusion). Every call is
    cached, so a rerun pays nothing. A copy of the card is kept beside the judge cache (CACHE/cards/MODEL/, not with
    --no-cache), where assay eval finds it and shows its headline figures beside the metrics.

    With --answers FILE instead: people's ratings of answers, or preferences between two answers (MTRAG's human
    evaluation JSON, RAGChecker's human_labeled_data.json, or JSONL lines {"question", "reference", "answer",
    "ratings": {...}} or {..., "answer_a", "answer_b", "preference": {...}}), evaluated by the judge as assay eval
    would; per answer measure and criterion: Pearson and Spearman with intervals, the share of pairs ordered as
    people order them, the share unscored, beside each person against the others (answers.json, answers.md).
    With --criterion FILE beside --answers: that judged criterion asked of those answers, again past the cache
    (consistency), padded with filler (verbosity) and carrying an order to pass (injection): criterion.json, .md.

    \b
    Examples:
      assay judge-check --judge offline --labels ../shared/data/cisi -o card/
      assay judge-check --judge openai/gpt-4o-mini --labels golden/ -o card/ --dry-run
      assay judge-check --judge offline --answers human_labeled_data.json -o card/
      assay judge-check --judge openai/gpt-4o-mini --answers answers.jsonl --criterion criteria/cites.md -o card/
    """
    _check_answers(ctx, labels, answers)
    if criterion_file is not None:
        if answers is None:
            raise ConfigError("--criterion measures the criterion on answers: give them with --answers FILE")
        _criterion_card(criterion_file, answers, output, dry_run, judging)
        return
    if answers is not None:
        _answer_card(answers, output, dry_run, judging)
        return
    assert labels is not None
    settings = CheckSettings(queries=queries, seed=seed, repeats=repeats, per_probe=per_probe, groups=groups)
    source = load_source(labels, queries=queries, seed=seed)
    if dry_run:
        estimates = estimate_check(one_dry_run_judge(judging), source, settings)
        _print_estimates(estimates, f"{len(source.items)} pairs")
        return
    judge = one_judge(judging)
    check_context(judge, [POINTWISE, LISTWISE])
    card = run_sync(lambda: _run(judge, source, settings))
    write_card(card, output)
    if not judging.no_cache:
        kept = card_home(resolve_cache_dir(judging.cache_dir), card.model)
        write_card(card, kept)
        click.echo(f"kept a copy in {kept} (assay eval shows it beside the metrics of this judge)")
    for figure in headline(card):
        click.echo(f"{figure.label}: {format_figure(figure)}")
    click.echo(f"wrote {output}/card.json, card.md, card.html")
