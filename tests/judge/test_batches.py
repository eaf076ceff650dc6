"""Batch judging against the fake batch API: answers land in the same cache as direct calls, failures are unscored
with their kind and retried by policy, a killed process resumes its batches and nothing is paid twice."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batches_fixture import ITEMS, Killed, batch_judge, killed, passes

from assay.errors import BudgetExceeded, ConfigError, FormatError
from assay.judge import Judge, Price, make_judge
from assay.judge.batches import BatchAPI, BatchRunner, Ledger, use_batches
from assay.judge.relevance import POINTWISE_PROMPT
from assay.testing import Fault, default_answer
from assay.testing.fake_batches import FakeBatchServer
from assay.text import count_tokens


@pytest.fixture
def server() -> Iterator[FakeBatchServer]:
    with FakeBatchServer(clock=lambda: 0.0) as fake:
        yield fake


def _batched(server: FakeBatchServer, cache: Path, **options: Any) -> tuple[Judge, BatchRunner]:
    sleep = options.pop("sleep", None) or passes(server)
    judge = batch_judge(server, cache)
    runner = use_batches(judge, **options)
    runner.sleep = sleep
    return judge, runner


def _expected_grade(judge: Judge, item: dict[str, str]) -> int:
    """The fake's answer for this item, computed from the rendered prompt by the fake's own rule."""
    grade: int = json.loads(default_answer(judge.prepare(POINTWISE_PROMPT, item).request.messages))["grade"]
    return grade


def test_batch_answers_are_cached_for_a_later_direct_run(server: FakeBatchServer, tmp_path: Path) -> None:
    judge, runner = _batched(server, tmp_path)
    results = judge.judge_many(POINTWISE_PROMPT, [*ITEMS, ITEMS[0]], stage="relevance")
    assert [r.output.grade for r in results] == [_expected_grade(judge, i) for i in [*ITEMS, ITEMS[0]]]
    assert runner.totals.submitted == 6 and runner.totals.batches == 1  # the repeat made no second request
    assert judge.stats.calls == 6 and judge.stats.deduped == 1
    direct = batch_judge(server, tmp_path)
    again = direct.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert server.calls == 0 and direct.stats.cache_hits == 6
    assert [r.output.grade for r in again] == [r.output.grade for r in results[:6]]


def test_batch_calls_are_priced_at_the_batch_price(server: FakeBatchServer, tmp_path: Path) -> None:
    judge, runner = _batched(server, tmp_path, price=Price.per_million(1.0, 2.0))
    judge.price = Price.per_million(2.0, 4.0)
    runner.direct_price = judge.price
    judge.judge_many(POINTWISE_PROMPT, ITEMS[:2], stage="relevance")
    usage = judge.usage["relevance"]
    by_hand = usage.prompt_tokens * 1e-6 + usage.completion_tokens * 2e-6
    assert usage.cost_usd == pytest.approx(by_hand) and runner.totals.cost_usd == pytest.approx(by_hand)
    assert runner.totals.direct_cost_usd == pytest.approx(2 * by_hand)


FAULTS = [Fault("invalid"), Fault("500"), Fault("truncated"), None, None, None]


def test_failures_are_unscored_with_their_kind_without_retry(server: FakeBatchServer, tmp_path: Path) -> None:
    server.batch_faults.extend(FAULTS)
    judge, _ = _batched(server, tmp_path, retry="none")
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    kinds = [r.unscored.kind if r.unscored else None for r in results]
    assert kinds == ["invalid_output", "backend_error", "truncated", None, None, None]
    assert judge.usage["relevance"].unscored == 3 and judge.stats.unscored == 3


def test_retry_batch_sends_the_retriable_failures_in_one_more_batch(server: FakeBatchServer, tmp_path: Path) -> None:
    server.batch_faults.extend(FAULTS)
    judge, runner = _batched(server, tmp_path, retry="batch")
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    # the invalid answer and the 500 are asked again; an answer cut at max_tokens would be cut again
    assert [r.unscored.kind if r.unscored else None for r in results] == [None, None, "truncated", None, None, None]
    assert runner.totals.batches == 2 and runner.totals.submitted == 8


def test_retry_direct_calls_the_failures_directly(server: FakeBatchServer, tmp_path: Path) -> None:
    server.batch_faults.extend(FAULTS)
    judge, runner = _batched(server, tmp_path, retry="direct")
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert server.calls == 2 and runner.totals.batches == 1
    assert [r.ok for r in results] == [True, True, False, True, True, True]


def test_an_expired_batch_keeps_what_it_answered(server: FakeBatchServer, tmp_path: Path) -> None:
    server.turnaround, server.expires_after = 6.0, 2.0
    judge, _ = _batched(server, tmp_path, retry="none")
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert [r.unscored.kind if r.unscored else None for r in results] == [None, None] + ["batch_expired"] * 4
    server.expires_after = None  # the rerun: only the four the batch never ran are asked again
    rerun, rerunner = _batched(server, tmp_path, retry="none")
    assert all(r.ok for r in rerun.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    assert rerunner.totals.submitted == 4 and rerun.stats.cache_hits == 2
    assert server.paid_twice() == 0 and sum(server.answered.values()) == 6


def test_a_killed_process_resumes_its_batch_and_pays_nothing_twice(server: FakeBatchServer, tmp_path: Path) -> None:
    server.turnaround = 3600.0
    judge, _ = _batched(server, tmp_path, sleep=killed)
    with pytest.raises(Killed):
        judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    [record] = Ledger.beside(tmp_path).load()
    assert (record.status, record.collected, len(record.keys)) == ("in_progress", False, 6)
    server.advance(3600.0)
    rerun, runner = _batched(server, tmp_path)
    results = rerun.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert all(r.ok for r in results) and len(server.batches) == 1
    assert (runner.totals.submitted, runner.totals.resumed) == (0, 6)
    assert server.paid_twice() == 0 and Ledger.beside(tmp_path).load()[0].collected


def test_a_batch_recorded_before_it_was_created_is_created_from_its_file(
    server: FakeBatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge, _ = _batched(server, tmp_path)

    async def killed_create(self: BatchAPI, *args: Any) -> Any:
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(BatchAPI, "create", killed_create)
        with pytest.raises(Killed):
            judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert Ledger.beside(tmp_path).load()[0].status == "submitting" and not server.batches
    rerun, runner = _batched(server, tmp_path)
    assert all(r.ok for r in rerun.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    assert len(server.batches) == 1 and runner.totals.submitted == 0


def test_input_files_respect_the_request_limit(server: FakeBatchServer, tmp_path: Path) -> None:
    judge, _ = _batched(server, tmp_path, max_requests=4)
    judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert [len(b.results) for b in server.batches.values()] == [4, 2]


def test_max_cost_submits_what_fits_then_stops(server: FakeBatchServer, tmp_path: Path) -> None:
    probe = batch_judge(server, tmp_path)
    bounds = []  # what each request may cost at 1 USD a token: its prompt tokens plus its max_tokens
    for item in ITEMS:
        request = probe.prepare(POINTWISE_PROMPT, item).request
        bounds.append(sum(count_tokens(m["content"]) for m in request.messages) + request.params["max_tokens"])
    budget = bounds[0] + bounds[1] + bounds[2] / 2  # room for two requests, not three
    judge = batch_judge(server, tmp_path, max_cost=budget, price=Price(1.0, 1.0))
    runner = use_batches(judge)
    runner.sleep = passes(server)
    with pytest.raises(BudgetExceeded, match="rerun with a higher --max-cost"):
        judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    assert runner.totals.submitted == 2 and 0 < judge.spent <= budget


def test_batches_need_an_openai_compatible_server_and_a_cache(server: FakeBatchServer, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="drop --batch"):
        use_batches(make_judge("offline", cache_dir=tmp_path))
    with pytest.raises(ConfigError, match="drop --no-cache"):
        use_batches(make_judge("openai/gpt-4o-mini", api_base=server.url))


def test_a_broken_ledger_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "batches.json").write_text('{"format": "assay.batches", "batches": [{"ref": 1}]}')
    with pytest.raises(FormatError, match=r"batches\.json:1: not an assay batch ledger"):
        Ledger.beside(tmp_path).load()


def test_azure_openai_paths_and_deployment_name(server: FakeBatchServer, tmp_path: Path) -> None:
    judge = make_judge("openai/my-deployment", api_base=server.url.replace("/v1", "/openai"), cache_dir=tmp_path)
    runner = use_batches(judge, api_version="2024-10-21", retry="none")
    runner.sleep = passes(server)
    assert all(r.ok for r in judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    [batch] = server.batches.values()
    first = json.loads(server._files.data[batch.input_file_id].splitlines()[0])
    assert (batch.endpoint, first["url"], first["body"]["model"]) == (
        "/chat/completions",
        "/chat/completions",
        "my-deployment",
    )


def test_refused_and_looping_answers_keep_the_direct_kinds(server: FakeBatchServer, tmp_path: Path) -> None:
    server.batch_faults.extend([Fault("content_filter"), Fault("filtered"), Fault("loop")])
    judge, runner = _batched(server, tmp_path, retry="batch")
    results = judge.judge_many(POINTWISE_PROMPT, ITEMS[:3], stage="relevance")
    assert [r.unscored.kind for r in results if r.unscored] == ["content_filter", "content_filter", "loop"]
    assert runner.totals.batches == 1  # none of them would go better a second time


def test_the_version_1_ledger_keeps_loading() -> None:
    ledger = Ledger(Path(__file__).resolve().parents[1] / "fixtures" / "judge" / "batches" / "batches-v1.json")
    first, second = ledger.load()
    assert (first.id, first.status, first.done, len(first.keys), first.ended) == (
        "batch_abc123",
        "in_progress",
        1,
        2,
        False,
    )
    assert (second.id, second.status) == (None, "submitting")
    assert [r.ref for r in ledger.open_batches("https://api.openai.com/v1", "openai/gpt-4o-mini")] == [
        first.ref,
        second.ref,
    ]


def test_a_batch_created_before_its_id_was_saved_is_found_not_created_again(
    server: FakeBatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge, _ = _batched(server, tmp_path)
    create = BatchAPI.create

    async def create_then_killed(self: BatchAPI, *args: Any) -> Any:
        await create(self, *args)  # the provider has the batch; the process dies before the ledger names it
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(BatchAPI, "create", create_then_killed)
        with pytest.raises(Killed):
            judge.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    [record] = Ledger.beside(tmp_path).load()
    assert (record.status, record.id, len(server.batches)) == ("submitting", None, 1)
    rerun, runner = _batched(server, tmp_path)
    assert all(r.ok for r in rerun.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    assert len(server.batches) == 1  # the rerun found the batch on the server instead of running it a second time
    assert (runner.totals.submitted, runner.totals.resumed) == (0, len(ITEMS))
    assert server.paid_twice() == 0 and sum(server.answered.values()) == len(ITEMS)
    assert Ledger.beside(tmp_path).load()[0].id == next(iter(server.batches))


def test_an_open_batch_of_another_model_is_left_to_that_model(server: FakeBatchServer, tmp_path: Path) -> None:
    server.turnaround = 3600.0
    first, _ = _batched(server, tmp_path, sleep=killed)
    with pytest.raises(Killed):
        first.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance")
    other = make_judge("openai/gpt-4o", api_base=server.url, cache_dir=tmp_path)
    runner = use_batches(other)
    runner.sleep = passes(server)
    assert all(r.ok for r in other.judge_many(POINTWISE_PROMPT, ITEMS, stage="relevance"))
    assert (runner.totals.submitted, runner.totals.resumed) == (len(ITEMS), 0)  # its own keys: nothing to pick up
    ledger = Ledger.beside(tmp_path)
    mini, gpt4o = sorted(ledger.load(), key=lambda r: r.model != first.model)
    assert (mini.model, mini.collected, gpt4o.model, gpt4o.collected) == (first.model, False, other.model, True)
    # the ledger answers for one model: the other model's open batch waits for its own rerun
    assert [r.ref for r in ledger.open_batches(mini.api_base, first.model)] == [mini.ref]
    assert ledger.open_batches(gpt4o.api_base, other.model) == []
