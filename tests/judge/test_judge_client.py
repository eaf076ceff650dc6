"""The Judge client on the in-process fake backend: validation, repair, unscored, cache, dedupe, budget, limits."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from assay.errors import BackendError, BudgetExceeded, ConfigError, TransientBackendError
from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.cache import JudgeCache
from assay.judge.client import Judge, parse_output
from assay.judge.limits import RateLimiter, RetryPolicy
from assay.judge.pricing import Price
from assay.testing import FakeBackend, FakeGrade

GOOD = '{"reason": "answers it", "grade": 3}'


def items(n: int) -> list[dict[str, str]]:
    return [{"question": f"question {i}", "passage": f"passage {i}"} for i in range(n)]


def make(backend: FakeBackend, toy_prompts: Path, policy: RetryPolicy, **kwargs: object) -> Judge:
    return Judge(backend, model="test/model", prompt_dir=toy_prompts, retry=policy, **kwargs)  # type: ignore[arg-type]


def test_valid_answer_is_validated_and_counted(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    backend = FakeBackend([GOOD])
    judge = make(backend, toy_prompts, no_wait, price=Price(0.001, 0.002))
    [result] = judge.judge_many("toy", items(1), stage="s")
    assert result.output == FakeGrade(reason="answers it", grade=3)
    assert (result.prompt, result.model, result.cached) == ("toy@1", "test/model", False)
    assert result.cost_usd == pytest.approx(100 * 0.001 + 20 * 0.002)
    usage = judge.usage["s"]
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (1, 100, 20)
    assert usage.cost_usd == pytest.approx(0.14)
    request = backend.requests[0]
    assert request.params == {"temperature": 0.0, "max_tokens": 64}
    assert request.response_schema is not None and request.schema_name == "FakeGrade"


@pytest.mark.parametrize("text", ['```json\n{"reason": "r", "grade": 1}\n```', '```\n{"reason": "r", "grade": 1}```'])
def test_code_fences_are_stripped(text: str) -> None:
    assert parse_output(text, FakeGrade).grade == 1


def test_one_repair_attempt_carries_the_error(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    backend = FakeBackend(['{"reason": "r", "grade": 7}', GOOD])
    judge = make(backend, toy_prompts, no_wait)
    [result] = judge.judge_many("toy", items(1))
    assert result.output is not None and result.output.grade == 3
    repair = backend.requests[1].messages
    assert repair[-2] == {"role": "assistant", "content": '{"reason": "r", "grade": 7}'}
    assert "grade" in repair[-1]["content"] and "not valid" in repair[-1]["content"]
    assert judge.stats.repairs == 1 and judge.stats.unscored == 0


def test_invalid_twice_is_unscored_never_zero(toy_prompts: Path, no_wait: RetryPolicy, tmp_path: Path) -> None:
    backend = FakeBackend(["the grade is 2", "still not json", GOOD])
    judge = make(backend, toy_prompts, no_wait, cache=JudgeCache(tmp_path))
    [result] = judge.judge_many("toy", items(1), stage="rel")
    assert result.output is None and result.unscored is not None
    assert result.unscored.kind == "invalid_output" and result.unscored.raw == "still not json"
    assert judge.stats.unscored == 1 and judge.usage["rel"].unscored == 1
    assert len(JudgeCache(tmp_path)) == 0  # failures are never cached
    [again] = judge.judge_many("toy", items(1))
    assert again.output is not None and backend.calls == 3


def test_transient_then_success_and_exhaustion(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    flaky = FakeBackend([TransientBackendError("503", status=503), GOOD])
    judge = make(flaky, toy_prompts, no_wait)
    assert judge.judge_many("toy", items(1))[0].output is not None
    assert judge.stats.retries == 1
    down = FakeBackend(lambda r: TransientBackendError("502", status=502))
    judge = make(down, toy_prompts, no_wait)
    [result] = judge.judge_many("toy", items(1))
    assert result.unscored is not None and result.unscored.kind == "backend_error"
    assert down.calls == no_wait.attempts and judge.stats.unscored == 1


def test_truncated_output_is_unscored_without_a_retry(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    cut = ChatResponse(content='{"reason": "cu', prompt_tokens=10, completion_tokens=64, finish_reason="length")
    backend = FakeBackend(lambda r: cut)
    judge = make(backend, toy_prompts, no_wait)
    [result] = judge.judge_many("toy", items(1))
    assert result.unscored is not None and result.unscored.kind == "truncated"
    assert backend.calls == 1 and judge.usage["default"].completion_tokens == 64  # paid for, counted, not repeated


def test_max_tokens_overrides_the_prompts_limit_for_all_or_for_one_prompt(
    toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    for setting, expected in ((None, 64), (300, 300), ({"toy": 128}, 128), ({"toy_list": 9}, 64)):
        backend = FakeBackend([GOOD])
        make(backend, toy_prompts, no_wait, max_tokens=setting).judge_many("toy", items(1))
        assert backend.requests[0].params["max_tokens"] == expected
    with pytest.raises(ConfigError, match="max_tokens for prompt 'toy' must be a whole number"):
        make(FakeBackend([GOOD]), toy_prompts, no_wait, max_tokens={"toy": 0})


@pytest.mark.parametrize(
    ("text", "loops"),
    [
        ('{"reason": "' + "the passage " * 30, True),
        ('{"reason": "' + "\n\n" * 50, True),
        ("abcabcabcabc", True),
        (
            '[{"id": "7", "grade": 2}, '
            + ", ".join(f'{{"id": "{i}", "reason": "{i + 1}", "grade": 2}}' for i in range(8, 30)),
            True,
        ),
        ('{"reason": "The passage names the author and the year of the study, so it answ', False),
        ("aaa", False),
        ("", False),
    ],
)
def test_repeats_itself_spots_a_generation_loop(text: str, loops: bool) -> None:
    from assay.judge.output_limits import repeats_itself

    assert repeats_itself(text) is loops


def test_fatal_error_fails_fast(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    backend = FakeBackend(lambda r: BackendError("HTTP 401: set OPENAI_API_KEY", status=401))
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        make(backend, toy_prompts, no_wait, concurrency=1).judge_many("toy", items(5))
    assert backend.calls == 1


def test_retry_after_is_honoured(toy_prompts: Path, sleeps: object) -> None:
    policy = RetryPolicy.immediate(sleep=sleeps)  # type: ignore[arg-type]
    backend = FakeBackend(
        [TransientBackendError("429", status=429, retry_after=7.5), TransientBackendError("500"), GOOD]
    )
    make(backend, toy_prompts, policy).judge_many("toy", items(1))
    waits = sleeps.waits  # type: ignore[attr-defined]
    assert waits[0] == 7.5  # the server's Retry-After
    assert 2.0 <= waits[1] <= 3.0  # no Retry-After: backoff initial * 2**1 + jitter U(0, 1) on the 2nd retry


def test_cached_rerun_makes_zero_calls(toy_prompts: Path, no_wait: RetryPolicy, tmp_path: Path) -> None:
    first = FakeBackend()
    make(first, toy_prompts, no_wait, cache=JudgeCache(tmp_path)).judge_many("toy", items(20))
    assert first.calls == 20
    second = FakeBackend()
    judge = make(second, toy_prompts, no_wait, cache=JudgeCache(tmp_path), concurrency=3)
    results = judge.judge_many("toy", items(20), stage="again")
    assert second.calls == 0 and all(r.cached for r in results)
    assert judge.usage["again"].cached == 20 and judge.usage["again"].calls == 0


def test_cache_key_ignores_timeout_and_concurrency_but_not_model_or_params(
    toy_prompts: Path, no_wait: RetryPolicy, tmp_path: Path
) -> None:
    make(FakeBackend(), toy_prompts, no_wait, cache=JudgeCache(tmp_path)).judge_many("toy", items(3))
    other_settings = FakeBackend()
    judge = make(other_settings, toy_prompts, RetryPolicy(attempts=2), cache=JudgeCache(tmp_path), concurrency=1)
    judge.judge_many("toy", items(3))
    assert other_settings.calls == 0
    for change in ({"model": "test/other"}, {"params": {"temperature": 0.5}}, {"structured": False}):
        backend = FakeBackend()
        kwargs = {"prompt_dir": toy_prompts, "retry": no_wait, "cache": JudgeCache(tmp_path), "model": "test/model"}
        Judge(backend, **{**kwargs, **change}).judge_many("toy", items(3))  # type: ignore[arg-type]
        assert backend.calls == 3, change


def test_cache_key_changes_with_prompt_version_and_schema(
    toy_prompts: Path, no_wait: RetryPolicy, tmp_path: Path
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    original = (toy_prompts / "toy.md").read_text()
    (prompts / "toy.md").write_text(original)
    cache = tmp_path / "cache"
    make(FakeBackend(), prompts, no_wait, cache=JudgeCache(cache)).judge_many("toy", items(2))
    variants = [
        original.replace('version = "1"', 'version = "2"'),
        original.replace("assay.testing:FakeGrade", "RelevanceGrade"),  # same fields, different schema title
    ]
    for text in variants:
        (prompts / "toy.md").write_text(text)
        backend = FakeBackend()
        make(backend, prompts, no_wait, cache=JudgeCache(cache)).judge_many("toy", items(2))
        assert backend.calls == 2


class _Yielding(FakeBackend):
    async def complete(self, request: ChatRequest) -> ChatResponse:
        for _ in range(3):
            await asyncio.sleep(0)  # let the other workers start: the calls overlap
        return await super().complete(request)


def test_identical_requests_in_flight_make_one_call(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    backend = _Yielding()
    judge = make(backend, toy_prompts, no_wait, concurrency=8)
    results = judge.judge_many("toy", items(1) * 8)
    assert backend.calls == 1 and judge.stats.deduped == 7
    assert all(r.output == results[0].output for r in results) and results[0].output is not None
    assert sum(not r.cached for r in results) == 1


def test_budget_stops_cleanly_and_rerun_resumes(toy_prompts: Path, no_wait: RetryPolicy, tmp_path: Path) -> None:
    price = Price(0.001, 0.001)  # FakeBackend: 100 + 20 tokens = $0.12 per call
    first = FakeBackend()
    judge = make(first, toy_prompts, no_wait, cache=JudgeCache(tmp_path), max_cost=0.5, price=price, concurrency=3)
    with pytest.raises(BudgetExceeded, match="rerun"):
        judge.judge_many("toy", items(20))
    assert 5 <= first.calls <= 7  # stops once $0.5 is reached; calls already in flight finish
    assert len(JudgeCache(tmp_path)) == first.calls  # every paid call is cached
    second = FakeBackend()
    make(second, toy_prompts, no_wait, cache=JudgeCache(tmp_path), price=price).judge_many("toy", items(20))
    assert first.calls + second.calls == 20
    paid_twice = {r.messages[-1]["content"] for r in first.requests} & {
        r.messages[-1]["content"] for r in second.requests
    }
    assert not paid_twice


def test_max_cost_needs_a_price(toy_prompts: Path) -> None:
    with pytest.raises(ConfigError, match="--price"):
        Judge(FakeBackend(), model="nobody/knows", max_cost=1.0, prompt_dir=toy_prompts)


def test_cache_errors_warn_and_proceed(
    toy_prompts: Path, no_wait: RetryPolicy, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(JudgeCache):
        def __init__(self) -> None:
            pass

        def get(self, key: str) -> str | None:
            raise OSError("disk on fire")

        def get_many(self, keys: object) -> dict[str, str]:
            raise OSError("disk on fire")

        def put_many(self, items: object) -> None:
            raise OSError("disk on fire")

        def put(self, key: str, value: str) -> None:
            raise OSError("disk on fire")

    judge = make(FakeBackend(), toy_prompts, no_wait, cache=Broken())
    assert judge.judge_many("toy", items(2))[0].output is not None
    assert judge.stats.cache_errors >= 2 and "disk on fire" in caplog.text


def test_unstructured_appends_schema_and_drops_response_format(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    backend = FakeBackend()
    make(backend, toy_prompts, no_wait, structured=False).judge_many("toy", items(1))
    request = backend.requests[0]
    assert request.response_schema is None
    assert '"grade"' in request.messages[-1]["content"] and "JSON schema" in request.messages[-1]["content"]


def test_estimate_counts_without_calling(toy_prompts: Path, no_wait: RetryPolicy, tmp_path: Path) -> None:
    backend = FakeBackend()
    judge = make(backend, toy_prompts, no_wait, cache=JudgeCache(tmp_path), price=Price(1e-6, 2e-6))
    judge.judge_many("toy", items(2))
    estimate = judge.estimate("toy", items(5) + items(1))
    assert (estimate.calls, estimate.cached) == (3, 3)
    assert estimate.prompt_tokens > 0
    assert estimate.cost_usd == pytest.approx(estimate.prompt_tokens * 1e-6 + 3 * 64 * 2e-6)
    many = judge.estimate("toy", items(1200) + items(2))  # past one cache query (500 keys): items 0 and 1 cached
    assert (many.calls, many.cached) == (1198, 4)
    assert backend.calls == 2


def test_rate_limiter_waits_for_the_window() -> None:
    now = [0.0]
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    async def run() -> None:
        limiter = RateLimiter(rpm=2, tpm=100, clock=lambda: now[0], sleep=fake_sleep)
        await limiter.acquire(10)
        await limiter.acquire(10)
        await limiter.acquire(10)  # third request in a minute: waits until the first leaves the window
        now[0] += 61
        await limiter.acquire(95)
        await limiter.acquire(10)  # 95 + 10 > 100 tokens: waits

    asyncio.run(run())
    # the 3rd waits 60 s for the requests at t=0 to leave; the 5th waits 60 s for the 95 tokens taken at t=121
    assert waits == [pytest.approx(60.0), pytest.approx(60.0)]


def test_concurrency_is_bounded(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    running = [0, 0]

    class Counting(FakeBackend):
        async def complete(self, request: ChatRequest) -> ChatResponse:
            running[0] += 1
            running[1] = max(running[1], running[0])
            await asyncio.sleep(0)
            running[0] -= 1
            return ChatResponse(content=json.dumps({"reason": "r", "grade": 0}))

    make(Counting(), toy_prompts, no_wait, concurrency=4).judge_many("toy", items(30))
    assert running[1] == 4


def test_concurrent_ajudge_calls_share_one_call(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    backend = _Yielding()
    judge = make(backend, toy_prompts, no_wait)

    async def run() -> list[object]:
        return list(await asyncio.gather(*(judge.ajudge("toy", items(1)[0]) for _ in range(5))))

    results = asyncio.run(run())
    assert backend.calls == 1 and len(results) == 5 and judge.stats.deduped == 4


def test_rpm_limit_waits_on_the_policy_clock(toy_prompts: Path) -> None:
    now = [0.0]
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    policy = RetryPolicy(sleep=fake_sleep, clock=lambda: now[0])
    backend = FakeBackend()
    make(backend, toy_prompts, policy, rpm=2).judge_many("toy", items(5))
    assert backend.calls == 5
    assert waits == [pytest.approx(60.0), pytest.approx(60.0)]  # requests 3 and 5 wait for the next minute
