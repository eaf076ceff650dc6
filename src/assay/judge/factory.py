"""Build a :class:`Judge` from a model string as litellm names models (``openai/gpt-4o-mini``, ``offline``, ...).

A Python user with an ``openai.AsyncOpenAI`` or ``openai.AsyncAzureOpenAI`` client passes it as ``client=``: the
judge then calls through it (:class:`assay.judge.backends.OpenAIClientBackend`), e.g. for an Azure deployment::

    client = AsyncAzureOpenAI(azure_endpoint="https://NAME.openai.azure.com", api_version="2024-10-21", api_key=KEY)
    judge = make_judge("azure/MY-DEPLOYMENT", client=client, cache_dir=".assay-cache")
    labels = await grade_pairs(judge, pairs)  # in the event loop the client lives in
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import BackendError, ConfigError
from assay.judge.backends import OpenAIClientBackend, make_backend
from assay.judge.base import Backend, ChatRequest, ChatResponse
from assay.judge.cache import JudgeCache
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.judge.offline import OfflineBackend
from assay.judge.pricing import Price

if TYPE_CHECKING:
    from openai import AsyncOpenAI

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
    client: AsyncOpenAI | None = None,
    max_tokens: int | Mapping[str, int] | None = None,
) -> Judge:
    """A judge for ``spec``: ``offline``; ``openai/...``, ``hosted_vllm/...``, ``ollama/...`` or anything with
    ``api_base`` (the aiohttp OpenAI-compatible backend); other ``provider/model`` strings go through litellm.

    ``client``, an ``openai.AsyncOpenAI`` or ``AsyncAzureOpenAI``, makes every call go through it instead, with the
    model named by ``spec`` without its route prefix (``azure/DEPLOYMENT`` -> the Azure deployment name), the
    client's retries off and ``timeout`` applied; it then carries the base URL and key, so ``api_base`` and
    ``api_key`` must not be given. The library never reads the environment: pass ``api_key`` (the CLI reads
    ``OPENAI_API_KEY``). ``cache_dir`` None means no cache; the offline judge is free (price 0) and deterministic.
    ``max_tokens`` overrides the prompts' output limits: one number for all, or ``{prompt name: number}``.
    """
    backend = _backend(spec, client, api_base=api_base, api_key=api_key, timeout=timeout, concurrency=concurrency)
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
        max_tokens=max_tokens,
    )


def _backend(
    spec: str, client: Any, *, api_base: str | None, api_key: str | None, timeout: float, concurrency: int
) -> Backend:
    """The user's openai client wrapped, or the backend :func:`make_backend` routes ``spec`` to."""
    if client is None:
        return make_backend(spec, api_base=api_base, api_key=api_key, timeout=timeout, connections=max(concurrency, 8))
    if api_base or api_key:
        raise ConfigError("an openai client carries its own base URL and key: pass client= or api_base/api_key")
    if spec == "offline":
        raise ConfigError("the offline judge calls no model: drop client= or name a model (openai/..., azure/...)")
    return OpenAIClientBackend(client, timeout=timeout)


class NoCalls:
    """The backend of a dry run: it refuses to be called. ``cache_model``: the model the judge it stands for keys
    its cache by (the offline judge's rules), so that the dry run counts what that judge cached."""

    name = "dry-run"

    def __init__(self, cache_model: str | None = None) -> None:
        self.cache_model = cache_model

    async def complete(self, request: ChatRequest) -> ChatResponse:
        raise BackendError("a dry run makes no model calls")


def make_dry_run_judge(
    spec: str,
    *,
    cache_dir: str | Path | None = None,
    prompt_dir: Path | None = None,
    structured: bool = True,
    price: Price | None = None,
    max_tokens: int | Mapping[str, int] | None = None,
) -> Judge:
    """A judge for ``spec`` that renders prompts and reads the cache but never calls a model (for ``--dry-run``);
    ``max_tokens`` as for :func:`make_judge` (it is part of the cache key)."""
    cache = JudgeCache(cache_dir) if cache_dir is not None else None
    return Judge(
        NoCalls(OfflineBackend.cache_model if spec == "offline" else None),
        model=spec,
        cache=cache,
        prompt_dir=prompt_dir,
        structured=structured,
        price=_price(spec, price),
        max_tokens=max_tokens,
    )


def _price(spec: str, price: Price | None) -> Price | None:
    """The given price; the offline judge is free when none is given."""
    return Price(0.0, 0.0) if spec == "offline" and price is None else price
