"""``assay build``: bootstrap a golden set from a corpus with an LLM judge (or the offline judge).

The command reads as its steps: settings from the flags, the flags checked, then either the dry run (and with
``--detect`` the size a comparison needs) or the build itself (batches started, prompts checked against the judge's
context, the build under its progress bars) and its summary. What it prints is :mod:`assay.cli._build_report`'s.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from assay.cli._app import interrupted, main
from assay.cli._batch_options import batch_dry_run, batch_line, echo_batch_summary, start_batches
from assay.cli._build_report import StageProgress, batch_rounds, print_estimate, print_stopped, print_summary
from assay.cli._judge_options import JudgeOptions, check_context, dry_run_judge, judge_from_options, panel_options
from assay.errors import BudgetExceeded, ConfigError
from assay.formats.golden import GoldenSet
from assay.formats.queries import LoggedQuery, read_queries
from assay.formats.tools import read_tools
from assay.judge.batches import BatchRunner
from assay.judge.panel import Grader, judges_of
from assay.pipelines.bootstrap import BuildEstimate, BuildSettings, build_golden, estimate_build
from assay.pipelines.bootstrap.estimate import estimate_queries
from assay.pipelines.evaluate import EvalSettings
from assay.pipelines.evaluate.statistics import planning

__all__ = ["build"]


def _settings(options: dict[str, Any]) -> BuildSettings:
    return BuildSettings(
        questions=options["questions"],
        per_doc=options["per_doc"],
        max_per_doc=options["max_per_doc"],
        mix=options["mix"],
        seed=options["seed"],
        chunk_tokens=options["chunk_tokens"],
        overlap=options["overlap"],
        critic=not options["no_critic"],
        pool_k=options["pool_k"],
        pool_bm25=options["pool_bm25"],
        pool_runs=tuple(options["pool_run"]),
        pool_run_timeout=options["pool_run_timeout"],
        listwise=options["listwise"] or None,
        conversations=options["conversations"],
        turns=_turns(options["turns"]),
        scrub=not options["no_scrub"],
        tools=read_tools(options["tools"]) if options["tools"] is not None else (),
    )


def _turns(value: str) -> tuple[int, int]:
    """``--turns 2-5`` (or ``3``) -> (2, 5); a malformed value is a ConfigError naming the flag and the fix."""
    low, _, high = value.partition("-")
    try:
        bounds = (int(low), int(high or low))
    except ValueError:
        raise ConfigError(f"--turns {value!r}: give LOW-HIGH turns per conversation, e.g. --turns 2-5") from None
    return bounds


def _mix(value: str | None) -> dict[str, float] | None:
    from assay.pipelines.bootstrap.sampling import parse_mix

    return parse_mix(value) if value is not None else None


@main.command()
@click.argument("corpus", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="Golden-set folder to write.")
@panel_options
@click.option(
    "--questions",
    type=click.IntRange(0),
    default=None,
    help="Questions in total (default 2 per document). Fewer than the documents: that many seed documents are "
    "drawn (seeded, stratified by source folder or file and by size), one question each. 0 with --conversations: "
    "conversations only.",
)
@click.option(
    "--conversations",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Multi-turn conversations to build besides the questions: per turn the utterance as typed, its standalone "
    "rewrite (graded and pooled like a question), how it depends on the history, answer, claims and nuggets.",
)
@click.option(
    "--turns",
    default="2-4",
    show_default=True,
    metavar="LOW-HIGH",
    help="Turns per conversation, drawn in this range (seeded).",
)
@click.option(
    "--per-doc", type=click.IntRange(1), default=None, help="Questions per document (instead of --questions)."
)
@click.option(
    "--tools",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSON file of the tools your system can call (OpenAI's function shape, or name, description and "
    "parameters): each answerable question gets the tool calls it needs drafted (e.g. an arithmetic step over two "
    "facts), checked against the schemas, flagged drafted_tool_calls for review in assay audit.",
)
@click.option("--max-per-doc", type=click.IntRange(1), default=8, show_default=True, help="Cap per document.")
@click.option("--mix", default=None, help="Type shares, e.g. factoid=0.3,numeric=0.2,multi-hop=0.2 (others 0).")
@click.option("--seed", default=0, show_default=True, help="Seed of sampling, styles and the listwise shuffle.")
@click.option("--chunk-tokens", type=click.IntRange(16), default=512, show_default=True, help="Chunk size (tokens).")
@click.option("--overlap", type=click.IntRange(0), default=64, show_default=True, help="Chunk overlap (tokens).")
@click.option(
    "--pool-k",
    type=click.IntRange(0),
    default=20,
    show_default=True,
    help="Top k pooled per question, of BM25 and of each --pool-run.",
)
@click.option(
    "--pool-run",
    multiple=True,
    metavar="NAME=RUN|NAME=cmd:COMMAND",
    help="Pool the top k of your own retriever too (repeatable): a TREC or JSONL run over the questions' ids (made "
    "from topics.tsv of --stop-after questions), or a command called per question with {query}, {qid} and {k} "
    "replaced, printing ranked chunk ids one per line.",
)
@click.option(
    "--pool-bm25/--no-pool-bm25", default=True, show_default=True, help="Pool assay's BM25 top k (off: runs only)."
)
@click.option(
    "--pool-run-timeout",
    type=click.FloatRange(0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds a --pool-run command may take per question.",
)
@click.option(
    "--stop-after",
    type=click.Choice(["questions"]),
    default=None,
    help="Stop once questions are accepted: write topics.tsv, questions.jsonl and chunks.jsonl to -o for your "
    "retrievers, then build again with --pool-run.",
)
@click.option(
    "--listwise",
    type=click.IntRange(0, 50),
    default=10,
    show_default=True,
    help="Pooled chunks graded per relevance call (0: one call per chunk, pointwise). Listwise needs about 1/N of "
    "the calls; each chunk is still graded on its own 0-3 scale, in a seeded shuffle against position bias, and "
    "cached per (question, chunk) so labels are reused across groupings. Pointwise shows one chunk at a time.",
)
@click.option("--no-critic", is_flag=True, help="Skip the critic stage (one call per question fewer).")
@click.option("--dry-run", is_flag=True, help="Estimate calls, tokens and cost per stage; call nothing.")
@click.option(
    "--detect",
    type=click.FloatRange(0, min_open=True),
    multiple=True,
    metavar="X",
    help="With --dry-run: the questions (and documents) to ask for so that a comparison detects a difference X on "
    "the primary metric at 80% power (repeatable).",
)
@click.option(
    "--pilot",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    metavar="RESULTS_JSON",
    help="With --detect: an earlier evaluation's results.json (or its report folder) whose observed sd and design "
    "effect the plan uses (default: stated assumptions).",
)
@click.option(
    "--queries",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Build from your own questions instead of generated ones: a query log (text, one per line; CSV or JSONL "
    "with question and optional id, timestamp, count; or a run from assay import traces). --questions N picks N "
    "representative ones (default 100): near-duplicates merged, stratified by wording, seeded.",
)
@click.option(
    "--no-scrub", is_flag=True, help="With --queries: keep e-mails, phones, cards, IBANs and tokens unmasked."
)
@click.option("--overwrite", is_flag=True, help="Replace an existing golden-set folder.")
def build(  # noqa: PLR0917
    corpus: tuple[Path, ...],
    output: Path,
    dry_run: bool,
    detect: tuple[float, ...],
    pilot: Path | None,
    overwrite: bool,
    stop_after: str | None,
    judging: JudgeOptions,
    queries: Path | None,
    **options: Any,
) -> None:
    """Build a golden set from a corpus: typed questions with reference answers, graded relevance of every pooled
    chunk (sources, BM25 top k, neighbours, near-duplicates), nuggets mapped to supporting chunks, and a manifest.

    Relevance is graded listwise by default: up to --listwise 10 pooled chunks of a question per call, about 2 calls
    per question instead of 20. Each chunk is still graded on its own 0-3 scale; --listwise 0 grades one chunk per
    call (pointwise: about 10x the relevance calls, the closest to a human assessor reading one passage at a time).

    Pools from your own retrievers (a corpus indexed in Elasticsearch, OpenSearch, Vespa or a vector database):
    --pool-run NAME=cmd:COMMAND asks it per question during the build; with run files, build in two steps,
    --stop-after questions, then --pool-run NAME=RUN (same options and judge cache, so the same questions).

    Several --judge make a panel: every pooled pair is graded by each judge and combined by --combine (each label
    keeps every judge's vote; the summary gives their agreement and assay audit shows the pairs they disagree on
    first); the other stages use the first judge.

    --dry-run --detect X adds how many accepted questions, and from how many documents at the build's questions per
    document, a comparison needs to detect a difference X at 80% power: from an earlier evaluation's observed
    spread (--pilot REPORT/results.json), else from assumptions it prints.

    --conversations N adds N conversations (--questions 0: only them). Later turns lean on earlier ones (a pronoun,
    an ellipsis, a comparison with an earlier answer, a topic shift, a turn the documents cannot answer); each turn
    is a golden question whose text is its standalone rewrite (TREC CAsT), checked by the rewrite check (answerable
    alone, and meaning the utterance given the history), pooled and graded like any question. A turn dropped as a
    test item (leakage, near-duplicate) stays as an unjudged context turn; any other drop ends its conversation
    there. A chunk opens one conversation. They are written to conversations.jsonl.

    --queries FILE builds from your users' questions: personal data masked (--no-scrub keeps it), N representative
    questions sampled, pooled and graded as above; a question with no chunk graded 2 or more is flagged
    unanswerable from the corpus (counted in the summary), the others get reference answers, claims and nuggets
    drafted from their graded chunks (flags drafted: true, queued first in assay audit for people to confirm).

    --tools FILE (the tools your system can call, as you give them to the model) drafts each answerable question's
    reference tool calls with one judge call: the calls a system must make to reach the answer, in order (none when
    the passages answer it without a tool). A call naming no listed tool, or whose arguments miss a required one or
    are not JSON, is left out and counted; the kept ones are in questions.jsonl (tool_calls) and flagged
    drafted_tool_calls, queued first in assay audit. assay eval scores a run's tool steps against them.
    --dry-run samples for real and counts the relevance calls exactly; drafts and support are a range.

    Judge calls are cached: an interrupted build (Ctrl-C, --max-cost) rerun with the same options resumes and pays
    for no call twice. The folder appears only once complete.

    \b
    Examples:
      assay build datasets/demo/corpus -o golden/ --judge offline --questions 60
      assay build docs/ -o golden/ --judge openai/gpt-4o-mini --questions 200 --dry-run
      assay build docs/ -o golden/ --judge offline --dry-run --detect 0.02 --pilot report/results.json
      assay build docs/ -o golden/ --judge openai/gpt-4o-mini --per-doc 3 --max-cost 2.50
      assay build docs/ -o golden/ --judge offline --questions 0 --conversations 20 --turns 2-5
      assay build docs/ -o golden/ --judge offline --queries queries.csv --questions 200
      assay build docs/ -o golden/ --judge openai/gpt-4o-mini --questions 200 --tools tools.json
      assay build docs/ -o golden/ --judge openai/gpt-4o-mini --questions 10000 --batch   # half price
      assay build docs/ -o golden/ --judge openai/gpt-4o-mini --judge anthropic/claude-3-5-haiku-latest \\
          --judge openai/gpt-4.1-mini --combine majority   # a panel grades relevance
      assay build chunks.jsonl -o golden/ --judge offline --questions 200 \\
          --pool-run 'es=cmd:python es_search.py --query {query} --k {k}' --no-pool-bm25
      assay build docs/ -o golden/ --judge hosted_vllm/Qwen2.5-7B --api-base http://gpu:8000/v1 \\
          --concurrency 64 --listwise 0 --mix factoid=0.4,multi-hop=0.3,unanswerable=0.3
    """
    options["mix"] = _mix(options["mix"])
    settings = _settings(options)
    paths = list(corpus)
    console = Console(stderr=True)
    basis = _size_basis(dry_run=dry_run, detect=detect, pilot=pilot)
    if queries is not None and stop_after:
        raise ConfigError("--queries does not take --stop-after: the questions are the users' own, none is generated")
    logged = read_queries(queries) if queries is not None else None
    if dry_run:
        estimate = _dry_run(paths, settings, judging, logged, console)
        if detect or pilot is not None:
            _print_size_plan(basis, detect, settings, estimate)
        return
    judge = judge_from_options(judging)
    runners = _start(judge, judging, settings, stop_after=stop_after, logged=logged)
    golden = _run(paths, judge, settings, judging, console, output=output, overwrite=overwrite, stop_after=stop_after,
                  logged=logged)  # fmt: skip
    if stop_after == "questions":
        print_stopped(golden, output, corpus)
        return
    print_summary(golden, judge, output, console)
    echo_batch_summary(runners)


def _size_basis(*, dry_run: bool, detect: tuple[float, ...], pilot: Path | None) -> planning.Basis:
    """What a golden set's size is planned from: the spread an earlier evaluation observed (``--pilot``), else
    assumptions. ``--detect`` and ``--pilot`` plan before building, so they need ``--dry-run``."""
    if (detect or pilot is not None) and not dry_run:
        raise ConfigError("--detect and --pilot plan a golden set's size before building it: give --dry-run too")
    return planning.pilot_basis(planning.read_pilot(pilot), pilot) if pilot is not None else planning.assumed_basis()


def _dry_run(
    paths: list[Path],
    settings: BuildSettings,
    judging: JudgeOptions,
    logged: list[LoggedQuery] | None,
    console: Console,
) -> BuildEstimate:
    """Count the build's calls, tokens and cost per stage with a judge that calls nothing, and print them."""
    estimator = dry_run_judge(judging)
    direct = batch_dry_run(estimator, judging)
    estimate = (estimate_build(paths, judge=estimator, settings=settings) if logged is None
                else estimate_queries(paths, logged, judge=estimator, settings=settings))  # fmt: skip
    print_estimate(estimate, console)
    if judging.batch:
        click.echo(batch_line(estimator, estimate.cost_usd, direct))
    return estimate


