"""The callers pinned by hand: a function's name, loading ``python:module:Class.method``, every refusal's words,
the body template filled, what a Python function is handed (a copy of the metadata, the question, an awaitable's
result), a command's failures quoted (bytes that are not UTF-8, the tail of stderr, no stderr), the HTTP session
(the runner's timeout alone, no proxy from the environment, closed at the end) and an HTTP error's message."""

from __future__ import annotations

import asyncio
import json
import operator
import sys
from pathlib import Path
from typing import Any

import pytest
from targets_fixture import make_golden

from assay.errors import ConfigError
from assay.targets import TargetSettings, TargetSpec, run_target
from assay.targets.callers import (
    Ask,
    CmdCaller,
    HttpCaller,
    PythonCaller,
    _seconds,
    fill,
    function_name,
    load_function,
    make_caller,
    parse_json,
)
from assay.targets.journal import Journal
from assay.targets.outputs import TargetFailure
from assay.testing.fake_target import FakeTarget


async def _no_sleep(_: float) -> None:
    return None


ONCE = TargetSettings(concurrency=2, timeout=10.0, attempts=1, sleep=_no_sleep)


class Anonymous:
    """A callable that says neither its module nor its qualified name."""

    def __getattribute__(self, name: str) -> Any:
        if name in ("__module__", "__qualname__"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    def __call__(self, question: str) -> str:
        return question


def test_a_functions_name_is_its_module_and_qualified_name() -> None:
    assert function_name(json.dumps) == "python:json:dumps"
    assert function_name(json.JSONDecoder.decode) == "python:json.decoder:JSONDecoder.decode"
    assert function_name(operator.itemgetter(0)) == "python:operator:itemgetter"  # no qualname: its type's name
    assert function_name(Anonymous()) == "python:?:Anonymous"


def test_load_function_follows_dotted_attributes_and_names_each_refusal() -> None:
    assert load_function("python:json.decoder:JSONDecoder.decode") is json.JSONDecoder.decode
    with pytest.raises(ConfigError) as refused:
        load_function("python:no_such_module_xyz:f")
    assert str(refused.value).endswith("run from the folder that holds it or install it")
    with pytest.raises(ConfigError) as refused:
        load_function("python:json:__name__")
    assert str(refused.value) == "target 'python:json:__name__': __name__ is not a function"


def test_a_function_without_arguments_is_refused_by_name() -> None:
    def nothing() -> str:
        return "x"

    with pytest.raises(ConfigError) as refused:
        PythonCaller(nothing)
    assert str(refused.value) == f"{function_name(nothing)} takes no argument: it must take the question text"


def test_top_k_for_a_callable_without_a_signature_is_refused_naming_the_fix() -> None:
    getter = operator.itemgetter(0)  # inspect cannot read its signature
    with pytest.raises(ConfigError) as refused:
        make_caller(getter, top_k=3)
    assert str(refused.value) == (
        "--top-k: python:operator:itemgetter takes no top_k (or k) parameter, so it cannot be asked for more "
        "passages: add `top_k: int = 10` to it and retrieve that many, or drop --top-k"
    )


def test_top_k_of_one_is_allowed_and_reaches_the_function() -> None:
    def app(question: str, top_k: int = 10) -> dict[str, Any]:
        return {"contexts": [f"p{i}" for i in range(top_k)]}

    done = run_target(make_golden(1), app, settings=ONCE, top_k=1)
    assert done.lines[0]["retrieved"] == [{"text": "p0"}]


def test_a_function_target_is_cached_under_its_name_alone(tmp_path: Path) -> None:
    def app(question: str) -> str:
        return "ok"

    run_target(make_golden(1), app, label="v1", settings=ONCE, cache_dir=tmp_path)
    assert list(tmp_path.iterdir()) == [Journal(tmp_path, {"target": function_name(app)}, "v1").path]


def test_the_metadata_a_function_changes_is_a_copy_so_the_cache_still_finds_its_answer(tmp_path: Path) -> None:
    asked: list[str] = []

    def app(question: str, query_id: str, metadata: dict[str, Any]) -> str:
        asked.append(query_id)
        metadata["seen"] = True  # a function that writes into what it was given
        return "ok"

    run_target(make_golden(2), app, settings=ONCE, cache_dir=tmp_path)
    again = run_target(make_golden(2), app, settings=ONCE, cache_dir=tmp_path)
    assert asked == ["q1", "q2"] and again.stats.cached == 2


def test_an_async_function_gets_the_question_and_a_sync_one_may_return_an_awaitable() -> None:
    async def coroutine_app(question: str) -> str:
        return f"async: {question}"

    def awaitable_app(question: str) -> Any:
        return coroutine_app(question)

    for app in (coroutine_app, awaitable_app):
        done = run_target(make_golden(1), app, settings=ONCE)
        assert done.lines[0]["answer"] == "async: what is fact 1?"


def test_a_function_not_asked_for_passages_gets_no_top_k_whatever_the_ask_says() -> None:
    def app(question: str, **kwargs: Any) -> str:
        return json.dumps(sorted(kwargs))

    answered = asyncio.run(PythonCaller(app)(Ask("q1", "text", top_k=3)))
    assert answered == '["metadata", "query_id"]'


def test_ask_as_json_carries_the_messages_as_plain_dicts() -> None:
    messages = ({"role": "user", "content": "hi"},)
    assert Ask("q1", "hi", messages=messages).as_json() == {
        "question": "hi", "query_id": "q1", "metadata": {}, "messages": [{"role": "user", "content": "hi"}],
    }  # fmt: skip


def test_fill_places_values_and_replaces_inside_strings() -> None:
    ask = Ask("q7", "why?", {"lang": "en"})
    template = {"all": ["{question}", {"id": "{query_id}"}], "text": "Q {query_id}: {question}",
                "history": "{messages}", "k": "{top_k}", "meta": "{metadata}"}  # fmt: skip
    assert fill(template, ask) == {"all": ["why?", {"id": "q7"}], "text": "Q q7: why?", "history": [], "k": None,
                                   "meta": {"lang": "en"}}  # fmt: skip


def test_retry_after_seconds() -> None:
    assert _seconds("0.5") == 0.5
    assert _seconds("-3") == 0.0
    assert _seconds("soon") is None and _seconds(None) is None and _seconds("") is None


def test_parse_json_quotes_the_first_120_characters() -> None:
    text = "x" * 200
    with pytest.raises(TargetFailure) as failed:
        parse_json(text, "the reply")
    assert failed.value.kind == "invalid_output" and failed.value.transient
    assert failed.value.message == f"the reply is not JSON (Expecting value at column 1): {'x' * 120!r}"


CMD_APP = """
import json, sys
ask = json.loads(sys.stdin.read())
qid = ask["query_id"]
if qid == "q1":
    sys.stderr.buffer.write(b"E" * 400 + b"\\xff tail")
    sys.exit(3)
if qid == "q2":
    sys.exit(4)
if qid == "q3":
    sys.stdout.write("not json")
    sys.exit(0)
sys.stdout.buffer.write(b'{"answer": "caf\\xff"}')
"""


def test_a_commands_failures_are_quoted(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(CMD_APP, encoding="utf-8")
    done = run_target(make_golden(4), TargetSpec(f"cmd:{sys.executable} {script}"), settings=ONCE)
    errors = [line.get("error") for line in done.lines]
    # the last 300 characters of stderr, bytes that are not UTF-8 replaced
    tail = ("E" * 400 + "\ufffd tail")[-300:]
    assert errors[0] == {"kind": "exit_status", "message": f"exit status 3: {tail}"}
    assert errors[1] == {"kind": "exit_status", "message": "exit status 4: (no stderr)"}
    not_json = "the command's stdout is not JSON (Expecting value at column 1): 'not json'"
    assert errors[2] == {"kind": "invalid_output", "message": not_json}
    assert done.lines[3]["answer"] == "caf\ufffd"


def test_an_http_caller_outside_async_with_says_so() -> None:
    caller = HttpCaller(TargetSpec("http://127.0.0.1:9/"), {}, 1)
    with pytest.raises(RuntimeError, match=r"^HttpCaller used outside 'async with'$"):
        asyncio.run(caller(Ask("q1", "text")))


def test_the_http_session_leaves_timeouts_to_the_runner_and_is_closed_after() -> None:
    async def open_and_close() -> Any:
        caller = HttpCaller(TargetSpec("http://127.0.0.1:9/"), {}, 3)
        async with caller:
            assert caller._session.timeout.total is None  # the runner's --timeout bounds each call, however long
        return caller._session

    assert asyncio.run(open_and_close()).closed


def test_make_caller_pools_as_many_http_connections_as_calls_at_once() -> None:
    assert make_caller(TargetSpec("http://127.0.0.1:9/"))[2].connections == 8  # type: ignore[attr-defined]
    assert make_caller(TargetSpec("http://127.0.0.1:9/"), concurrency=3)[2].connections == 3  # type: ignore[attr-defined]


def test_an_http_target_ignores_a_proxy_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    with FakeTarget() as server:
        done = run_target(make_golden(1), TargetSpec(server.url), settings=ONCE)
    assert done.lines[0]["answer"] == "answer to what is fact 1?"


def test_a_secret_in_the_body_is_sent_expanded() -> None:
    body = '{"question": "{question}", "key": "${RAG_KEY}"}'
    with FakeTarget() as server:
        run_target(make_golden(1), TargetSpec(server.url, body=body), settings=ONCE, secrets={"RAG_KEY": "k-1"})
        assert server.requests[0]["body"] == {"question": "what is fact 1?", "key": "k-1"}


def test_http_errors_name_the_status_and_a_reply_that_is_not_json() -> None:
    def fault(body: dict[str, Any], attempt: int) -> str | None:
        return "300" if body["query_id"] == "q1" else "malformed"

    with FakeTarget(fault=fault) as server:
        done = run_target(make_golden(2), TargetSpec(server.url), settings=ONCE)
    assert done.lines[0]["error"] == {"kind": "http_status", "message": 'HTTP 300: {"error": "failed on /answer"}'}
    # the 32 characters of the cut reply: the parser wanted a value at column 33
    assert done.lines[1]["error"]["message"] == (
        'the response is not JSON (Expecting value at column 33): \'{"retrieved": ["c1"], "answer": \''
    )


def test_a_refused_connection_names_the_error() -> None:
    with FakeTarget() as server:
        url = server.url
    done = run_target(make_golden(1), TargetSpec(url), settings=ONCE)
    assert done.lines[0]["error"]["message"].startswith("ClientConnectorError: ")


def test_top_k_with_a_body_without_its_placeholder_is_refused_naming_the_fix() -> None:
    with pytest.raises(ConfigError) as refused:
        make_caller(TargetSpec("http://127.0.0.1:9/", body='{"q": "{question}"}'), top_k=5)
    assert str(refused.value) == (
        "--top-k 5: the --body has no {top_k}, so the system would not be asked for more passages: add e.g. "
        '"top_k": "{top_k}" to it, or drop --top-k'
    )


def test_cmd_caller_expands_a_secret_in_an_argument() -> None:
    caller = CmdCaller(TargetSpec(f"cmd:{sys.executable} app.py --key=${{K}}"), {"K": "v-9"})
    assert caller.argv == [sys.executable, "app.py", "--key=v-9"]
