"""A user's own openai client as the judge's backend: AsyncOpenAI and AsyncAzureOpenAI against the fake server.

The fault rules every backend shares (each transient status retried by the Judge alone, Retry-After, 4xx failing
with the fix, timeouts) run on this path too, as the third maker of tests/judge/test_judge_backends.py. Here: what
is particular to a client the user built (Azure's URL and deployment name, the client left as given, the cache shared
with the aiohttp path, the factory hook, the lazy import).
"""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from assay.errors import ConfigError
from assay.judge import Judge, JudgeCache, OpenAIClientBackend, make_judge
from assay.judge.backends import OpenAICompatBackend
from assay.judge.backends.sdk import _retry_after
from assay.judge.limits import RetryPolicy
from assay.testing import FakeOpenAIServer, Fault

ITEMS = [
    {"question": "What does BM25 rank?", "passage": "BM25 ranks documents by term frequency."},
    {"question": "What is a qrel?", "passage": "A qrel is a relevance judgement for a query and a document."},
]
API_VERSION = "2024-10-21"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def azure_client(server: FakeOpenAIServer, **kwargs: Any) -> openai.AsyncAzureOpenAI:
    endpoint = server.url.removesuffix("/v1")  # Azure's client adds /openai/deployments/{deployment}/...
    return openai.AsyncAzureOpenAI(azure_endpoint=endpoint, api_version=API_VERSION, api_key="azure-key", **kwargs)


def run_with(make_client: Any, judge_of: Any, items: list[dict[str, str]] = ITEMS) -> tuple[Judge, list[Any]]:
    """Make the client, judge ``items`` and close the client, all in one event loop (the documented use)."""

    async def run() -> tuple[Judge, list[Any]]:
        client = make_client()
        try:
            judge = judge_of(client)
            return judge, await judge.ajudge_many("toy", items)
        finally:
            await client.close()

    return asyncio.run(run())


def test_structured_answers_are_parsed_and_cached(
    server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy, tmp_path: Path
) -> None:
    def judge_of(client: openai.AsyncOpenAI) -> Judge:
        return make_judge("openai/judge-x", client=client, cache_dir=tmp_path, prompt_dir=toy_prompts, retry=no_wait)

    def make_client() -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=server.url, api_key="sk-test")

    first, results = run_with(make_client, judge_of)
    assert server.calls == 2 and first.stats.calls == 2
    assert all(r.output is not None and not r.cached for r in results)
    assert server.requests[0]["model"] == "judge-x" and "response_format" in server.requests[0]
    assert server.paths[0] == "/v1/chat/completions"
    again, cached = run_with(make_client, judge_of)
    assert server.calls == 2 and again.stats.calls == 0  # the second run makes no call
    assert [r.output for r in cached] == [r.output for r in results] and all(r.cached for r in cached)


def test_the_cache_is_shared_with_the_aiohttp_backend(
    server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy, tmp_path: Path
) -> None:
    def judge_of(client: openai.AsyncOpenAI) -> Judge:
        backend = OpenAIClientBackend(client)
        cache = JudgeCache(tmp_path)
        return Judge(backend, model="openai/judge-x", cache=cache, prompt_dir=toy_prompts, retry=no_wait)

    run_with(lambda: openai.AsyncOpenAI(base_url=server.url, api_key="sk-test"), judge_of)
    backend = OpenAICompatBackend(server.url, api_key="sk-test")
    judge = Judge(backend, model="openai/judge-x", cache=JudgeCache(tmp_path), prompt_dir=toy_prompts, retry=no_wait)
    assert all(r.cached for r in judge.judge_many("toy", ITEMS)) and server.calls == 2


