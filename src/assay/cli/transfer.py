"""``assay export`` (golden set -> BEIR / TREC / RAGAS / CSV), ``assay import beir|trec|ragas`` (-> golden set; with
``--judge``, ``import ragas`` drafts the references' claims and nuggets: :mod:`assay.pipelines.bootstrap.references`)
``assay import traces`` (production traces -> a run) and ``assay import criteria`` (peers' custom metrics -> criteria
files)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn, TimeElapsedColumn

from assay.audit.pool import join_pool
from assay.audit.store import STORE_NAME, LabelStore
from assay.cli._app import interrupted, main, warn
from assay.cli._build_report import StageProgress
from assay.cli._judge_options import (
    JudgeOptions,
    check_context,
    draft_judge_options,
    one_dry_run_judge,
    one_judge,
)
from assay.cli._trace_options import max_line_option
from assay.errors import BudgetExceeded, ConfigError, InputError
from assay.formats.criteria_import import read_peer_criteria, write_criteria
from assay.formats.golden import GoldenSet
from assay.formats.progress import reporting
from assay.pipelines.bootstrap.real_questions import DRAFT
from assay.pipelines.bootstrap.references import (
    CLAIMS_PROMPT,
    NUGGETS_PROMPT,
    draft_from_references,
    estimate_reference_drafts,
    to_draft,
)
from assay.pipelines.traces.imports import TracesImport, import_traces, write_traces_run
from assay.pipelines.transfer import EXPORT_FORMATS, ExportSummary, export_golden
from assay.pipelines.transfer.assembly import ImportSummary
from assay.pipelines.transfer.imports import (
    import_beir,
    import_conversations,
    import_ragas,
    import_trec,
)
from assay.types import LabelSource

__all__ = ["export", "import_group"]

F = TypeVar("F", bound=Callable[..., Any])
_SOURCES = click.Choice(["imported", "human"])
_SOURCE_HELP = "Provenance source of the imported labels; 'human' for assessor judgments (they override the judge)."


def _check_out(out: str, overwrite: bool) -> None:
    """Fail before any reading when the output folder is taken."""
    path = Path(out)
    if path.is_file():
        raise InputError(f"{path} is a file: give a folder for the output")
    if path.is_dir() and any(path.iterdir()) and not overwrite:
        raise InputError(f"{path} exists and is not empty: choose another folder or pass --overwrite")


@contextmanager
def _bars() -> Iterator[None]:
    """A rich bar per file read (bytes) or written (records) inside the block, on stderr; gone once done."""
    columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def report(what: str, done: int, total: int) -> None:
            if what not in tasks:
                tasks[what] = bar.add_task(what, total=total or None)
            bar.update(tasks[what], completed=done, total=total or None)

        with reporting(report):
            yield


@main.command("export")
@click.argument("golden", type=click.Path(exists=True, file_okay=False))
@click.option("--to", "fmt", type=click.Choice(EXPORT_FORMATS), required=True, help="Output format.")
@click.option("-o", "--out", required=True, type=click.Path(), help="Output folder (created atomically).")
@click.option(
    "--min-grade",
    type=click.IntRange(-1, 3),
    default=None,
    help="Export only grades >= this (default: all scored; for ragas 2, the chunks that answer).",
)
@click.option("--split", default="test", show_default=True, help="BEIR qrels split name (qrels/SPLIT.tsv).")
@click.option("--overwrite", is_flag=True, help="Replace a non-empty output folder.")
def export(golden: str, fmt: str, out: str, min_grade: int | None, split: str, overwrite: bool) -> None:  # noqa: PLR0917
    """Write the golden set GOLDEN in a format other tools read.

    \b
    Examples:
      assay export golden/ --to beir -o golden-beir/          corpus.jsonl, queries.jsonl, qrels/test.tsv
      assay export golden/ --to trec -o trec/ --min-grade 1   qrels.txt (qid 0 docid grade), topics.tsv,
                                                              passages.jsonl (judged passages' offsets)
      assay export golden/ --to ragas -o ragas/               ragas.jsonl (RAGAS Testset/EvaluationDataset), .csv
      assay export golden/ --to csv -o sheets/                labels.csv and questions.csv for spreadsheets
      assay export golden/ --to ragas-multiturn -o r/         ragas_multiturn.jsonl: a MultiTurnSample per turn
      assay export golden/ --to deepeval -o d/                deepeval.json: a ConversationalTestCase each
      assay export golden/ --to cast -o cast/                 topics.json (raw + rewritten utterances), qrels.txt
                                                              per turn ({conversation}_{turn}), topics.tsv

    ragas-multiturn, deepeval and cast need conversations (assay build --conversations N): each turn's history is
    the earlier utterances with their reference answers; a turn's rewrite and dependency travel in its metadata.

    Unscored labels are never exported as grades; the command says how many there are.

    Passages judged by `assay eval` (GOLDEN/passages.jsonl, the pooled spans; a person's grade from `assay audit`
    before the judge's) go to BEIR and TREC too: in BEIR as corpus entries whose metadata holds doc_id, start and
    end, with their qrels rows; in TREC as qrels rows, and passages.jsonl maps each passage id to doc_id, start, end
    and text (null offsets for a passage found in no document). `assay import beir` of the export brings them back
    as chunks of their documents at those offsets. RAGAS and CSV leave them out.
    """
    _check_out(out, overwrite)
    _join_pool(Path(golden))
    with _bars():
        loaded = GoldenSet.load(golden)
        summary = export_golden(loaded, fmt, out, min_grade=min_grade, split=split, overwrite=overwrite)
    _report_export(summary)


def _join_pool(golden: Path) -> None:
    """People's grades of spans in the audit store reach passages.jsonl before it is read (normally they are there
    already: the audit page writes them as they are made)."""
    if (golden / STORE_NAME).is_file():
        join_pool(LabelStore.in_folder(golden), golden)


def _report_export(summary: ExportSummary) -> None:
    files = ", ".join(f"{name} ({count})" for name, count in summary.files.items())
    click.echo(f"Wrote {summary.format} to {summary.out}: {files}")
    on_passages = (
        f" ({summary.passage_grades} of them on {summary.passages} judged passages)" if summary.passages else ""
    )
    click.echo(f"{summary.questions} questions; {summary.grades} graded labels exported{on_passages}")
    click.echo(f"{summary.unscored} unscored pair(s) not exported as grades")
    if summary.grade_threshold is not None:
        click.echo(f"{summary.below_min_grade} graded label(s) below grade {summary.grade_threshold} left out")
    if summary.renamed_ids:
        warn(f"{summary.renamed_ids} id(s) held characters {summary.format} cannot; they were percent-encoded (e.g. "
             "a space as %20).")  # fmt: skip
    for note in summary.notes:
        click.echo(f"note: {note}")


@main.group("import")
def import_group() -> None:
    """Make a golden set from data you already have (BEIR, TREC or RAGAS), a run from production traces, or criteria
    files from DeepEval's and RAGAS's custom metrics.

    \b
    Examples:
      assay import beir scifact/ -o golden/ --source human
      assay import trec qrels.txt topics.tsv corpus.jsonl -o golden/
      assay import ragas testset.jsonl -o golden/
      assay import ragas testset.jsonl -o golden/ --judge offline   references' claims and nuggets drafted
      assay import traces traces.jsonl -o run.jsonl --golden golden/
      assay import criteria my_metrics.py -o criteria/
    """


def _out_options(command: F) -> F:
    command = click.option("--overwrite", is_flag=True, help="Replace a non-empty output folder.")(command)
    return click.option("-o", "--out", required=True, type=click.Path(), help="Golden-set folder to write.")(command)


def _qrels_options(command: F) -> F:
    command = click.option("--all-queries", is_flag=True, help="Keep queries that have no qrels line too.")(command)
    command = click.option("--clip-grades", is_flag=True, help="Cap grades outside -1..3 into it.")(command)
    return click.option("--source", type=_SOURCES, default="imported", show_default=True, help=_SOURCE_HELP)(command)


@import_group.command("beir")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--split", default="test", show_default=True, help="Which qrels/SPLIT.tsv to read.")
@_qrels_options
@_out_options
def import_beir_command(  # noqa: PLR0917
    folder: str, split: str, source: LabelSource, clip_grades: bool, all_queries: bool, out: str, overwrite: bool
) -> None:
    """A golden set from a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv).

    \b
    Examples:
      assay import beir datasets/scifact -o golden/ --source human
      assay import beir nfcorpus/ --split dev -o golden-dev/ --clip-grades
    """
    _check_out(out, overwrite)
    with _bars():
        summary = import_beir(folder, split=split, source=source, clip_grades=clip_grades, all_queries=all_queries)
    _save(summary, out, overwrite)


@import_group.command("trec")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@click.argument("corpus", type=click.Path(exists=True))
@_qrels_options
@_out_options
def import_trec_command(  # noqa: PLR0917
    qrels: str,
    queries: str,
    corpus: str,
    source: LabelSource,
    clip_grades: bool,
    all_queries: bool,
    out: str,
    overwrite: bool,
) -> None:
    """A golden set from TREC QRELS, a QUERIES file and a CORPUS (.jsonl, or a folder of documents).

    QUERIES: qid<TAB>text lines, JSONL ({"_id", "text"}) or TREC <top> topics. Each corpus document is one
    passage whose id is what the qrels name (for a folder: the path relative to it, e.g. policies/refunds.md).

    \b
    Examples:
      assay import trec qrels.txt topics.tsv corpus.jsonl -o golden/ --source human
      assay import trec 2019qrels-pass.txt queries.tsv docs/ -o golden/ --clip-grades
    """
    _check_out(out, overwrite)
    with _bars():
        summary = import_trec(qrels, queries, corpus, source=source, clip_grades=clip_grades, all_queries=all_queries)
    _save(summary, out, overwrite)


@import_group.command("ragas")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--grade", type=click.IntRange(1, 3), default=2, show_default=True, help="Grade of a reference context.")
@click.option("--source", type=_SOURCES, default="imported", show_default=True, help=_SOURCE_HELP)
@_out_options
@click.option("--dry-run", is_flag=True, help="With --judge: price drafting the claims and nuggets; call nothing.")
@draft_judge_options
def import_ragas_command(  # noqa: PLR0917
    file: str, grade: int, source: LabelSource, out: str, overwrite: bool, dry_run: bool, judging: JudgeOptions
) -> None:
    """A golden set from a RAGAS test set (JSONL or CSV: user_input, reference, reference_contexts[, _ids]).

    With --judge, each reference answer also gets its claims and nuggets drafted, as assay build drafts them (two
    calls per question: the claims prompt on the reference, the nuggets prompt on the question, the reference and
    its contexts), so nugget recall and the claim measures work on the set, with or without passages in the runs
    (a set of questions and reference answers alone evaluates answers only). The reference answers stay as given.
    --dry-run prices the calls; every call is cached, so an import stopped part-way (Ctrl-C, --max-cost) and run
    again asks nothing it already asked (the offline judge caches only with --cache-dir).

    \b
    Examples:
      assay import ragas testset.jsonl -o golden/
      assay import ragas testset.csv -o golden/ --grade 3
      assay import ragas testset.jsonl -o golden/ --judge openai/gpt-4o-mini --dry-run
      assay import ragas testset.jsonl -o golden/ --judge offline      claims and nuggets with no key
    """
    if dry_run and not judging.specs:
        raise ConfigError("--dry-run prices drafting the claims and nuggets: give --judge MODEL (or --judge offline)")
    if not dry_run:
        _check_out(out, overwrite)
    with _bars():
        summary = import_ragas(file, grade=grade, source=source)
    if dry_run:
        _print_draft_estimate(summary, judging)
        return
    if judging.specs:
        _draft(summary, judging, out)
    else:
        _draft_hint(summary)
    _save(summary, out, overwrite)


def _print_draft_estimate(summary: ImportSummary, judging: JudgeOptions) -> None:
    """``--dry-run``: each prompt's calls, cached calls, prompt tokens and cost bound, then the total."""
    estimates = estimate_reference_drafts(summary.golden, one_dry_run_judge(judging))
    questions = len(to_draft(summary.golden))
    click.echo(f"dry run: claims and nuggets of {questions} reference answer(s), judge {judging.spec}")
    for prompt, e in estimates.items():
        click.echo(f"  {prompt}: {e.calls} calls ({e.cached} cached), {e.prompt_tokens} prompt tokens, "
                   f"cost {_cost(e.cost_usd)}")  # fmt: skip
    costs = [e.cost_usd for e in estimates.values()]
    total = None if None in costs else sum(c or 0.0 for c in costs)
    calls = sum(e.calls for e in estimates.values())
    click.echo(f"total: {calls} call(s) to make, cost {_cost(total)} (a bound: each call's max_tokens of completion "
               "priced); nothing was called or written")  # fmt: skip


