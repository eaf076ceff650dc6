"""The backends driven through the fake OpenAI-compatible server: wire format, each retry rule, routing, prices.

Three paths: the aiohttp backend, litellm, and a real ``openai.AsyncOpenAI`` client (the openai extra) wrapped in
:class:`OpenAIClientBackend`; tests/judge/test_judge_openai_client.py covers what is particular to the last.
"""

from __future__ import annotations

import email.utils
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.errors import BackendError, ConfigError
from assay.judge.backends import (
    LiteLLMBackend,
    OpenAIClientBackend,
    OpenAICompatBackend,
    make_backend,
    parse_retry_after,
)
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.judge.pricing import price_for
from assay.testing import FakeOpenAIServer, Fault

ITEM = [{"question": "What does BM25 rank?", "passage": "BM25 ranks documents by term frequency."}]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def aiohttp_judge(server: FakeOpenAIServer, toy_prompts: Path, policy: RetryPolicy, **kwargs: Any) -> Judge:
    backend = OpenAICompatBackend(server.url, api_key="sk-test", timeout=kwargs.pop("timeout", 30.0))
    return Judge(backend, model="openai/judge-x", prompt_dir=toy_prompts, retry=policy, **kwargs)


def litellm_judge(server: FakeOpenAIServer, toy_prompts: Path, policy: RetryPolicy, **kwargs: Any) -> Judge:
    backend = LiteLLMBackend("openai/judge-x", api_base=server.url, api_key="sk-test", timeout=30.0)
    return Judge(backend, model="openai/judge-x", prompt_dir=toy_prompts, retry=policy, **kwargs)


class OwnedClientBackend(OpenAIClientBackend):
    """The backend on a client made for one ``judge_many``: closed in its event loop when the Judge closes."""

    async def aclose(self) -> None:
        await self.client.close()


def openai_client_judge(server: FakeOpenAIServer, toy_prompts: Path, policy: RetryPolicy, **kwargs: Any) -> Judge:
    import openai

    client = openai.AsyncOpenAI(base_url=server.url, api_key="sk-test")  # the SDK's default 2 retries: the backend
    backend = OwnedClientBackend(client, timeout=kwargs.pop("timeout", 30.0))  # turns them off
    return Judge(backend, model="openai/judge-x", prompt_dir=toy_prompts, retry=policy, **kwargs)


MAKERS = [
    pytest.param(aiohttp_judge, id="aiohttp"),
    pytest.param(litellm_judge, id="litellm"),
    pytest.param(openai_client_judge, id="openai-client"),
]


