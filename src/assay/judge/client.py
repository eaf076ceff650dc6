"""The one judge client: render -> cache -> in-flight dedupe -> concurrency and rate limits -> retry -> validate.

Every model call of assay goes through :class:`Judge`. For one call:

1. render the prompt file into chat messages (a missing variable raises :class:`PromptError`);
2. look up the cache (key: model, messages, decoding params, prompt name/version/hash, output schema);
3. join an identical call already in flight instead of making a second one;
4. stop with :class:`BudgetExceeded` if ``max_cost`` is spent (calls in flight finish and are cached);
5. wait for a concurrency slot and the optional requests/tokens-per-minute limits;
6. call the backend under tenacity, retrying only :class:`TransientBackendError` (429 honouring ``Retry-After``,
   408, 409, 5xx, connection errors, timeouts, malformed bodies); an answer cut at ``max_tokens``, a prompt
   longer than the model's context or an item a content filter refuses is :class:`ItemRejected`: not retried (it
   would fail the same way), that item is unscored (kind ``truncated``, ``loop``, ``too_long`` or
   ``content_filter``, with the fix) and the run goes on; any other
   :class:`BackendError` (400/401/403/404) stops the run with the fix in its message;
7. validate the answer (strip code fences, parse JSON, ``model_validate``); on failure re-ask once with the
   validation error appended; then give up with :class:`Unscored`, which is counted, never turned into 0;
8. cache only valid answers. A cache error warns and the call proceeds.

What each call counts and costs (usage by stage, stats, the budget, the priced records) is
:mod:`assay.judge.accounts`'s, and the cache's reads and writes are :mod:`assay.judge.cache_access`'s: the judge
inherits both.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.aio import run_sync
from assay.errors import ConfigError, ItemRejected, TransientBackendError
from assay.judge.accounts import Accounts
from assay.judge.base import Backend, ChatRequest, ChatResponse, TokenLogprob
from assay.judge.cache import CacheWriter, JudgeCache, cache_key
from assay.judge.cache_access import CacheAccess
from assay.judge.limits import Budget, LoopState, RateLimiter, RetryPolicy
from assay.judge.output_limits import check_max_tokens, check_room, truncated
from assay.judge.pricing import Price, price_for
from assay.judge.prompts import Prompt, load_prompt
from assay.judge.results import (
    Estimate,
    Judgement,
    JudgeStats,
    cache_value,
    cached_logprobs,
    cut_output,
    parse_output,
    repair_messages,
    schema_instructions,
)
from assay.judge.workers import Batcher, Prepared, estimate_items, judge_items
from assay.text import count_tokens
from assay.types import StageUsage, Unscored

__all__ = ["Estimate", "Judge", "JudgeStats", "Judgement", "RetryPolicy", "parse_output"]

log = logging.getLogger("assay.judge")


class Judge(CacheAccess, Accounts):
    """A cached, concurrent, fault-tolerant client for one model (see the module docstring for the flow).

    ``params`` override the prompt's decoding params; ``max_tokens`` overrides the prompts' own output limits (one
    number for all, or ``{prompt name: number}``); ``price`` overrides the bundled price map; ``max_cost`` (USD)
    needs a price. ``usage`` maps stage name to :class:`StageUsage`; ``stats`` counts calls, hits and failures.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        model: str,
        cache: JudgeCache | None = None,
        concurrency: int = 8,
        rpm: int | None = None,
        tpm: int | None = None,
        max_cost: float | None = None,
        prompt_dir: Path | None = None,
        structured: bool = True,
        params: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        price: Price | None = None,
        max_tokens: int | Mapping[str, int] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.backend = backend
        self.model = model
        # what the cache keys name as the model: the backend's own name for its answers where it has one (the
        # offline judge's rule set), else the model string
        self.cache_model: str = getattr(backend, "cache_model", None) or model
        self.cache = cache
        self.concurrency = concurrency
        self.rpm, self.tpm = rpm, tpm
        self.budget = Budget(max_cost)
        self.prompt_dir = prompt_dir
        self.structured = structured
        self.params = dict(params or {})
        self.max_tokens = check_max_tokens(max_tokens)
        self.retry = retry or RetryPolicy()
        self.price = price if price is not None else price_for(model)
        if max_cost is not None and self.price is None:
            raise ConfigError(f"--max-cost needs a price for model {model!r}, which has none; give one with --price")
        self.usage: dict[str, StageUsage] = {}
        self.stats = JudgeStats()
        self._prompts: dict[str, Prompt] = {}
        self._state: LoopState | None = None
        self._context: int | bool | None = False  # False: not asked yet
        self.batching: Batcher | None = None  # set by assay.judge.batches.use_batches: lists go through batches

    # -- preparing -------------------------------------------------------------------------------------------------

    def prompt(self, name: str) -> Prompt:
        """The loaded prompt ``name`` (loaded once per judge)."""
        if name not in self._prompts:
            self._prompts[name] = load_prompt(name, self.prompt_dir)
        return self._prompts[name]

    def params_for(self, prompt: Prompt) -> dict[str, Any]:
        """The decoding params of a call with ``prompt``: its own, then the judge's, then the max_tokens setting."""
        params = {**prompt.params, **self.params}
        limit = self.max_tokens.get(prompt.name, self.max_tokens.get("*"))
        if limit is not None:
            params["max_tokens"] = limit
        return params

    async def acontext_window(self) -> int | None:
        """Tokens one request may hold, as the model's server says (asked once), or None where it does not say."""
        if self._context is False:
            ask = getattr(self.backend, "context_window", None)
            self._context = await ask() if ask is not None else None
        return self._context if isinstance(self._context, int) and self._context > 0 else None

    async def acheck_output_limits(self, prompt_names: Sequence[str]) -> None:
        """Raise :class:`ConfigError` when a prompt's ``max_tokens`` leaves no room for its input in the context."""
        window = await self.acontext_window()
        if window is not None:
            limits = {name: self.params_for(self.prompt(name)).get("max_tokens") for name in prompt_names}
            check_room(limits, window)

    # -- the batch protocol (assay.judge.workers.BatchJudge): one call prepared, looked up, made and counted -----------

    def prepare(self, prompt_name: str, variables: Mapping[str, Any]) -> Prepared:
        """Render ``prompt_name`` with ``variables`` into the request this judge would send, and its cache key."""
        prompt = self.prompt(prompt_name)
        messages = prompt.render(variables)
        if not self.structured:
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + schema_instructions(prompt)}
        params = self.params_for(prompt)
        request = ChatRequest(
            model=self.model,
            messages=messages,
            prompt_name=prompt.name,
            prompt_version=prompt.version,
            variables=variables,
            params=params,
            response_schema=prompt.schema if self.structured else None,
            schema_name=prompt.output_model.__name__,
        )
        key = cache_key(
            model=self.cache_model,
            messages=messages,
            params=params,
            prompt_name=prompt.name,
            prompt_version=prompt.version,
            prompt_hash=prompt.content_hash,
            schema=prompt.schema,
        )
        return Prepared(prompt, request, key)

    # -- cache -----------------------------------------------------------------------------------------------------

    def lookup(self, prepared: Prepared, stage: str, raw: str | None = None) -> Judgement[Any] | None:
        """The cached answer of ``prepared`` (``raw``: its cache entry when already read), counted as a hit; None
        when the cache has none (or an unreadable one)."""
        raw = raw if raw is not None else self.cache_get(prepared.key)
        if raw is None:
            return None
        try:
            stored = json.loads(raw)
            output = prepared.prompt.output_model.model_validate(stored["output"])
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring an unreadable judge cache entry (%s).", exc)
            return None
        self.record_cache_hit(stage)
        return self.judgement(prepared, output, None, cached=True, tokens=(0, 0), logprobs=cached_logprobs(stored))

    # -- calling ---------------------------------------------------------------------------------------------------

    def _loop_state(self) -> LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            limiter = (
                RateLimiter(self.rpm, self.tpm, clock=self.retry.clock, sleep=self.retry.sleep)
                if (self.rpm or self.tpm)
                else None
            )
            if self._state is not None and self._state.writer is not None:
                self._state.writer.close()
            writer = CacheWriter(self.cache, self._cache_write_failed) if self.cache is not None else None
            self._state = LoopState(loop, asyncio.Semaphore(self.concurrency), limiter, writer)
        return self._state

    def _cache_write_failed(self, exc: Exception) -> None:
        self.stats.cache_errors += 1
        log.warning("judge cache write failed (%s); the answer is not cached.", exc)

    async def _complete_once(self, request: ChatRequest, stage: str) -> ChatResponse:
        response = await self.backend.complete(request)
        self.account(stage, response)
        if response.finish_reason == "length":
            raise truncated(request, response)
        if response.finish_reason == "content_filter":
            raise ItemRejected.content_filter(f"finish_reason=content_filter, answer {response.content[:80]!r}")
        return response

    async def _complete(self, request: ChatRequest, stage: str) -> ChatResponse:
        # The first attempt runs bare: tenacity's controller costs ~0.1 ms of CPU per call, more than the HTTP
        # request itself; it takes over only once an attempt has failed.
        try:
            return await self._complete_once(request, stage)
        except TransientBackendError as exc:
            if self.retry.attempts <= 1:
                raise
            self.stats.retries += 1
            await self.retry.sleep(self.retry.delay(1, exc))

        def count_retry(_: object) -> None:
            self.stats.retries += 1

        retrying = self.retry.retrying(before_sleep=count_retry, done=1)
        response: ChatResponse = await retrying(self._complete_once, request, stage)
        return response

    async def _call(self, prepared: Prepared, stage: str) -> Judgement[Any]:
        state = self._loop_state()
        self.check_budget()
        async with state.semaphore:
            self.check_budget()
            if state.limiter is not None:
                tokens = sum(count_tokens(m["content"]) for m in prepared.request.messages)
                await state.limiter.acquire(tokens + int(prepared.request.params.get("max_tokens", 0)))
            return await self._call_and_validate(prepared, stage)

    async def _call_and_validate(self, prepared: Prepared, stage: str) -> Judgement[Any]:
        tokens = [0, 0]
        request = prepared.request
        text = ""
        for attempt in range(2):
            try:
                response = await self._complete(request, stage)
            except ItemRejected as exc:
                kept = cut_output(exc.answer, prepared.prompt.output_model) if exc.answer else None
                if kept is not None:  # the answer's complete part stands (the grade, not the quotes it was listing)
                    self.stats.cut_kept += 1
                    return await self._keep(prepared, kept, tokens)
                unscored = Unscored(reason=str(exc), kind=exc.kind, raw=exc.raw)
                return self.record_unscored(prepared, stage, unscored, tokens)
            except TransientBackendError as exc:
                kind = "truncated" if "truncated" in str(exc) else "backend_error"
                return self.record_unscored(prepared, stage, Unscored(reason=str(exc), kind=kind, raw=None), tokens)
            tokens[0] += response.prompt_tokens
            tokens[1] += response.completion_tokens
            text = response.content
            try:
                output = parse_output(text, prepared.prompt.output_model)
            except ValueError as exc:
                if attempt == 0:
                    self.stats.repairs += 1
                    request = replace(request, messages=[*request.messages, *repair_messages(text, exc)])
                    continue
                reason = f"invalid answer after one repair attempt: {exc}"
                unscored = Unscored(reason=reason, kind="invalid_output", raw=text)
                return self.record_unscored(prepared, stage, unscored, tokens)
            return await self._keep(prepared, output, tokens, response.logprobs)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _keep(
        self, prepared: Prepared, output: Any, tokens: Sequence[int], logprobs: tuple[TokenLogprob, ...] | None = None
    ) -> Judgement[Any]:
        """A valid answer: cached (with its token probabilities, when it has them), and returned as the item's
        judgement."""
        writer = self._loop_state().writer
        if writer is not None:
            await writer.put(prepared.key, cache_value(output, tokens, logprobs))
        return self.judgement(prepared, output, None, cached=False, tokens=(tokens[0], tokens[1]), logprobs=logprobs)

    async def ajudge_prepared(self, prepared: Prepared, stage: str, *, lookup: bool = True) -> Judgement[Any]:
        """Judge one prepared call: join the same call in flight, else read the cache (unless ``lookup`` is False:
        the caller has just read it), else call the model (steps 3-8 of the module docstring)."""
        state = self._loop_state()
        running = state.inflight.get(prepared.key)
        if running is not None:
            self.record_repeat(stage)
            return replace(await asyncio.shield(running), cached=True, prompt_tokens=0, completion_tokens=0)
        hit = self.lookup(prepared, stage) if lookup else None
        if hit is not None:
            return hit
        future: asyncio.Future[Judgement[Any]] = asyncio.get_running_loop().create_future()
        state.inflight[prepared.key] = future
        try:
            result = await self._call(prepared, stage)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: nobody may be waiting
            raise
        finally:
            del state.inflight[prepared.key]
        future.set_result(result)
        return result

    # -- public API ------------------------------------------------------------------------------------------------

    async def ajudge(self, prompt_name: str, variables: Mapping[str, Any], *, stage: str = "default") -> Judgement[Any]:
        """Judge one item with the prompt ``prompt_name``."""
        return await self.ajudge_prepared(self.prepare(prompt_name, variables), stage)

    async def ajudge_many(
        self,
        prompt_name: str,
        list_of_variables: Sequence[Mapping[str, Any]],
        *,
        stage: str = "default",
        on_result: Callable[[int, Judgement[Any]], None] | None = None,
    ) -> list[Judgement[Any]]:
        """Judge many items; the list is in input order (:mod:`assay.judge.workers` describes the scheduling).

        ``on_result(index, judgement)`` is called as each result arrives. A :class:`BudgetExceeded` or a
        :class:`BackendError` stops new calls; calls in flight finish (and are cached) before it is raised. With
        ``batching`` set (:func:`assay.judge.batches.use_batches`) the calls the cache does not answer go through
        the provider's batch API instead (:mod:`assay.judge.batches.runner`).
        """
        if self.batching is not None:
            return await self.batching.judge_items(
                self, prompt_name, list_of_variables, stage=stage, on_result=on_result
            )
        return await judge_items(self, prompt_name, list_of_variables, stage=stage, on_result=on_result)

    def judge_many(
        self,
        prompt_name: str,
        list_of_variables: Sequence[Mapping[str, Any]],
        *,
        stage: str = "default",
        on_result: Callable[[int, Judgement[Any]], None] | None = None,
    ) -> list[Judgement[Any]]:
        """:meth:`ajudge_many` from synchronous code (runs its own event loop and closes the backend after)."""

        async def run() -> list[Judgement[Any]]:
            try:
                return await self.ajudge_many(prompt_name, list_of_variables, stage=stage, on_result=on_result)
            finally:
                await self.aclose()

        return run_sync(run)

    def with_params(self, **params: Any) -> Judge:
        """This judge sending ``params`` on every call besides its own (``logprobs=True, top_logprobs=10`` for a
        criterion's expected score). The params are part of the cache key, so its answers are cached apart; backend,
        prompts, usage and stats are shared with this judge, as for :meth:`repeat`."""
        twin = copy.copy(self)
        twin.params = {**self.params, **params}
        return twin

    def repeat(self, index: int) -> Judge:
        """This judge asking the same items again past the cache (``index`` >= 1, for consistency checks): its cache
        keys name ``MODEL#repeatINDEX``, so each repeat is cached apart and a rerun pays nothing. Backend, prompts,
        usage and stats are shared with this judge; made after this judge has called in the running loop, it shares
        its concurrency slots and cache writer too."""
        if index < 1:
            raise ConfigError(f"a repeat is numbered from 1, got {index}")
        twin = copy.copy(self)
        twin.cache_model = f"{self.cache_model}#repeat{index}"
        return twin

    def estimate(self, prompt_name: str, list_of_variables: Sequence[Mapping[str, Any]]) -> Estimate:
        """Count calls, cached items and prompt tokens without calling the model (for ``--dry-run``)."""
        return estimate_items(self, prompt_name, list_of_variables)

    async def aclose(self) -> None:
        """Close the backend's connections, if it has any, and the cache writer."""
        close = getattr(self.backend, "aclose", None)
        if close is not None:
            await close()
        if self._state is not None and self._state.writer is not None:
            self._state.writer.close()
            self._state = None
        if self.batching is not None:
            await self.batching.aclose()
