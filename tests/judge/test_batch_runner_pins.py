"""Pins of the batch runner against the fake batch API: what each batch carries (its ref, file name and metadata),
which calls it makes, the budget's edges, failed batches, answers of requests not in this list, the stage every
count lands in, the progress lines and the messages a user reads."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batches_fixture import ITEMS, Killed, batch_judge, killed, passes
from pydantic import BaseModel

from assay.errors import BudgetExceeded, TransientBackendError
from assay.judge import Judge, Price
from assay.judge.base import ChatResponse
from assay.judge.batches import BatchAPI, BatchRunner, Ledger, use_batches
from assay.judge.batches.runner import _validated
from assay.judge.relevance import POINTWISE_PROMPT
from assay.testing import Fault
from assay.testing.fake_batches import FakeBatchServer
from assay.testing.fake_server import _http
from assay.text import count_tokens


class _Watched(FakeBatchServer):
    """The fake batch API recording each (method, path) and upload body; ``fail`` ends the named batches ``failed``
    with the given ``errors`` object; ``garble`` drops the response of every line of an output file."""

    def __init__(self) -> None:
        super().__init__(clock=lambda: 0.0)
        self.seen: list[tuple[str, str]] = []
        self.uploads: list[bytes] = []
        self.fail: dict[str, Any] = {}
        self.garble = False
        self.keep_files = False

    async def _route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> bytes:
        self.seen.append((method, path.partition("?")[0]))
        if method == "POST" and path.endswith("/files"):
            self.uploads.append(raw)
        if self.garble and path.endswith("/content"):
            lines = [json.loads(line) for line in self._files.data[path.split("/")[-2]].splitlines()]
            return _http(200, b"".join(json.dumps({**line, "response": None}).encode() + b"\n" for line in lines))
        return await super()._route(method, path, headers, raw)

    def _object(self, batch: Any) -> dict[str, Any]:
        obj = super()._object(batch)
        if batch.id in self.fail:
            obj.update(status="failed", errors=self.fail[batch.id])
            if self.keep_files:  # a batch that failed part way: the files of what it did
                obj.update(
                    zip(("output_file_id", "error_file_id"), self._end_files(batch, "completed", 2), strict=True)
                )
            else:
                obj.update(output_file_id=None, error_file_id=None)
        return obj


@pytest.fixture
def server() -> Iterator[_Watched]:
    with _Watched() as fake:
        yield fake


def _batched(server: FakeBatchServer, cache: Path, **options: Any) -> tuple[Judge, BatchRunner, list[str]]:
    sleep = options.pop("sleep", None) or passes(server)
    judge_options = options.pop("judge", {})
    judge = batch_judge(server, cache, **judge_options)
    said: list[str] = []
    runner = use_batches(judge, report=said.append, **options)
    runner.sleep = sleep
    return judge, runner, said


def test_a_runner_made_by_hand_retries_by_batch_and_polls_at_most_every_minute(tmp_path: Path) -> None:
    runner = BatchRunner(BatchAPI("http://h/v1"), Ledger.beside(tmp_path), body=lambda request: b"")
    assert (runner.retry, runner.poll, runner.report) == ("batch", 60.0, None)


def test_each_batch_carries_its_ref_as_file_name_and_metadata_and_a_fresh_file_asks_no_list(
    server: _Watched, tmp_path: Path
) -> None:
    judge, runner, _ = _batched(server, tmp_path, retry="none", max_requests=4)
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    records = Ledger.beside(tmp_path).load()
    assert len(records) == 2 and runner.totals.batches == 2
    assert len(server.uploads) == 2
    for record in records:
        assert len(record.ref) == 12 and all(c in "0123456789abcdef" for c in record.ref)
        assert sum(f'filename="assay-{record.ref}.jsonl"'.encode() in upload for upload in server.uploads) == 1
        assert server.batches[str(record.id)].metadata == {"assay_ref": record.ref}
    # a file just uploaded has no batch yet: the runner creates one without listing the provider's batches
    assert ("GET", "/v1/batches") not in server.seen


def test_a_submitting_record_finds_its_batch_by_input_file_alone(
    server: _Watched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge, _, _ = _batched(server, tmp_path)
    create = BatchAPI.create

    async def create_without_ref_then_killed(self: BatchAPI, input_file_id: str, metadata: dict[str, str]) -> Any:
        await create(self, input_file_id, {})  # a provider that kept no metadata
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(BatchAPI, "create", create_without_ref_then_killed)
        with pytest.raises(Killed):
            judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    rerun, runner, _ = _batched(server, tmp_path)
    assert all(r.ok for r in rerun.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    assert len(server.batches) == 1 and runner.totals.resumed == len(ITEMS)
    assert ("GET", "/v1/batches") in server.seen  # the rerun looked the record's batch up among the provider's


def test_a_submitting_record_does_not_take_another_files_batch(
    server: _Watched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other, _, _ = _batched(server, tmp_path / "other")
    assert all(r.ok for r in other.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance"))  # batch 1, not ours
    judge, _, _ = _batched(server, tmp_path / "mine")

    async def killed(self: BatchAPI, *args: Any) -> Any:
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(BatchAPI, "create", killed)
        with pytest.raises(Killed):
            judge.judge_many(POINTWISE_PROMPT, ITEMS[2:], stage="relevance")
    rerun, _, _ = _batched(server, tmp_path / "mine")
    results = rerun.judge_many(POINTWISE_PROMPT, ITEMS[2:], stage="relevance")
    assert all(r.ok for r in results) and len(server.batches) == 2  # its own batch created, the other left alone


def _bounds(server: FakeBatchServer, cache: Path) -> list[int]:
    """What each request may cost at 1 USD a token: its prompt tokens plus its max_tokens."""
    probe = batch_judge(server, cache)
    out = []
    for item in ITEMS:
        request = probe.prepare(POINTWISE_PROMPT, item).request
        out.append(sum(count_tokens(m["content"]) for m in request.messages) + request.params["max_tokens"])
    return out


def test_a_budget_that_is_used_up_exactly_still_submits_the_last_request(server: _Watched, tmp_path: Path) -> None:
    bounds = _bounds(server, tmp_path)
    judge, runner, _ = _batched(server, tmp_path, judge={"max_cost": bounds[0] + bounds[1], "price": Price(1.0, 1.0)})
    with pytest.raises(BudgetExceeded) as caught:
        judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert runner.totals.submitted == 2
    assert f"has no room for {len(ITEMS) - 2} more batch requests" in str(caught.value)
    assert str(caught.value).endswith("rerun with a higher --max-cost to resume without paying twice")


def test_a_budget_with_room_for_everything_judges_everything(server: _Watched, tmp_path: Path) -> None:
    bounds = _bounds(server, tmp_path)
    judge, runner, _ = _batched(server, tmp_path, judge={"max_cost": sum(bounds) + 1, "price": Price(1.0, 1.0)})
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    assert runner.totals.submitted == len(ITEMS)


def _fitting(bounds: list[int], room: float) -> int:
    """How many requests, in order, fit in ``room``."""
    n = 0
    while n < len(bounds) and room - bounds[n] >= 0:
        room -= bounds[n]
        n += 1
    return n


def test_the_room_left_is_the_budget_minus_what_was_spent(server: _Watched, tmp_path: Path) -> None:
    bounds = _bounds(server, tmp_path)
    budget = bounds[0] + bounds[1] + bounds[2] + bounds[3] / 2
    judge, runner, _ = _batched(server, tmp_path, judge={"max_cost": budget, "price": Price(1.0, 1.0)})
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance"))
    spent = judge.spent
    assert 0 < spent < bounds[0] + bounds[1]  # answers cost less than their bounds
    expected = _fitting(bounds[2:], budget - spent)
    assert expected != _fitting(bounds[2:], budget + spent) and expected < 4  # the data tell the two apart
    with pytest.raises(BudgetExceeded):
        judge.judge_many(POINTWISE_PROMPT, ITEMS[2:], stage="relevance")
    assert runner.totals.submitted == 2 + expected
    assert judge.spent <= budget


def test_the_budget_is_bounded_at_the_batch_price_not_the_direct_one(server: _Watched, tmp_path: Path) -> None:
    bounds = _bounds(server, tmp_path)
    judge, runner, _ = _batched(
        server, tmp_path, judge={"max_cost": bounds[0] + bounds[1], "price": Price(2.0, 2.0)}, price=Price(1.0, 1.0)
    )
    with pytest.raises(BudgetExceeded):
        judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert runner.totals.submitted == 2  # at the direct price only one would fit


def test_a_failed_batch_leaves_its_requests_unscored_with_the_providers_errors(
    server: _Watched, tmp_path: Path
) -> None:
    server.fail["batch_000001"] = {"object": "list", "data": [{"message": "line 1: bad"}, {"message": "line 2: bad"}]}
    judge, _, _ = _batched(server, tmp_path, retry="none")
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance")
    assert [(r.unscored.kind, r.unscored.reason) for r in results if r.unscored] == [
        ("batch_failed", "the batch failed: line 1: bad; line 2: bad")
    ] * 2


def test_a_failed_batch_without_errors_is_still_read(server: _Watched, tmp_path: Path) -> None:
    server.fail["batch_000001"] = None
    judge, _, _ = _batched(server, tmp_path, retry="none")
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance")
    assert [r.unscored.reason for r in results if r.unscored] == ["the batch failed: "] * 2
    server.fail["batch_000002"] = {"object": "list"}
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS[2:4], stage="relevance")
    assert [r.unscored.kind for r in results if r.unscored] == ["batch_failed"] * 2


def test_an_output_line_without_a_response_names_the_batch_and_file(server: _Watched, tmp_path: Path) -> None:
    server.garble = True
    judge, _, _ = _batched(server, tmp_path, retry="none")
    [result] = judge.judge_many(POINTWISE_PROMPT, ITEMS[:1], stage="relevance")
    batch = next(iter(server.batches.values()))
    assert result.unscored is not None and result.unscored.kind == "backend_error"
    assert result.unscored.reason == f"no response in batch {batch.id} file {batch.files[0]}"  # type: ignore[index]


def test_failures_of_requests_not_in_this_list_are_not_this_runs_to_count(server: _Watched, tmp_path: Path) -> None:
    server.turnaround = 3600.0
    server.batch_faults.extend([None, None, None, Fault("500"), Fault("invalid"), None])
    first, _, _ = _batched(server, tmp_path, sleep=killed)
    with pytest.raises(Killed):
        first.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    server.advance(3600.0)
    # the rerun asks only the first three: the batch it picks up also answers (and fails) three it did not ask
    rerun, runner, _ = _batched(server, tmp_path, retry="batch")
    results = rerun.judge_many(POINTWISE_PROMPT, ITEMS[:3], stage="relevance")
    assert all(r.ok for r in results) and rerun.stats.unscored == 0
    assert (runner.totals.resumed, runner.totals.rounds) == (3, 1)


def test_resumed_requests_add_up_over_rounds(server: _Watched, tmp_path: Path) -> None:
    server.turnaround = 3600.0
    server.batch_faults.extend([Fault("500"), None, None, None, None, None])
    first, _, _ = _batched(server, tmp_path, sleep=killed)
    with pytest.raises(Killed):
        first.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    server.advance(3600.0)
    server.turnaround = 0.0
    rerun, runner, _ = _batched(server, tmp_path, retry="batch")
    assert all(r.ok for r in rerun.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    assert (runner.totals.rounds, runner.totals.resumed, runner.totals.submitted) == (2, 6, 1)


def test_every_count_lands_in_the_stage_and_every_item_is_reported_once(server: _Watched, tmp_path: Path) -> None:
    judge, runner, _ = _batched(server, tmp_path, retry="none")
    seen: list[int] = []
    given: dict[int, Any] = {}
    items = [*ITEMS[:3], ITEMS[0]]  # a repeat: one request, two results

    def on_result(index: int, judgement: Any) -> None:
        seen.append(index)
        given[index] = judgement

    results = judge.judge_many(POINTWISE_PROMPT, items, stage="relevance", on_result=on_result)
    assert sorted(seen) == [0, 1, 2, 3] and set(judge.usage) == {"relevance"}
    assert [given[i] for i in range(4)] == results and all(r.ok for r in results)
    assert judge.stats.deduped == 1
    rounds = runner.totals.rounds
    seen.clear()
    judge.judge_many(POINTWISE_PROMPT, items, stage="relevance", on_result=lambda i, j: seen.append(i))
    assert sorted(seen) == [0, 1, 2, 3] and set(judge.usage) == {"relevance"}
    assert runner.totals.rounds == rounds  # everything cached: no batch round at all


def test_a_direct_retry_is_said_and_counted_in_the_stage(server: _Watched, tmp_path: Path) -> None:
    server.batch_faults.extend([Fault("500"), None])
    judge, _, said = _batched(server, tmp_path, retry="direct")
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance"))
    assert "batch: 1 failed requests, retried directly (--batch-retry direct)" in said
    assert set(judge.usage) == {"relevance"}


def test_each_answer_carries_its_cost_at_the_batch_price(server: _Watched, tmp_path: Path) -> None:
    price = Price.per_million(1.0, 2.0)
    judge, _, _ = _batched(server, tmp_path, price=price)
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS[:3], stage="relevance")
    for r in results:
        assert r.cost_usd == pytest.approx(r.prompt_tokens * 1e-6 + r.completion_tokens * 2e-6) and r.cost_usd > 0


def test_the_progress_lines_give_the_time_since_the_wait_began(server: _Watched, tmp_path: Path) -> None:
    server.turnaround = 5.0
    now = [1000.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds
        server.advance(seconds)

    judge, runner, said = _batched(server, tmp_path, sleep=sleep)
    runner.clock = lambda: now[0]
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance"))
    elapsed = [line.rsplit("elapsed ", 1)[1] for line in said if "elapsed" in line]
    assert elapsed[0] == "0:00:00" and elapsed[-1] == "0:00:07"  # checks after 0, 1, 3 and 7 seconds


def test_a_check_that_fails_does_not_hold_up_the_other_batches(
    server: _Watched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    retrieve = BatchAPI.retrieve
    failed: list[str] = []

    async def flaky(self: BatchAPI, batch_id: str) -> Any:
        if batch_id == "batch_000001" and not failed:
            failed.append(batch_id)
            raise TransientBackendError("connection reset")
        return await retrieve(self, batch_id)

    monkeypatch.setattr(BatchAPI, "retrieve", flaky)
    server.turnaround = 1.0  # created in progress: the wait checks them
    judge, _, said = _batched(server, tmp_path, max_requests=1)
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance"))
    assert any("checking batch_000001 failed (connection reset); trying again" in line for line in said)
    # the second batch is still checked in the pass where the first failed: twice while waiting, once to collect
    assert server.seen.count(("GET", "/v1/batches/batch_000002")) == 3


class _Grade(BaseModel):
    grade: int


def test_an_invalid_answer_keeps_the_first_500_characters_of_what_was_said() -> None:
    said = "no JSON here " * 60
    response = ChatResponse(content=said, prompt_tokens=1, completion_tokens=1)
    output, problem = _validated(None, response, _Grade)
    assert output is None and problem is not None
    assert (problem.kind, problem.raw) == ("invalid_output", said[:500])
    assert problem.reason.startswith("invalid answer: ")
    assert json.loads(json.dumps(problem.model_dump()))["raw"] == said[:500]


def test_a_runner_without_a_price_counts_no_cost_even_when_the_judge_has_one(server: _Watched, tmp_path: Path) -> None:
    judge, runner, _ = _batched(server, tmp_path)
    assert judge.price is not None
    runner.price, runner.totals.cost_usd = None, None  # a runner made by hand without a batch price
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance"))
    assert runner.totals.cost_usd is None and runner.totals.answered == 2


def test_a_failed_batch_marks_only_its_own_requests(server: _Watched, tmp_path: Path) -> None:
    server.batch_faults.extend([Fault("500"), None])  # the first batch's request fails on its own line
    server.fail["batch_000002"] = {"data": [{"message": "bad file"}]}
    judge, _, _ = _batched(server, tmp_path, retry="none", max_requests=1)
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance")
    assert [r.unscored.kind for r in results if r.unscored] == ["backend_error", "batch_failed"]


def test_a_failed_batch_says_its_failure_over_the_lines_it_wrote(server: _Watched, tmp_path: Path) -> None:
    server.batch_faults.extend([Fault("500"), None])
    server.fail["batch_000001"] = {"data": [{"message": "stopped"}]}
    server.keep_files = True
    judge, _, _ = _batched(server, tmp_path, retry="none")
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance")
    assert [(r.unscored.kind, r.unscored.reason) for r in results if r.unscored] == [
        ("batch_failed", "the batch failed: stopped")
    ]
    assert results[1].ok  # what the failed batch did answer is kept


def test_token_probabilities_come_through_a_batch_into_the_cache(server: _Watched, tmp_path: Path) -> None:
    judge, _, _ = _batched(server, tmp_path)
    twin = judge.with_params(logprobs=True, top_logprobs=2)
    assert all(r.ok and r.logprobs for r in twin.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance"))
    direct = batch_judge(server, tmp_path).with_params(logprobs=True, top_logprobs=2)
    again = direct.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance")
    assert server.calls == 0 and all(r.cached and r.logprobs for r in again)


def test_an_open_batch_holding_none_of_the_requests_is_left_alone(server: _Watched, tmp_path: Path) -> None:
    server.turnaround = 3600.0
    first, _, _ = _batched(server, tmp_path, sleep=killed)
    with pytest.raises(Killed):
        first.judge_many(POINTWISE_PROMPT, ITEMS[:3], stage="relevance")
    server.turnaround, server.seen = 0.0, []
    judge, _, _ = _batched(server, tmp_path)
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS[3:], stage="relevance"))
    old = next(r for r in Ledger.beside(tmp_path).load() if r.id == "batch_000001")
    assert not old.collected and ("GET", "/v1/batches/batch_000001") not in server.seen


def test_a_request_without_max_tokens_is_bounded_by_its_prompt_alone(
    server: _Watched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = batch_judge(server, tmp_path)
    prompt_tokens = [
        sum(count_tokens(m["content"]) for m in probe.prepare(POINTWISE_PROMPT, item).request.messages)
        for item in ITEMS
    ]
    judge, runner, _ = _batched(
        server, tmp_path, judge={"max_cost": prompt_tokens[0] + prompt_tokens[1], "price": Price(1.0, 1.0)}
    )
    own = judge.params_for
    monkeypatch.setattr(judge, "params_for", lambda prompt: {k: v for k, v in own(prompt).items() if k != "max_tokens"})
    assert "max_tokens" not in judge.prepare(POINTWISE_PROMPT, ITEMS[0]).request.params
    with pytest.raises(BudgetExceeded):
        judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert runner.totals.submitted == 2
