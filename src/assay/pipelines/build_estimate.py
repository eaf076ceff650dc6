"""``assay build --dry-run``: calls, cached items, prompt tokens and a cost bound per stage, without calling a model.

Ingest, chunking and sampling run for real, so the generation stage is counted exactly (its prompts are rendered
and looked up in the cache). Later stages depend on what the model writes, so they are estimates from the plan:

- critic: one call per seed (an upper bound: it assumes no question is dropped by the model-free filters before
  it), with a stand-in question (the seed id and the seed chunk's 10 top terms) and a 45-word answer;
- relevance: each seed's pool, computed with the seed chunk's 10 most frequent content terms as the query (the
  real pool uses the generated question), graded with that stand-in question;
- support: one call per answerable seed with 4 statements as long as the stand-in question against its first 3
  pooled chunks.

The cost bound prices prompt tokens plus each prompt's ``max_tokens`` of completion per call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.corpus.pooling import Bm25Index
from assay.judge.client import Estimate, Judge
from assay.judge.relevance import Pair, estimate_pairs
from assay.pipelines.build_judging import generation_variables
from assay.pipelines.build_sampling import Seed, plan_seeds, prepare_corpus
from assay.pipelines.build_settings import BuildSettings
from assay.text import terms
from assay.types import Chunk

__all__ = ["BuildEstimate", "StageEstimate", "estimate_build"]

_ANSWER = " ".join(["word"] * 45)


@dataclass(frozen=True)
class StageEstimate:
    """One stage of a dry run; ``exact`` is False when the counts are estimated from the plan."""

    stage: str
    calls: int
    cached: int
    prompt_tokens: int
    cost_usd: float | None
    exact: bool


@dataclass
class BuildEstimate:
    """A dry run of a build: corpus size, planned seeds, and one estimate per judge stage."""

    documents: int
    chunks: int
    seeds: int
    stages: list[StageEstimate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        """Calls over all stages."""
        return sum(s.calls for s in self.stages)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over all stages."""
        return sum(s.prompt_tokens for s in self.stages)

    @property
    def cost_usd(self) -> float | None:
        """The cost bound over all stages; None when the model has no price."""
        costs = [s.cost_usd for s in self.stages]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def _stage(name: str, estimate: Estimate, *, exact: bool) -> StageEstimate:
    return StageEstimate(name, estimate.calls, estimate.cached, estimate.prompt_tokens, estimate.cost_usd, exact)


def _stand_in(seed: Seed, chunks: dict[str, Chunk]) -> str:
    """A stand-in for a generated question: about 15 tokens, different per seed (so no two look cached)."""
    return f"{seed.id} {seed.type}: {_proxy_query(chunks[seed.chunk_ids[0]])}?"


def _proxy_query(chunk: Chunk) -> str:
    return " ".join(t for t, _ in Counter(terms(chunk.text)).most_common(10)) or chunk.text[:200]


def estimate_build(corpus: Path | Sequence[Path], *, judge: Judge, settings: BuildSettings) -> BuildEstimate:
    """Estimate a build of ``corpus`` (module docstring); the judge is only asked to render and look up its cache."""
    ingested, chunks, index = prepare_corpus(corpus, settings)
    sampled = plan_seeds(chunks, index, settings)
    by_id = {c.id: c for c in chunks}
    result = BuildEstimate(len(ingested.documents), len(chunks), len(sampled.seeds))
    result.warnings = [*ingested.warnings, *sampled.warnings]
    seeds = sampled.seeds
    generation = judge.estimate("question_generation", [generation_variables(s, by_id) for s in seeds])
    result.stages.append(_stage("generation", generation, exact=True))
    if settings.critic:
        critic_vars = [_critic_vars(s, by_id) for s in seeds]
        result.stages.append(_stage("critic", judge.estimate("question_critic", critic_vars), exact=False))
    pools = {s.id: _pool(s, by_id, index, settings) for s in seeds}
    pairs = [Pair(s.id, _stand_in(s, by_id), cid, by_id[cid].text) for s in seeds for cid in pools[s.id]]
    relevance = estimate_pairs(judge, pairs, listwise=settings.listwise, seed=settings.seed)
    result.stages.append(_stage("relevance", relevance, exact=False))
    support_vars = [_support_vars(s, pools[s.id][:3], by_id) for s in seeds if s.type != "unanswerable"]
    result.stages.append(_stage("support", judge.estimate("support", support_vars), exact=False))
    return result


def _critic_vars(seed: Seed, chunks: dict[str, Chunk]) -> dict[str, Any]:
    passages = [{"id": f"P{i}", "text": chunks[c].text} for i, c in enumerate(seed.chunk_ids, 1)]
    return {"question": _stand_in(seed, chunks), "answer": _ANSWER, "passages": passages}


def _pool(seed: Seed, chunks: dict[str, Chunk], index: Bm25Index, settings: BuildSettings) -> list[str]:
    entries = index.pool(
        _proxy_query(chunks[seed.chunk_ids[0]]),
        list(seed.chunk_ids),
        bm25_k=settings.pool_k,
        neighbours=settings.neighbours,
        near_duplicates=settings.near_duplicates,
    )
    return [e.chunk_id for e in entries]


def _support_vars(seed: Seed, chunk_ids: list[str], chunks: dict[str, Chunk]) -> dict[str, Any]:
    statements = [{"id": f"N{i}", "text": _stand_in(seed, chunks)} for i in range(1, 5)]
    return {
        "statements": statements,
        "passages": [{"id": f"P{i}", "text": chunks[c].text} for i, c in enumerate(chunk_ids, 1)],
    }
