"""``assay build --dry-run``: calls, cached items, prompt tokens and cost per stage, as a range, calling no model.

Ingest, chunking and sampling run for real, so the generation stage is counted exactly (its prompts are rendered
and looked up in the cache). Later stages depend on what the model writes, so they are estimated from the plan,
with a stand-in question per seed (the seed id and the seed chunk's most frequent content terms), as a range:

- high: every seed survives every filter and the critic, and every bound is reached. critic: one call per seed.
  relevance: each seed's pool at its cap, ``sources + neighbours + near-duplicates + pool_k`` BM25 hits of a
  10-term stand-in (fewer only when the corpus has fewer matching chunks); pointwise one call per pooled chunk,
  listwise ``ceil(pool / N)``. support: every pooled chunk graded >= ``support_min_grade``, so
  ``ceil(pool / support_passages)`` calls, plus one follow-up when that is more than one batch.
- low: ``FILTER_PASS_LOW`` (50%) of seeds reach the critic and ``ACCEPT_LOW`` (40%) are accepted (pooled and
  checked for support); pools as a short 3-term stand-in question gets them; one support call per accepted
  answerable question with its source chunk only (a call holds at least one passage; which pooled chunks join it
  depends on the grades, so more than the source is no low bound), 4 statements.

The shares are below every pass rate measured here (the demo corpus with the offline judge: 66% of seeds reach the
critic, 66% are accepted; the 1,000-document benchmark: 66% and 60%): a build that drops more than that (a weak
generator, a strict critic) can come in under the low end. Token and cost figures of the low end scale with its
share of seeds.

Conversations (``--conversations``): the ``conversation`` stage is counted exactly (its prompts rendered from the
plan); every planned turn then counts as a seed of the stages after it, checked by ``rewrite_check`` (with its
earlier turns as history, each a stand-in question and a 45-word answer) instead of the question critic, and pooled
and checked for support from its conversation's first passage.

Users' questions (``--queries``, :func:`estimate_queries`): scrubbing and sampling run for real, so the questions
are known; their pools are the build's own (BM25 over the question text), so relevance is counted exactly. The
drafts and the support checks depend on the grades: the high end drafts a reference for every question (one call
with its first ``support_passages`` pooled chunks) and checks support over its whole pool; the low end is 0 (no
question with a chunk graded 2 or more: nothing to draft or check).

The cost prices prompt tokens plus each prompt's ``max_tokens`` of completion per call (a bound).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.corpus.pooling import Bm25Index, PoolEntry
from assay.formats.queries import LoggedQuery
from assay.judge.client import Estimate
from assay.judge.panel import Grader, each_judge, primary_of
from assay.judge.relevance import Pair
from assay.judge.relevance_estimate import estimate_pairs
from assay.pipelines.bootstrap.conversations import (
    ConversationSeed,
    conversation_variables,
    plan_conversations,
    planned_note,
)
from assay.pipelines.bootstrap.judging import generation_variables, passages_of
from assay.pipelines.bootstrap.real_questions import logged_questions
from assay.pipelines.bootstrap.sampling import Seed, chunk_query, plan_seeds, prepare_corpus
from assay.pipelines.bootstrap.settings import BuildSettings
from assay.types import Chunk, turn_id

__all__ = ["ACCEPT_LOW", "FILTER_PASS_LOW", "BuildEstimate", "StageEstimate", "estimate_build", "estimate_queries"]

FILTER_PASS_LOW = 0.5  # low end: share of seeds that pass the model-free filters and reach the critic
ACCEPT_LOW = 0.4  # low end: share of seeds accepted (graded for relevance and checked for support)
_ANSWER = " ".join(["word"] * 45)


@dataclass(frozen=True)
class StageEstimate:
    """One stage of a dry run. ``calls``, ``prompt_tokens`` and ``cost_usd`` are the high end; the ``*_low`` fields
    the low end (equal to the high end when ``exact``, i.e. counted rather than estimated)."""

    stage: str
    calls: int
    cached: int
    prompt_tokens: int
    cost_usd: float | None
    exact: bool
    calls_low: int | None = None
    prompt_tokens_low: int | None = None
    cost_usd_low: float | None = None

    @property
    def low(self) -> int:
        """The low end of the calls."""
        return self.calls if self.calls_low is None else self.calls_low

    @property
    def low_tokens(self) -> int:
        """The low end of the prompt tokens."""
        return self.prompt_tokens if self.prompt_tokens_low is None else self.prompt_tokens_low


@dataclass
class BuildEstimate:
    """A dry run of a build: corpus size, planned seeds, and one estimate per judge stage."""

    documents: int
    chunks: int
    seeds: int
    stages: list[StageEstimate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    plan: str = ""  # how many questions from which documents, and why

    @property
    def calls(self) -> int:
        """Calls over all stages (high end)."""
        return sum(s.calls for s in self.stages)

    @property
    def calls_low(self) -> int:
        """Calls over all stages (low end)."""
        return sum(s.low for s in self.stages)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over all stages (high end)."""
        return sum(s.prompt_tokens for s in self.stages)

    @property
    def prompt_tokens_low(self) -> int:
        """Prompt tokens over all stages (low end)."""
        return sum(s.low_tokens for s in self.stages)

    @property
    def cost_usd(self) -> float | None:
        """The cost bound over all stages (high end); None when the model has no price."""
        return _total([s.cost_usd for s in self.stages])

    @property
    def cost_usd_low(self) -> float | None:
        """The cost over all stages at the low end; None when the model has no price."""
        return _total([s.cost_usd if s.exact else s.cost_usd_low for s in self.stages])


