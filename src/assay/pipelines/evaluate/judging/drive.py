"""Step 2 of an evaluation, driven: the judge's work over the runs in one event loop, and its dry run.

:func:`judge_runs` grades the retrieved chunks of the top ``depth`` that have no label (:func:`~.calls.
judge_unlabelled`, listwise, cached per pair) while the LLM-metric calls run beside them (:func:`~.calls.
assess_runs`), then adds the new labels to the golden set (and to its folder with ``add_labels``);
:func:`estimate_judging` counts the same calls without making them. How the judge is asked comes whole in one
:class:`~.asking.JudgingSettings`. ``families`` are the LLM metric families asked for
(:data:`~assay.pipelines.evaluate.scoring.names.LLM_FAMILIES` maps each to the call kind it needs). Its
``diagnosis`` (a mode of :data:`~.pair_checks.DIAGNOSIS_MODES`) adds the per-(claim, chunk) checks of
:mod:`~.pair_checks` before the claim_check calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from assay.aio import run_sync
from assay.formats.golden import GoldenSet
from assay.judge import Estimate, Pair, estimate_pairs
from assay.judge.criteria import Criterion
from assay.judge.panel import Grader, each_judge, primary_of
from assay.judge.relevance import Graded
from assay.pipelines.evaluate.judging.asking import JudgingSettings
from assay.pipelines.evaluate.judging.calls import (
    Assessed,
    JudgedPlan,
    assess_runs,
    judge_unlabelled,
    plan_calls,
    unlabelled_pairs,
)
from assay.pipelines.evaluate.judging.criteria import (
    CriteriaJudged,
    CriterionCall,
    estimate_criteria,
    judge_criteria,
    model_judges,
    plan_criteria,
)
from assay.pipelines.evaluate.judging.diagnosis import (
    CLAIM_CHECK_PROMPT,
    diagnose_runs,
    estimate_variables,
    plan_diagnosis,
)
from assay.pipelines.evaluate.judging.pair_checks import (
    DIAGNOSIS_MODES,
    PAIR_STAGE,
    SUPPORT_PROMPT,
    check_pairs,
    estimate_pair_variables,
    plan_pair_checks,
)
from assay.pipelines.evaluate.runs.carry import Carried
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.runs.units import ReadRun
from assay.pipelines.evaluate.scoring.names import LLM_FAMILIES
from assay.results import DiagnosisExample
from assay.types import Passage, RelevanceLabel

__all__ = ["Progress", "estimate_judging", "judge_pool", "judge_runs"]

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def judge_runs(
    gold: GoldenSet,
    folder: Path | None,
    read: Sequence[ReadRun],
    judge: Grader,
    *,
    asking: JudgingSettings,
    families: set[str],
    carried: Carried,
    criteria: Sequence[Criterion] = (),
    progress: Progress | None = None,
) -> tuple[dict[str, dict[str, Assessed]], list[DiagnosisExample], CriteriaJudged]:
    """Judge what the runs need (see the module docstring); per run and query, what the LLM metrics found, the
    diagnosis examples (when a diagnosis metric was asked for) and the judged ``criteria``'s verdicts
    (:mod:`~.criteria`). The passages ``carried`` left undecided are judged
    with the chunks; their labels go to ``carried`` and to the golden set's passages. Each run's projection onto the
    golden chunks (:mod:`~assay.pipelines.evaluate.runs.units`) gives the unlabelled chunks of its top
    ``asking.depth``, which are judged; the LLM metrics read the run as read."""
    runs, units = [one.run for one in read], [one.projected for one in read]
    pairs = unlabelled_pairs(gold, units, asking.depth) + carried.pending
    kinds = _call_families(families)
    plan = plan_calls(gold, runs, context_k=asking.context_k, families=kinds)
    diagnosed_runs = runs if "diagnosis" in kinds else None
    criteria_judged = CriteriaJudged()
    asked = _criterion_calls(gold, runs, criteria, judge, asking, criteria_judged)

    def work() -> Coroutine[Any, Any, tuple[list[RelevanceLabel], list[DiagnosisExample]]]:
        return _judge_all(judge, gold, pairs, plan, asking, progress=progress, diagnosis=diagnosed_runs,
                          criteria=(asked, criteria_judged))  # fmt: skip

    labels, diagnosed = run_sync(work)
    judged = {(label.query_id, label.chunk_id) for label in labels}
    for run in units:
        run.counts.labels_judged_now = sum(
            (qid, cid) in judged for qid, line in run.lines.items() for cid in line.top(asking.depth)
        )
    chunk_labels = [label for label in labels if gold.has_chunk(label.chunk_id)]
    passage_labels = [label for label in labels if not gold.has_chunk(label.chunk_id)]
    carried.add_judged(passage_labels)
    if chunk_labels:
        gold.add_labels(chunk_labels)
    if passage_labels:
        gold.add_passage_labels(_passages(runs, passage_labels), passage_labels)
    if labels and asking.add_labels and folder is not None:
        gold.update(folder, ("qrels", "passages") if passage_labels else ("qrels",))
    return plan.assessed, diagnosed, criteria_judged


def _criterion_calls(  # noqa: PLR0917 (the planner's inputs, private)
    gold: GoldenSet, runs: Sequence[LoadedRun], criteria: Sequence[Criterion], judge: Grader,
    asking: JudgingSettings, judged: CriteriaJudged,
) -> list[CriterionCall]:  # fmt: skip
    """The judged criteria's calls (none without a model judge: the criteria are then unscored, needing one)."""
    if not model_judges(judge) or not any(c.judged for c in criteria):
        return []
    return plan_criteria(gold, runs, criteria, context_k=asking.context_k, judged=judged)