def _cost(value: float | None) -> str:
    return "unknown (give --price)" if value is None else f"${value:.4f}"


def _draft(summary: ImportSummary, judging: JudgeOptions, out: str) -> None:
    """Draft the claims and nuggets of the imported references (a spent budget or Ctrl-C: nothing written, one line
    saying what the cache kept)."""
    judge = one_judge(judging)
    check_context(judge, [CLAIMS_PROMPT, NUGGETS_PROMPT])
    waiting = len(to_draft(summary.golden))
    progress = StageProgress(judge, Console(stderr=True))
    try:
        with progress.bar:
            done = draft_from_references(summary.golden, judge=judge, progress=progress)
    except BudgetExceeded as exc:
        click.echo(f"Stopped: {exc}. Nothing was written to {out}; {judge.stats.calls} calls were made and cached: "
                   "rerun the same command to resume.", err=True)  # fmt: skip
        sys.exit(1)
    except KeyboardInterrupt:
        interrupted(f"nothing was written to {out}; {judging.kept()}: rerun the same command to resume.")
    counts = done.counts
    usage = judge.usage.get(DRAFT)
    asked = f"{usage.calls} call(s), {usage.cached} cached" if usage is not None else "no call"
    click.echo(f"drafted by {judge.model}: claims for {counts['drafted_claims']}, nuggets for "
               f"{counts['drafted_nuggets']} of {waiting} reference answer(s) ({asked}; "
               f"{counts['draft_unscored']} unscored)")  # fmt: skip


