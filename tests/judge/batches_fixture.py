"""What the batch tests share: six items, a sleep that moves the fake provider's clock instead of waiting, one that
stands in for the process being killed while it waits, and a judge on the fake batch API."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from assay.judge import Judge, make_judge
from assay.testing.fake_batches import FakeBatchServer

ITEMS = [{"question": f"question {i}?", "passage": f"passage number {i}"} for i in range(6)]


class Killed(Exception):
    """Stands in for the process being killed while it waits for a batch."""


async def killed(seconds: float) -> None:
    raise Killed


def passes(server: FakeBatchServer) -> Callable[[float], Awaitable[None]]:
    """A sleep that returns at once and moves the fake provider's clock by the time asked."""

    async def sleep(seconds: float) -> None:
        server.advance(seconds)

    return sleep


def batch_judge(server: FakeBatchServer, cache: Path, model: str = "openai/gpt-4o-mini", **options: Any) -> Judge:
    return make_judge(model, api_base=server.url, cache_dir=cache, **options)
