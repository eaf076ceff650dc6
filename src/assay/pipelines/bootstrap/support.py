"""The support stage of ``assay build``: which pooled chunks support each nugget and claim of a question.

A question's statements (nuggets ``N1..``, then claims ``C1..``) are checked by ``support`` calls against its pooled
chunks graded >= ``support_min_grade``, best grade first (pool order within a grade), at most ``support_passages``
per call. A statement's ``chunk_ids`` are the chunks a call names as giving full support; ``partial_chunk_ids`` those
named only as partial support.

Batching and joint support. The prompt allows two passages to support a statement together, but only passages
shown in the same call can be combined. So after the batched calls, a statement with no full support whose partial
chunks came from two or more different batches gets a follow-up: one more call per question, with all such
statements and their partial chunks together (best grade first, at most ``max(support_passages, 2)``). Counted as
``support_followup_calls``, and ``support_joint`` counts statements that gained full support from it. What remains:
two chunks that each say nothing (``none``) alone but support a statement together are still not found when they
sit in different batches, and a follow-up with more partial chunks than ``support_passages`` keeps the best graded.

As before a batched call's answer names every passage that contributes, so chunks that support a statement together
are recorded in ``chunk_ids`` like chunks that support it alone (the support format has no joint sets). An unscored
call leaves its statements without records from it (``support_unscored``); a statement the model skipped is counted
in ``support_missing``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.judge.client import Judge, Judgement
from assay.pipelines.bootstrap.judging import BuildContext, passages_of, tick_progress
from assay.pipelines.bootstrap.settings import BuildSettings, ProgressFn, StageOutput
from assay.types import NuggetSupport, Provenance, Question, RelevanceLabel

__all__ = ["best_passages", "grades_by_question", "map_support"]

SUPPORT = "support"
_Grades = Mapping[str, int | None]


@dataclass(frozen=True)
class _Job:
    """One support call: a question, its statements to check, and the chunks shown (in order)."""

    question: Question
    statements: list[dict[str, str]]
    chunk_ids: list[str]
    batch: int  # index of the batch among the question's batches; -1 for a follow-up


@dataclass
class _Slot:
    """What the calls found for one statement."""

    support: set[str] = field(default_factory=set)
    partial: dict[str, int] = field(default_factory=dict)  # chunk id -> batch it was found in
    reason: str | None = None
    provenance: Provenance | None = None


def _statements(question: Question) -> list[dict[str, str]]:
    nuggets = [{"id": f"N{i}", "text": n.text} for i, n in enumerate(question.nuggets, 1)]
    return nuggets + [{"id": f"C{i}", "text": c.text} for i, c in enumerate(question.claims, 1)]


def _by_grade(chunk_ids: Sequence[str], grades: _Grades) -> list[str]:
    return sorted(chunk_ids, key=lambda cid: -(grades.get(cid) or 0))  # stable: pool order within a grade


def grades_by_question(labels: Sequence[RelevanceLabel]) -> dict[str, dict[str, int | None]]:
    """query id -> chunk id -> grade (None: unscored), in the labels' order."""
    out: dict[str, dict[str, int | None]] = {}
    for label in labels:
        out.setdefault(label.query_id, {})[label.chunk_id] = label.grade
    return out


def best_passages(grades: _Grades, minimum: int) -> list[str]:
    """The chunks graded ``minimum`` or more, the best first (pool order within a grade)."""
    return _by_grade([cid for cid, g in grades.items() if g is not None and g >= minimum], grades)


def _support_batches(grades: _Grades, settings: BuildSettings) -> list[list[str]]:
    good = best_passages(grades, settings.support_min_grade)
    size = settings.support_passages
    return [good[i : i + size] for i in range(0, len(good), size)]


