"""The judge stages of ``assay build``: generation, critic and pooled relevance (support: .support).

Each is ``async stage(records, judge, settings, context, progress) -> StageOutput``; every call goes through the
judge (cached, so a rerun pays for nothing twice). A judge output that could not be produced (``Unscored``) never
turns into a pass or a fail by default: an unscored generation or critique drops the question with that reason
(``dropped_by_generation_unscored``, ``dropped_by_critic_unscored``); an unscored relevance label is kept with
``grade=None``.

Passages are given to the model with short local ids (``P1``, ``P2``, ...) and mapped back to chunk ids, so a
model never has to copy a long chunk id exactly.

Unanswerable questions are pooled from the chunk they were written from and graded like any other; a pooled chunk
graded 3 means the corpus answers the question after all, and :func:`check_unanswerable` drops it
(``dropped_by_unanswerable_answered``). Their ``source_chunk_ids`` are empty (no chunk answers them); the chunk they
came from is kept in ``metadata['seed_chunk_ids']``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.corpus.pooling import Bm25Index, PoolEntry
from assay.judge.client import Judge, Judgement
from assay.judge.outputs import NuggetItem
from assay.judge.panel import Grader
from assay.judge.relevance import Pair, grade_pairs_detailed
from assay.pipelines.bootstrap.sampling import Seed
from assay.pipelines.bootstrap.settings import BuildSettings, ProgressFn, StageOutput, drop
from assay.types import Chunk, Claim, Nugget, Provenance, Question, RelevanceLabel

__all__ = [
    "BuildContext",
    "check_unanswerable",
    "critique_questions",
    "drafted_claims",
    "drafted_nuggets",
    "generate_questions",
    "generation_variables",
    "grade_pools",
    "passages_of",
    "tick_progress",
]

GENERATION, CRITIC, RELEVANCE = "generation", "critic", "relevance"


@dataclass(frozen=True)
class BuildContext:
    """What stages read besides their records: the chunks by id and the BM25 index over them."""

    chunks: Mapping[str, Chunk]
    index: Bm25Index


def tick_progress(progress: ProgressFn | None, stage: str, total: int, start: int = 0) -> Callable[..., None]:
    """A callback that reports one more item of ``stage`` done (of ``total``) on each call, from ``start``."""
    done = start
    if progress is not None:
        progress(stage, start, total)

    def advance(*_: Any) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(stage, done, total)

    return advance


def passages_of(chunk_ids: Sequence[str], chunks: Mapping[str, Chunk], heading: bool = True) -> list[dict[str, str]]:
    """Prompt passages for ``chunk_ids`` with local ids ``P1``, ``P2``, ... (mapped back by position)."""
    out = []
    for i, cid in enumerate(chunk_ids, start=1):
        chunk = chunks[cid]
        item = {"id": f"P{i}", "text": chunk.text}
        if heading:
            item["heading"] = " > ".join(chunk.heading_path)
        out.append(item)
    return out


def drafted_claims(question_id: str, texts: Sequence[str]) -> list[Claim]:
    """A judge's claims as a question's: ``{question}-c1``, ``-c2``, ... numbered as the judge gave them, blanks left
    out."""
    return [Claim(id=f"{question_id}-c{i}", text=text.strip()) for i, text in enumerate(texts, 1) if text.strip()]


def drafted_nuggets(question_id: str, items: Sequence[NuggetItem]) -> list[Nugget]:
    """A judge's nuggets as a question's: ``{question}-n1``, ... with their importance, blanks left out."""
    return [
        Nugget(id=f"{question_id}-n{i}", text=item.text.strip(), importance=item.importance)
        for i, item in enumerate(items, 1)
        if item.text.strip()
    ]


def generation_variables(seed: Seed, chunks: Mapping[str, Chunk]) -> dict[str, Any]:
    """The ``question_generation`` prompt variables for one seed."""
    return {
        "passages": passages_of(seed.chunk_ids, chunks),
        "question_type": seed.type,
        "style": seed.style,
        "language": seed.language,
    }


async def generate_questions(
    seeds: Sequence[Seed], judge: Judge, settings: BuildSettings, ctx: BuildContext, progress: ProgressFn | None
) -> StageOutput[Question]:
    """One ``question_generation`` call per seed -> a candidate :class:`Question` (or a counted drop)."""
    variables = [generation_variables(seed, ctx.chunks) for seed in seeds]
    tick = tick_progress(progress, GENERATION, len(seeds))
    results = await judge.ajudge_many("question_generation", variables, stage=GENERATION, on_result=tick)
    out = StageOutput[Question](records=[], counts={"generated": 0, "dropped_by_generation_unscored": 0})
    for seed, judgement in zip(seeds, results, strict=True):
        question = _question(seed, judgement)
        if question.flags.get("dropped"):
            out.dropped.append(question)
            out.counts["dropped_by_generation_unscored"] += 1
        else:
            out.records.append(question)
            out.counts["generated"] += 1
    return out


def _question(seed: Seed, j: Judgement[Any]) -> Question:
    meta: dict[str, Any] = {"seed_chunk_ids": list(seed.chunk_ids), "style": seed.style, "language": seed.language}
    if seed.fallback_from:
        meta["planned_type"] = seed.fallback_from
    base = {"id": seed.id, "type": seed.type, "source_doc_ids": list(seed.doc_ids), "metadata": meta}
    if j.output is None or not str(j.output.question).strip():
        why = j.unscored.reason if j.unscored is not None else "the generated question is empty"
        return Question(text="", flags={"dropped": "generation_unscored", "dropped_detail": why}, **base)
    out = j.output
    answerable = seed.type != "unanswerable"
    if not answerable and (out.evidence or out.claims or out.nuggets):
        # the prompt asks for empty lists: an unanswerable question has nothing to support
        out = out.model_copy(update={"evidence": [], "claims": [], "nuggets": []})
        meta["discarded_support_lists"] = True
    local = {f"P{i}": cid for i, cid in enumerate(seed.chunk_ids, start=1)}
    meta["evidence_chunk_ids"] = [local.get(e.passage_id.strip()) for e in out.evidence]
    return Question(
        text=out.question.strip(),
        reference_answer=out.answer.strip(),
        source_chunk_ids=list(seed.chunk_ids) if answerable else [],
        evidence=[e.quote for e in out.evidence],
        claims=drafted_claims(seed.id, out.claims),
        nuggets=drafted_nuggets(seed.id, out.nuggets),
        provenance=Provenance(
            source="generator", model=j.model, prompt=j.prompt, prompt_hash=j.prompt_hash, rationale=out.reason
        ),
        **base,
    )


async def critique_questions(
    questions: Sequence[Question], judge: Judge, settings: BuildSettings, ctx: BuildContext, progress: ProgressFn | None
) -> StageOutput[Question]:
    """One ``question_critic`` call per question; keep scores >= ``critic_min`` (unanswerable: not 'answerable')."""
    out = StageOutput[Question](records=[], counts={"dropped_by_critic": 0, "dropped_by_critic_unscored": 0})
    if not settings.critic:
        out.records = list(questions)
        return out
    variables = [
        {
            "question": q.text,
            "answer": q.reference_answer or "",
            "passages": passages_of(q.metadata["seed_chunk_ids"], ctx.chunks, heading=False),
        }
        for q in questions
    ]
    tick = tick_progress(progress, CRITIC, len(questions))
    results = await judge.ajudge_many("question_critic", variables, stage=CRITIC, on_result=tick)
    for question, judgement in zip(questions, results, strict=True):
        verdict = _critic_verdict(question, judgement, settings.critic_min)
        if verdict is None:
            out.records.append(question)
            continue
        drop(out, question, *verdict)
    return out


def _critic_verdict(question: Question, j: Judgement[Any], minimum: int) -> tuple[str, str] | None:
    if j.output is None:
        return "critic_unscored", j.unscored.reason if j.unscored is not None else "no critique"
    scores = {"answerable": j.output.answerable, "self_contained": j.output.self_contained, "clear": j.output.clear}
    question.flags["critic"] = {**scores, "reason": j.output.reason}
    checked = [k for k in scores if not (k == "answerable" and question.type == "unanswerable")]
    low = [f"{k}={scores[k]}" for k in checked if scores[k] < minimum]
    return ("critic", f"critic scores below {minimum}: {', '.join(low)}") if low else None


async def grade_pools(
    questions: Sequence[Question],
    judge: Grader,
    settings: BuildSettings,
    ctx: BuildContext,
    progress: ProgressFn | None,
    *,
    runs: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> StageOutput[RelevanceLabel]:
    """Pool candidate chunks for every question and grade every pooled pair (qrels, unscored kept with grade None);
    with a panel, by each of its judges, combined.
    ``runs``: run name -> question id -> ranked chunk ids (the top k of the user's retrievers), pooled too."""
    pairs: list[Pair] = []
    counts = dict.fromkeys(("pooled_pairs", "pool_source", "pool_bm25", "pool_neighbour", "pool_near_duplicate"), 0)
    for name in runs or {}:
        counts[f"pool_run_{name}"] = 0
    for question in questions:
        sources = question.source_chunk_ids or question.metadata.get("seed_chunk_ids", [])
        entries = ctx.index.pool(
            question.text,
            sources,
            bm25_k=settings.pool_k if settings.pool_bm25 else 0,
            neighbours=settings.neighbours,
            near_duplicates=settings.near_duplicates,
        )
        reasons = _pool_reasons(entries, _run_hits(question.id, runs or {}, entries))
        for key, value in reasons.items():
            counts[f"pool_{key}"] += value
        pairs.extend(Pair(question.id, question.text, e.chunk_id, ctx.chunks[e.chunk_id].text) for e in entries)
        question.metadata["pool"] = {"size": len(entries), **dict(sorted(reasons.items()))}
    counts["pooled_pairs"] = len(pairs)
    tick = tick_progress(progress, RELEVANCE, len(pairs))
    graded = await grade_pairs_detailed(
        judge, pairs, listwise=settings.listwise, seed=settings.seed, stage=RELEVANCE, on_label=tick
    )
    labels = [g.label for g in graded]
    counts["qrels_unscored_pairs"] = sum(label.grade is None for label in labels)
    counts["qrels_cached"] = sum(g.cached for g in graded)
    return StageOutput(records=labels, counts=counts)


def _run_hits(qid: str, runs: Mapping[str, Mapping[str, Sequence[str]]], entries: list[PoolEntry]) -> dict[str, int]:
    """Add each run's ranked chunks for ``qid`` to ``entries`` (once per chunk); per run, how many it brought."""
    by_id = {e.chunk_id: e for e in entries}
    hits: dict[str, int] = {}
    for name, ranking in runs.items():
        for cid in ranking.get(qid, ()):
            if cid not in by_id:
                by_id[cid] = PoolEntry(cid)
                entries.append(by_id[cid])
            hits[f"run_{name}"] = hits.get(f"run_{name}", 0) + 1
    return hits


def _pool_reasons(entries: list[PoolEntry], run_hits: dict[str, int]) -> dict[str, int]:
    reasons: dict[str, int] = dict(run_hits)
    for entry in entries:
        for reason in entry.reasons:
            reasons[reason] = reasons.get(reason, 0) + 1
    return reasons


def check_unanswerable(
    questions: Sequence[Question], labels: Sequence[RelevanceLabel]
) -> tuple[StageOutput[Question], list[RelevanceLabel]]:
    """Drop unanswerable questions that some pooled chunk answers exactly (grade 3), with their labels."""
    answered: dict[str, str] = {}
    for label in labels:
        if label.grade == 3:
            answered.setdefault(label.query_id, label.chunk_id)
    out = StageOutput[Question](records=[], counts={"dropped_by_unanswerable_answered": 0})
    for question in questions:
        if question.type == "unanswerable" and question.id in answered:
            detail = f"chunk {answered[question.id]} was graded 3 (it answers the question)"
            drop(out, question, "unanswerable_answered", detail)
        else:
            out.records.append(question)
    gone = {q.id for q in out.dropped}
    return out, [label for label in labels if label.query_id not in gone]