@pytest.mark.parametrize("make", MAKERS)
def test_reaches_the_server_with_structured_output(
    make: Any, server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    [result] = make(server, toy_prompts, no_wait).judge_many("toy", ITEM)
    assert result.output is not None and server.calls == 1
    body = server.requests[0]
    assert body["model"] == "judge-x"  # provider prefix stripped, as litellm does
    assert body["messages"][0]["role"] == "system" and body["temperature"] == 0.0 and body["max_tokens"] == 64
    schema = body["response_format"]["json_schema"]
    assert body["response_format"]["type"] == "json_schema" and schema["strict"] is True
    assert schema["name"] == "FakeGrade" and schema["schema"]["required"] == ["reason", "grade"]
    assert result.prompt_tokens > 0 and result.completion_tokens > 0


@pytest.mark.parametrize("make", MAKERS)
def test_no_structured_sends_no_response_format(
    make: Any, server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    make(server, toy_prompts, no_wait, structured=False).judge_many("toy", ITEM)
    body = server.requests[0]
    assert "response_format" not in body and "JSON schema" in body["messages"][-1]["content"]


TRANSIENT = [Fault("429"), Fault("408"), Fault("409"), Fault("500"), Fault("502"), Fault("503"), Fault("malformed")]


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("fault", TRANSIENT, ids=lambda f: f.kind)
def test_transient_faults_are_retried(
    make: Any, fault: Fault, server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    server.inject(fault, fault)
    judge = make(server, toy_prompts, no_wait)
    [result] = judge.judge_many("toy", ITEM)
    assert result.output is not None
    assert server.calls == 3 and judge.stats.retries == 2  # exactly our retries: the backend adds none of its own


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize(("fault", "kind"), [("truncated", "truncated"), ("loop", "loop")])
def test_an_answer_cut_at_max_tokens_is_unscored_once_not_retried(
    make: Any, fault: str, kind: str, server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    server.inject(Fault(fault))
    judge = make(server, toy_prompts, no_wait)
    [result] = judge.judge_many("toy", ITEM)
    assert result.unscored is not None and result.unscored.kind == kind
    assert server.calls == 1 and judge.stats.retries == 0  # the same request would be cut the same way
    assert judge.stats.unscored_kinds == {kind: 1}
    fix = "--max-tokens toy=N" if kind == "truncated" else "a larger limit will not help"
    assert "max_tokens=64" in result.unscored.reason and fix in result.unscored.reason


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("fault", ["content_filter", "filtered"])
def test_an_item_the_content_filter_refuses_is_unscored_and_the_run_goes_on(
    make: Any, fault: str, server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    server.inject(Fault(fault))
    judge = make(server, toy_prompts, no_wait)
    results = judge.judge_many("toy", [ITEM[0], {"question": "q2", "passage": "p2"}])
    [refused] = [r for r in results if r.unscored is not None]  # whichever call came first met the filter
    [fine] = [r for r in results if r.output is not None]
    assert refused.unscored is not None and refused.unscored.kind == "content_filter" and fine is not refused
    assert "content filter refused this item" in refused.unscored.reason
    said = {"content_filter": "filtered by the deployment's content policy", "filtered": "finish_reason=content_filter"}
    assert said[fault] in refused.unscored.reason
    assert server.calls == 2 and judge.stats.retries == 0 and judge.stats.unscored_kinds == {"content_filter": 1}


@pytest.mark.parametrize("make", MAKERS)
def test_a_prompt_over_the_servers_context_is_unscored_and_the_run_goes_on(
    make: Any, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    long_item = {"question": "q", "passage": "word " * 400}  # ~500 fake tokens, over the 300 of the context
    with FakeOpenAIServer(context=300) as server:
        judge = make(server, toy_prompts, no_wait)
        short, long = judge.judge_many("toy", [ITEM[0], long_item])
    assert short.output is not None
    assert long.unscored is not None and long.unscored.kind == "too_long"
    assert "does not fit the model's context" in long.unscored.reason
    assert "--listwise" in long.unscored.reason and server.calls == 2  # not retried


def test_llama_cpps_context_error_is_worded_with_its_sizes() -> None:
    from assay.errors import ItemRejected
    from assay.judge.backends import status_error

    body = json.dumps(
        {
            "error": {
                "code": 400,
                "message": "request (3031 tokens) exceeds the available context size (2048 tokens)",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 3031,
                "n_ctx": 2048,
            }
        }
    )
    error = status_error(400, body, model="m", url="u")
    assert isinstance(error, ItemRejected) and error.kind == "too_long"
    assert "(3031 prompt tokens, 2048 in the context)" in str(error) and "exceeds the available" in str(error)
    assert not isinstance(
        status_error(400, '{"error": {"message": "bad temperature"}}', model="m", url="u"), ItemRejected
    )


def test_the_context_window_is_read_from_the_server(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    import asyncio

    with FakeOpenAIServer(context=2048) as server:
        judge = aiohttp_judge(server, toy_prompts, no_wait)
        assert asyncio.run(judge.acontext_window()) == 2048
    with FakeOpenAIServer() as server:  # a server that does not say (no /props, no max_model_len)
        judge = aiohttp_judge(server, toy_prompts, no_wait)
        assert asyncio.run(judge.acontext_window()) is None


def test_a_max_tokens_that_leaves_no_room_for_the_prompt_is_refused_before_any_call(
    toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    import asyncio

    with FakeOpenAIServer(context=80) as server:
        judge = aiohttp_judge(server, toy_prompts, no_wait)  # toy asks for max_tokens=64 of an 80-token context
        with pytest.raises(ConfigError, match="--max-tokens toy=20"):
            asyncio.run(judge.acheck_output_limits(["toy"]))
        roomy = aiohttp_judge(server, toy_prompts, no_wait, max_tokens=16)
        asyncio.run(roomy.acheck_output_limits(["toy"]))
    assert server.calls == 0


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize(
    ("status", "fix"),
    [("400", "check the model name"), ("401", "OPENAI_API_KEY"), ("403", "no access"), ("404", "api base")],
)
def test_client_errors_fail_fast_with_the_fix(
    make: Any, status: str, fix: str, server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    server.inject(Fault(status))
    with pytest.raises(BackendError, match=fix) as info:
        make(server, toy_prompts, no_wait).judge_many("toy", ITEM)
    assert info.value.status == int(status) and server.calls == 1


@pytest.mark.parametrize("make", MAKERS)
def test_unsupported_structured_output_names_the_switch(
    make: Any, server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    server.inject(Fault("400", message="response_format of type json_schema is not supported by this model"))
    with pytest.raises(BackendError, match="--no-structured"):
        make(server, toy_prompts, no_wait).judge_many("toy", ITEM)
    assert server.calls == 1


@pytest.mark.parametrize("make", MAKERS)
def test_retry_after_header_is_honoured(make: Any, server: FakeOpenAIServer, toy_prompts: Path, sleeps: Any) -> None:
    server.inject(Fault("429", retry_after=4))
    make(server, toy_prompts, RetryPolicy.immediate(sleep=sleeps)).judge_many("toy", ITEM)
    assert sleeps.waits == [4.0]


@pytest.mark.parametrize("make", [aiohttp_judge, openai_client_judge], ids=["aiohttp", "openai-client"])
def test_hang_times_out_and_is_retried(
    make: Any, server: FakeOpenAIServer, toy_prompts: Path, no_wait: RetryPolicy
) -> None:
    server.inject(Fault("hang"))
    judge = make(server, toy_prompts, no_wait, timeout=0.3)
    assert judge.judge_many("toy", ITEM)[0].output is not None and server.calls == 2


def test_connection_refused_is_transient(toy_prompts: Path, no_wait: RetryPolicy) -> None:
    with FakeOpenAIServer() as gone:
        url = gone.url
    judge = Judge(OpenAICompatBackend(url), model="openai/x", prompt_dir=toy_prompts, retry=no_wait)
    [result] = judge.judge_many("toy", ITEM)
    assert result.unscored is not None and result.unscored.kind == "backend_error"
    assert judge.stats.retries == no_wait.attempts - 1


def test_parse_retry_after() -> None:
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait (not None)
    in_two_minutes = email.utils.formatdate(time.time() + 120, usegmt=True)  # an HTTP date, whole seconds
    assert 118.0 <= (parse_retry_after(in_two_minutes) or 0.0) <= 120.0


def test_routing() -> None:
    assert isinstance(make_backend("hosted_vllm/llama", api_base="http://127.0.0.1:9/v1"), OpenAICompatBackend)
    assert isinstance(make_backend("openai/gpt-4o-mini", api_key="sk"), OpenAICompatBackend)
    assert isinstance(make_backend("ollama/llama3"), OpenAICompatBackend)
    assert isinstance(make_backend("anthropic/claude-3-5-haiku-latest"), LiteLLMBackend)
    with pytest.raises(ConfigError, match=r"OPENAI_API_KEY.*--api-key"):
        make_backend("openai/gpt-4o-mini")
    with pytest.raises(ConfigError, match="--api-base"):
        make_backend("hosted_vllm/llama")
    with pytest.raises(ConfigError, match="unknown judge"):
        make_backend("gpt4")


def test_offline_backend_by_name() -> None:
    backend = make_backend("offline")
    assert backend.name == "offline"


def test_prices_come_from_litellms_file_without_importing_it() -> None:
    code = (
        "import sys, json, importlib.util, pathlib\n"
        "from assay.judge.pricing import price_for\n"
        "p = price_for('openai/gpt-4o-mini')\n"
        "assert 'litellm' not in sys.modules\n"
        "spec = importlib.util.find_spec('litellm')\n"
        "path = pathlib.Path(spec.origin).parent / 'model_prices_and_context_window_backup.json'\n"
        "data = json.loads(path.read_text())\n"
        "e = data['gpt-4o-mini']\n"
        "assert (p.input_per_token, p.output_per_token) == (e['input_cost_per_token'], e['output_cost_per_token'])\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
    assert price_for("hosted_vllm/my-own-model") is None


def test_server_records_and_counts(server: FakeOpenAIServer) -> None:
    import urllib.request

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(f"{server.url}/chat/completions", data=body, method="POST")
    with urllib.request.urlopen(request) as response:
        data = json.loads(response.read())
    assert data["choices"][0]["finish_reason"] == "stop" and server.calls == 1
    assert server.requests[0]["messages"][0]["content"] == "hi"
