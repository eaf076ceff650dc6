"""``assay eval``: score RAG runs against a golden set, compare them, and write the report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from assay.audit.access import write_pending_rewrites
from assay.cli._app import interrupted, main
from assay.cli._eval_options import EvalOptions, eval_options, parse_fail_under, parse_k, parse_runs
from assay.cli._eval_report import check_fail_under, judge_card, write_outputs
from assay.cli._eval_run import audit_labels, dry_run, evaluate_runs
from assay.cli._judge_options import JudgeOptions
from assay.cli._target_options import TargetOptions, ask_targets, target_options
from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.judging.noise import noise_from_card
from assay.pipelines.evaluate.scoring.available import Available
from assay.pipelines.evaluate.statistics.clustering import question_clusters

__all__ = [
    "EvalOptions",
    "audit_labels",
    "check_fail_under",
    "eval_command",
    "judge_card",
    "parse_fail_under",
    "parse_k",
    "parse_runs",
]


@main.command("eval")
@click.argument("golden", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("runs", nargs=-1, metavar="[RUN ...]")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), default=None, help="Report folder.")
@click.option("--target", "targets", multiple=True, metavar="NAME=SPEC",
              help="Ask this system first (as assay run does) and evaluate its run (repeatable).")  # fmt: skip
@click.option("--verbose", is_flag=True, help="Print every table here (default: the verdict and a one-screen summary).")
@eval_options
@target_options("target-", both=True)
def eval_command(  # noqa: PLR0917
    golden: Path,
    runs: tuple[str, ...],
    output: Path | None,
    targets: tuple[str, ...],
    judging: JudgeOptions,
    asking: TargetOptions,
    verbose: bool,
    **flags: Any,
) -> None:
    """Evaluate RAG runs against a golden set: ranking metrics (trec_eval-exact), LLM-judged context and answer
    metrics, intervals, strata, paired comparisons of runs, and a report (report.html, report.md, results.json,
    per_query.jsonl, support_matrix.jsonl, passages.jsonl: how each retrieved passage was matched and labelled).
    Every report opens with the verdict (who leads on the primary metric and whether the evidence supports it, the
    ranking with ties, the judge's trust, cost and latency, caveats); the terminal then prints a one-screen summary
    (--verbose: every table).

    A RUN is JSONL (query_id, retrieved, optional answer and citations), a TREC run, or RAGAS evaluation data (JSONL or
    CSV: user_input, retrieved_contexts, optional retrieved_context_ids, response; rows matched to golden questions by
    query_id or question text); it is named by its file stem, or NAME=PATH. A retrieved passage may be a golden chunk
    id, {"text": ...}, {"id", "score", "text"} or {"doc_id", "start", "end"}: passages that are not golden chunks are
    located in the golden documents. Every run is scored in one unit of account (README, "Your system chunks
    differently"): ranking measures on the golden chunks its passages show at least half of, budget measures
    (ndcg@1000t, recall@1000t, P@1000t, map@1000t; -b sets the budgets) on the characters of relevant text within a
    budget, so the same text cut differently scores the same; span_recall@k, span_precision@k and span_iou@k measure
    the characters of the top k passages against the evidence. When the runs cut their text differently, nDCG at
    the first budget leads the verdict and metrics over a number of passages get none.

    --target NAME=SPEC asks a system every question first, as `assay run` does (python:, http(s)://, cmd:; --body,
    --map, --header, --label, --refresh and the --target-* limits apply to every target), writes
    REPORT_DIR/runs/NAME.jsonl and evaluates it with the runs given; the report shows each system's latency,
    failures (0 on the recall-type answer measures, else unscored), tokens and cost. On a golden set with conversations,
    --target-conversation-mode both asks each target twice, the raw turns (with --target-history) as run NAME and
    the standalone rewrites as run 'NAME (rewrites)', and reports their history gain.

    With --judge, retrieved chunks without a label (and passages the rule cannot label) are judged (cached per
    question and text) and added to the golden set, and a claim-level diagnosis (RAGChecker: claim precision and
    recall, the retriever's claim recall and context precision, the generator's noise sensitivity, hallucination,
    self-knowledge) says why a run fails; by default each answer claim is checked against each chunk on its own, as
    RAGChecker does (--diagnosis exact: the reference claims too; approx: no pair checks). Human labels in
    GOLDEN/audit.sqlite correct pair precision by PPI (with the audit size for a tighter interval) and give the
    judge-vs-human agreement (kappas, alpha, confusion matrix, per stratum).

    A run of answers with no passages (every line's retrieved empty or absent) is scored on its answers: its
    ranking, budget and passage measures are unscored ("no passages in this run"), never 0, and the verdict leads on
    nugget_recall_all_strict when the questions have nuggets, else claim_recall, else answer_relevance (unless
    --primary names one). An empty answer ("" or only whitespace) scores 0 on nugget recall, claim_recall and
    claim_f1 and is unscored ("empty answer") elsewhere, counted in the report; a run with no answer on any line is
    retrieval-only (its answer measures unscored, said once).

    -k takes cut-offs comma-separated or repeated (-k 5,10 is -k 5 -k 10). A metric named by -m, --fail-under or
    --primary is computed whatever -k says (its cut-off joins the k values); every name is checked before any work,
    with one run too (an unknown one: an error with the real names nearest it that exist for this golden set and
    these runs, nothing written). Every per-question metric (ranking, budget, span, context, answer, claim_*,
    nugget_recall_*, hallucination and the other diagnosis metrics, contradiction, rewrite_f1, and for runs with
    steps trajectory_recall, evidence_dropped, hop_coverage and the other measures of a trajectory) can be --primary
    or --fail-under; a family (nugget_recall) is refused with its metrics. A golden set
    labelled by people (assay import beir|trec --source human) evaluates like trec_eval, with judged@k and no
    judge-vs-human section or audit advice.

    Runs are compared by paired randomization tests, one family per metric: every pair of runs (or each run against
    --baseline), corrected by Holm (or --correction tukey|none); the interval beside a verdict is adjusted in the
    same family, so it excludes 0 exactly when the verdict says significant. --primary leads the verdict; the lead
    and the ranking follow the paired differences on the questions both runs scored (the sentence says how many
    when that is fewer than a run scored), and a lower-is-better metric (hallucination) leads with the lowest. Questions
    built from one document succeed or fail together, so the tests flip and the intervals resample whole documents
    (--cluster-by doc, the default; none, or a question field such as product); the report gives the number of
    clusters and the design effect, and how many questions and documents would detect a difference of --detect X
    (default 0.02 and 0.05) at 80% power.

    Several --judge make a panel: each unlabelled chunk is graded by every judge and combined by --combine (the
    other calls go to the first judge); the report adds the agreement between the judges.

    \b
    Examples:
      assay eval golden/ --target app=python:examples.rag_app:answer runs/v1.jsonl -o report/ --judge offline
      assay eval golden/ --target app=python:app:answer --target-conversation-mode both -o report/ --judge offline
      assay eval golden/ bm25.jsonl hybrid.jsonl -o report/ --judge openai/gpt-4o-mini
      assay eval golden/ run.txt -o report/ --no-judge -k 5,10 --fail-under ndcg@10=0.6
      assay eval golden/ new=runs/v2.jsonl old=runs/v1.jsonl -o report/ --judge offline --by product
      assay eval golden/ bm25.jsonl a.jsonl b.jsonl -o report/ --no-judge --baseline bm25 --correction tukey
      assay eval golden/ bm25.jsonl hybrid.jsonl -o report/ --no-judge --detect 0.01 --detect 0.03
      assay eval golden/ mine=ragas_eval.csv chunks400=runs/by_text.jsonl -o report/ --judge offline -b 500t -b 2000t
      assay eval golden/ new.jsonl -o report/ --judge openai/gpt-4o-mini --batch   # half price, within 24 h
      assay eval golden/ new.jsonl -o report/ --judge openai/gpt-4o-mini --judge anthropic/claude-3-5-haiku-latest
    """
    asked = EvalOptions.from_flags(flags, judging, _available(golden, flags, judging))
    specs = parse_runs(runs)
    console = Console()
    if not specs and not targets:
        raise ConfigError("give at least one RUN file or --target NAME=SPEC")
    if targets and (asked.dry_run or output is None):
        raise ConfigError("--target writes its run into the report folder: give -o REPORT_DIR (and no --dry-run)")
    if targets:  # a --cluster-by field the questions lack fails before any system is asked (else evaluate checks it)
        question_clusters(GoldenSet.load(golden), asked.settings.cluster_by, golden)
    if asked.dry_run:
        dry_run(golden, specs, asked, console)
        return
    if output is None:
        raise ConfigError("give the report folder with -o REPORT_DIR")
    if targets:
        write_pending_rewrites(golden)  # the targets are asked the rewrites people corrected
    try:
        specs += ask_targets(golden, targets, output / "runs", asking)
        done = evaluate_runs(golden, specs, asked)
    except KeyboardInterrupt:
        interrupted(_kept(output, asked, asking if targets else None))
    if judging.specs:
        done.result.judge_card = judge_card(judging, asked.judge_card)
        done.result.panel_cards = [judge_card(judging, None, spec) for spec in judging.specs[1:]]
        if done.result.judge_noise is None:  # not re-asked here: the card's consistency figure, when it has one
            done.result.judge_noise = noise_from_card(done.result.judge_card, done.result.primary_metric)
    write_outputs(done, output, console, verbose=verbose)
    failures = check_fail_under(done.result, asked.gates)
    if failures:
        click.echo("fail-under: " + "; ".join(failures), err=True)
        sys.exit(1)


def _available(golden: Path, flags: dict[str, Any], judging: JudgeOptions) -> Available | None:
    """What the golden set holds that metrics are computed from, read when a metric is named (so a bad name is
    offered only names that exist for it, before any system is asked); None when none is named."""
    if not (flags["metrics"] or flags["fail_under"] or flags["primary"]):
        return None
    return Available.of(GoldenSet.load(golden), None, judged=bool(judging.specs))


def _kept(output: Path, asked: EvalOptions, asking: TargetOptions | None) -> str:
    """What an interrupted evaluation kept, and how to resume."""
    judged = f"{asked.judging.kept()}; " if asked.judging.specs else ""
    answers = f"every answer of the targets so far is kept in {asking.cache_dir}; " if asking is not None else ""
    return f"no report written to {output}; {judged}{answers}rerun the same command to resume."
