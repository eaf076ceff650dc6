"""``assay build --queries FILE``: a golden set from the user's own questions instead of generated ones.

Stages, in place of sampling, generation, the filters and the critic (the rest of the build is the same)::

    scrub       personal data masked in every logged question and its id (:mod:`.scrub`; off with ``--no-scrub``);
                counted as ``masked_<kind>`` (questions and ids) and ``scrub_altered`` (questions changed); a line
                left with nothing but placeholders is dropped, counted as ``dropped_by_scrub`` and named in a
                warning (no call)
    sample      N representative questions of the log (:mod:`.query_sampling`; N = ``--questions``, default
                ``DEFAULT_QUESTIONS``); counted as ``log_lines``, ``log_groups``, ``log_clusters``   (no call)
    relevance   pooled and graded as generated questions are (BM25 top k, ``--pool-run`` retrievers); a question
                has no source chunk, so its pool is the retrievers' alone
    unanswerable_from_corpus
                a question with no pooled chunk graded 2 or more gets ``flags['unanswerable_from_corpus']`` (kept:
                often the most useful finding for the team; counted as ``unanswerable_from_corpus``)
    draft       one ``reference_draft`` call per answerable question with its chunks graded >= 2 (best first, at
                most ``support_passages``): reference answer, evidence, claims and nuggets, with
                ``flags['drafted'] = True``                                              (judge stage "draft")
    support     as for generated questions (nuggets and claims vs chunks graded >= 2)

A question's id is ``lq-`` + a hash of its normalised wording (stable across runs); its type is ``real``;
``metadata`` keeps how often it was asked (``count``), its merged wordings (``variants``), its cluster, and the
first log lines (and ids) it stands for.

Drafted references are not gold until a person confirms them: ``assay audit`` queues the items of drafted and
unanswerable-from-corpus questions first. What counts as gold: relevance labels (qrels) count as for any build
(judge labels, audited when people audit); the drafted reference answers, claims and nuggets count for metrics that
need references (nugget recall, claim checks) only when the evaluation is told so; until then an evaluation notes how
many of its references are drafted (``flags['drafted']``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from assay.errors import InputError
from assay.formats.queries import LoggedQuery
from assay.judge.client import Judge, Judgement
from assay.pipelines.bootstrap.judging import BuildContext, drafted_claims, drafted_nuggets, passages_of, tick_progress
from assay.pipelines.bootstrap.query_sampling import sample_queries
from assay.pipelines.bootstrap.scrub import KINDS, only_masks, scrub_one
from assay.pipelines.bootstrap.settings import BuildSettings, ProgressFn, StageOutput
from assay.pipelines.bootstrap.support import best_passages, grades_by_question
from assay.text import content_hash, query_log_key
from assay.types import Provenance, Question, RelevanceLabel

__all__ = ["DEFAULT_QUESTIONS", "DRAFT", "draft_references", "flag_unanswerable", "logged_questions"]

DEFAULT_QUESTIONS = 100
DRAFT = "draft"
_SHOWN_LINES = 5


def logged_questions(queries: Sequence[LoggedQuery], settings: BuildSettings) -> StageOutput[Question]:
    """Scrub (unless ``settings.scrub`` is off) and sample the log into questions (see the module docstring)."""
    scrubbed = _scrubbed(queries) if settings.scrub else StageOutput(records=list(queries))
    queries, counts = scrubbed.records, dict(scrubbed.counts)
    texts = [q.text for q in queries]
    n = settings.questions if settings.questions is not None else DEFAULT_QUESTIONS
    sampled = sample_queries(texts, [q.count for q in queries], n, settings.seed)
    counts.update(sampled.counts)
    questions = []
    for group in sampled.chosen:
        lines = [queries[i] for i in group.members[:_SHOWN_LINES]]
        meta: dict[str, Any] = {"count": group.count, "variants": group.variants, "cluster": group.cluster}
        meta["log_lines"] = [q.line for q in lines]
        if any(q.id is not None for q in lines):
            meta["log_ids"] = [q.id for q in lines]
        qid = "lq-" + content_hash(query_log_key(group.text), 6)
        questions.append(Question(id=qid, text=group.text, type="real", flags={"real": True}, metadata=meta))
    counts["generated"] = len(questions)
    return StageOutput(records=questions, counts=counts, warnings=scrubbed.warnings)


def _scrubbed(queries: Sequence[LoggedQuery]) -> StageOutput[LoggedQuery]:
    """Each line's question and id scrubbed; lines left with nothing but placeholders dropped (counted, named)."""
    masked: Counter[str] = Counter()
    kept, empty, altered = [], [], 0
    for query in queries:
        text = scrub_one(query.text, masked)
        ident = None if query.id is None else scrub_one(query.id, masked)
        altered += text != query.text
        if only_masks(text):
            empty.append(query.line)
        else:
            kept.append(replace(query, text=text, id=ident))
    counts = {f"masked_{kind}": masked.get(kind, 0) for kind in KINDS}
    counts.update(scrub_altered=altered, dropped_by_scrub=len(empty))
    shown = ", ".join(map(str, empty[:_SHOWN_LINES])) + (", ..." if len(empty) > _SHOWN_LINES else "")
    if empty and not kept:
        raise InputError(
            f"every logged question held nothing but personal data once masked (lines {shown}): no question to "
            "build from (give questions, or --no-scrub if the log is not personal)"
        )
    warnings = [
        f"{len(empty)} logged question(s) held nothing but personal data once masked (line(s) {shown}): "
        "left out, counted as dropped_by_scrub."
    ]
    return StageOutput(records=kept, counts=counts, warnings=warnings if empty else [])