def _passages(runs: list[LoadedRun], labels: list[RelevanceLabel]) -> list[Passage]:
    """The passage records of the judged passage units (where each was found, its text)."""
    wanted = {label.chunk_id for label in labels}
    out: dict[str, Passage] = {}
    for run in runs:
        for line in run.lines.values():
            for unit in sorted(wanted.intersection({*line.located, *line.step_found}).difference(out)):
                found = line.located.get(unit) or line.step_found[unit]
                span = found.span
                out[unit] = Passage(
                    id=unit, text=found.text or "", match=found.match, score=span.score if span else 0.0,
                    doc_id=span.doc_id if span else None, start=span.start if span else None,
                    end=span.end if span else None,
                )  # fmt: skip
    return list(out.values())


def judge_pool(
    judge: Grader,
    gold: GoldenSet,
    folder: Path | None,
    pairs: list[Pair],
    *,
    asking: JudgingSettings,
    progress: Progress | None = None,
) -> int:
    """Grade golden chunks that undecided passages reach (:mod:`~assay.pipelines.evaluate.runs.carry`) and add the
    labels to the golden set (and its folder with ``add_labels``); returns how many were graded."""
    count = [0]

    def tick(_: Graded | None = None) -> None:
        count[0] += 1
        if progress is not None:
            progress("pooling", count[0], len(pairs))

    async def grade() -> list[RelevanceLabel]:
        try:
            return await judge_unlabelled(judge, pairs, listwise=asking.listwise, seed=asking.seed, on_label=tick)
        finally:
            await judge.aclose()

    labels = run_sync(grade)
    gold.add_labels(labels)
    if labels and asking.add_labels and folder is not None:
        gold.update(folder, ("qrels",))
    return len(labels)