async def map_support(
    questions: Sequence[Question],
    labels: Sequence[RelevanceLabel],
    *,
    judge: Judge,
    settings: BuildSettings,
    ctx: BuildContext,
    progress: ProgressFn | None,
) -> StageOutput[NuggetSupport]:
    """``support`` calls per question (module docstring) -> NuggetSupport records, one per nugget checked; fills
    ``Nugget.supported_by`` and ``Claim.supported_by``."""
    grades = grades_by_question(labels)
    counts = dict.fromkeys(("support_calls", "support_unscored", "support_missing", "support_no_passages"), 0)
    counts.update(support_followup_calls=0, support_joint=0)
    jobs: list[_Job] = []
    for question in questions:
        statements = _statements(question)
        batches = _support_batches(grades.get(question.id, {}), settings) if statements else []
        if not batches and question.nuggets:
            counts["support_no_passages"] += 1
            question.flags["no_support_passages"] = True
        jobs.extend(_Job(question, statements, batch, i) for i, batch in enumerate(batches))
    found: dict[str, dict[str, _Slot]] = {}
    await _run(jobs, judge, ctx=ctx, found=found, counts=counts, tick=tick_progress(progress, SUPPORT, len(jobs)))
    followups = [job for q in questions if (job := _followup(q, found.get(q.id, {}), grades, settings)) is not None]
    if followups:
        before = {q.id: {sid for sid, s in found.get(q.id, {}).items() if s.support} for q in questions}
        tick = tick_progress(progress, SUPPORT, len(jobs) + len(followups), start=len(jobs))
        await _run(followups, judge, ctx=ctx, found=found, counts=counts, tick=tick)
        counts["support_followup_calls"] = len(followups)
        counts["support_joint"] = sum(
            bool(found[job.question.id][s["id"]].support) and s["id"] not in before[job.question.id]
            for job in followups
            for s in job.statements
        )
    counts["support_calls"] = len(jobs) + len(followups)
    return StageOutput(records=_records(questions, found), counts=counts)


def _followup(
    question: Question, found: Mapping[str, _Slot], grades: Mapping[str, _Grades], settings: BuildSettings
) -> _Job | None:
    """One call with the statements that only have partial support from chunks in different batches, or None."""
    wanted = [
        s
        for s in _statements(question)
        if (slot := found.get(s["id"])) is not None and not slot.support and len(set(slot.partial.values())) > 1
    ]
    if not wanted:
        return None
    partial = {cid for s in wanted for cid in found[s["id"]].partial}
    pooled = grades.get(question.id, {})
    ordered = _by_grade([cid for cid in pooled if cid in partial], pooled)
    return _Job(question, wanted, ordered[: max(settings.support_passages, 2)], -1)  # joint support needs 2


async def _run(
    jobs: Sequence[_Job],
    judge: Judge,
    *,
    ctx: BuildContext,
    found: dict[str, dict[str, _Slot]],
    counts: dict[str, int],
    tick: Callable[..., None],
) -> None:
    """Make the calls of ``jobs`` and merge their answers into ``found``."""
    variables = [
        {"statements": job.statements, "passages": passages_of(job.chunk_ids, ctx.chunks, heading=False)}
        for job in jobs
    ]
    results = await judge.ajudge_many("support", variables, stage=SUPPORT, on_result=tick)
    for job, j in zip(jobs, results, strict=True):
        _merge(job, j, found.setdefault(job.question.id, {}), counts)


def _merge(job: _Job, j: Judgement[Any], found: dict[str, _Slot], counts: dict[str, int]) -> None:
    if j.output is None:
        counts["support_unscored"] += 1
        job.question.flags["support_unscored"] = job.question.flags.get("support_unscored", 0) + 1
        return
    local = {f"P{i}": cid for i, cid in enumerate(job.chunk_ids, start=1)}
    answers = {a.statement_id: a for a in j.output.assignments}
    for statement in job.statements:
        answer = answers.get(statement["id"])
        if answer is None:
            counts["support_missing"] += 1
            continue
        slot = found.setdefault(statement["id"], _Slot())
        ids = {local[p] for p in answer.passage_ids if p in local}
        if answer.support == "support":
            slot.support.update(ids)
        elif answer.support == "partial":
            slot.partial.update({cid: job.batch for cid in ids if cid not in slot.partial})
        if answer.support != "none":
            slot.reason = slot.reason or answer.reason
        slot.provenance = Provenance(source="judge", model=j.model, prompt=j.prompt, prompt_hash=j.prompt_hash)


def _records(questions: Sequence[Question], found: Mapping[str, Mapping[str, _Slot]]) -> list[NuggetSupport]:
    records: list[NuggetSupport] = []
    for question in questions:
        slots = found.get(question.id, {})
        for i, claim in enumerate(question.claims, 1):
            claim.supported_by = sorted(slots[f"C{i}"].support) if f"C{i}" in slots else []
        for i, nugget in enumerate(question.nuggets, 1):
            slot = slots.get(f"N{i}")
            if slot is None or slot.provenance is None:
                continue
            nugget.supported_by = sorted(slot.support)
            records.append(
                NuggetSupport(
                    query_id=question.id,
                    nugget_id=nugget.id,
                    chunk_ids=sorted(slot.support),
                    partial_chunk_ids=sorted(set(slot.partial) - slot.support),
                    provenance=slot.provenance.model_copy(update={"rationale": slot.reason}),
                )
            )
    return records
