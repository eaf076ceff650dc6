"""Build a :class:`Judge` from a model string as litellm names models (``openai/gpt-4o-mini``, ``offline``, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.judge.backends import make_backend
from assay.judge.cache import JudgeCache
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.judge.pricing import Price

__all__ = ["make_judge"]


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
    if spec == "offline" and price is None:
        price = Price(0.0, 0.0)
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
        price=price,
    )
