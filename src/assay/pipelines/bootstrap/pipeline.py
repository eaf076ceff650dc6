"""``assay build``: bootstrap a golden set from a document corpus, with every pooled chunk judged.

Stages (each: records in, records out, with its counts; see :mod:`assay.pipelines.bootstrap.settings`)::

    ingest + chunk      corpus.ingest, corpus.chunk_corpus (pre-made chunks pass through)
    sampling            sampling.sample_seeds: seeds per document by size, typed mix, styles, language
    generation          one question_generation call per seed                       (judge stage "generation")
    evidence            quotes found in their cited chunks                           (no call)
    leakage             question copies a long run of its source                      (no call)
    near_duplicate      bigram Jaccard between questions                              (no call)
    relabel             multi-hop/comparison answerable from one chunk                (no call)
    critic              one question_critic call per remaining question               (judge stage "critic")
    difficulty          hops, BM25 rank of the source, term overlap                   (no call)
    tool_calls          with --tools: one tool_calls call per answerable question     (judge stage "tool_calls")
    relevance           pool (sources, BM25 top k, neighbours, near-duplicates), grade every pair ("relevance")
    unanswerable        unanswerable questions that a chunk answers (grade 3) dropped  (no call)
    support             support calls: nuggets and claims vs chunks graded >= 2, batched,  (judge stage "support")
                        a follow-up for partial support split across batches
    write               GoldenSet.save: the folder appears only when complete

With ``settings.conversations`` (:mod:`.conversations`): conversations are planned beside the seeds, written by one
``conversation`` call each after generation (judge stage "conversation"), their turns (questions whose text is the
standalone rewrite) join the questions through every filter, checked by ``rewrite_check`` instead of the question
critic (judge stage "rewrite_check"), cut at their first turn dropped by a check that cuts (after the critic and
after the unanswerable check; a turn the leakage or near-duplicate filter drops stays as an unjudged context turn),
and written to ``conversations.jsonl``.

Counts in the manifest add up: ``seeds = generated + dropped_by_generation_unscored`` and ``generated = accepted +
sum of dropped_by_<filter>`` over evidence, leakage, near_duplicate, critic, critic_unscored and
unanswerable_answered (and conversation_cut); turns count in ``generated`` too, a context turn in the filter's
``dropped_by_*`` that set it aside (:mod:`.conversations`);
``relabelled`` counts accepted-or-not questions whose type changed.

Several judges: ``judge`` may be a :class:`~assay.judge.panel.Panel`; the relevance stage then grades every pooled pair
with each of its judges and keeps the combined label with every vote; the other stages use its first judge. The
manifest names the panel as the relevance model, its judges and rule under ``settings["panel"]``, and sums usage per
stage over the judges (each judge's cost under ``settings["panel"]["cost_usd"]``).

Resuming: every judge call is cached by the judge (when it has a cache), and every choice is seeded, so an
interrupted build (``--max-cost`` reached, Ctrl-C, a crash) rerun with the same settings pays for no call twice.
Nothing is written before the last stage, and the golden folder is swapped in atomically.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from assay.aio import run_sync
from assay.formats.golden import GoldenSet
from assay.formats.queries import LoggedQuery
from assay.judge.client import Judge
from assay.judge.panel import Grader, primary_of
from assay.pipelines.bootstrap.bookkeeping import BuildRun
from assay.pipelines.bootstrap.checks import check_something_built, unscored_note
from assay.pipelines.bootstrap.conversations import (
    CONVERSATION,
    CUT_COUNTS,
    REWRITE_CHECK,
    check_conversations,
    critique_turns,
    cut_conversations,
    generate_conversations,
    plan_conversations,
    planned_note,
)
from assay.pipelines.bootstrap.estimate import BuildEstimate, StageEstimate, estimate_build
from assay.pipelines.bootstrap.filters import (
    assign_difficulty,
    filter_evidence,
    filter_leakage,
    filter_near_duplicates,
    relabel_single_chunk,
)
from assay.pipelines.bootstrap.judging import (
    BuildContext,
    check_unanswerable,
    critique_questions,
    generate_questions,
    grade_pools,
)
from assay.pipelines.bootstrap.pool_runs import known_only, parse_pool_run, rank_questions
from assay.pipelines.bootstrap.real_questions import (
    DRAFT,
    draft_references,
    flag_unanswerable,
    logged_questions,
)
from assay.pipelines.bootstrap.sampling import SamplingResult, plan_seeds, prepare_corpus
from assay.pipelines.bootstrap.settings import BuildSettings, ProgressFn, StageOutput
from assay.pipelines.bootstrap.support import map_support
from assay.pipelines.bootstrap.tool_calls import TOOL_CALLS, draft_tool_calls
from assay.pipelines.bootstrap.written import check_output, manifest_of, stopped, write_stopped
from assay.types import Chunk, Document, Question

__all__ = [
    "DEMO_CONVERSATIONS",
    "DEMO_SETTINGS",
    "DROP_COUNTS",
    "BuildEstimate",
    "BuildSettings",
    "StageEstimate",
    "abuild_golden",
    "build_golden",
    "estimate_build",
    "prepare_corpus",
]

# The settings of ``assay demo`` and of the committed demo runs: 80 seeds over the 32 demo documents (~50 accepted
# questions with the offline judge; the whole build takes a few seconds).
DEMO_SETTINGS = BuildSettings(questions=80)
# The conversations of ``assay demo`` (a golden set of its own beside the questions', so the example runs, written
# for the questions, still cover every query): 8 conversations of 2-4 turns, under a second with the offline judge.
DEMO_CONVERSATIONS = BuildSettings(questions=0, conversations=8, turns=(2, 4))
DROP_COUNTS = (
    "dropped_by_evidence",
    "dropped_by_leakage",
    "dropped_by_near_duplicate",
    "dropped_by_critic",
    "dropped_by_critic_unscored",
    "dropped_by_unanswerable_answered",
)  # a build with conversations adds dropped_by_conversation_cut (:mod:`.conversations`)


async def abuild_golden(
    corpus: Path | Sequence[Path],
    *,
    judge: Grader,
    settings: BuildSettings,
    progress: ProgressFn | None = None,
    output: Path | None = None,
    overwrite: bool = False,
    notify: Callable[[str], None] | None = None,
    stop_after: Literal["questions"] | None = None,
    queries: Sequence[LoggedQuery] | None = None,
) -> GoldenSet:
    """:func:`build_golden` in a running event loop (the judge is not closed)."""
    grader, judge = judge, primary_of(judge)
    check_output(output, overwrite)
    for spec in settings.pool_runs:
        parse_pool_run(spec)  # a malformed --pool-run fails before any work
    ingested, chunks, index = prepare_corpus(corpus, settings)
    run = BuildRun(progress)
    run.warnings.extend(ingested.warnings)
    run.counts.update(files_skipped=len(ingested.skipped), corpus_chunks=len(chunks))
    ctx = BuildContext({c.id: c for c in chunks}, index)
    if queries is not None:
        questions = run.take("queries", logged_questions(queries, settings))
    else:
        questions = await _generated(
            chunks, index, ingested.documents, judge=judge, settings=settings, ctx=ctx, run=run, notify=notify
        )
    run.counts["accepted"] = len(questions)
    check_conversations(run.counts, settings, unscored_note(judge))  # the more specific message first
    check_something_built(run.counts, judge)  # before paying for pools
    if stop_after == "questions":
        stage = stopped(manifest_of(grader, settings, ingested, chunks, run), chunks, questions)
        if output is not None:
            write_stopped(stage, output, overwrite)
        return stage
    runs = await _pool_runs(questions, settings, ctx, run)
    graded = run.take("relevance", await grade_pools(questions, grader, settings, ctx, progress, runs=runs))
    checked, labels = check_unanswerable(questions, graded)
    questions = run.take("unanswerable", checked)
    questions, labels = _cut_again(questions, labels, run)
    if queries is not None:
        questions = run.take("unanswerable_from_corpus", flag_unanswerable(questions, labels))
        drafted = await draft_references(questions, labels, judge=judge, settings=settings, ctx=ctx, progress=progress)
        questions = run.take(DRAFT, drafted)
    run.counts["accepted"] = len(questions)
    check_conversations(run.counts, settings, unscored_note(grader))
    check_something_built(run.counts, grader)
    nuggets = run.take(
        "support", await map_support(questions, labels, judge=judge, settings=settings, ctx=ctx, progress=progress)
    )
    golden = GoldenSet(
        manifest=manifest_of(grader, settings, ingested, chunks, run),
        documents=list(ingested.documents),
        chunks=chunks,
        questions=questions,
        qrels=labels,
        nuggets=nuggets,
        conversations=run.conversations,
    )
    if output is not None:
        golden.save(output, overwrite=overwrite)
        if progress is not None:
            progress("write", 1, 1)
    return golden


async def _generated(
    chunks: list[Chunk],
    index: Any,
    documents: Sequence[Document],
    *,
    judge: Judge,
    settings: BuildSettings,
    ctx: BuildContext,
    run: BuildRun,
    notify: Callable[[str], None] | None,
) -> list[Question]:
    """Seeds planned, questions (and conversations) generated, filtered and critiqued."""
    sampled = _plan(chunks, index, settings, documents)
    conversation_seeds = plan_conversations(chunks, index, settings, documents)
    run.counts["conversation_seeds"] = len(conversation_seeds)
    capped = planned_note(len(conversation_seeds), settings, len(chunks))
    run.warnings.extend([*sampled.warnings, *([capped] if capped else [])])
    run.sampling = {"plan": sampled.plan, "seed": settings.seed, "documents": sampled.documents}
    if notify is not None:  # before the first paid call
        for line in [f"plan: {sampled.plan}", *sampled.warnings, *([capped] if capped else [])]:
            notify(line)
    if len(chunks) == 1:
        run.warnings.append("the corpus has one chunk: multi-hop and comparison questions fall back to factoid.")
    run.take("sampling", StageOutput(records=sampled.seeds, counts=sampled.counts))
    return await _questions(sampled, conversation_seeds, judge=judge, settings=settings, ctx=ctx, run=run)


def _plan(chunks: list[Chunk], index: Any, settings: BuildSettings, documents: Sequence[Document]) -> SamplingResult:
    """The question seeds; none with ``questions=0`` (a build of conversations only)."""
    if settings.questions == 0:
        plan = "no single questions (--questions 0): conversations only"
        return SamplingResult(counts={"seeds": 0, "seed_documents": 0, "type_fallback": 0}, plan=plan)
    return plan_seeds(chunks, index, settings, documents)


async def _questions(
    sampled: SamplingResult,
    conversation_seeds: Sequence[Any],
    *,
    judge: Judge,
    settings: BuildSettings,
    ctx: BuildContext,
    run: BuildRun,
) -> list[Question]:
    """Generation (questions, then conversations' turns), the filters (cheapest first), the critic (the question
    critic for questions, the rewrite check for turns), the conversation cut and difficulty."""
    questions: list[Question] = run.take(
        "generation", await generate_questions(sampled.seeds, judge, settings, ctx, run.progress)
    )
    if conversation_seeds:
        written, run.conversations = await generate_conversations(conversation_seeds, judge, ctx, run.progress)
        questions += run.take(CONVERSATION, written)
    generated = {q.id: q for q in questions if "conversation_id" in q.metadata}
    questions = run.take("evidence", filter_evidence(questions, ctx.chunks, settings))
    questions = run.take("leakage", filter_leakage(questions, ctx.chunks, settings))
    questions = run.take("near_duplicate", filter_near_duplicates(questions, settings))
    questions = run.take("relabel", relabel_single_chunk(questions))
    singles = [q for q in questions if q.id not in generated]
    turns = [q for q in questions if q.id in generated]
    questions = run.take("critic", await critique_questions(singles, judge, settings, ctx, run.progress))
    if conversation_seeds:
        checked = await critique_turns(turns, generated, judge=judge, settings=settings, ctx=ctx, progress=run.progress)
        questions += run.take(REWRITE_CHECK, checked)
        cut, run.conversations = cut_conversations(run.conversations, questions, generated)
        questions = _take_cut(run, cut)
    questions = run.take("difficulty", assign_difficulty(questions, ctx.index))
    return run.take(TOOL_CALLS, await draft_tool_calls(questions, judge, settings, ctx, run.progress))


def _take_cut(run: BuildRun, cut: StageOutput[Question]) -> list[Question]:
    """The cut's records and counts; its totals (conversations, judged and context turns) replace earlier ones."""
    for key in CUT_COUNTS:
        run.counts[key] = cut.counts.pop(key)
    return run.take("conversation_cut", cut)