def flag_unanswerable(questions: Sequence[Question], labels: Sequence[RelevanceLabel]) -> StageOutput[Question]:
    """``flags['unanswerable_from_corpus']`` on each question with no pooled chunk graded 2 or more (kept)."""
    grades = grades_by_question(labels)
    out = StageOutput[Question](records=list(questions), counts={"unanswerable_from_corpus": 0})
    for question in questions:
        if not any((g or 0) >= 2 for g in grades.get(question.id, {}).values()):
            question.flags["unanswerable_from_corpus"] = True
            out.counts["unanswerable_from_corpus"] += 1
    return out


async def draft_references(
    questions: Sequence[Question],
    labels: Sequence[RelevanceLabel],
    *,
    judge: Judge,
    settings: BuildSettings,
    ctx: BuildContext,
    progress: ProgressFn | None,
) -> StageOutput[Question]:
    """One ``reference_draft`` call per answerable question (see the module docstring); an unscored draft leaves
    the question without a reference (``draft_unscored``)."""
    grades = grades_by_question(labels)
    todo = [(q, best_passages(grades.get(q.id, {}), 2)[: settings.support_passages]) for q in questions]
    todo = [(q, ids) for q, ids in todo if ids]
    variables = [{"question": q.text, "passages": passages_of(ids, ctx.chunks)} for q, ids in todo]
    tick = tick_progress(progress, DRAFT, len(todo))
    results = await judge.ajudge_many("reference_draft", variables, stage=DRAFT, on_result=tick)
    out = StageOutput[Question](records=list(questions), counts={"drafted": 0, "draft_unscored": 0})
    for (question, ids), judgement in zip(todo, results, strict=True):
        if _apply(question, ids, judgement, ctx):
            out.counts["drafted"] += 1
        else:
            out.counts["draft_unscored"] += 1
    return out


def _apply(question: Question, ids: list[str], j: Judgement[Any], ctx: BuildContext) -> bool:
    if j.output is None:
        question.flags["draft_unscored"] = j.unscored.reason if j.unscored is not None else "no draft"
        return False
    out, local = j.output, {f"P{i}": cid for i, cid in enumerate(ids, start=1)}
    cited = [local[e.passage_id.strip()] for e in out.evidence if e.passage_id.strip() in local]
    question.reference_answer = out.answer.strip()
    question.evidence = [e.quote for e in out.evidence]
    question.source_chunk_ids = list(dict.fromkeys(cited)) or ids[:1]
    question.source_doc_ids = list(dict.fromkeys(ctx.chunks[c].doc_id for c in question.source_chunk_ids))
    question.claims = drafted_claims(question.id, out.claims)
    question.nuggets = drafted_nuggets(question.id, out.nuggets)
    question.flags["drafted"] = True
    question.provenance = Provenance(
        source="generator", model=j.model, prompt=j.prompt, prompt_hash=j.prompt_hash, rationale=out.reason
    )
    return True