def _draft_hint(summary: ImportSummary) -> None:
    """Without --judge: say how claims and nuggets come to a set of reference answers (nugget recall needs them)."""
    waiting = len(to_draft(summary.golden))
    if waiting:
        click.echo(f"note: {waiting} reference answer(s) have no claims or nuggets; import with --judge MODEL (or "
                   "--judge offline) to draft them, for nugget recall and the claim measures")  # fmt: skip


@import_group.command("ragas-multiturn")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--source", type=_SOURCES, default="imported", show_default=True, help=_SOURCE_HELP)
@_out_options
def import_ragas_multiturn_command(file: str, source: LabelSource, out: str, overwrite: bool) -> None:
    """Conversations from RAGAS multi-turn samples (JSONL: user_input as human/ai messages, reference). Rows that
    are prefixes of a longer row of the same conversation merge; rewrites come from assay's message metadata, else
    a turn's text is its utterance (flagged rewrite_missing).

    \b
    Examples:
      assay import ragas-multiturn ragas_multiturn.jsonl -o golden/
    """
    _check_out(out, overwrite)
    with _bars():
        summary = import_conversations(file, "ragas-multiturn", source=source)
    _save(summary, out, overwrite)


@import_group.command("deepeval")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--grade", type=click.IntRange(1, 3), default=2, show_default=True, help="Grade of a retrieval context.")
@click.option("--source", type=_SOURCES, default="imported", show_default=True, help=_SOURCE_HELP)
@_out_options
def import_deepeval_command(file: str, grade: int, source: LabelSource, out: str, overwrite: bool) -> None:
    """Conversations from DeepEval conversational test cases (a JSON list; turns in the OpenAI role format,
    retrieval_context on assistant turns becomes passages labelled --grade for the turn before).

    \b
    Examples:
      assay import deepeval deepeval.json -o golden/
    """
    _check_out(out, overwrite)
    with _bars():
        summary = import_conversations(file, "deepeval", grade=grade, source=source)
    _save(summary, out, overwrite)


