"""``assay eval``: score RAG runs against a golden set, compare them, and write the report."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from assay.audit.pool import join_pool
from assay.audit.rewrites import join_rewrites
from assay.audit.store import STORE_NAME, LabelStore
from assay.cli._app import interrupted, main, warn
from assay.cli._batch_options import batch_dry_run, batch_line, echo_batch_summary, start_batches
from assay.cli._judge_options import (
    JudgeOptions,
    check_context,
    dry_run_judge,
    judge_from_options,
    optional_judge_options,
)
from assay.cli._target_options import TargetOptions, ask_targets, target_options
from assay.cli.cache import resolve_cache_dir
from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge.panel import Grader, judges_of
from assay.judge.prompts import load_prompt, prompt_names
from assay.judge.relevance import LISTWISE_PROMPT, POINTWISE_PROMPT
from assay.pipelines.evaluate import EvalSettings, Evaluated, estimate_evaluation, evaluate_detailed
from assay.pipelines.evaluate.judging.noise import noise_from_card
from assay.pipelines.evaluate.scoring.names import check_gate, joined_k
from assay.pipelines.evaluate.statistics.clustering import question_clusters
from assay.pipelines.evaluate.statistics.gates import Gate, check_gates
from assay.pipelines.judgecheck.lookup import card_home, summarize_card
from assay.report import render_terminal, write_report
from assay.results import EvalResult, JudgeCardSummary

__all__ = ["EvalOptions", "audit_labels", "check_fail_under", "eval_command", "judge_card", "parse_k", "parse_runs"]

# the build's prompts: an evaluation never calls them, so their context fit is not checked here
_BUILD_ONLY = ("question_generation", "question_critic", "conversation", "rewrite_check")


def parse_k(texts: str | Sequence[str]) -> tuple[int, ...]:
    """``"1,3,5,10"``, or the values of ``-k`` repeated (``["5", "10,20"]``), -> the cut-offs of all of them,
    sorted and without repeats."""
    values: set[int] = set()
    for text in [texts] if isinstance(texts, str) else texts:
        try:
            values |= {int(part) for part in text.split(",") if part.strip()}
        except ValueError:
            raise ConfigError(f"-k {text!r}: give whole numbers separated by commas, e.g. -k 1,3,5,10") from None
        if not values or min(values) < 1:
            raise ConfigError(f"-k {text!r}: cut-offs must be >= 1, e.g. -k 1,3,5,10")
    return tuple(sorted(values))


def parse_runs(args: Sequence[str]) -> list[tuple[str, Path]]:
    """Each RUN is PATH (named by its file stem) or NAME=PATH."""
    out = []
    for arg in args:
        name, sep, path = arg.partition("=")
        if sep and name and not Path(arg).exists():
            out.append((name, Path(path)))
        else:
            out.append((Path(arg).stem, Path(arg)))
    return out


def parse_fail_under(values: Sequence[str]) -> list[tuple[str, float]]:
    """``ndcg@10=0.6`` -> ("ndcg@10", 0.6); the last ``=`` splits, so ``recall@5|g>=2=0.5`` works."""
    out = []
    for value in values:
        metric, sep, number = value.rpartition("=")
        try:
            out.append((metric, float(number)))
        except ValueError:
            sep = ""
        if not sep or not metric:
            raise ConfigError(f"--fail-under {value!r}: write METRIC=VALUE, e.g. --fail-under ndcg@10=0.6")
    return out


def check_fail_under(result: EvalResult, gates: Sequence[tuple[str, float]]) -> list[str]:
    """One message per run and gate whose mean is below the threshold (or has no scored query): the rule of
    :func:`assay.pipelines.evaluate.statistics.gates.check_gates`, shared with the pytest plugin. A gated metric that
    was not computed (names are checked before the work, so: nothing to compute it from, such as faithfulness when no
    run has an answer) fails with that reason."""
    known = {name for run in result.runs for name in run.metrics}
    missing = [f"{m} was not computed: nothing in the golden set or the runs to compute it from" for m, _ in gates
               if m not in known]  # fmt: skip
    present = [Gate(metric, threshold) for metric, threshold in gates if metric in known]
    return missing + check_gates(result, present, origin="--fail-under")


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


_NO_JUDGE = click.option("--no-judge", is_flag=True, help="No LLM: trec_eval's convention (unjudged = not relevant).")


def _options(f: Any) -> Any:
    options = [
        optional_judge_options(_NO_JUDGE),
        click.option(
            "-k",
            "k_texts",
            multiple=True,
            default=("1,3,5,10",),
            show_default=True,
            help="Cut-offs, comma-separated or repeated: -k 5,10 and -k 5 -k 10 are the same.",
        ),
        click.option("-m", "--metric", "metrics", multiple=True, help="Only these (repeatable), whatever -k says."),
        click.option("--by", "strata", multiple=True, help="Also stratify by this question field (repeatable)."),
        click.option(
            "-b",
            "--budget",
            "budgets",
            multiple=True,
            metavar="B",
            help="Context budget of the budget measures, with a unit: 1000t (tokens, 4 characters each) or 4000c "
            "(repeatable; default 1000t).",
        ),
        click.option(
            "--listwise",
            default=10,
            show_default=True,
            type=click.IntRange(0, 50),
            help="Chunks per relevance call (0: one call per chunk).",
        ),
        click.option("--context-k", type=click.IntRange(1, 100), default=None, help="Chunks given to the answer."),
        click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap, tests and shuffles."),
        click.option("--n-boot", default=2000, show_default=True, type=click.IntRange(100), help="Resamples."),
        click.option("--fail-under", multiple=True, help="METRIC=X: exit 1 when a run's mean is below X."),
        click.option("--baseline", default=None, help="Compare each run with this run (default: every pair)."),
        click.option(
            "--primary",
            default=None,
            help="Metric leading the verdict, computed whatever -k says (default: first --fail-under, else ndcg@10; "
            "nDCG at the first budget when the runs cut their text differently).",
        ),
        click.option(
            "--correction",
            type=click.Choice(["holm", "tukey", "none"]),
            default="holm",
            show_default=True,
            help="Over the run pairs of each metric: Holm, randomized Tukey HSD, or none.",
        ),
        click.option(
            "--cluster-by",
            default="doc",
            show_default=True,
            metavar="doc|none|FIELD",
            help="Questions that move together, resampled as one unit by the tests and intervals: doc (questions "
            "sharing a source document), none (every question alone), or a question field such as product.",
        ),
        click.option(
            "--judge-repeats",
            default=0,
            show_default=True,
            type=click.IntRange(0, 10),
            metavar="N",
            help="Ask the judge again N times on a sample of the labels in the runs' top k: how often its grade "
            "changes, and how much the primary metric moves with it (stated beside its interval).",
        ),
        click.option(
            "--judge-repeats-max",
            default=300,
            show_default=True,
            type=click.IntRange(1),
            metavar="PAIRS",
            help="At most this many labels re-asked by --judge-repeats (a sample spread over the questions).",
        ),
        click.option(
            "--detect",
            type=float,
            multiple=True,
            metavar="X",
            help="A difference on the primary metric to plan for (repeatable; default 0.02 and 0.05): the report says "
            "how many questions (and documents) a comparison needs to detect it at 80% power.",
        ),
        click.option(
            "--diagnosis",
            "diagnosis_mode",
            type=click.Choice(["approx", "answers", "exact"]),
            default="answers",
            show_default=True,
            help="Claim x chunk entailment of the diagnosis: 'answers' checks each answer claim against each chunk "
            "as RAGChecker does (5 claims per call) and reads the reference claims off the context call; 'exact' "
            "checks both; 'approx' reads both off the context and answer calls (3 calls per sample).",
        ),
        click.option("--no-add-labels", is_flag=True, help="Do not write labels judged now into the golden set."),
        click.option(
            "--judge-card",
            type=click.Path(path_type=Path),
            default=None,
            help="The (first) judge's card to show beside the metrics (default: the one judge-check kept).",
        ),
        click.option("--dry-run", is_flag=True, help="Count calls, cached items, tokens and cost; call nothing."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@main.command("eval")
@click.argument("golden", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("runs", nargs=-1, metavar="[RUN ...]")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), default=None, help="Report folder.")
@click.option("--target", "targets", multiple=True, metavar="NAME=SPEC",
              help="Ask this system first (as assay run does) and evaluate its run (repeatable).")  # fmt: skip
@click.option("--verbose", is_flag=True, help="Print every table here (default: the verdict and a one-screen summary).")
@_options
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
    failures (unscored, never scored 0), tokens and cost. On a golden set with conversations,
    --target-conversation-mode both asks each target twice, the raw turns (with --target-history) as run NAME and
    the standalone rewrites as run 'NAME (rewrites)', and reports their history gain.

    With --judge, retrieved chunks without a label (and passages the rule cannot label) are judged (cached per
    question and text) and added to the golden set, and a claim-level diagnosis (RAGChecker: claim precision and
    recall, the retriever's claim recall and context precision, the generator's noise sensitivity, hallucination,
    self-knowledge) says why a run fails; by default each answer claim is checked against each chunk on its own, as
    RAGChecker does (--diagnosis exact: the reference claims too; approx: no pair checks). Human labels in
    GOLDEN/audit.sqlite correct pair precision by PPI (with the audit size for a tighter interval) and give the
    judge-vs-human agreement (kappas, alpha, confusion matrix, per stratum).

    -k takes cut-offs comma-separated or repeated (-k 5,10 is -k 5 -k 10). A metric named by -m, --fail-under or
    --primary is computed whatever -k says (its cut-off joins the k values); every name is checked before any work,
    with one run too (an unknown one: an error with the real names nearest it, nothing written). A golden set
    labelled by people (assay import beir|trec --source human) evaluates like trec_eval, with judged@k and no
    judge-vs-human section or audit advice.

    Runs are compared by paired randomization tests, one family per metric: every pair of runs (or each run against
    --baseline), corrected by Holm (or --correction tukey|none); the interval beside a verdict is adjusted in the
    same family, so it excludes 0 exactly when the verdict says significant. --primary leads the verdict. Questions
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
    asked = EvalOptions.from_flags(flags, judging)
    specs = parse_runs(runs)
    console = Console()
    if not specs and not targets:
        raise ConfigError("give at least one RUN file or --target NAME=SPEC")
    if targets and (asked.dry_run or output is None):
        raise ConfigError("--target writes its run into the report folder: give -o REPORT_DIR (and no --dry-run)")
    if targets:  # a --cluster-by field the questions lack fails before any system is asked (else evaluate checks it)
        question_clusters(GoldenSet.load(golden), asked.settings.cluster_by, golden)
    if asked.dry_run:
        _dry_run(golden, specs, asked, console)
        return
    if output is None:
        raise ConfigError("give the report folder with -o REPORT_DIR")
    try:
        specs += ask_targets(golden, targets, output / "runs", asking)
        done = _evaluate(golden, specs, asked)
    except KeyboardInterrupt:
        interrupted(_kept(output, asked, asking if targets else None))
    if judging.specs:
        done.result.judge_card = judge_card(judging, asked.judge_card)
        done.result.panel_cards = [judge_card(judging, None, spec) for spec in judging.specs[1:]]
        if done.result.judge_noise is None:  # not re-asked here: the card's consistency figure, when it has one
            done.result.judge_noise = noise_from_card(done.result.judge_card, done.result.primary_metric)
    _report(done, output, console, verbose=verbose)
    failures = check_fail_under(done.result, asked.gates)
    if failures:
        click.echo("fail-under: " + "; ".join(failures), err=True)
        sys.exit(1)


def _kept(output: Path, asked: EvalOptions, asking: TargetOptions | None) -> str:
    """What an interrupted evaluation kept, and how to resume."""
    judged = f"{asked.judging.kept()}; " if asked.judging.specs else ""
    answers = f"every answer of the targets so far is kept in {asking.cache_dir}; " if asking is not None else ""
    return f"no report written to {output}; {judged}{answers}rerun the same command to resume."


@dataclass(frozen=True)
class EvalOptions:
    """What one ``assay eval`` is asked, read once from its flags (:meth:`from_flags`): the evaluation's
    ``settings`` (every metric name checked), the ``--fail-under`` ``gates``, the judge options (no ``specs``: no
    judge), ``--no-judge``, ``--dry-run`` and ``--judge-card``. A new flag of eval is read here, once."""

    settings: EvalSettings
    gates: tuple[tuple[str, float], ...]
    judging: JudgeOptions
    no_judge: bool
    dry_run: bool
    judge_card: Path | None

    @classmethod
    def from_flags(cls, flags: dict[str, Any], judging: JudgeOptions) -> EvalOptions:
        """Check eval's own ``flags`` (click's values) against ``judging`` before any work."""
        if judging.specs and flags["no_judge"]:
            raise ConfigError("give --judge MODEL or --no-judge, not both")
        if judging.batch and not judging.specs:
            raise ConfigError("--batch sends judge calls through a batch API: give --judge MODEL too")
        if flags["judge_repeats"] and len(judging.specs) != 1:
            raise ConfigError("--judge-repeats re-asks one judge: give exactly one --judge MODEL")
        gates = tuple(parse_fail_under(flags["fail_under"]))
        return cls(
            settings=_settings(flags, gates, judged=bool(judging.specs)),
            gates=gates,
            judging=judging,
            no_judge=flags["no_judge"],
            dry_run=flags["dry_run"],
            judge_card=flags["judge_card"],
        )


def _settings(flags: dict[str, Any], gates: Sequence[tuple[str, float]], *, judged: bool) -> EvalSettings:
    """The settings of the flags; a metric named by ``--fail-under`` (``also``) or ``--primary`` is computed too
    (besides -m, or besides the defaults), its cut-off joining -k; every name checked before any work."""
    k_values, budgets = parse_k(flags["k_texts"]), tuple(flags["budgets"]) or EvalSettings.budgets
    named = [(name, "--fail-under") for name, _ in gates] + [(flags["primary"], "--primary")] * bool(flags["primary"])
    cuts = {check_gate(name, judged=judged, flag=flag, k_values=k_values, budgets=budgets) for name, flag in named}
    return EvalSettings(
        k_values=joined_k(k_values, {cut for cut in cuts if cut is not None}),
        metrics=tuple(flags["metrics"]),
        also=tuple(name for name, _ in gates),
        seed=flags["seed"],
        n_boot=flags["n_boot"],
        context_k=flags["context_k"],
        listwise=flags["listwise"] or None,
        add_labels=not flags["no_add_labels"],
        strata=tuple(flags["strata"]),
        budgets=budgets,
        baseline=flags["baseline"],
        primary=flags["primary"] or next((m for m, _ in gates), None),
        correction=flags["correction"],
        diagnosis=flags["diagnosis_mode"],
        cluster_by=flags["cluster_by"],
        judge_repeats=flags["judge_repeats"],
        judge_repeats_max=flags["judge_repeats_max"],
        detect=tuple(flags["detect"]) or EvalSettings.detect,
    ).checked()


def _evaluate(golden: Path, specs: list[tuple[str, Path]], asked: EvalOptions) -> Evaluated:
    humans, everyone = audit_labels(golden)
    settings = asked.settings
    if not asked.judging.specs:
        if not asked.no_judge:
            warn(
                "no --judge given, so trec_eval's convention holds (unjudged = not relevant) and no LLM metric is "
                "computed."
            )
        return evaluate_detailed(golden, list(specs), judge=None, settings=settings, human_labels=humans,
                                 annotations=everyone)  # fmt: skip
    judge = judge_from_options(asked.judging)
    runners = start_batches(judge, asked.judging)
    if runners:
        click.echo(_BATCH_ROUNDS, err=True)
    check_context(judge, [name for name in prompt_names() if name not in _BUILD_ONLY])
    bar = _Bar(judge, Console(stderr=True))
    with bar.bar:
        done = evaluate_detailed(
            golden, list(specs), judge=judge, settings=settings, progress=bar, human_labels=humans, annotations=everyone
        )
    echo_batch_summary(runners)
    return done


_BATCH_ROUNDS = (
    "--batch: this evaluation needs up to 2 batch rounds, one after another (the unlabelled chunks' relevance with "
    "the context, answer and nugget calls, then the diagnosis's claim checks), and one more per stage whose failed "
    "requests are retried by --batch-retry batch; each waits for the provider (up to 24 h). Stopping is safe: the "
    "same command picks up the submitted batches."
)


def judge_card(judging: JudgeOptions, given: Path | None, spec: str | None = None) -> JudgeCardSummary:
    """The card of the first judge (or of the panel's judge ``spec``): ``given`` (``--judge-card``) for the first
    judge, else the one ``assay judge-check`` kept beside the cache."""
    first = spec is None
    spec = spec or judging.specs[0]
    home = card_home(resolve_cache_dir(judging.cache_dir), spec)
    where = (given if first else None) or home
    prompts = [load_prompt(name, judging.prompt_dir) for name in (POINTWISE_PROMPT, LISTWISE_PROMPT)]
    return summarize_card(Path(where), spec, {p.ref: p.content_hash for p in prompts})


def _report(done: Evaluated, output: Path, console: Console, *, verbose: bool) -> None:
    paths = write_report(done.result, output, done.per_query, done.questions)
    done.write_support_matrix(output / "support_matrix.jsonl")
    done.write_passages(output / "passages.jsonl")
    render_terminal(done.result, console, verbose=verbose)
    console.print()
    console.print(
        f"report: {paths['report.html']}  (also report.md, results.json, per_query.jsonl, support_matrix.jsonl, "
        "passages.jsonl)"
    )


def _dry_run(golden: Path, specs: list[tuple[str, Path]], asked: EvalOptions, console: Console) -> None:
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
