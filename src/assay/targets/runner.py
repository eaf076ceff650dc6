"""Ask the system every question: concurrency, per-call timeout, retries with backoff, a rate limit, the cache.

Each question is one line of the run (the run format of ``assay eval``): on success ``retrieved``, ``answer``,
``citations``, ``latency_ms`` (of the attempt that answered, queueing and backoff excluded) and ``usage`` when the
system reported it; on failure ``{"query_id", "error": {"kind", "message"}}`` and nothing else, so the evaluation
counts it as failed and leaves its metrics unscored (never an empty answer scored 0).

Retries: a transient failure (see :mod:`assay.targets.callers`; and a call that outlives ``timeout``) is tried again
up to ``attempts`` tries in all, waiting the server's ``Retry-After`` when it gave one, else
``min(backoff * 2**(n-1) + U(0, backoff), max_wait)`` after try ``n`` (tenacity; ``sleep`` is injectable so tests
do not wait). Other failures are recorded at once. Error messages are cleaned of every secret value.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tenacity

from assay.judge.limits import RateLimiter
from assay.targets.callers import Ask, Caller
from assay.targets.conversations import after, broken_line
from assay.targets.journal import Journal, question_key
from assay.targets.outputs import TargetFailure, normalize

__all__ = ["RunStats", "TargetSettings", "ask_all"]

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class TargetSettings:
    """How the system is called: ``concurrency`` calls at once, ``timeout`` seconds per call, ``attempts`` tries per
    question (1: no retry), at most ``rpm`` calls a minute, backoff from ``backoff`` seconds up to ``max_wait``.
    ``sleep`` and ``clock`` drive the backoff and the rate limit (tests pass fakes, so nothing waits)."""

    concurrency: int = 8
    timeout: float = 60.0
    attempts: int = 4
    rpm: int | None = None
    backoff: float = 0.5
    max_wait: float = 30.0
    sleep: Sleep = asyncio.sleep
    clock: Callable[[], float] = time.monotonic  # the rate limit's clock; tests advance it from a fake sleep

    def delay(self, attempt: int, error: BaseException | None) -> float:
        """Seconds to wait after failed try ``attempt`` (1-based)."""
        if isinstance(error, TargetFailure) and error.retry_after is not None:
            return min(error.retry_after, self.max_wait)
        return min(self.backoff * 2.0 ** (attempt - 1) + random.uniform(0, self.backoff), self.max_wait)


@dataclass
class RunStats:
    """What a run has done so far (the progress bar's figures and the closing summary)."""

    total: int
    done: int = 0
    cached: int = 0
    retries: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    @property
    def asked(self) -> int:
        """Questions answered or failed by the system in this run (not from the cache)."""
        return self.done - self.cached

    def throughput(self) -> float:
        """Questions asked per second of this run."""
        return self.asked / max(time.monotonic() - self.started, 1e-9)

    def percentile(self, q: float) -> float | None:
        """The ``q``-th percentile of this run's latencies in ms (linear interpolation), None before any."""
        return float(np.percentile(self.latencies_ms, q)) if self.latencies_ms else None


Progress = Callable[[RunStats], None]


async def ask_all(
    asks: Sequence[Ask],
    caller: Caller,
    *,
    settings: TargetSettings,
    journal: Journal | None = None,
    refresh: bool = False,
    redact: Callable[[str], str] = str,
    progress: Progress | None = None,
    own_history: bool = False,
) -> tuple[list[dict[str, Any]], RunStats]:
    """One run line per question, in the order of ``asks``; the cache's answers are reused unless ``refresh``.

    ``own_history``: the turns of a conversation (asks with a ``conversation_id``, context turns included; one chain
    per conversation and repeat) are asked in turn order, each with the earlier answers as its history
    (:func:`assay.targets.conversations.after`); chains run concurrently, and a failed turn ends its chain."""
    stats = RunStats(total=len(asks))
    kept = {} if journal is None or refresh else journal.load()
    chained = _chains(asks) if own_history else []
    in_chain = {i for chain in chained for i in chain}
    lines = _from_cache([None if i in in_chain else ask for i, ask in enumerate(asks)], kept, stats)
    if progress is not None:
        progress(stats)
    asker = _Asker(caller, settings, stats, redact)

    async def one(i: int, ask: Ask) -> dict[str, Any]:
        record = kept.get(question_key(ask))
        if record is not None:
            stats.done += 1
            stats.cached += 1
            line = lines[i] = _marked({"query_id": ask.query_id, **record}, ask)
        else:
            line = lines[i] = _marked(await asker.ask(ask), ask)
            if journal is not None and "error" not in line:
                journal.append(question_key(ask), line)
        if progress is not None:
            progress(stats)
        return line

    async def chain(indices: Sequence[int]) -> None:
        earlier: list[tuple[Ask, dict[str, Any]]] = []
        for i in indices:
            failed = next(((a, line) for a, line in earlier if "error" in line), None)
            if failed is not None:
                lines[i] = _marked(broken_line(asks[i], failed[0], failed[1]), asks[i])
                stats.done += 1
                stats.failed["history_failed"] += 1
                continue
            earlier.append((asks[i], await one(i, after(asks[i], earlier))))

    async with caller:
        await asyncio.gather(*(one(i, asks[i]) for i, line in enumerate(lines) if line is None and i not in in_chain),
                             *(chain(indices) for indices in chained))  # fmt: skip
    return [line for line in lines if line is not None], stats


def _chains(asks: Sequence[Ask]) -> list[list[int]]:
    """The indices of the turns of each (conversation, repeat), in turn order; chains in order of first turn."""
    found: dict[tuple[str, int | None], list[int]] = {}
    for i, ask in enumerate(asks):
        if ask.conversation_id is not None:
            found.setdefault((ask.conversation_id, ask.repeat), []).append(i)
    return [sorted(indices, key=lambda i: asks[i].turn or 0) for indices in found.values()]


def _from_cache(
    asks: Sequence[Ask | None], kept: dict[str, dict[str, Any]], stats: RunStats
) -> list[dict[str, Any] | None]:
    """The cached line of each question (None where there is none, or no ask), counted in ``stats``."""
    lines: list[dict[str, Any] | None] = []
    for ask in asks:
        record = None if ask is None else kept.get(question_key(ask))
        lines.append(None if ask is None or record is None else _marked({"query_id": ask.query_id, **record}, ask))
        stats.done += record is not None
        stats.cached += record is not None
    return lines


def _marked(line: dict[str, Any], ask: Ask) -> dict[str, Any]:
    """``line`` with the ask's ``repeat`` (a repeated run's lines say which asking they are) and, for a turn of a
    conversation, its ``conversation_id`` and ``turn``; the system's ``rewrite`` is kept for turns only."""
    for name in ("repeat", "conversation_id", "turn"):
        line.pop(name, None)
    rewrite = line.pop("rewrite", None)
    if ask.conversation_id is not None:
        line = {**line, "conversation_id": ask.conversation_id, "turn": ask.turn}
        if rewrite is not None:
            line["rewrite"] = rewrite
    return line if ask.repeat is None else {**line, "repeat": ask.repeat}


class _Asker:
    """Asks one question under the semaphore, the rate limit, the timeout and the retry policy."""

    def __init__(self, caller: Caller, settings: TargetSettings, stats: RunStats, redact: Callable[[str], str]) -> None:
        self.caller, self.settings, self.stats, self.redact = caller, settings, stats, redact
        self.semaphore = asyncio.Semaphore(settings.concurrency)
        limit = settings.rpm
        self.limiter = RateLimiter(limit, None, clock=settings.clock, sleep=settings.sleep) if limit else None

    async def ask(self, ask: Ask) -> dict[str, Any]:
        try:
            answered: tuple[dict[str, Any], float] = await self._retrying()(self._attempt, ask)
        except TargetFailure as failure:
            self.stats.done += 1
            self.stats.failed[failure.kind] += 1
            return {"query_id": ask.query_id, "error": {"kind": failure.kind, "message": self.redact(failure.message)}}
        fields, latency = answered
        self.stats.done += 1
        self.stats.latencies_ms.append(latency)
        return {"query_id": ask.query_id, **fields, "latency_ms": round(latency, 3)}

    def _retrying(self) -> tenacity.AsyncRetrying:
        def wait(state: tenacity.RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome is not None else None
            return self.settings.delay(state.attempt_number, error)

        def count(_: tenacity.RetryCallState) -> None:
            self.stats.retries += 1

        return tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(max(1, self.settings.attempts)),
            wait=wait,
            retry=tenacity.retry_if_exception(lambda e: isinstance(e, TargetFailure) and e.transient),
            sleep=self.settings.sleep,
            before_sleep=count,
            reraise=True,
        )

    async def _attempt(self, ask: Ask) -> tuple[dict[str, Any], float]:
        async with self.semaphore:
            if self.limiter is not None:
                await self.limiter.acquire()
            start = time.perf_counter()
            try:
                async with asyncio.timeout(self.settings.timeout):
                    reply = await self.caller(ask)
            except TimeoutError:
                message = f"no answer within {self.settings.timeout:g} s"
                raise TargetFailure("timeout", message, transient=True) from None
            latency = (time.perf_counter() - start) * 1000.0
        return normalize(reply), latency