def _save(summary: ImportSummary, out: str, overwrite: bool) -> None:
    golden = summary.golden
    with _bars():
        golden.save(out, overwrite=overwrite)
    for warning in summary.warnings:
        warn(warning)
    label_source = golden.manifest.settings.get("import", {}).get("label_source", "imported")
    click.echo(
        f"Imported {summary.source_format} into {out}: {len(golden.questions)} questions, {len(golden.chunks)} "
        f"passages ({len(golden.documents)} documents), {len(golden.qrels)} labels (source {label_source})"
        + (f", {len(golden.conversations)} conversations" if golden.conversations else "")
    )
    skipped = ", ".join(f"{name} {count}" for name, count in summary.skipped.items() if count)
    if skipped:
        click.echo(f"skipped: {skipped}")


@import_group.command("traces")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False), help="Run file to write (JSONL).")
@click.option(
    "--golden",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Golden set whose questions the traces are matched to (by query id, else by question text).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing run file.")
@max_line_option
def import_traces_command(file: str, out: str, golden: str | None, overwrite: bool, max_line: int) -> None:
    """A run from production traces: OTLP JSON of OpenInference (or OpenTelemetry GenAI) spans.

    FILE is what the OpenTelemetry collector's file exporter writes (one OTLP JSON object per line) or one OTLP
    JSON document. Each trace becomes one run line: the question (the root span's input), the retrieved passages
    (a reranker's output, else the retrievers' documents) with their ids, scores and texts, the answer, the latency,
    tokens and cost of the LLM spans, and the error when the root span failed. With --golden, each trace is matched
    to a golden question by query id (an assay.query_id attribute or metadata.query_id), else by its question's
    words, else by words a typo or two away (one word edit per four words, at most two; two golden questions as
    near: left out as ambiguous); traces that match none are counted and left out. Spans read twice (a
    collector's retry) count once. Without it, a trace keeps its own query id or gets
    t-<first 12 hex digits of its trace id>. Every line keeps the question as asked and the trace id.

    \b
    Examples:
      assay import traces otel-traces.jsonl -o prod.jsonl --golden golden/
      assay eval golden/ prod.jsonl -o report/
      assay import traces export.json -o run.jsonl          (one OTLP JSON document; no golden set yet)
    """
    target = Path(out)
    if target.is_dir():
        raise InputError(f"{target} is a folder: give a file name for the run, e.g. {target / 'run.jsonl'}")
    if target.exists() and not overwrite:
        raise InputError(f"{target} exists: choose another file or pass --overwrite")
    with _bars():
        loaded = GoldenSet.load(golden) if golden is not None else None
        result = import_traces(file, loaded, max_line)
        written = write_traces_run(result, target)
    _report_traces(result, written, target, golden)


def _report_traces(result: TracesImport, written: int, out: Path, golden: str | None) -> None:
    click.echo(f"Read {result.traces} trace(s) ({result.spans} spans) from {result.path}; wrote {written} run "
               f"line(s) to {out}")  # fmt: skip
    how = ", ".join(f"{count} by {name.replace('_', ' ')}" for name, count in result.matched_by.items())
    left = len(result.unmatched) + len(result.ambiguous)
    unmatched = f"; {left} unmatched ({len(result.ambiguous)} ambiguous)" if golden and left else ""
    click.echo(f"{'matched to ' + golden if golden else 'query ids'}: {how}{unmatched}")
    for note in result.notes():
        click.echo(f"note: {note}")


@import_group.command("criteria")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--out", required=True, type=click.Path(file_okay=False), help="Folder of criteria to write into.")
@click.option("--force", "--overwrite", "force", is_flag=True, help="Replace criterion files that exist.")
def import_criteria_command(file: str, out: str, force: bool) -> None:
    """Criteria files (OUT/NAME.md) from a Python FILE of DeepEval GEval and DAGMetric and RAGAS AspectCritic and
    RubricsScore definitions. FILE is read, never run: the arguments assay reads must be written as literals (or
    names bound to them at module level).

    \b
    GEval: evaluation_params -> inputs (INPUT question, ACTUAL_OUTPUT answer, EXPECTED_OUTPUT reference_answer,
      CONTEXT and RETRIEVAL_CONTEXT passages); G-Eval scores 0-10 and reports score/10, so a rubric range (a, b) is
      a label declaring b/10, and with no rubric the criterion is pass/fail at threshold x 10 of 10.
    DAGMetric: yes/no judgement nodes -> a decision tree; a verdict's score S (0-10) -> a label declaring S/10.
    AspectCritic: pass/fail, pass 1. RubricsScore: label scoreN declaring N.
    Each file's comments say what it came from and how its scores were declared.

    \b
    Examples:
      assay import criteria my_metrics.py -o criteria/
      assay eval golden/ run.jsonl -c criteria/ --judge openai/gpt-4o-mini -o report/
    """
    criteria = read_peer_criteria(file)
    written = write_criteria(criteria, out, force=force)
    for criterion, path in zip(criteria, written, strict=True):
        click.echo(f"wrote {path} from {criterion.source} (line {criterion.line})")
    click.echo(f"{len(written)} criteria imported from {file}")