def _cut_again(questions: list[Question], labels: list[Any], run: BuildRun) -> tuple[list[Question], list[Any]]:
    """After the unanswerable check: conversations cut at a turn it dropped (context turns stay), with labels."""
    if not run.conversations:
        return questions, labels
    cut, run.conversations = cut_conversations(run.conversations, questions)
    kept = _take_cut(run, cut)
    ids = {q.id for q in kept}
    return kept, [label for label in labels if label.query_id in ids]


async def _pool_runs(
    questions: list[Question], settings: BuildSettings, ctx: BuildContext, run: BuildRun
) -> dict[str, dict[str, list[str]]]:
    """The top ``pool_k`` of each of ``settings.pool_runs`` per question, ids not in the corpus left out (counted)."""
    out: dict[str, dict[str, list[str]]] = {}
    for spec in settings.pool_runs:
        pool_run = parse_pool_run(spec)
        ranked = await rank_questions(pool_run, questions, settings.pool_k, settings.pool_run_timeout)
        out[pool_run.name], unknown = known_only(pool_run, ranked, ctx.chunks)
        run.counts["pool_run_unknown_ids"] = run.counts.get("pool_run_unknown_ids", 0) + unknown
        missing = sum(q.id not in ranked for q in questions)
        if unknown or missing:
            run.warnings.append(
                f"--pool-run {pool_run.name}: {unknown} ranked ids are not chunks of this corpus (skipped) and "
                f"{missing} of {len(questions)} questions have no ranking."
            )
    return out


