"""Claims and nuggets drafted from the reference answers a golden set already has, as ``assay build`` drafts them for
its own questions: a set imported from question + reference answer (``assay import ragas``, JSONL or CSV) gets
what nugget recall and the claim measures need, so that answers can be evaluated on it with no passage at all.

One judge stage, ``draft`` (the stage of ``assay build --queries`` that drafts references), two calls per question
that has a reference answer and neither claims nor nuggets (an unanswerable question, or one whose file gave claims
or nuggets, is left as it is)::

    claims    the ``claims`` prompt on the reference answer: its atomic, self-contained claims
    nuggets   the ``nuggets`` prompt on the question, the reference answer and the question's passages (its chunks
              graded 2 or more, best first, at most ``support_passages``): the facts a good answer holds, each vital
              or okay

The build's ``reference_draft`` prompt writes an answer from passages; here the answer is given, so the prompts that
take an answer apart are asked instead, and the reference answer stays the user's. Claims and nuggets are numbered
as a build numbers them (``{question}-c1``, ``{question}-n1``: :func:`~.judging.drafted_claims`) and the question is
flagged ``claims_drafted`` (a person may check them in ``assay audit``). An unscored call leaves its part empty,
counted in ``draft_unscored``, its reason in ``flags['draft_unscored']``.

Every call goes through the judge: priced before by :func:`estimate_reference_drafts` (``--dry-run``; the calls are
known exactly, since the references are), and cached, so a run stopped part-way (Ctrl-C, ``--max-cost``) and run
again asks only what was not answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.aio import run_sync
from assay.formats.golden import GoldenSet
from assay.judge.client import Estimate, Judge, Judgement
from assay.judge.panel import Grader, merged_usage, primary_of
from assay.pipelines.bootstrap.judging import drafted_claims, drafted_nuggets, passages_of, tick_progress
from assay.pipelines.bootstrap.real_questions import DRAFT
from assay.pipelines.bootstrap.settings import BuildSettings, ProgressFn, StageOutput
from assay.pipelines.bootstrap.support import best_passages, grades_by_question
from assay.types import Chunk, Question

__all__ = [
    "CLAIMS_PROMPT",
    "NUGGETS_PROMPT",
    "adraft_from_references",
    "draft_from_references",
    "estimate_reference_drafts",
    "to_draft",
]

CLAIMS_PROMPT, NUGGETS_PROMPT = "claims", "nuggets"
_PASSAGES = BuildSettings().support_passages  # passages beside a reference: as many as a build's draft shows


def to_draft(golden: GoldenSet) -> list[Question]:
    """The questions whose claims and nuggets are drafted: a reference answer, no claims, no nuggets, answerable."""
    return [
        q
        for q in golden.questions
        if (q.reference_answer or "").strip() and not q.claims and not q.nuggets and q.type != "unanswerable"
    ]


def _variables(golden: GoldenSet, questions: Sequence[Question]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``claims`` and the ``nuggets`` variables of each question, in order."""
    grades = grades_by_question(golden.qrels)
    chunks: Mapping[str, Chunk] = {c.id: c for c in golden.chunks}
    claims, nuggets = [], []
    for q in questions:
        reference = (q.reference_answer or "").strip()
        ids = [cid for cid in best_passages(grades.get(q.id, {}), 2) if cid in chunks][:_PASSAGES]
        claims.append({"question": q.text, "text": reference})
        nuggets.append({"question": q.text, "answer": reference, "passages": passages_of(ids, chunks, heading=False)})
    return claims, nuggets


def estimate_reference_drafts(golden: GoldenSet, judge: Grader) -> dict[str, Estimate]:
    """Calls, cached calls, prompt tokens and a cost bound of each prompt of the stage, calling nothing (the judge
    of ``--dry-run`` renders the prompts and reads the cache)."""
    one = primary_of(judge)
    claims, nuggets = _variables(golden, to_draft(golden))
    return {CLAIMS_PROMPT: one.estimate(CLAIMS_PROMPT, claims), NUGGETS_PROMPT: one.estimate(NUGGETS_PROMPT, nuggets)}


def draft_from_references(
    golden: GoldenSet, *, judge: Grader, progress: ProgressFn | None = None
) -> StageOutput[Question]:
    """:func:`adraft_from_references` in its own event loop; the judge's connections are closed after."""

    async def run() -> StageOutput[Question]:
        try:
            return await adraft_from_references(golden, judge=judge, progress=progress)
        finally:
            await judge.aclose()

    return run_sync(run)


async def adraft_from_references(
    golden: GoldenSet, *, judge: Grader, progress: ProgressFn | None = None
) -> StageOutput[Question]:
    """Draft the claims and nuggets of :func:`to_draft`'s questions in place (module docstring); the counts say how
    many questions got claims and nuggets and how many calls went unscored. The golden set's manifest records the
    judge, the prompts and the stage's usage."""
    one = primary_of(judge)
    questions = to_draft(golden)
    claims, nuggets = _variables(golden, questions)
    tick = tick_progress(progress, DRAFT, 2 * len(questions))
    said = await one.ajudge_many(CLAIMS_PROMPT, claims, stage=DRAFT, on_result=tick)
    found = await one.ajudge_many(NUGGETS_PROMPT, nuggets, stage=DRAFT, on_result=tick)
    out = StageOutput[Question](records=list(golden.questions))
    out.counts = {"drafted_claims": 0, "drafted_nuggets": 0, "draft_unscored": 0}
    for question, claim_call, nugget_call in zip(questions, said, found, strict=True):
        _apply(question, claim_call, nugget_call, out.counts)
    _record(golden, one, out.counts)
    return out


def _apply(question: Question, claim_call: Judgement[Any], nugget_call: Judgement[Any], counts: dict[str, int]) -> None:
    for call in (claim_call, nugget_call):
        if call.output is None:
            counts["draft_unscored"] += 1
            question.flags["draft_unscored"] = call.unscored.reason if call.unscored is not None else "no draft"
    if claim_call.output is not None:
        question.claims = drafted_claims(question.id, claim_call.output.claims)
        counts["drafted_claims"] += bool(question.claims)
    if nugget_call.output is not None:
        question.nuggets = drafted_nuggets(question.id, nugget_call.output.nuggets)
        counts["drafted_nuggets"] += bool(question.nuggets)
    if question.claims or question.nuggets:
        question.flags["claims_drafted"] = True


def _record(golden: GoldenSet, judge: Judge, counts: Mapping[str, int]) -> None:
    """The judge, the prompts (name@version -> hash), the stage's counts and usage in the manifest."""
    manifest = golden.manifest
    manifest.models["drafts"] = judge.model
    for name in (CLAIMS_PROMPT, NUGGETS_PROMPT):
        prompt = judge.prompt(name)
        manifest.prompts[prompt.ref] = prompt.content_hash
    manifest.counts.update(counts)
    manifest.usage.update(merged_usage([judge.usage]))