def test_azure_client_posts_to_the_deployment(
    server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    def judge_of(client: openai.AsyncAzureOpenAI) -> Judge:
        return make_judge("azure/my-gpt4o", client=client, prompt_dir=toy_prompts, retry=no_wait)

    judge, results = run_with(lambda: azure_client(server), judge_of, ITEMS[:1])
    assert results[0].output is not None and judge.stats.calls == 1
    assert server.paths == [f"/openai/deployments/my-gpt4o/chat/completions?api-version={API_VERSION}"]
    assert server.requests[0]["model"] == "my-gpt4o"  # the deployment name, without litellm's azure/ prefix
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "FakeGrade"


def test_azure_client_bound_to_a_deployment(server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy) -> None:
    def judge_of(client: openai.AsyncAzureOpenAI) -> Judge:
        backend = OpenAIClientBackend(client, model="gpt-4o-mini")
        return Judge(backend, model="azure/gpt-4o-mini", prompt_dir=toy_prompts, retry=no_wait)

    _, results = run_with(lambda: azure_client(server, azure_deployment="prod-judge"), judge_of, ITEMS[:1])
    assert results[0].output is not None
    assert server.paths == [f"/openai/deployments/prod-judge/chat/completions?api-version={API_VERSION}"]
    assert server.requests[0]["model"] == "gpt-4o-mini"


def test_azure_rate_limit_is_retried_once_after_its_wait(
    server: FakeOpenAIServer, toy_prompts: Path, sleeps: Any
) -> None:
    server.inject(Fault("429", retry_after=7))

    def judge_of(client: openai.AsyncAzureOpenAI) -> Judge:
        policy = RetryPolicy.immediate(sleep=sleeps)
        return make_judge("azure/my-gpt4o", client=client, prompt_dir=toy_prompts, retry=policy)

    judge, results = run_with(lambda: azure_client(server), judge_of, ITEMS[:1])
    assert results[0].output is not None and sleeps.waits == [7.0]
    assert server.calls == 2 and judge.stats.retries == 1


def test_truncated_answers_end_unscored(server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy) -> None:
    server.inject(*[Fault("truncated")] * no_wait.attempts)

    def judge_of(client: openai.AsyncOpenAI) -> Judge:
        return Judge(OpenAIClientBackend(client), model="openai/judge-x", prompt_dir=toy_prompts, retry=no_wait)

    judge, [result] = run_with(lambda: openai.AsyncOpenAI(base_url=server.url, api_key="x"), judge_of, ITEMS[:1])
    assert result.output is None and result.unscored is not None and result.unscored.kind == "truncated"
    assert judge.stats.unscored == 1


def test_the_users_client_keeps_its_own_settings(server: FakeOpenAIServer) -> None:
    client = openai.AsyncOpenAI(base_url=server.url, api_key="x", max_retries=5, timeout=90.0)
    backend = OpenAIClientBackend(client, timeout=3.0)
    assert client.max_retries == 5 and client.timeout == 90.0  # a copy carries the judge's settings
    assert backend.client is client and backend.where == server.url


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # the dead loop's socket cannot be closed any more
def test_a_client_reused_across_sync_runs_still_answers(
    server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    client = openai.AsyncOpenAI(base_url=server.url, api_key="x")
    for item in ITEMS:  # two event loops: the first run's pooled connection is dead in the second, and retried
        judge = Judge(OpenAIClientBackend(client), model="openai/judge-x", prompt_dir=toy_prompts, retry=no_wait)
        [result] = judge.judge_many("toy", [item])
        assert result.output is not None
    del client, judge
    gc.collect()  # its unclosable socket is collected here, under this test's warning filter


def test_make_judge_rejects_a_client_with_a_base_or_key(server: FakeOpenAIServer) -> None:
    client = openai.AsyncOpenAI(base_url=server.url, api_key="x")
    with pytest.raises(ConfigError, match="carries its own base URL and key"):
        make_judge("openai/judge-x", client=client, api_key="sk-other")
    with pytest.raises(ConfigError, match="offline judge calls no model"):
        make_judge("offline", client=client)
    judge = make_judge("openai/judge-x", client=client, timeout=5.0)
    assert isinstance(judge.backend, OpenAIClientBackend) and judge.backend.name == "openai-client"


def test_openai_is_not_imported_by_assay() -> None:
    code = (
        "import sys, assay, assay.judge\n"
        "from assay.judge import OpenAIClientBackend, make_judge\n"
        "print('openai' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_retry_after_ms_comes_first() -> None:
    assert _retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # what Azure and OpenAI send
    assert _retry_after({"retry-after-ms": "soon", "retry-after": "9"}) == 9.0
    assert _retry_after({}) is None


def test_connection_refused_is_transient_and_names_the_cause(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    with FakeOpenAIServer() as gone:
        url = gone.url

    def judge_of(client: openai.AsyncOpenAI) -> Judge:
        return Judge(OpenAIClientBackend(client), model="openai/x", prompt_dir=toy_prompts, retry=no_wait)

    judge, [result] = run_with(lambda: openai.AsyncOpenAI(base_url=url, api_key="x"), judge_of, ITEMS[:1])
    assert result.unscored is not None and result.unscored.kind == "backend_error"
    assert f"connection to {url} failed" in result.unscored.reason and "ConnectError" in result.unscored.reason
    assert judge.stats.retries == no_wait.attempts - 1