def estimate_judging(
    gold: GoldenSet,
    read: Sequence[ReadRun],
    judge: Grader,
    *,
    asking: JudgingSettings,
    families: set[str],
    carried: Carried,
    criteria: Sequence[Criterion] = (),
) -> dict[str, Estimate]:
    """Calls, cached items, prompt tokens and a cost bound per stage of :func:`judge_runs` (and of the pooling
    :func:`judge_pool` makes for ``carried``); no model is called. With a panel, one relevance stage and one stage
    per judged criterion per judge (``relevance MODEL``, ``criterion:NAME MODEL``); the other stages are its first
    judge's."""
    grader = judge
    runs, units = [one.run for one in read], [one.projected for one in read]
    pairs = unlabelled_pairs(gold, units, asking.depth) + carried.pool + carried.pending
    out = {
        stage: estimate_pairs(one, pairs, listwise=asking.listwise, seed=asking.seed)
        for stage, one in each_judge(judge, "relevance")
    }
    judge = primary_of(judge)
    kinds = _call_families(families)
    ctx_k = asking.context_k
    plan = plan_calls(gold, runs, context_k=ctx_k, families=kinds)
    for kind in ("context", "answer", "nuggets", "contradiction", "tool_args"):
        calls = [c for c in plan.calls if c.kind == kind]
        if calls:
            out[kind] = judge.estimate(calls[0].prompt, [c.variables for c in calls])
    checks = estimate_variables(gold, runs, ctx_k) if "diagnosis" in kinds else []
    if checks:
        out["diagnosis"] = judge.estimate(CLAIM_CHECK_PROMPT, checks)
    sides = DIAGNOSIS_MODES[asking.diagnosis]
    pair_checks = estimate_pair_variables(gold, runs, ctx_k, sides) if checks and sides else []
    if pair_checks:
        out[PAIR_STAGE] = judge.estimate(SUPPORT_PROMPT, pair_checks)
    out.update(estimate_criteria(grader, _criterion_calls(gold, runs, criteria, grader, asking, CriteriaJudged())))
    return out


def _call_families(families: set[str]) -> set[str]:
    """The call kinds :func:`plan_calls` should plan; ``{"none"}`` when no family needing a call was asked for.
    The diagnosis reads the context and answer calls' support rows, so it asks for both."""
    kinds = {LLM_FAMILIES[f] for f in families if LLM_FAMILIES[f] and LLM_FAMILIES[f] != "relevance"}
    if "diagnosis" in kinds:
        kinds |= {"context_recall", "answer"}
    return kinds or {"none"}


async def _judge_all(
    grader: Grader,
    gold: GoldenSet,
    pairs: list[Pair],
    plan: JudgedPlan,
    asking: JudgingSettings,
    *,
    progress: Progress | None,
    diagnosis: list[LoadedRun] | None = None,
    criteria: tuple[list[CriterionCall], CriteriaJudged] | None = None,
) -> tuple[list[RelevanceLabel], list[DiagnosisExample]]:
    """Relevance labels and the planned calls at once; then, with ``diagnosis`` (the runs), the claim_check calls
    that need the answer calls' claims (after the per-(claim, chunk) checks of the sides ``asking.diagnosis``
    names, which replace those support matrices), and the ``criteria`` calls beside them, recorded in their
    :class:`~.criteria.CriteriaJudged`. Returns the new labels and the diagnosis examples. A panel grades the
    relevance pairs and the criteria; its first judge makes the other calls."""
    judge = primary_of(grader)
    sides = DIAGNOSIS_MODES[asking.diagnosis]
    asked, criteria_judged = criteria if criteria is not None else ([], CriteriaJudged())
    total = len(pairs) + len(plan.calls) + len(asked) * len(model_judges(grader))
    count = [0]

    def tick(_: Graded | None = None) -> None:
        count[0] += 1
        if progress is not None:
            progress("judging", count[0], total)

    try:
        labels, _, _ = await asyncio.gather(
            judge_unlabelled(grader, pairs, listwise=asking.listwise, seed=asking.seed, on_label=tick),
            assess_runs(judge, gold, plan, on_result=tick),
            judge_criteria(grader, asked, criteria_judged, on_result=tick),
        )
        examples: list[DiagnosisExample] = []
        if diagnosis is not None:
            calls = plan_diagnosis(gold, diagnosis, plan.assessed, context_k=asking.context_k)
            total += len(calls) + len(plan_pair_checks(calls, sides))
            if sides:
                await check_pairs(judge, calls, sides, on_result=tick)
            examples = await diagnose_runs(judge, gold, calls, plan.assessed, on_result=tick)
    finally:
        await grader.aclose()
    return labels, examples
