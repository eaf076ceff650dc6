"""Build a :class:`Judge` from a model string as litellm names models (``openai/gpt-4o-mini``, ``offline``, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.errors import BackendError
from assay.judge.backends import make_backend
from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.cache import JudgeCache
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.judge.pricing import Price

__all__ = ["NoCalls", "make_dry_run_judge", "make_judge"]


def make_judge(
    spec: str,
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    cache_dir: str | Path | None = None,
    concurrency: int = 8,
    rpm: int | None = None,
    tpm: int | None = None,
    max_cost: float | None = None,
    structured: bool = True,
    params: Mapping[str, Any] | None = None,
    timeout: float = 120.0,
    prompt_dir: Path | None = None,
    retry: RetryPolicy | None = None,
    price: Price | None = None,
) -> Judge:
    """A judge for ``spec``: ``offline``; ``openai/...``, ``hosted_vllm/...``, ``ollama/...`` or anything with
    ``api_base`` (the aiohttp OpenAI-compatible backend); other ``provider/model`` strings go through litellm.

    The library never reads the environment: pass ``api_key`` (the CLI reads ``OPENAI_API_KEY``). ``cache_dir``
    None means no cache; the offline judge is free (price 0) and deterministic.
    """
    backend = make_backend(spec, api_base=api_base, api_key=api_key, timeout=timeout, connections=max(concurrency, 8))
    return Judge(
        backend,
        model=spec,
        cache=JudgeCache(cache_dir) if cache_dir is not None else None,
        concurrency=concurrency,
        rpm=rpm,
        tpm=tpm,
        max_cost=max_cost,
        prompt_dir=prompt_dir,
        structured=structured,
        params=params,
        retry=retry,
        price=_price(spec, price),
    )


class NoCalls:
    """The backend of a dry run: it refuses to be called."""

    name = "dry-run"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        raise BackendError("a dry run makes no model calls")


def make_dry_run_judge(
    spec: str,
    *,
    cache_dir: str | Path | None = None,
    prompt_dir: Path | None = None,
    structured: bool = True,
    price: Price | None = None,
) -> Judge:
    """A judge for ``spec`` that renders prompts and reads the cache but never calls a model (for ``--dry-run``)."""
    cache = JudgeCache(cache_dir) if cache_dir is not None else None
    return Judge(
        NoCalls(), model=spec, cache=cache, prompt_dir=prompt_dir, structured=structured, price=_price(spec, price)
    )


def _price(spec: str, price: Price | None) -> Price | None:
    """The given price; the offline judge is free when none is given."""
    return Price(0.0, 0.0) if spec == "offline" and price is None else price