def _total(costs: list[float | None]) -> float | None:
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def _exact(name: str, estimate: Estimate) -> StageEstimate:
    return StageEstimate(name, estimate.calls, estimate.cached, estimate.prompt_tokens, estimate.cost_usd, True)


def _ranged(name: str, high: Estimate, low: Estimate, share: float) -> StageEstimate:
    """High end from the high plan; low end from the low plan scaled by the share of seeds it assumes survive."""
    cost_low = None if low.cost_usd is None else share * low.cost_usd
    if cost_low is not None and high.cost_usd is not None:
        cost_low = min(cost_low, high.cost_usd)
    return StageEstimate(
        name,
        high.calls,
        high.cached,
        high.prompt_tokens,
        high.cost_usd,
        False,
        calls_low=min(high.calls, math.floor(share * low.calls)),
        prompt_tokens_low=min(high.prompt_tokens, math.floor(share * low.prompt_tokens)),
        cost_usd_low=cost_low,
    )


def _stand_in(seed: Seed, chunks: dict[str, Chunk]) -> str:
    """A stand-in for a generated question: about 15 tokens, different per seed (so no two look cached)."""
    return f"{seed.id} {seed.type}: {_proxy_query(chunks[seed.chunk_ids[0]])}?"


def _proxy_query(chunk: Chunk, size: int = 10) -> str:
    return chunk_query(chunk, size) or chunk.text[:200]


