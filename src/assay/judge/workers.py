"""Many items through one :class:`~assay.judge.client.Judge`: chunked preparation, bulk cache reads, a worker pool.

:func:`judge_items` runs the list; :func:`estimate_items` is its dry run. For ``n`` items at concurrency ``c``
(what :meth:`Judge.ajudge_many` runs):

1. every item's variables are checked against the prompt's inputs first, so a missing or unknown variable fails
   before any call is paid;
2. items are rendered and keyed a chunk at a time, lazily, as the workers need them: the first calls start after
   one chunk is prepared instead of all ``n`` (rendering and keying 2,000 relevance items takes ~50 ms, which would
   otherwise be dead time before the first call); chunks are small (``CHUNK``) while they hold calls to make, so
   preparing one pauses the loop that handles responses only briefly, and double up to ``MAX_CHUNK`` while they
   are mostly cached;
3. each chunk's keys are read from the cache in one query; a hit goes to ``on_result`` at once, with no task;
4. misses go to ``min(c, n)`` workers, each taking the next item when its call is done (no task per item), so the
   judge's semaphore is never contended by this path; ``on_result`` for a call's answer runs in the next loop
   callback, after the worker has sent its next request (it is off the path from one response to the next request);
5. a key repeated in the list makes one call: a repeat joins the call in flight or reads the answer it cached;
6. an exception (:class:`BudgetExceeded`, :class:`BackendError`, or one raised by ``on_result``) stops the workers
   taking new items; calls in flight finish (and are cached), then the first exception is raised.

``on_result(index, judgement)`` is called once per index, in completion order (cached items as their chunk is
reached); the returned list is in input order.

This module sits below :mod:`assay.judge.client`: it sees the judge only through :class:`BatchJudge`, the few
methods it calls, so the client imports the batch and never the other way round (an import-linter contract keeps it
so). :class:`Prepared` (one rendered, keyed call) lives here for the same reason.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from assay.judge.base import ChatRequest, ChatResponse, TokenLogprob
from assay.judge.pricing import Price
from assay.judge.prompts import Prompt
from assay.judge.results import Estimate, Judgement, JudgeStats
from assay.text import count_tokens
from assay.types import Unscored

__all__ = [
    "CHUNK",
    "MAX_CHUNK",
    "BatchJudge",
    "Batcher",
    "OnResult",
    "Prepared",
    "check_inputs",
    "estimate_items",
    "judge_items",
    "looked_up",
    "misses",
]

CHUNK = 16  # items rendered, keyed and looked up together while calls are being made: ~0.4 ms of loop time
MAX_CHUNK = 500  # the chunk grows to this while items are found in the cache (a rerun)
OnResult = Callable[[int, Judgement[Any]], None]


@dataclass(frozen=True)
class Prepared:
    """One call ready to make: the prompt it renders, the request, and the request's cache key."""

    prompt: Prompt
    request: ChatRequest
    key: str


class BatchJudge(Protocol):
    """What this module and the provider batches (:mod:`assay.judge.batches.runner`) need of a judge: public names
    only (:class:`assay.judge.client.Judge` is the one implementation)."""

    model: str
    concurrency: int
    price: Price | None
    stats: JudgeStats

    @property
    def max_cost(self) -> float | None: ...
    @property
    def spent(self) -> float: ...
    def prompt(self, name: str) -> Prompt: ...
    def cache_get_many(self, keys: Sequence[str]) -> dict[str, str]: ...
    def cache_put_many(self, items: Sequence[tuple[str, str]]) -> None: ...
    def prepare(self, prompt_name: str, variables: Mapping[str, Any]) -> Prepared: ...
    def lookup(self, prepared: Prepared, stage: str, raw: str | None = None) -> Judgement[Any] | None: ...
    async def ajudge_prepared(self, prepared: Prepared, stage: str, *, lookup: bool = True) -> Judgement[Any]: ...
    def judgement(
        self,
        prepared: Prepared,
        output: Any,
        unscored: Unscored | None,
        *,
        cached: bool,
        tokens: tuple[int, int],
        logprobs: tuple[TokenLogprob, ...] | None = None,
    ) -> Judgement[Any]: ...
    def record_repeat(self, stage: str) -> None: ...
    def record_unscored(
        self, prepared: Prepared, stage: str, unscored: Unscored, tokens: Sequence[int] = (0, 0)
    ) -> Judgement[Any]: ...
    def account(self, stage: str, response: ChatResponse, price: Price | None = None) -> float | None: ...


class Batcher(Protocol):
    """What a judge with ``batching`` set hands its lists to (:class:`assay.judge.batches.BatchRunner`)."""

    async def judge_items(
        self,
        judge: Any,
        prompt_name: str,
        list_of_variables: Sequence[Mapping[str, Any]],
        *,
        stage: str,
        on_result: OnResult | None,
    ) -> list[Judgement[Any]]: ...

    async def aclose(self) -> None: ...


_Todo = tuple[int, Prepared, bool]  # (index, prepared, repeats a key that missed earlier in the list)