def build_golden(
    corpus: Path | Sequence[Path],
    *,
    judge: Grader,
    settings: BuildSettings,
    progress: ProgressFn | None = None,
    output: Path | None = None,
    overwrite: bool = False,
    notify: Callable[[str], None] | None = None,
    stop_after: Literal["questions"] | None = None,
    queries: Sequence[LoggedQuery] | None = None,
) -> GoldenSet:
    """Build a golden set from ``corpus`` (a folder, or a list of files/folders) with ``judge`` (a judge, or a
    :class:`~assay.judge.panel.Panel` whose judges all grade relevance and whose first judge does the rest).

    ``progress(stage, done, total)`` is called as stages advance. With ``output`` the folder is written atomically
    (an existing non-empty folder needs ``overwrite``; checked before any work). ``notify(line)`` is given the plan
    (how many questions from which documents) and the sampling warnings before the first judge call. With
    ``stop_after="questions"`` the build stops once the questions are accepted (before pooling) and ``output`` gets
    ``topics.tsv``, ``questions.jsonl``, ``chunks.jsonl`` and a manifest saying so (:func:`.written.stopped`), for the
    user's retrievers to answer before a build with ``settings.pool_runs``. Warnings
    (skipped files, a large plan) are in ``golden.manifest.warnings``. Raises CorpusError for an unusable corpus and
    BudgetExceeded when the judge's ``max_cost`` is reached (nothing is written; a rerun resumes from the cache).
    With ``queries`` (a query log, :func:`assay.formats.queries.read_queries`) the questions are the user's own,
    scrubbed, sampled, graded and given drafted references (:mod:`.real_questions`) instead of generated.
    """

    async def run() -> GoldenSet:
        try:
            return await abuild_golden(
                corpus,
                judge=judge,
                settings=settings,
                progress=progress,
                output=output,
                overwrite=overwrite,
                notify=notify,
                stop_after=stop_after,
                queries=queries,
            )
        finally:
            await judge.aclose()

    return run_sync(run)
