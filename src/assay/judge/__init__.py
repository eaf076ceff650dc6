"""The judge layer: the only place in assay that talks to a model.

:class:`Judge` renders prompt files, caches answers, limits concurrency, retries transient failures, validates
structured outputs and records unscored items; :func:`make_judge` builds one from a litellm-style model string;
:func:`grade_pairs` grades (question, chunk) pairs for relevance, with one judge or a :class:`Panel` of several. A
Python user's own ``openai.AsyncOpenAI`` or ``AsyncAzureOpenAI`` client can carry the calls:
``make_judge("azure/DEPLOYMENT", client=client)``, or ``Judge(OpenAIClientBackend(client), model=...)``
(:class:`OpenAIClientBackend` has the details).

Modules and subpackages, one line each:

- ``accounts``: what a judge's calls count and cost (usage by stage, stats, the shared budget).
- ``backends``: the backends that talk to models (OpenAI-compatible on aiohttp, litellm for the rest).
- ``base``: the seams of the judge layer: what a backend is asked, what it answers, the Backend protocol.
- ``batches``: judging through the providers' batch APIs, resumable across processes.
- ``cache``: the judge cache, keyed by everything that decides an answer and nothing else.
- ``cache_access``: the judge's reads and writes of its cache, made safe (a broken cache reads as a miss).
- ``checks``: the deterministic checks of criteria files (contains, regex, JSON schema, length, cites, a callable).
- ``client``: :class:`Judge`, the one judge client.
- ``criteria``: criteria files, a team's own measures of an answer, read and checked before any call.
- ``factory``: a :class:`Judge` from a model string, as litellm names models.
- ``guards``: guards on answers against instructions injected in the data they judge.
- ``json_schema``: an output model's JSON schema in the subset OpenAI's strict structured-output mode accepts.
- ``label_probs``: a judged criterion's expected score from the judge's token probabilities.
- ``limits``: retry policy and rate limits of the client.
- ``offline``: the offline judge, deterministic answers to every packaged prompt with no model.
- ``offline_conversations``: follow-up turns written and checked by rules, for the offline judge.
- ``offline_drafts``: the offline judge's reference answers drafted from graded passages.
- ``offline_lexical``: the offline judge's lexical evidence (stemmed overlap, numbers, names).
- ``offline_phrasing``: wording for the offline question generator.
- ``offline_questions``: question generation and critique for the offline judge.
- ``output_limits``: ``max_tokens``, room for the prompt in the model's context, and answers cut at their limit.
- ``outputs``: the judge's structured outputs.
- ``panel``: several judges at once, and how their grades combine.
- ``pricing``: model prices from litellm's bundled price map, read without importing litellm.
- ``prompts``: prompt files, loaded by name and rendered into chat messages.
- ``quotes``: the sentences of a passage that bear on the question.
- ``relevance``: relevance labels for (question, chunk) pairs, pointwise or listwise, on the 0-3 scale.
- ``relevance_estimate``: what relevance grading would cost, counted without calling a model (``--dry-run``).
- ``results``: what the judge hands back (judgements, unscored items, stats) and how an answer is checked.
- ``workers``: many items through one judge (chunked preparation, bulk cache reads, a worker pool).
"""

from __future__ import annotations

from assay.judge.backends import OpenAIClientBackend
from assay.judge.base import Backend, ChatRequest, ChatResponse
from assay.judge.cache import JudgeCache
from assay.judge.client import Estimate, Judge, Judgement, JudgeStats
from assay.judge.factory import make_judge
from assay.judge.limits import RateLimiter, RetryPolicy
from assay.judge.panel import Panel
from assay.judge.pricing import Price, price_for
from assay.judge.prompts import Prompt, list_prompts, load_prompt
from assay.judge.relevance import Graded, Pair, grade_pairs, grade_pairs_detailed
from assay.judge.relevance_estimate import estimate_pairs

__all__ = [
    "Backend",
    "ChatRequest",
    "ChatResponse",
    "Estimate",
    "Graded",
    "Judge",
    "JudgeCache",
    "JudgeStats",
    "Judgement",
    "OpenAIClientBackend",
    "Pair",
    "Panel",
    "Price",
    "Prompt",
    "RateLimiter",
    "RetryPolicy",
    "estimate_pairs",
    "grade_pairs",
    "grade_pairs_detailed",
    "list_prompts",
    "load_prompt",
    "make_judge",
    "price_for",
]
