"""Judging through a provider's batch API: the path :meth:`Judge.ajudge_many` takes when the judge has a
:class:`BatchRunner` (``--batch``).

For one list of items (one stage of a command):

1. each item is rendered and keyed as for a direct call; items whose answer is cached are answered at once, and a
   key repeated in the list makes one request;
2. the ledger beside the cache (:mod:`.ledger`) is read: batches submitted earlier (by this process or one that was
   killed) that hold some of the missing keys and are not collected yet are picked up instead of submitting those
   requests again; a batch recorded as ``submitting`` is looked up among the provider's batches (and created from
   its uploaded file if it never was);
3. the other missing requests are written as input files (at most ``max_requests`` lines and ``max_bytes`` each,
   OpenAI's limits by default), uploaded, submitted and recorded; with ``max_cost`` only as many as its bound allows
   (prompt tokens plus ``max_tokens`` at the batch price), and :class:`BudgetExceeded` is raised after the
   submitted ones are collected;
4. the batches are checked until each has ended, every ``1, 2, 4, ... poll`` seconds, with a progress line (requests
   done / failed / total, elapsed, the provider's statuses) given to ``report`` when it changes;
5. each ended batch's output and error files are read: an answer is validated by the prompt's output model and
   cached under its key exactly as a direct call's answer (so a direct run, a rerun or another command reuses it),
   every answer the provider returned is priced at the batch price, and the batch is marked collected. A request
   that failed (an error status, an expired or cancelled batch, an answer that is not valid, one cut at max_tokens)
   is unscored with its kind, as a direct call's would be;
6. failures worth another try (``backend_error``, ``invalid_output``, ``batch_expired``, ``batch_cancelled``,
   ``batch_failed``; not an answer cut at its limit, a prompt too long or a content filter, which would fail the
   same way) are retried by ``retry``: ``batch`` (one more batch round), ``direct`` (direct calls, with the direct
   path's repair attempt and retries) or ``none``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from assay.errors import BudgetExceeded, ConfigError, TransientBackendError
from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.batches.api import BatchAPI
from assay.judge.batches.ledger import BatchRecord, Ledger
from assay.judge.batches.lines import Outcome, input_line, read_lines, rejected
from assay.judge.batches.status import batches, clock, progress, update_record
from assay.judge.pricing import Price
from assay.judge.results import Judgement, cache_value, parse_output
from assay.judge.workers import BatchJudge, OnResult, Prepared, check_inputs, misses
from assay.text import count_tokens
from assay.types import Unscored

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["RETRIABLE", "RETRY_POLICIES", "BatchRunner", "BatchTotals"]

RETRY_POLICIES = ("batch", "direct", "none")
RETRIABLE = frozenset({"backend_error", "invalid_output", "batch_expired", "batch_cancelled", "batch_failed"})
MAX_REQUESTS = 50_000
MAX_BYTES = 190 * 1024 * 1024  # OpenAI takes 200 MB; a margin for the multipart envelope


@dataclass
class BatchTotals:
    """What went through batches: requests submitted (``resumed`` of them picked up from the ledger), answers
    returned, their cost at the batch price and what the same tokens cost direct (None without a price)."""

    submitted: int = 0
    resumed: int = 0
    answered: int = 0
    batches: int = 0
    rounds: int = 0
    cost_usd: float | None = 0.0
    direct_cost_usd: float | None = 0.0


_Found = tuple[dict[str, Judgement[Any]], dict[str, Unscored]]


class BatchRunner:
    """Sends a judge's missing calls through ``api`` (see the module docstring). ``body(request)`` is the JSON a
    direct call would POST; ``price`` the batch price (None: unknown), ``direct_price`` the price it saves against."""

    def __init__(
        self,
        api: BatchAPI,
        ledger: Ledger,
        *,
        body: Callable[[ChatRequest], bytes],
        retry: str = "batch",
        price: Price | None = None,
        direct_price: Price | None = None,
        poll: float = 60.0,
        max_requests: int = MAX_REQUESTS,
        max_bytes: int = MAX_BYTES,
        report: Callable[[str], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if retry not in RETRY_POLICIES:
            raise ConfigError(f"--batch-retry {retry!r}: choose one of {', '.join(RETRY_POLICIES)}")
        self.api, self.ledger, self.body, self.retry = api, ledger, body, retry
        self.price, self.direct_price = price, direct_price
        self.poll, self.max_requests, self.max_bytes = poll, max_requests, max_bytes
        self.report, self.sleep, self.clock = report, sleep, clock
        self.totals = BatchTotals(
            cost_usd=0.0 if price is not None else None, direct_cost_usd=0.0 if direct_price is not None else None
        )

    def _say(self, text: str) -> None:
        if self.report is not None:
            self.report(text)

    # -- one list of items -----------------------------------------------------------------------------------------

    async def judge_items(
        self,
        judge: BatchJudge,
        prompt_name: str,
        list_of_variables: Sequence[Mapping[str, Any]],
        *,
        stage: str,
        on_result: OnResult | None,
    ) -> list[Judgement[Any]]:
        """Judge every item (input order), through batches for the calls the cache does not answer."""
        check_inputs(judge, prompt_name, list_of_variables)
        results: list[Judgement[Any] | None] = [None] * len(list_of_variables)
        report = on_result or (lambda index, judgement: None)
        todo: dict[str, Prepared] = {}
        where: defaultdict[str, list[int]] = defaultdict(list)  # each missing key's indices: one request a key
        for index, prepared, _ in misses(judge, prompt_name, list_of_variables, stage=stage, results=results,
                                         on_result=report):  # fmt: skip
            todo.setdefault(prepared.key, prepared)
            where[prepared.key].append(index)
        answers = await self._rounds(judge, todo, stage) if todo else {}
        for key, indices in where.items():
            for n, index in enumerate(indices):
                judgement = answers[key] if n == 0 else self._repeat(judge, answers[key], stage)
                results[index] = judgement
                report(index, judgement)
        return [r for r in results if r is not None]

    @staticmethod
    def _repeat(judge: BatchJudge, first: Judgement[Any], stage: str) -> Judgement[Any]:
        judge.record_repeat(stage)
        return replace(first, cached=True, prompt_tokens=0, completion_tokens=0, cost_usd=0.0)

    async def _rounds(self, judge: BatchJudge, todo: dict[str, Prepared], stage: str) -> dict[str, Judgement[Any]]:
        answers: dict[str, Judgement[Any]] = {}
        failures: dict[str, Unscored] = {}
        pending, over = dict(todo), False
        for _ in range(2 if self.retry == "batch" else 1):
            got, failed, over = await self._round(judge, pending, stage)
            answers.update(got)
            failures = {k: u for k, u in {**failures, **failed}.items() if k not in answers}
            pending = {k: todo[k] for k, u in failures.items() if u.kind in RETRIABLE}
            if not pending or over:
                break
        if self.retry == "direct" and pending and not over:
            self._say(f"batch: {len(pending)} failed requests, retried directly (--batch-retry direct)")
            direct = await asyncio.gather(*(judge.ajudge_prepared(p, stage, lookup=False) for p in pending.values()))
            answers.update(zip(pending, direct, strict=True))
        for key, unscored in failures.items():
            if key not in answers:
                answers[key] = judge.record_unscored(todo[key], stage, unscored)
        if over:
            raise BudgetExceeded(
                f"the cost budget of ${judge.max_cost:g} has no room for {len(todo) - len(answers)} more batch "
                f"requests (${judge.spent:.4f} spent); what was judged is cached, rerun with a higher --max-cost to "
                "resume without paying twice"
            )
        return answers

    # -- one round: resume, submit, wait, collect ------------------------------------------------------------------

    async def _round(self, judge: BatchJudge, pending: dict[str, Prepared], stage: str) -> tuple[*_Found, bool]:
        self.totals.rounds += 1
        records = [r for r in self.ledger.open_batches(self.api.api_base, judge.model) if set(r.keys) & pending.keys()]
        for record in records:
            if record.id is None:
                await self._find_or_create(record)
        covered = {key for record in records for key in record.keys}
        fresh = [prepared for key, prepared in pending.items() if key not in covered]
        fresh, over = self._within_budget(judge, fresh)
        resumed = len(covered & pending.keys())
        self.totals.resumed += resumed
        if records:
            self._say(f"batch: picked up {batches(len(records))} submitted before ({resumed} of these requests)")
        records += await self._submit(judge, fresh, stage)
        await self._wait(records)
        answers: dict[str, Judgement[Any]] = {}
        failed: dict[str, Unscored] = {}
        for record in records:
            got, bad = await self._collect(judge, record, pending, stage)
            answers.update(got)
            failed.update(bad)
        for key in covered.union(p.key for p in fresh) & pending.keys():
            if key not in answers and key not in failed:
                failed[key] = Unscored(reason="the batch ended without a line for it", kind="batch_failed", raw=None)
        return answers, failed, over

    def _within_budget(self, judge: BatchJudge, fresh: list[Prepared]) -> tuple[list[Prepared], bool]:
        price = self.price or judge.price
        if judge.max_cost is None or price is None:
            return fresh, False
        room = judge.max_cost - judge.spent
        for n, prepared in enumerate(fresh):
            tokens = sum(count_tokens(m["content"]) for m in prepared.request.messages)
            room -= price.cost(tokens, int(prepared.request.params.get("max_tokens", 0)))
            if room < 0:
                return fresh[:n], True
        return fresh, False

    async def _submit(self, judge: BatchJudge, fresh: list[Prepared], stage: str) -> list[BatchRecord]:
        records = [await self._submit_file(judge, lines, stage) for lines in self._files(fresh)]
        if records:
            self.totals.submitted += len(fresh)
            self.totals.batches += len(records)
            self._say(f"batch: submitted {len(fresh)} requests of stage {stage} in {batches(len(records))}")
        return records

    def _files(self, fresh: list[Prepared]) -> list[list[tuple[Prepared, bytes]]]:
        """The requests as input files' lines, each file within ``max_requests`` lines and ``max_bytes``."""
        files: list[list[tuple[Prepared, bytes]]] = []
        size = 0
        for prepared in fresh:
            line = input_line(prepared.key, self.api.line_url, self.body(prepared.request))
            if not files or len(files[-1]) >= self.max_requests or size + len(line) > self.max_bytes:
                files.append([])
                size = 0
            files[-1].append((prepared, line))
            size += len(line)
        return files

    async def _submit_file(self, judge: BatchJudge, lines: list[tuple[Prepared, bytes]], stage: str) -> BatchRecord:
        """Upload one input file, record it, create its batch and record that (see the ledger's docstring)."""
        ref = uuid.uuid4().hex[:12]
        file_id = await self.api.upload(b"".join(line for _, line in lines), f"assay-{ref}.jsonl")
        keys = [prepared.key for prepared, _ in lines]
        prompt = lines[0][0].prompt.name
        record = BatchRecord(ref=ref, api_base=self.api.api_base, model=judge.model, stage=stage, prompt=prompt,
                             input_file_id=file_id, keys=keys)  # fmt: skip
        self.ledger.put(record)
        await self._find_or_create(record, look=False)
        return record

    async def _find_or_create(self, record: BatchRecord, *, look: bool = True) -> None:
        """Give a ``submitting`` record its batch: one the provider already has for it, else a new one."""
        found = [
            b
            for b in (await self.api.list() if look else [])
            if b.get("input_file_id") == record.input_file_id
            or (b.get("metadata") or {}).get("assay_ref") == record.ref
        ]
        batch = found[0] if found else await self.api.create(record.input_file_id, {"assay_ref": record.ref})
        record.id = str(batch["id"])
        update_record(record, batch)
        self.ledger.put(record)

    async def _wait(self, records: list[BatchRecord]) -> None:
        start, interval, last = self.clock(), 1.0, ""
        while True:
            for record in (r for r in records if not r.ended):
                try:
                    batch = await self.api.retrieve(str(record.id))
                except TransientBackendError as exc:
                    self._say(f"batch: checking {record.id} failed ({exc}); trying again")
                    continue
                if update_record(record, batch):
                    self.ledger.put(record)
            line = progress(records)
            if line != last:
                self._say(f"{line}, elapsed {clock(self.clock() - start)}")
                last = line
            if all(r.ended for r in records):
                return
            await self.sleep(interval)
            interval = min(2 * interval, self.poll)

    async def _collect(
        self, judge: BatchJudge, record: BatchRecord, pending: dict[str, Prepared], stage: str
    ) -> _Found:
        batch = await self.api.retrieve(str(record.id))
        outcomes: list[Outcome] = []
        for file_id in (batch.get("output_file_id"), batch.get("error_file_id")):
            if file_id:
                content = await self.api.content(str(file_id))
                outcomes.extend(read_lines(content, f"batch {record.id} file {file_id}"))
        found = self._read(judge, record, outcomes, pending, stage)
        if record.status == "failed":
            said = "; ".join(str(e.get("message")) for e in (batch.get("errors") or {}).get("data", []))
            for key in set(record.keys) & pending.keys() - found[0].keys():
                found[1][key] = Unscored(reason=f"the batch failed: {said}", kind="batch_failed", raw=None)
        record.collected = True
        self.ledger.put(record)
        return found

    def _read(
        self, judge: BatchJudge, record: BatchRecord, outcomes: list[Outcome], pending: dict[str, Prepared], stage: str
    ) -> _Found:
        model = judge.prompt(record.prompt).output_model
        answers: dict[str, Judgement[Any]] = {}
        failed: dict[str, Unscored] = {}
        puts: list[tuple[str, str]] = []
        for outcome in outcomes:
            prepared, response = pending.get(outcome.custom_id), outcome.response
            if response is None:
                if prepared is not None and outcome.unscored is not None:
                    failed[outcome.custom_id] = outcome.unscored
                continue
            cost = self._account(judge, stage, response)
            output, problem = _validated(prepared, response, model)
            if output is not None:
                tokens = (response.prompt_tokens, response.completion_tokens)
                puts.append((outcome.custom_id, cache_value(output, tokens, response.logprobs)))
                if prepared is not None:
                    judgement = judge.judgement(prepared, output, None, cached=False, tokens=tokens,
                                                logprobs=response.logprobs)  # fmt: skip
                    answers[outcome.custom_id] = replace(judgement, cost_usd=cost)
            elif prepared is not None and problem is not None:
                failed[outcome.custom_id] = problem
        judge.cache_put_many(puts)
        return answers, failed

    def _account(self, judge: BatchJudge, stage: str, response: ChatResponse) -> float | None:
        """Count one answer the provider returned (and charged) at the batch price; its cost."""
        self.totals.answered += 1
        if self.totals.direct_cost_usd is not None and self.direct_price is not None:
            self.totals.direct_cost_usd += self.direct_price.cost(response.prompt_tokens, response.completion_tokens)
        cost = judge.account(stage, response, self.price)
        if cost is not None and self.totals.cost_usd is not None:
            self.totals.cost_usd += cost
        return cost

    async def aclose(self) -> None:
        """Close the batch API's connections."""
        await self.api.aclose()


def _validated(
    prepared: Prepared | None, response: ChatResponse, model: type[BaseModel]
) -> tuple[Any, Unscored | None]:
    """The output of a 200 answer, or why there is none (cut, withheld, not valid). ``prepared`` None: a request of
    an earlier run, not in this list (its answer is cached if valid; its failure is not this run's to count)."""
    problem = rejected(prepared.request, response) if prepared is not None else None
    if problem is not None:
        return None, problem
    try:
        return parse_output(response.content, model), None
    except ValueError as exc:
        return None, Unscored(reason=f"invalid answer: {exc}", kind="invalid_output", raw=response.content[:500])
