"""Turn batch judging on for a judge: :func:`use_batches`; :func:`can_batch` says whether a judge can."""

from __future__ import annotations

from collections.abc import Callable

from assay.errors import ConfigError
from assay.judge.backends.http import OpenAICompatBackend
from assay.judge.batches.api import BatchAPI
from assay.judge.batches.ledger import Ledger
from assay.judge.batches.runner import MAX_BYTES, MAX_REQUESTS, BatchRunner
from assay.judge.client import Judge
from assay.judge.pricing import Price, batch_price_for, price_for

__all__ = ["batch_price", "can_batch", "use_batches"]


def can_batch(judge: Judge) -> bool:
    """Whether the judge calls an OpenAI-compatible server, whose batch API :func:`use_batches` uses."""
    return isinstance(judge.backend, OpenAICompatBackend)


def batch_price(judge: Judge) -> Price | None:
    """The price of the judge's calls through batches: litellm's batch price for the model when the judge uses the
    map's direct price; the judge's own price (``--price``, or a model the map has no batch price for) otherwise,
    with no saving assumed."""
    if judge.price is not None and judge.price == price_for(judge.model):
        return batch_price_for(judge.model) or judge.price
    return judge.price


def use_batches(
    judge: Judge,
    *,
    retry: str = "batch",
    report: Callable[[str], None] | None = None,
    poll: float = 60.0,
    api_version: str | None = None,
    price: Price | None = None,
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
) -> BatchRunner:
    """Send the judge's uncached calls through its provider's batch API from now on; the runner (whose ``totals``
    count what went through batches) is also ``judge.batching``.

    The judge must call an OpenAI-compatible server (``openai/...``, any ``api_base``) and have a cache (the batch
    ledger lives beside it). ``retry``: ``batch``, ``direct`` or ``none`` for requests that fail inside a batch;
    ``report`` gets the progress lines; ``poll`` caps the seconds between status checks; ``api_version`` makes the
    api base an Azure OpenAI one (``https://NAME.openai.azure.com/openai``); ``price`` is the batch price
    (default: :func:`batch_price`).
    """
    backend = judge.backend
    if not isinstance(backend, OpenAICompatBackend):
        raise ConfigError(
            f"batch judging uses the OpenAI-compatible batch API (openai/..., or a server given by --api-base); "
            f"judge {judge.model!r} is not called that way: drop --batch"
        )
    if judge.cache is None:
        raise ConfigError(
            "batch judging writes its answers into the judge cache and its ledger beside it: drop --no-cache"
        )
    api = BatchAPI(backend.api_base, api_key=backend.api_key, api_version=api_version)
    runner = BatchRunner(
        api,
        Ledger.beside(judge.cache.path),
        body=backend.request_body,
        retry=retry,
        price=price or batch_price(judge),
        direct_price=judge.price,
        poll=poll,
        max_requests=max_requests,
        max_bytes=max_bytes,
        report=report,
    )
    judge.batching = runner
    return runner