def estimate_build(corpus: Path | Sequence[Path], *, judge: Grader, settings: BuildSettings) -> BuildEstimate:
    """Estimate a build of ``corpus`` (module docstring); the judge is only asked to render and look up its cache.
    With a panel, the relevance stage has one row per judge (``relevance MODEL``); the rest is its first judge's."""
    grader, judge = judge, primary_of(judge)
    ingested, chunks, index = prepare_corpus(corpus, settings)
    sampled = plan_seeds(chunks, index, settings, ingested.documents) if settings.questions != 0 else None
    planned = plan_conversations(chunks, index, settings, ingested.documents)
    by_id = {c.id: c for c in chunks}
    question_seeds = sampled.seeds if sampled is not None else []
    plan = sampled.plan if sampled is not None else "no single questions (--questions 0): conversations only"
    if planned:
        plan += f"; {len(planned)} conversations of {sum(len(c.plan) for c in planned)} turns"
    result = BuildEstimate(len(ingested.documents), len(chunks), len(question_seeds), plan=plan)
    capped = planned_note(len(planned), settings, len(chunks))
    result.warnings = [
        *ingested.warnings,
        *(sampled.warnings if sampled is not None else []),
        *([capped] if capped else []),
    ]
    if settings.pool_runs:
        result.warnings.append(
            "--pool-run chunks are not known before the build: relevance and support count BM25 hits in their place "
            f"(up to {settings.pool_k} a question), whatever --pool-bm25 says; each run adds up to that many more."
        )
    turns = [turn for c in planned for turn in _turn_seeds(c)]
    seeds = [*question_seeds, *turns]
    asked = {s.id: _stand_in(s, by_id) for s in seeds}  # once per seed: it is in every later prompt of the seed
    generation = judge.estimate("question_generation", [generation_variables(s, by_id) for s in question_seeds])
    result.stages.append(_exact("generation", generation))
    if planned:
        written = judge.estimate("conversation", [conversation_variables(c, by_id) for c in planned])
        result.stages.append(_exact("conversation", written))
    if settings.critic:
        critic = judge.estimate("question_critic", [_critic_vars(s, asked[s.id], by_id) for s in question_seeds])
        result.stages.append(_ranged("critic", critic, critic, FILTER_PASS_LOW))
        if planned:
            checks = [_check_vars(c, n, asked, by_id) for c in planned for n in range(1, len(c.plan) + 1)]
            check = judge.estimate("rewrite_check", checks)
            result.stages.append(_ranged("rewrite_check", check, check, FILTER_PASS_LOW))
    if settings.tools:  # one tool_calls call per answerable question that survives the filters
        tools = [tool.as_dict() for tool in settings.tools]
        drafts = [_critic_vars(s, asked[s.id], by_id) | {"tools": tools} for s in seeds if s.type != "unanswerable"]
        calls = judge.estimate("tool_calls", drafts)
        result.stages.append(_ranged("tool_calls", calls, calls, ACCEPT_LOW))
    high = {s.id: _pool_high(s, by_id, index, settings) for s in seeds}
    low = {s.id: _pool_low(s, by_id, index, settings) for s in seeds}
    for stage, one in each_judge(grader, "relevance"):
        relevance = [
            estimate_pairs(one, _pairs(seeds, pools, by_id, asked), listwise=settings.listwise, seed=settings.seed)
            for pools in (high, low)
        ]
        result.stages.append(_ranged(stage, relevance[0], relevance[1], ACCEPT_LOW))
    answerable = [s for s in seeds if s.type != "unanswerable"]
    size = settings.support_passages
    support_high = [v for s in answerable for v in _support_calls(asked[s.id], high[s.id], by_id, size)]
    support_low = [_support_vars(asked[s.id], list(s.chunk_ids[:1]), by_id) for s in answerable]
    support = [judge.estimate("support", variables) for variables in (support_high, support_low)]
    result.stages.append(_ranged("support", support[0], support[1], ACCEPT_LOW))
    return result


def estimate_queries(
    corpus: Path | Sequence[Path], queries: Sequence[LoggedQuery], *, judge: Grader, settings: BuildSettings
) -> BuildEstimate:
    """Estimate a build from users' questions (module docstring): relevance exact, drafts and support as a range."""
    grader, judge = judge, primary_of(judge)
    ingested, chunks, index = prepare_corpus(corpus, settings)
    sampled = logged_questions(queries, settings)
    questions = sampled.records
    by_id = {c.id: c for c in chunks}
    masked = sum(v for k, v in sampled.counts.items() if k.startswith("masked_"))
    plan = f"{len(questions)} questions sampled from {len(queries):,} logged ({masked} personal data masked)"
    result = BuildEstimate(len(ingested.documents), len(chunks), len(questions), plan=plan)
    result.warnings = [*ingested.warnings, *sampled.warnings]
    bm25_k = settings.pool_k if settings.pool_bm25 else 0
    pools = {
        q.id: [e.chunk_id for e in index.pool(q.text, [], bm25_k=bm25_k, neighbours=settings.neighbours,
                                               near_duplicates=settings.near_duplicates)]
        for q in questions
    }  # fmt: skip
    pairs = [Pair(q.id, q.text, cid, by_id[cid].text) for q in questions for cid in pools[q.id]]
    for stage, one in each_judge(grader, "relevance"):
        result.stages.append(_exact(stage, estimate_pairs(one, pairs, listwise=settings.listwise, seed=settings.seed)))
    size = settings.support_passages
    drafts = [
        {"question": q.text, "passages": passages_of(pools[q.id][:size], by_id)} for q in questions if pools[q.id]
    ]
    result.stages.append(_ranged("draft", judge.estimate("reference_draft", drafts), _NOTHING, 0.0))
    support = [v for q in questions for v in _support_calls(q.text, pools[q.id], by_id, size)]
    result.stages.append(_ranged("support", judge.estimate("support", support), _NOTHING, 0.0))
    return result