async def judge_items(
    judge: BatchJudge,
    prompt_name: str,
    list_of_variables: Sequence[Mapping[str, Any]],
    *,
    stage: str,
    on_result: OnResult | None,
) -> list[Judgement[Any]]:
    """Judge every item of ``list_of_variables`` with ``prompt_name`` (see the module docstring); input order."""
    check_inputs(judge, prompt_name, list_of_variables)
    results: list[Judgement[Any] | None] = [None] * len(list_of_variables)
    todo = misses(judge, prompt_name, list_of_variables, stage=stage, results=results, on_result=on_result)
    first = next(todo, None)
    if first is not None:
        workers = min(judge.concurrency, len(list_of_variables) - first[0])
        queue = itertools.chain([first], todo)
        await _run_workers(judge, queue, workers=workers, results=results, stage=stage, on_result=on_result)
    return [r for r in results if r is not None]


def check_inputs(judge: BatchJudge, prompt_name: str, list_of_variables: Sequence[Mapping[str, Any]]) -> None:
    """Check every item's variables against the prompt's inputs before any call (step 1 of the module docstring)."""
    prompt = judge.prompt(prompt_name)
    for names in {frozenset(variables) for variables in list_of_variables}:
        prompt.check(names)


def misses(
    judge: BatchJudge,
    prompt_name: str,
    list_of_variables: Sequence[Mapping[str, Any]],
    *,
    stage: str,
    results: list[Judgement[Any] | None],
    on_result: OnResult | None,
) -> Iterator[_Todo]:
    """Prepare and look up one chunk at a time; answer the hits, yield the misses."""
    missed: set[str] = set()
    start, size = 0, CHUNK
    while start < len(list_of_variables):
        chunk = [judge.prepare(prompt_name, variables) for variables in list_of_variables[start : start + size]]
        stored = judge.cache_get_many([prepared.key for prepared in chunk])
        first, start = start, start + len(chunk)
        # Mostly cached: take bigger chunks (fewer queries); mostly calls: small ones (short pauses of the loop).
        size = min(2 * size, MAX_CHUNK) if 2 * len(stored) >= len(chunk) else CHUNK
        for index, prepared in enumerate(chunk, first):
            raw = stored.get(prepared.key)
            hit = judge.lookup(prepared, stage, raw) if raw is not None else None
            if hit is None:
                yield index, prepared, prepared.key in missed
                missed.add(prepared.key)
                continue
            results[index] = hit
            if on_result is not None:
                on_result(index, hit)


async def _run_workers(
    judge: BatchJudge,
    queue: Iterator[_Todo],
    *,
    workers: int,
    results: list[Judgement[Any] | None],
    stage: str,
    on_result: OnResult | None,
) -> None:
    errors: list[Exception] = []
    unreported = 0
    loop = asyncio.get_running_loop()

    def report(index: int, judgement: Judgement[Any]) -> None:
        nonlocal unreported
        unreported -= 1
        try:
            if on_result is not None:
                on_result(index, judgement)
        except Exception as exc:  # stops the workers like a failed call
            errors.append(exc)

    async def worker() -> None:
        nonlocal unreported
        try:
            for index, prepared, repeat in queue:
                if errors:
                    return
                # A first occurrence was just looked up in bulk; a repeat joins the call in flight or reads the
                # answer it cached.
                results[index] = judgement = await judge.ajudge_prepared(prepared, stage, lookup=repeat)
                if on_result is not None:  # after this worker has sent its next request: off the critical path
                    unreported += 1
                    loop.call_soon(report, index, judgement)
        except Exception as exc:  # BudgetExceeded, BackendError: stop taking work, re-raise below
            errors.append(exc)

    await asyncio.gather(*(worker() for _ in range(workers)))
    while unreported:  # callbacks run first in, first out, so this does not loop in practice
        await asyncio.sleep(0)
    if errors:
        raise errors[0]


def estimate_items(judge: BatchJudge, prompt_name: str, list_of_variables: Sequence[Mapping[str, Any]]) -> Estimate:
    """What :func:`judge_items` would do, without calling the model: calls, cached items, prompt tokens, cost bound.

    A key repeated in the list counts as cached (it makes one call); the cost bound prices ``max_tokens``
    completion tokens per call when the prompt sets it.
    """
    calls = cached = prompt_tokens = max_tokens = 0
    seen: set[str] = set()
    for prepared, stored in looked_up(judge, prompt_name, list_of_variables):
        if stored or prepared.key in seen:
            cached += 1
            continue
        seen.add(prepared.key)
        calls += 1
        prompt_tokens += sum(count_tokens(m["content"]) for m in prepared.request.messages)
        max_tokens += int(prepared.request.params.get("max_tokens", 0))
    cost = judge.price.cost(prompt_tokens, max_tokens) if judge.price is not None else None
    return Estimate(calls=calls, cached=cached, prompt_tokens=prompt_tokens, cost_usd=cost)


def looked_up(
    judge: BatchJudge, prompt_name: str, list_of_variables: Sequence[Mapping[str, Any]]
) -> Iterator[tuple[Prepared, bool]]:
    """Each item prepared, and whether the cache holds its answer: MAX_CHUNK items per cache query."""
    for start in range(0, len(list_of_variables), MAX_CHUNK):
        chunk = [judge.prepare(prompt_name, variables) for variables in list_of_variables[start : start + MAX_CHUNK]]
        stored = judge.cache_get_many([prepared.key for prepared in chunk])
        yield from ((prepared, prepared.key in stored) for prepared in chunk)
