"""The judge layer: the only place in assay that talks to a model.

:class:`Judge` renders prompt files, caches answers, limits concurrency, retries transient failures, validates
structured outputs and records unscored items; :func:`make_judge` builds one from a litellm-style model string;
:func:`grade_pairs` grades (question, chunk) pairs for relevance, with one judge or a :class:`Panel` of several. A
Python user's own ``openai.AsyncOpenAI`` or ``AsyncAzureOpenAI`` client can carry the calls:
``make_judge("azure/DEPLOYMENT", client=client)``, or ``Judge(OpenAIClientBackend(client), model=...)``
(:class:`OpenAIClientBackend` has the details).
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
from assay.judge.relevance import Graded, Pair, estimate_pairs, grade_pairs, grade_pairs_detailed

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