def _print_size_plan(
    basis: planning.Basis, detect: tuple[float, ...], settings: BuildSettings, estimate: BuildEstimate
) -> None:
    """How many accepted questions, from how many documents, a comparison needs to detect each ``--detect`` effect
    (the default effects without it), at the build's questions per document."""
    per_doc = _per_doc(settings, estimate.documents)
    effects = detect or EvalSettings.detect
    for line in planning.build_plan(basis, effects, per_doc=per_doc, documents=estimate.documents):
        click.echo(line)


def _start(
    judge: Grader,
    judging: JudgeOptions,
    settings: BuildSettings,
    *,
    stop_after: str | None,
    logged: list[LoggedQuery] | None,
) -> dict[str, BatchRunner]:
    """Turn batch judging on when asked (and say what it waits for), and check that every prompt the build sends
    fits the judge's context."""
    runners = start_batches(judge, judging)
    if runners:
        click.echo(batch_rounds(settings, stop_after), err=True)
    prompts = ["question_generation", "question_critic", "relevance", "relevance_listwise", "support"]
    prompts += ["reference_draft"] if logged is not None else []
    check_context(judge, [*prompts, *(["conversation", "rewrite_check"] if settings.conversations else [])])
    return runners


def _run(
    paths: list[Path],
    judge: Grader,
    settings: BuildSettings,
    judging: JudgeOptions,
    console: Console,
    *,
    output: Path,
    overwrite: bool,
    stop_after: str | None,
    logged: list[LoggedQuery] | None,
) -> GoldenSet:
    """The build itself under its progress bars; a spent budget or a Ctrl-C ends the command with one line saying
    what was kept."""
    progress = StageProgress(judge, console)
    try:
        with progress.bar:
            return build_golden(
                paths,
                judge=judge,
                settings=settings,
                progress=progress,
                output=output,
                overwrite=overwrite,
                notify=progress.bar.console.print if console.is_terminal else lambda line: click.echo(line, err=True),
                stop_after="questions" if stop_after == "questions" else None,
                queries=logged,
            )
    except BudgetExceeded as exc:
        calls = sum(one.stats.calls for one in judges_of(judge))
        click.echo(f"Stopped: {exc}. Nothing was written to {output}; {calls} calls were made.", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        interrupted(f"nothing was written to {output}; {judging.kept()}: rerun the same command to resume.")


def _per_doc(settings: BuildSettings, documents: int) -> float:
    """Questions per document the build asks for: --per-doc, else --questions spread over the documents (at least
    one each), else 2."""
    if settings.per_doc is not None:
        return float(settings.per_doc)
    if settings.questions is not None:
        return round(max(1.0, settings.questions / max(documents, 1)), 2)
    return 2.0