_NOTHING = Estimate(0, 0, 0, 0.0)


def _turn_seeds(conversation: ConversationSeed) -> list[Seed]:
    """A stand-in seed per planned turn (its conversation's first passage), for the stages after the check."""
    return [
        Seed(
            id=turn_id(conversation.id, n),
            type="unanswerable" if kind == "unanswerable" else "factoid",
            chunk_ids=conversation.chunk_ids[:1],
            doc_ids=conversation.doc_ids[:1],
            style=conversation.style,
            language=conversation.language,
        )
        for n, (kind, _) in enumerate(conversation.plan, start=1)
    ]


def _check_vars(
    conversation: ConversationSeed, n: int, asked: dict[str, str], chunks: dict[str, Chunk]
) -> dict[str, Any]:
    question = asked[turn_id(conversation.id, n)]
    history = [{"utterance": asked[turn_id(conversation.id, i)], "answer": _ANSWER} for i in range(1, n)]
    passages = passages_of(conversation.chunk_ids, chunks, heading=False)
    return {"history": history, "utterance": question, "rewrite": question, "answer": _ANSWER, "passages": passages}


def _pairs(
    seeds: Sequence[Seed], pools: dict[str, list[str]], chunks: dict[str, Chunk], asked: dict[str, str]
) -> list[Pair]:
    return [Pair(s.id, asked[s.id], cid, chunks[cid].text) for s in seeds for cid in pools[s.id]]


def _critic_vars(seed: Seed, question: str, chunks: dict[str, Chunk]) -> dict[str, Any]:
    return {"question": question, "answer": _ANSWER, "passages": passages_of(seed.chunk_ids, chunks, heading=False)}


def _pool_high(seed: Seed, chunks: dict[str, Chunk], index: Bm25Index, settings: BuildSettings) -> list[str]:
    """The pool at its cap: sources, neighbours and near-duplicates, plus ``pool_k`` BM25 hits not among them."""
    query = _proxy_query(chunks[seed.chunk_ids[0]])
    fixed = [e.chunk_id for e in _entries(index, query, seed, settings, bm25_k=0)]
    k = _bm25_k(settings)
    if k == 0:
        return fixed
    taken = set(fixed)
    hits = [cid for cid, _ in index.search(query, k + len(fixed)) if cid not in taken]
    return fixed + hits[:k]


def _bm25_k(settings: BuildSettings) -> int:
    """BM25 hits a pool holds: ``pool_k`` with --pool-bm25; with --pool-run, they stand in for the run's chunks."""
    return settings.pool_k if settings.pool_bm25 or settings.pool_runs else 0


def _pool_low(seed: Seed, chunks: dict[str, Chunk], index: Bm25Index, settings: BuildSettings) -> list[str]:
    """The pool a short question (3 content terms of the seed chunk) gets."""
    query = _proxy_query(chunks[seed.chunk_ids[0]], size=3)
    return [e.chunk_id for e in _entries(index, query, seed, settings, bm25_k=_bm25_k(settings))]


def _entries(index: Bm25Index, query: str, seed: Seed, settings: BuildSettings, *, bm25_k: int) -> list[PoolEntry]:
    sources = list(seed.chunk_ids)
    near = settings.near_duplicates
    return index.pool(query, sources, bm25_k=bm25_k, neighbours=settings.neighbours, near_duplicates=near)


def _support_calls(question: str, pool: list[str], chunks: dict[str, Chunk], size: int) -> list[dict[str, Any]]:
    """Every pooled chunk graded high enough: ``ceil(pool / size)`` batches, and a follow-up when more than one."""
    calls = [_support_vars(question, pool[i : i + size], chunks) for i in range(0, len(pool), size)]
    return [*calls, _support_vars(question, pool[:2], chunks)] if len(calls) > 1 else calls


def _support_vars(question: str, chunk_ids: list[str], chunks: dict[str, Chunk]) -> dict[str, Any]:
    """A support call with 4 statements the length of the stand-in question (so about 4 nuggets or claims)."""
    statements = [{"id": f"N{i}", "text": question} for i in range(1, 5)]
    return {"statements": statements, "passages": passages_of(chunk_ids, chunks, heading=False)}
