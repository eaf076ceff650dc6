"""Retry policy and rate limits of the judge client.

:class:`RetryPolicy` decides what tenacity does with a :class:`TransientBackendError`: up to ``attempts`` tries,
waiting the server's ``Retry-After`` when it gave one (capped at ``max_retry_after``), else an exponential backoff
with jitter, ``min(initial * 2**(n-1) + U(0, jitter), max_wait)`` after attempt ``n``. Both the wait and the sleep
are injectable, so tests capture the waits asked for without sleeping (``RetryPolicy.immediate()``).

:class:`RateLimiter` keeps a sliding 60-second window of request starts and their token estimates and waits until a
new request fits under ``rpm`` and ``tpm`` (a single request larger than ``tpm`` is let through alone).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import tenacity

from assay.errors import TransientBackendError

__all__ = ["LoopState", "RateLimiter", "RetryPolicy"]

Sleep = Callable[[float], Awaitable[None]]


async def _no_sleep(_: float) -> None:
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures are retried. ``wait(attempt, error) -> seconds`` overrides the default wait.

    ``sleep`` and ``clock`` also drive the rate limiter's waits, so tests can run both on virtual time.
    """

    attempts: int = 6
    initial: float = 1.0
    max_wait: float = 60.0
    jitter: float = 1.0
    max_retry_after: float = 300.0
    wait: Callable[[int, BaseException | None], float] | None = None
    sleep: Sleep = asyncio.sleep
    clock: Callable[[], float] = time.monotonic  # the rate limiter's clock; tests advance it from a fake sleep

    @classmethod
    def immediate(cls, attempts: int = 6, sleep: Sleep | None = None) -> RetryPolicy:
        """A policy that asks for the usual waits but does not sleep (for tests): pass ``sleep`` to record them."""
        return cls(attempts=attempts, sleep=sleep or _no_sleep)

    def delay(self, attempt: int, error: BaseException | None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based) that raised ``error``.

        The server's Retry-After when it gave one (capped at ``max_retry_after``), else tenacity's exponential
        jitter formula ``min(initial * 2**(attempt - 1) + U(0, jitter), max_wait)``.
        """
        if self.wait is not None:
            return self.wait(attempt, error)
        if isinstance(error, TransientBackendError) and error.retry_after is not None:
            return min(error.retry_after, self.max_retry_after)
        return min(self.initial * 2.0 ** (attempt - 1) + random.uniform(0, self.jitter), self.max_wait)

    def retrying(
        self, before_sleep: Callable[[tenacity.RetryCallState], Any] | None = None, *, done: int = 0
    ) -> tenacity.AsyncRetrying:
        """A tenacity controller that retries only TransientBackendError and re-raises the last one.

        ``done`` attempts were already made (and failed) before this controller starts: it makes the rest.
        """

        def wait(state: tenacity.RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome is not None else None
            return self.delay(state.attempt_number + done, error)

        return tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(max(1, self.attempts - done)),
            wait=wait,
            retry=tenacity.retry_if_exception_type(TransientBackendError),
            sleep=self.sleep,
            before_sleep=before_sleep,
            reraise=True,
        )


class RateLimiter:
    """Requests- and tokens-per-minute limits over a sliding 60-second window."""

    def __init__(
        self,
        rpm: int | None,
        tpm: int | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        window: float = 60.0,
    ) -> None:
        self.rpm, self.tpm = rpm, tpm
        self._clock, self._sleep, self._window = clock, sleep, window
        self._events: deque[tuple[float, int]] = deque()
        self._tokens = 0
        self._lock = asyncio.Lock()

    def _fits(self, tokens: int) -> bool:
        if self.rpm is not None and len(self._events) >= self.rpm:
            return False
        return self.tpm is None or not self._events or self._tokens + tokens <= self.tpm

    async def acquire(self, tokens: int = 0) -> None:
        """Wait until a request of ``tokens`` fits under the limits, then count it."""
        async with self._lock:
            while True:
                now = self._clock()
                while self._events and self._events[0][0] <= now - self._window:
                    self._tokens -= self._events.popleft()[1]
                if self._fits(tokens):
                    self._events.append((now, tokens))
                    self._tokens += tokens
                    return
                await self._sleep(max(self._events[0][0] + self._window - now, 0.001))


@dataclass
class LoopState:
    """What the judge keeps per event loop: semaphore, rate limiter, cache writer, and the calls in flight."""

    loop: asyncio.AbstractEventLoop
    semaphore: asyncio.Semaphore
    limiter: RateLimiter | None
    writer: Any = None  # assay.judge.cache.CacheWriter when the judge has a cache
    inflight: dict[str, asyncio.Future[Any]] = field(default_factory=dict)


@dataclass
class Budget:
    """USD spent and the most that may be (None: no limit); judges of one panel share one."""

    max_cost: float | None = None
    spent: float = 0.0
