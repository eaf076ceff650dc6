"""The fake batch API: files are checked as a provider checks them, batches progress with the fake's clock, expire,
cancel, and carry per-request faults into their output and error files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from assay.aio import run_sync
from assay.errors import BackendError
from assay.judge.batches.api import BatchAPI
from assay.testing import Fault
from assay.testing.fake_batches import FakeBatchServer


def _lines(n: int, model: str = "m") -> bytes:
    rows = []
    for i in range(n):
        body = {"model": model, "messages": [{"role": "user", "content": f"question {i}"}]}
        rows.append(json.dumps({"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions", "body": body}))
    return ("\n".join(rows) + "\n").encode()


@pytest.fixture
def server() -> Iterator[FakeBatchServer]:
    with FakeBatchServer(turnaround=10.0, clock=lambda: 0.0) as fake:
        yield fake


def _call(api: BatchAPI, method: str, *args: Any) -> Any:
    async def go() -> Any:
        try:
            return await getattr(api, method)(*args)
        finally:
            await api.aclose()

    return run_sync(go)


def _submit(server: FakeBatchServer, content: bytes, api_version: str | None = None) -> dict[str, Any]:
    base = server.url if api_version is None else server.url.replace("/v1", "/openai")
    api = BatchAPI(base, api_key="k", api_version=api_version)
    file_id = _call(api, "upload", content, "in.jsonl")
    batch: dict[str, Any] = _call(api, "create", file_id, {"assay_ref": "x"})
    return batch


def _lines_of(server: FakeBatchServer, file_id: str | None) -> list[dict[str, Any]]:
    if file_id is None:
        return []
    content = _call(BatchAPI(server.url), "content", file_id)
    return [json.loads(line) for line in content.splitlines()]


def test_a_batch_progresses_with_the_clock_and_completes(server: FakeBatchServer) -> None:
    batch = _submit(server, _lines(10))
    assert batch["status"] == "in_progress"
    assert batch["request_counts"] == {"total": 10, "completed": 0, "failed": 0}
    server.advance(4.0)  # 4 of 10 seconds: 4 of 10 requests
    now = _call(BatchAPI(server.url), "retrieve", batch["id"])
    assert (now["status"], now["request_counts"]["completed"], now["output_file_id"]) == ("in_progress", 4, None)
    server.advance(6.0)
    done = _call(BatchAPI(server.url), "retrieve", batch["id"])
    assert done["status"] == "completed"
    output = _lines_of(server, done["output_file_id"])
    assert [line["custom_id"] for line in output] == [f"r{i}" for i in range(10)]
    assert all(line["response"]["status_code"] == 200 for line in output)
    assert done["error_file_id"] is None
    assert server.paid_twice() == 0 and sum(server.answered.values()) == 10


def test_expiry_keeps_what_was_answered_and_lists_the_rest(server: FakeBatchServer) -> None:
    server.expires_after = 3.0
    batch = _submit(server, _lines(10))
    server.advance(5.0)
    ended = _call(BatchAPI(server.url), "retrieve", batch["id"])
    assert ended["status"] == "expired"
    assert [line["custom_id"] for line in _lines_of(server, ended["output_file_id"])] == ["r0", "r1", "r2"]
    errors = _lines_of(server, ended["error_file_id"])
    assert [line["custom_id"] for line in errors] == [f"r{i}" for i in range(3, 10)]
    assert {line["error"]["code"] for line in errors} == {"batch_expired"}


def test_cancel_stops_the_batch_where_it_is(server: FakeBatchServer) -> None:
    batch = _submit(server, _lines(10))
    server.advance(2.0)
    cancelled = _call(BatchAPI(server.url), "cancel", batch["id"])
    server.advance(100.0)  # nothing more is answered after the cancel
    again = _call(BatchAPI(server.url), "retrieve", batch["id"])
    assert cancelled["status"] == again["status"] == "cancelled"
    assert again["request_counts"]["completed"] == 2
    assert {line["error"]["code"] for line in _lines_of(server, again["error_file_id"])} == {"batch_cancelled"}


def test_faults_go_to_the_output_or_error_file(server: FakeBatchServer) -> None:
    server.batch_faults.extend([None, Fault("500"), Fault("invalid"), Fault("truncated")])
    batch = _submit(server, _lines(4))
    server.advance(10.0)
    done = _call(BatchAPI(server.url), "retrieve", batch["id"])
    assert done["request_counts"] == {"total": 4, "completed": 3, "failed": 1}
    output = {line["custom_id"]: line["response"]["body"] for line in _lines_of(server, done["output_file_id"])}
    assert output["r2"]["choices"][0]["message"]["content"] == "I think the grade is two."
    assert output["r3"]["choices"][0]["finish_reason"] == "length"
    [error] = _lines_of(server, done["error_file_id"])
    assert (error["custom_id"], error["response"]["status_code"]) == ("r1", 500)


def test_azure_paths_serve_the_same_api(server: FakeBatchServer) -> None:
    batch = _submit(server, _lines(2), api_version="2024-10-21")
    listed = _call(BatchAPI(server.url.replace("/v1", "/openai"), api_version="2024-10-21"), "list")
    assert [b["id"] for b in listed] == [batch["id"]]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (_lines(3) + _lines(1), "custom_id 'r0' is repeated"),
        (_lines(1) + _lines(1, model="other").replace(b'"r0"', b'"z"'), "one model per file"),
        (b"not json\n", "line 1"),
        (_lines(6), "the limit is 5"),
    ],
)
def test_an_input_file_is_checked_as_the_provider_checks_it(server: FakeBatchServer, content: bytes, said: str) -> None:
    server.max_requests = 5
    with pytest.raises(BackendError, match=said):
        _call(BatchAPI(server.url), "upload", content, "in.jsonl")
