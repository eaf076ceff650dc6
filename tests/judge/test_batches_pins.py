"""Pins for the batch modules (mutation habit, issue 40): the ledger file, batch file lines, the progress line,
setup, check/cancel and the runner's edges, each with hand-written inputs and expectations."""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.errors import BackendError, ConfigError, FormatError, TransientBackendError
from assay.judge import Price, make_judge
from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.batches.api import BatchAPI, path_is_collection
from assay.judge.batches.ledger import BatchRecord, Ledger
from assay.judge.batches.lines import Outcome, input_line, read_lines, rejected
from assay.judge.batches.manage import cancel_batches, check_batches, select
from assay.judge.batches.setup import batch_price, can_batch, use_batches
from assay.judge.batches.status import batches, clock, progress, update_record
from assay.testing.fake_batches import FakeBatchServer
from assay.types import Unscored


def _record(ref: str, **fields: object) -> BatchRecord:
    base: dict[str, object] = {"ref": ref, "api_base": "http://x/v1", "model": "openai/m", "stage": "relevance",
                               "prompt": "p", "input_file_id": f"file-{ref}", "keys": [f"k-{ref}"]}  # fmt: skip
    base.update(fields)
    return BatchRecord.model_validate(base)


def test_a_ledger_put_replaces_by_ref_and_keeps_time_order(tmp_path: Path) -> None:
    ledger = Ledger.beside(tmp_path)
    assert ledger.path == tmp_path / "batches.json" and ledger.load() == []
    ledger.put(_record("b", submitted_at="2026-01-02T00:00:00+00:00"))
    ledger.put(_record("a", submitted_at="2026-01-03T00:00:00+00:00"))
    ledger.put(_record("c", submitted_at="2026-01-02T00:00:00+00:00"))
    ledger.put(_record("b", submitted_at="2026-01-02T00:00:00+00:00", status="completed"))
    assert [(r.ref, r.status) for r in ledger.load()] == [("b", "completed"), ("c", "submitting"), ("a", "submitting")]


def test_a_new_record_starts_submitting_stamped_to_the_second_in_utc() -> None:
    record = _record("r")
    assert (record.id, record.status, record.done, record.failed, record.collected) == (None, "submitting", 0, 0, False)
    stamp = datetime.datetime.fromisoformat(record.submitted_at)
    assert stamp.utcoffset() == datetime.timedelta(0) and stamp.microsecond == 0
    assert len(record.submitted_at) == len("2026-01-02T03:04:05+00:00")


def test_a_record_has_ended_only_in_the_four_final_statuses() -> None:
    ended = {"completed", "failed", "expired", "cancelled"}
    for status in [*ended, "submitting", "validating", "in_progress", "finalizing", "cancelling"]:
        assert _record("r", status=status).ended == (status in ended), status


def test_the_ledger_file_is_indented_json_with_its_format_and_version(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "sub" / "ledger.json")
    ledger.save([_record("a", submitted_at="2026-01-02T00:00:00+00:00")])
    text = ledger.path.read_text()
    assert text.startswith('{\n "format": "assay.batches",\n "version": 1,\n "batches": [\n  {\n   "ref": "a",')
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert json.loads(text)["batches"][0]["keys"] == ["k-a"]


@pytest.mark.parametrize(
    ("head", "said"),
    [
        ('"format": "other", "version": 1', "ledger.json:1: format 'other' version 1 (expected one this assay reads"),
        ('"format": "assay.batches", "version": 2', "ledger.json:1: format 'assay.batches' version 2 (expected one"),
        ('"format": "assay.batches", "version": "x"', "ledger.json:1: not an assay batch ledger (Input should be"),
    ],
)
def test_a_ledger_of_another_format_or_a_later_version_is_refused(tmp_path: Path, head: str, said: str) -> None:
    path = tmp_path / "ledger.json"
    path.write_text("{" + head + ', "batches": []}')
    with pytest.raises(FormatError) as caught:
        Ledger(path).load()
    assert str(caught.value).startswith(f"{path.parent}/{said}"), str(caught.value)
    assert caught.value.line == 1


def test_a_broken_ledger_says_how_to_start_over(tmp_path: Path) -> None:
    path = tmp_path / "batches.json"
    path.write_text('{"batches": [{"ref": "a"}]}')
    with pytest.raises(FormatError) as caught:
        Ledger(path).load()
    assert str(caught.value) == (
        f"{path}:1: not an assay batch ledger (Field required) (expected a ledger written by assay; to start over, "
        "move it away (a rerun submits what is not cached))"
    )


def test_open_batches_are_the_uncollected_ones_of_one_provider_and_model(tmp_path: Path) -> None:
    ledger = Ledger.beside(tmp_path)
    ledger.save([
        _record("a", submitted_at="1"),
        _record("b", submitted_at="2", collected=True),
        _record("c", submitted_at="3", api_base="http://y/v1"),
        _record("d", submitted_at="4", model="openai/other"),
        _record("e", submitted_at="5", status="completed"),
    ])  # fmt: skip
    assert [r.ref for r in ledger.open_batches("http://x/v1", "openai/m")] == ["a", "e"]
    assert [r.ref for r in ledger.open_batches("http://y/v1", "openai/m")] == ["c"]


# -- lines.py ---------------------------------------------------------------------------------------------------------


def test_an_input_line_wraps_the_direct_body_unchanged() -> None:
    line = input_line("k1", "/v1/chat/completions", b'{"model":"m","messages":[]}')
    assert line == (
        b'{"custom_id": "k1", "method": "POST", "url": "/v1/chat/completions", "body": {"model":"m","messages":[]}}\n'
    )


def _answer(content: str, finish: str = "stop") -> dict[str, object]:
    message = {"role": "assistant", "content": content}
    usage = {"prompt_tokens": 7, "completion_tokens": 3}
    return {"choices": [{"message": message, "finish_reason": finish}], "usage": usage, "model": "m-1"}


def _outcomes(*rows: object) -> list[Outcome]:
    content = b"\n".join(row if isinstance(row, bytes) else json.dumps(row).encode() for row in rows)
    return list(read_lines(content, "batch b file f"))


def test_read_lines_skips_what_is_not_a_request_line_and_reads_the_rest() -> None:
    body = _answer('{"grade": 2}')
    outcomes = _outcomes(
        b"not json", [1, 2], {"no_id": 1}, {"custom_id": 7, "response": {"status_code": 200, "body": body}}
    )
    assert [(o.custom_id, o.unscored) for o in outcomes] == [("7", None)]
    [response] = [o.response for o in outcomes]
    assert response is not None and (response.content, response.prompt_tokens, response.completion_tokens) == (
        '{"grade": 2}',
        7,
        3,
    )
    assert (response.finish_reason, response.model) == ("stop", "m-1")


def test_an_error_line_says_its_code_and_message_and_keeps_the_ended_kinds() -> None:
    rows = [
        {"custom_id": "a", "error": {"code": "batch_expired", "message": "This request could not be executed"}},
        {"custom_id": "b", "error": {"code": "batch_cancelled", "message": "cancelled"}},
        {"custom_id": "c", "error": {"code": "server_error", "message": "boom"}},
        {"custom_id": "d", "error": {"message": "no code"}, "response": None},
        {"custom_id": "e", "error": {"code": "x"}},
    ]
    said = [(o.custom_id, o.unscored.kind, o.unscored.reason, o.unscored.raw) for o in _outcomes(*rows) if o.unscored]
    assert said == [
        ("a", "batch_expired", "the batch request failed (batch_expired): This request could not be executed", None),
        ("b", "batch_cancelled", "the batch request failed (batch_cancelled): cancelled", None),
        ("c", "backend_error", "the batch request failed (server_error): boom", None),
        ("d", "backend_error", "the batch request failed (): no code", None),
        ("e", "backend_error", "the batch request failed (x):", None),
    ]


def test_a_line_with_an_error_and_a_response_is_read_by_its_response() -> None:
    row = {"custom_id": "a", "error": {"code": "x"}, "response": {"status_code": 200, "body": _answer("ok")}}
    [outcome] = _outcomes(row)
    assert outcome.unscored is None and outcome.response is not None and outcome.response.content == "ok"


def test_a_line_without_a_response_or_with_an_error_status_is_unscored() -> None:
    too_long = {"error": {"message": "This model's maximum context length is 8192 tokens", "code": "x"}}
    rows = [
        {"custom_id": "a", "response": "nope"},
        {"custom_id": "b", "response": {"status_code": 500, "body": {"error": "down"}}},
        {"custom_id": "c", "response": {"status_code": 400, "body": too_long}},
        {"custom_id": "d", "response": {"body": _answer("ok")}},
        {"custom_id": "e", "response": {"status_code": 200, "body": {"choices": []}}},
    ]
    outcomes = _outcomes(*rows)
    assert all(o.response is None for o in outcomes)
    kinds = [(o.custom_id, o.unscored.kind) for o in outcomes if o.unscored]
    assert kinds == [("a", "backend_error"), ("b", "backend_error"), ("c", "too_long"), ("d", "backend_error"),
                     ("e", "backend_error")]  # fmt: skip
    reasons = [o.unscored.reason for o in outcomes if o.unscored]
    assert reasons[0] == "no response in batch b file f"
    assert reasons[1].startswith('HTTP 500 from batch b file f: {"error": "down"}')
    assert reasons[3].startswith("HTTP 0 from batch b file f")
    assert reasons[4].startswith("malformed completion from batch b file f")
    [refused] = _outcomes({"custom_id": "f", "response": {"status_code": 422, "body": {"error": "bad temperature"}}})
    assert refused.unscored is not None and refused.unscored.reason == (
        'HTTP 422 from batch b file f: {"error": "bad temperature"} -- the server rejected the request for model '
        "'batch'; check the model name and decoding parameters"
    )


def _request(max_tokens: int | None = 50) -> ChatRequest:
    params = {} if max_tokens is None else {"max_tokens": max_tokens}
    return ChatRequest(model="m", messages=[], prompt_name="relevance", prompt_version="1", params=params)


def test_rejected_names_a_cut_or_withheld_answer_and_passes_the_rest() -> None:
    assert rejected(_request(), ChatResponse(content='{"grade": 1}', finish_reason="stop")) is None
    assert rejected(_request(), ChatResponse(content='{"grade": 1}')) is None
    cut = rejected(_request(), ChatResponse(content='{"grade": ', finish_reason="length"))
    assert cut is not None and cut.kind == "truncated" and cut.raw == '{"grade": '
    assert cut.reason.startswith("the answer was cut at max_tokens=50 (finish_reason=length)")
    withheld = rejected(_request(), ChatResponse(content="x" * 100, finish_reason="content_filter"))
    assert withheld is not None and withheld.kind == "content_filter" and withheld.raw is None
    assert f"the server said: finish_reason=content_filter, answer {'x' * 80!r} -- " in withheld.reason


# -- status.py --------------------------------------------------------------------------------------------------------


def test_update_record_copies_status_and_counts_and_says_whether_they_changed() -> None:
    record = _record("r")
    batch = {"status": "in_progress", "request_counts": {"total": 9, "completed": 2, "failed": 1}}
    assert update_record(record, batch) is True
    assert (record.status, record.done, record.failed) == ("in_progress", 2, 1)
    assert update_record(record, batch) is False
    assert update_record(record, {"status": "in_progress", "request_counts": {"completed": 2, "failed": 4}}) is True
    assert record.failed == 4
    assert update_record(record, {"status": "in_progress", "request_counts": {"completed": 5, "failed": 4}}) is True
    assert record.done == 5
    assert update_record(record, {"status": "completed", "request_counts": None}) is True
    assert (record.status, record.done, record.failed) == ("completed", 0, 0)
    assert update_record(record, {"status": "completed", "request_counts": {"completed": None}}) is False


def test_batches_counts_in_words() -> None:
    assert [batches(n) for n in (0, 1, 2, 1234)] == ["0 batches", "1 batch", "2 batches", "1,234 batches"]


def test_progress_sums_the_records_and_counts_their_statuses_in_order() -> None:
    records = [
        _record("a", keys=["1", "2", "3"], status="in_progress", done=2, failed=1),
        _record("b", keys=["4"], status="completed", done=1),
        _record("c", keys=[str(i) for i in range(1500)], status="in_progress", done=1200),
    ]
    assert progress(records) == "batch: 1,203/1,504 done, 1 failed, 3 batches (1 completed, 2 in_progress)"
    assert progress(records[1:2]) == "batch: 1/1 done, 0 failed, 1 batch (1 completed)"
    failing = [_record("d", keys=[str(i) for i in range(2000)], failed=1999)]
    assert progress(failing) == "batch: 0/2,000 done, 1,999 failed, 1 batch (1 submitting)"


def test_clock_is_hours_minutes_seconds() -> None:
    assert [clock(s) for s in (0, 59.9, 61, 3725.5, 36000)] == ["0:00:00", "0:00:59", "0:01:01", "1:02:05", "10:00:00"]


# -- setup.py ---------------------------------------------------------------------------------------------------------


def test_only_a_judge_of_an_openai_compatible_server_can_batch(tmp_path: Path) -> None:
    assert can_batch(make_judge("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1", cache_dir=tmp_path))
    assert not can_batch(make_judge("offline", cache_dir=tmp_path))


def test_the_batch_price_is_the_maps_batch_price_unless_the_price_was_given(tmp_path: Path) -> None:
    judge = make_judge("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1", cache_dir=tmp_path)
    assert judge.price == Price(0.15e-6, 0.6e-6)  # litellm's map, direct
    assert batch_price(judge) == Price(0.075e-6, 0.3e-6)  # its batch entry: half
    judge.price = Price(1e-6, 2e-6)  # --price: no saving assumed
    assert batch_price(judge) == Price(1e-6, 2e-6)
    judge.price = None
    assert batch_price(judge) is None
    unknown = make_judge("openai/no-such-model", api_base="http://127.0.0.1:9/v1", price=Price(3e-6, 4e-6))
    assert batch_price(unknown) == Price(3e-6, 4e-6)


def test_use_batches_hands_its_settings_to_the_runner(tmp_path: Path) -> None:
    judge = make_judge("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/openai/", cache_dir=tmp_path, api_key="k")
    said: list[str] = []
    runner = use_batches(judge, retry="direct", report=said.append, poll=5.0, api_version="2024-10-21",
                         max_requests=7, max_bytes=1000)  # fmt: skip
    assert judge.batching is runner
    assert (runner.retry, runner.poll, runner.max_requests, runner.max_bytes) == ("direct", 5.0, 7, 1000)
    assert runner.report is not None and runner.ledger.path == tmp_path / "batches.json"
    assert (runner.price, runner.direct_price) == (Price(0.075e-6, 0.3e-6), Price(0.15e-6, 0.6e-6))
    assert (runner.api.api_base, runner.api.api_version) == ("http://127.0.0.1:9/openai", "2024-10-21")
    assert runner.api._headers == {"api-key": "k"}
    request = judge.prepare("relevance", {"question": "q?", "passage": "p"}).request
    assert runner.body(request) == judge.backend.request_body(request)  # type: ignore[attr-defined]
    runner.report("x")
    assert said == ["x"]
    given = use_batches(judge, price=Price(1e-6, 1e-6))
    assert given.price == Price(1e-6, 1e-6) and given.retry == "batch" and given.poll == 60.0
    assert (given.max_requests, given.max_bytes, given.report, given.api.api_version) == (
        50_000,
        190 * 1024 * 1024,
        None,
        None,
    )


# -- manage.py --------------------------------------------------------------------------------------------------------


def test_select_names_open_batches_by_id_or_ref_once_each(tmp_path: Path) -> None:
    ledger = Ledger.beside(tmp_path)
    ledger.save([
        _record("a", submitted_at="1", id="batch_a"),
        _record("b", submitted_at="2", id="batch_b", collected=True),
        _record("c", submitted_at="3"),
    ])  # fmt: skip
    assert [r.ref for r in select(ledger, [])] == ["a", "c"]
    assert [r.ref for r in select(ledger, ["c", "batch_a", "a"])] == ["c", "a"]
    with pytest.raises(ConfigError) as caught:
        select(ledger, ["batch_b", "a", "zzz"])
    assert str(caught.value) == (
        f"{ledger.path}: no open batch batch_b, zzz; `assay batches list` shows the batches and their ids"
    )


class _Provider(BatchAPI):
    """A batch API answering from a dict of batches, recording what it was asked and whether it was closed."""

    def __init__(self, api_base: str, batches: dict[str, dict[str, Any]], asked: list[str]) -> None:
        super().__init__(api_base)
        self.batches, self.asked, self.closed = batches, asked, False

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        self.asked.append(f"{self.api_base} retrieve {batch_id}")
        return self.batches[batch_id]

    async def cancel(self, batch_id: str) -> dict[str, Any]:
        self.asked.append(f"{self.api_base} cancel {batch_id}")
        return {**self.batches[batch_id], "status": "cancelling"}

    async def aclose(self) -> None:
        self.closed = True


def _providers(batches: dict[str, dict[str, Any]]) -> tuple[Callable[[str], BatchAPI], list[_Provider], list[str]]:
    made: list[_Provider] = []
    asked: list[str] = []

    def api_for(api_base: str) -> BatchAPI:
        made.append(_Provider(api_base, batches, asked))
        return made[-1]

    return api_for, made, asked


def _open_ledger(tmp_path: Path) -> tuple[Ledger, list[BatchRecord]]:
    ledger = Ledger.beside(tmp_path)
    ledger.save([
        _record("a", submitted_at="1", id="batch_a", status="in_progress"),
        _record("b", submitted_at="2"),
        _record("c", submitted_at="3", id="batch_c", status="completed", done=1),
        _record("d", submitted_at="4", id="batch_d", status="in_progress", api_base="http://y/v1"),
    ])  # fmt: skip
    return ledger, ledger.load()


BATCHES = {
    "batch_a": {"status": "in_progress", "request_counts": {"completed": 3, "failed": 1}},
    "batch_c": {"status": "completed", "request_counts": {"completed": 1}},
    "batch_d": {"status": "finalizing", "request_counts": {"completed": 2}},
}


def test_check_records_each_created_batchs_status_and_closes_every_api(tmp_path: Path) -> None:
    ledger, records = _open_ledger(tmp_path)
    api_for, made, asked = _providers(BATCHES)
    asyncio.run(check_batches(ledger, records, api_for))
    assert asked == ["http://x/v1 retrieve batch_a", "http://x/v1 retrieve batch_c", "http://y/v1 retrieve batch_d"]
    assert [api.api_base for api in made] == ["http://x/v1", "http://y/v1"]  # one API a provider
    assert all(api.closed for api in made)
    assert [(r.ref, r.status, r.done, r.failed) for r in ledger.load()] == [
        ("a", "in_progress", 3, 1),
        ("b", "submitting", 0, 0),
        ("c", "completed", 1, 0),
        ("d", "finalizing", 2, 0),
    ]


def test_cancel_cancels_the_running_batches_and_only_checks_the_ended(tmp_path: Path) -> None:
    ledger, records = _open_ledger(tmp_path)
    api_for, made, asked = _providers(BATCHES)
    asyncio.run(cancel_batches(ledger, records, api_for))
    assert asked == ["http://x/v1 cancel batch_a", "http://x/v1 retrieve batch_c", "http://y/v1 cancel batch_d"]
    assert [r.status for r in ledger.load()] == ["cancelling", "submitting", "completed", "cancelling"]
    assert [api.api_base for api in made] == ["http://x/v1", "http://y/v1"] and all(api.closed for api in made)


def test_the_apis_are_closed_when_a_check_fails(tmp_path: Path) -> None:
    ledger, records = _open_ledger(tmp_path)
    api_for, made, _ = _providers({})
    with pytest.raises(KeyError):
        asyncio.run(check_batches(ledger, records, api_for))
    assert len(made) == 1 and made[0].closed


# -- api.py -----------------------------------------------------------------------------------------------------------


class _Recording(FakeBatchServer):
    """The fake batch API, recording each request (method, path, headers, body); ``replies`` answers a path with
    canned bytes instead, ``stall`` makes every request wait that long."""

    def __init__(self, **options: Any) -> None:
        super().__init__(clock=lambda: 0.0, **options)
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        self.replies: dict[str, bytes] = {}
        self.stall = 0.0

    async def _route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> bytes:
        self.seen.append((method, path, headers, raw))
        if self.stall:
            await asyncio.sleep(self.stall)
        if path in self.replies:
            return self.replies[path]
        return await super()._route(method, path, headers, raw)


def _reply(status: int, body: bytes, **headers: str) -> bytes:
    head = f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n"
    return (head + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode() + body


@pytest.fixture
def recording() -> Iterator[_Recording]:
    with _Recording() as fake:
        yield fake


def _run(api: BatchAPI, call: Callable[[BatchAPI], Awaitable[Any]]) -> Any:
    async def go() -> Any:
        try:
            return await call(api)
        finally:
            await api.aclose()

    return asyncio.run(go())


LINE = (
    b'{"custom_id": "k1", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": '
    b'[{"role": "user", "content": "q"}]}}\n'
)


def test_the_openai_paths_bodies_and_bearer_key(recording: _Recording) -> None:
    api = BatchAPI(recording.url + "/", api_key="sk-1")
    assert (api.api_base, api.line_url, api.timeout) == (recording.url, "/v1/chat/completions", 600.0)

    async def calls(api: BatchAPI) -> tuple[Any, ...]:
        file_id = await api.upload(LINE, "assay-r.jsonl")
        batch = await api.create(file_id, {"assay_ref": "r"})
        return file_id, batch, await api.retrieve(batch["id"]), await api.list(), await api.cancel(batch["id"])

    file_id, batch, again, listed, _ = _run(api, calls)
    assert batch["id"] == again["id"] == listed[0]["id"] and file_id == batch["input_file_id"]
    assert [(m, p) for m, p, _, _ in recording.seen] == [
        ("POST", "/v1/files"),
        ("POST", "/v1/batches"),
        ("GET", f"/v1/batches/{batch['id']}"),
        ("GET", "/v1/batches"),
        ("POST", f"/v1/batches/{batch['id']}/cancel"),
    ]
    assert all(h["authorization"] == "Bearer sk-1" and "api-key" not in h for _, _, h, _ in recording.seen)
    upload = recording.seen[0]
    assert upload[2]["content-type"].startswith("multipart/form-data")
    assert b'Content-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n' in upload[3]
    file_part = (
        b'Content-Type: application/jsonl\r\nContent-Disposition: form-data; name="file"; filename="assay-r.jsonl"'
    )
    assert file_part + b"\r\n\r\n" + LINE in upload[3]
    assert json.loads(recording.seen[1][3]) == {
        "input_file_id": file_id,
        "endpoint": "/v1/chat/completions",
        "completion_window": "24h",
        "metadata": {"assay_ref": "r"},
    }
    assert _run(BatchAPI(recording.url), lambda api: api.content(file_id)) == LINE
    assert recording.seen[-1][:2] == ("GET", f"/v1/files/{file_id}/content")
    assert "authorization" not in recording.seen[-1][2]  # no key given: none sent


def test_azure_openai_paths_carry_the_api_version_and_the_key_header(recording: _Recording) -> None:
    base = recording.url.replace("/v1", "/openai")
    api = BatchAPI(base, api_key="az-1", api_version="2024-10-21")
    assert api.line_url == "/chat/completions"
    _run(api, lambda api: api.list())
    [(method, path, headers, _)] = recording.seen
    assert (method, path) == ("GET", "/openai/batches?api-version=2024-10-21")
    assert headers["api-key"] == "az-1" and "authorization" not in headers


def test_a_missing_collection_means_no_batch_api_and_other_failures_say_their_status(recording: _Recording) -> None:
    missing = _reply(404, b'{"detail": "Not Found"}')
    recording.replies.update({"/v1/batches": missing, "/v1/files": _reply(405, b""), "/v1/batches/b1": missing})
    recording.replies["/v1/batches/b2"] = _reply(429, b'{"error": "slow down"}', **{"Retry-After": "7"})
    recording.replies["/v1/batches/b3"] = _reply(401, b'{"error": "who?"}')
    api = BatchAPI(recording.url)
    for call in (lambda api: api.list(), lambda api: api.upload(LINE, "x.jsonl")):
        with pytest.raises(BackendError) as caught:
            _run(api, call)
        assert type(caught.value) is BackendError and caught.value.status in (404, 405)
        assert str(caught.value).startswith(f"HTTP {caught.value.status} from {recording.url}/")
        assert f": the server at {recording.url} has no batch API (/files and /batches) -- drop --batch" in str(
            caught.value
        )
    with pytest.raises(BackendError) as caught:
        _run(api, lambda api: api.retrieve("b1"))
    assert "no batch API" not in str(caught.value) and str(caught.value).startswith(
        f'HTTP 404 from {recording.url}/batches/b1: {{"detail": "Not Found"}} -- check the model name \'batch\''
    )
    with pytest.raises(TransientBackendError) as slow:
        _run(api, lambda api: api.retrieve("b2"))
    assert slow.value.retry_after == 7.0 and slow.value.status == 429
    with pytest.raises(BackendError, match=r"HTTP 401 from .*/batches/b3: .* -- check the API key"):
        _run(api, lambda api: api.retrieve("b3"))


def test_an_answer_that_is_not_a_json_object_is_named(recording: _Recording) -> None:
    recording.replies["/v1/batches/b1"] = _reply(200, b"<html>")
    recording.replies["/v1/batches/b2"] = _reply(200, b"[1, 2]")
    api = BatchAPI(recording.url)
    with pytest.raises(BackendError) as caught:
        _run(api, lambda api: api.retrieve("b1"))
    assert str(caught.value) == f"the batch API at {recording.url}/batches/b1 answered something that is not JSON"
    with pytest.raises(BackendError) as caught:
        _run(api, lambda api: api.retrieve("b2"))
    assert str(caught.value) == f"the batch API at {recording.url}/batches/b2 answered list, not an object"


def test_list_keeps_the_batch_objects_of_the_first_page(recording: _Recording) -> None:
    api = BatchAPI(recording.url)
    recording.replies["/v1/batches"] = _reply(200, b'{"data": [{"id": "b1"}, 3, null, {"id": "b2"}]}')
    assert _run(api, lambda api: api.list()) == [{"id": "b1"}, {"id": "b2"}]
    recording.replies["/v1/batches"] = _reply(200, b'{"data": {"id": "b1"}}')
    assert _run(api, lambda api: api.list()) == []
    recording.replies["/v1/batches"] = _reply(200, b"{}")
    assert _run(api, lambda api: api.list()) == []


def test_a_connection_that_fails_or_stalls_is_transient(recording: _Recording) -> None:
    recording.stall = 2.0
    api = BatchAPI(recording.url, timeout=0.2)
    with pytest.raises(TransientBackendError) as caught:
        _run(api, lambda api: api.retrieve("b1"))
    assert str(caught.value) == f"no answer from {recording.url}/batches/b1 within 0.2 s"
    closed = BatchAPI("http://127.0.0.1:9/v1")
    with pytest.raises(TransientBackendError, match=r"^connection to http://127\.0\.0\.1:9/v1/batches failed: "):
        _run(closed, lambda api: api.list())


def test_a_session_is_made_per_event_loop_and_closed_by_aclose(recording: _Recording) -> None:
    api = BatchAPI(recording.url)

    async def twice() -> tuple[Any, Any]:
        first = api._get_session()
        assert api._get_session() is first  # reused within a loop
        await api.list()
        return first, api._session

    first, same = asyncio.run(twice())
    assert same is first and not first.closed
    second, _ = asyncio.run(twice())  # another loop: a new session
    assert second is not first
    asyncio.run(api.aclose())
    assert second.closed and api._session is None
    asyncio.run(api.aclose())  # closing twice is harmless
    asyncio.run(first.close())


def test_path_is_collection_knows_the_two_collections() -> None:
    yes = ["http://x/v1/files", "http://x/v1/batches/", "http://x/openai/batches?api-version=1"]
    no = ["http://x/v1/batches/b1", "http://x/v1/files/f1/content", "http://x/v1/batches/b1/cancel", "http://x/v1"]
    assert [path_is_collection(u) for u in yes + no] == [True] * 3 + [False] * 4


# -- runner.py --------------------------------------------------------------------------------------------------------

ITEMS = [{"question": f"question {i}?", "passage": f"passage number {i}"} for i in range(4)]


class _Run:
    """A judge batching against ``server``, whose sleeps move the fake's clock and are recorded, as are the
    progress lines."""

    def __init__(self, server: FakeBatchServer, cache: Path, **options: Any) -> None:
        self.said: list[str] = []
        self.slept: list[float] = []
        self.judge = make_judge("openai/gpt-4o-mini", api_base=server.url, cache_dir=cache)
        self.runner = use_batches(self.judge, report=self.said.append, **options)
        self.runner.sleep, self.runner.clock = self._sleep, server.now
        self.server = server

    async def _sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.server.advance(seconds)

    def judge_many(self, items: list[dict[str, str]]) -> list[Any]:
        return self.judge.judge_many("relevance", items, stage="relevance")


@pytest.fixture
def batch_server() -> Iterator[FakeBatchServer]:
    with FakeBatchServer(clock=lambda: 0.0) as fake:
        yield fake


def test_an_unknown_retry_policy_is_refused(batch_server: FakeBatchServer, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _Run(batch_server, tmp_path, retry="twice")
    assert str(caught.value) == "--batch-retry 'twice': choose one of batch, direct, none"


def test_the_checks_back_off_to_the_poll_cap_and_report_each_change(
    batch_server: FakeBatchServer, tmp_path: Path
) -> None:
    batch_server.turnaround = 16.0
    run = _Run(batch_server, tmp_path, poll=5.0)
    assert all(r.ok for r in run.judge_many(ITEMS))
    assert run.slept == [1.0, 2.0, 4.0, 5.0, 5.0]  # at 1, 3, 7, 12 and 17 seconds: ended after 16
    assert run.said == [
        "batch: submitted 4 requests of stage relevance in 1 batch",
        "batch: 0/4 done, 0 failed, 1 batch (1 in_progress), elapsed 0:00:00",
        "batch: 1/4 done, 0 failed, 1 batch (1 in_progress), elapsed 0:00:07",  # unchanged at 1 and 3 s: not said
        "batch: 3/4 done, 0 failed, 1 batch (1 in_progress), elapsed 0:00:12",
        "batch: 4/4 done, 0 failed, 1 batch (1 completed), elapsed 0:00:17",
    ]
    totals = run.runner.totals
    assert (totals.submitted, totals.resumed, totals.answered, totals.batches, totals.rounds) == (4, 0, 4, 1, 1)


def test_a_repeated_item_is_one_request_and_costs_nothing_the_second_time(
    batch_server: FakeBatchServer, tmp_path: Path
) -> None:
    run = _Run(batch_server, tmp_path)
    first, again = run.judge_many([ITEMS[0], ITEMS[0]])
    assert (first.cached, again.cached, again.output) == (False, True, first.output)
    assert first.prompt_tokens > 0 and first.completion_tokens > 0 and (first.cost_usd or 0) > 0
    assert (again.prompt_tokens, again.completion_tokens, again.cost_usd) == (0, 0, 0.0)
    assert run.runner.totals.submitted == 1 and run.judge.stats.deduped == 1


def test_costs_are_counted_only_with_a_price(batch_server: FakeBatchServer, tmp_path: Path) -> None:
    judge = make_judge("openai/no-such-model", api_base=batch_server.url, cache_dir=tmp_path)
    runner = use_batches(judge)
    runner.sleep = _advance(batch_server)
    assert all(r.ok and r.cost_usd is None for r in judge.judge_many("relevance", ITEMS, stage="relevance"))
    assert (runner.totals.answered, runner.totals.cost_usd, runner.totals.direct_cost_usd) == (4, None, None)


def _advance(server: FakeBatchServer) -> Callable[[float], Awaitable[None]]:
    async def sleep(seconds: float) -> None:
        server.advance(seconds)

    return sleep


def test_files_are_cut_at_the_byte_limit(batch_server: FakeBatchServer, tmp_path: Path) -> None:
    probe = _Run(batch_server, tmp_path / "probe")
    sizes = []
    for item in ITEMS:
        request = probe.judge.prepare("relevance", item)
        sizes.append(len(input_line(request.key, "/v1/chat/completions", probe.runner.body(request.request))))
    run = _Run(batch_server, tmp_path, max_bytes=sizes[0] + sizes[1])  # two lines fit exactly, not three
    assert all(r.ok for r in run.judge_many(ITEMS))
    assert [len(b.results) for b in batch_server.batches.values()] == [2, 2]
    assert run.said[0] == "batch: submitted 4 requests of stage relevance in 2 batches"
    assert run.runner.totals.batches == 2


def test_a_failed_check_is_said_and_tried_again(
    batch_server: FakeBatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch_server.turnaround = 2.0
    run = _Run(batch_server, tmp_path)
    retrieve, failures = BatchAPI.retrieve, [TransientBackendError("HTTP 503: busy")]

    async def flaky(self: BatchAPI, batch_id: str) -> dict[str, Any]:
        if failures:
            raise failures.pop()
        return await retrieve(self, batch_id)

    monkeypatch.setattr(BatchAPI, "retrieve", flaky)
    assert all(r.ok for r in run.judge_many(ITEMS))
    [batch_id] = batch_server.batches
    assert run.said[1] == f"batch: checking {batch_id} failed (HTTP 503: busy); trying again"
    assert run.said[2] == "batch: 0/4 done, 0 failed, 1 batch (1 in_progress), elapsed 0:00:00"
    assert Ledger.beside(tmp_path).load()[0].status == "completed"


class _Failing(FakeBatchServer):
    """A provider whose batches fail whole (as a batch of an invalid file does): no output, the reasons in errors."""

    def _object(self, batch: Any) -> dict[str, Any]:
        errors = {"data": [{"code": "invalid", "message": "line 1 is bad"}, {"message": "line 2 too"}]}
        return {**super()._object(batch), "status": "failed", "output_file_id": None, "error_file_id": None,
                "errors": errors}  # fmt: skip


def test_the_requests_of_a_failed_batch_are_unscored_with_its_reasons(tmp_path: Path) -> None:
    with _Failing(clock=lambda: 0.0) as server:
        run = _Run(server, tmp_path, retry="none")
        results = run.judge_many(ITEMS)
    assert [r.unscored.kind for r in results] == ["batch_failed"] * 4
    assert {r.unscored.reason for r in results} == {"the batch failed: line 1 is bad; line 2 too"}
    [record] = Ledger.beside(tmp_path).load()
    assert record.collected and record.status == "failed"


class _Lossy(FakeBatchServer):
    """A provider whose output files leave out the first request's line."""

    def _end_files(self, batch: Any, status: str, done: int) -> tuple[str | None, str | None]:
        output, errors = super()._end_files(batch, status, done)
        if output is not None and not getattr(batch, "trimmed", False):
            self._files.data[output] = b"\n".join(self._files.data[output].splitlines()[1:]) + b"\n"
            batch.trimmed = True
        return output, errors


def test_a_request_without_a_line_in_the_ended_batch_is_unscored_and_retried(tmp_path: Path) -> None:
    with _Lossy(clock=lambda: 0.0) as server:
        run = _Run(server, tmp_path, retry="none")
        results = run.judge_many(ITEMS)
        assert results[0].unscored == Unscored(
            reason="the batch ended without a line for it", kind="batch_failed", raw=None
        )
        assert all(r.ok for r in results[1:])
        retried = _Run(server, tmp_path / "again", retry="batch")
        # the lost request is asked again in a second batch, which loses its first line too
        assert [r.ok for r in retried.judge_many(ITEMS[:2])] == [False, True]
        assert retried.runner.totals.rounds == 2 and retried.runner.totals.batches == 2


def test_a_resumed_batch_is_said_with_the_requests_it_holds(batch_server: FakeBatchServer, tmp_path: Path) -> None:
    batch_server.turnaround = 100.0
    first = _Run(batch_server, tmp_path)
    first.runner.sleep = _killed_sleep
    with pytest.raises(_Killed):
        first.judge_many(ITEMS)
    batch_server.advance(100.0)
    rerun = _Run(batch_server, tmp_path)
    assert all(r.ok for r in rerun.judge_many([*ITEMS[:3], {"question": "new?", "passage": "new"}]))
    assert rerun.said[0] == "batch: picked up 1 batch submitted before (3 of these requests)"
    assert rerun.said[1] == "batch: submitted 1 requests of stage relevance in 1 batch"
    assert (rerun.runner.totals.resumed, rerun.runner.totals.submitted) == (3, 1)


class _Killed(Exception):
    pass


async def _killed_sleep(seconds: float) -> None:
    raise _Killed


def test_a_batch_recorded_before_it_was_created_is_found_by_its_ref(
    batch_server: FakeBatchServer, tmp_path: Path
) -> None:
    # the provider has a batch for the record's ref over another copy of the file: the ref alone finds it
    api = BatchAPI(batch_server.url)
    first = _Run(batch_server, tmp_path)
    request = first.judge.prepare("relevance", ITEMS[0])
    line = input_line(request.key, api.line_url, first.runner.body(request.request))

    async def provider_side() -> dict[str, Any]:
        try:
            return await api.create(await api.upload(line, "a.jsonl"), {"assay_ref": "ref1"})
        finally:
            await api.aclose()

    batch = asyncio.run(provider_side())
    other_file = asyncio.run(_upload(batch_server, line))
    ledger = Ledger.beside(tmp_path)
    ledger.put(_record("ref1", api_base=batch_server.url, model="openai/gpt-4o-mini", input_file_id=other_file,
                       keys=[request.key], prompt="relevance"))  # fmt: skip
    assert first.judge_many(ITEMS[:1])[0].ok
    assert len(batch_server.batches) == 1 and ledger.load()[0].id == batch["id"]


async def _upload(server: FakeBatchServer, line: bytes) -> str:
    api = BatchAPI(server.url)
    try:
        return await api.upload(line, "b.jsonl")
    finally:
        await api.aclose()


def test_a_judge_without_a_cache_is_told_to_drop_no_cache() -> None:
    with pytest.raises(ConfigError) as caught:
        use_batches(make_judge("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1"))
    assert str(caught.value) == (
        "batch judging writes its answers into the judge cache and its ledger beside it: drop --no-cache"
    )


def test_an_error_body_that_is_not_utf8_is_read_with_replacements(recording: _Recording) -> None:
    recording.replies["/v1/batches/b1"] = _reply(400, b'{"error": "bad \xff\xfe byte"}')
    with pytest.raises(BackendError) as caught:
        _run(BatchAPI(recording.url), lambda api: api.retrieve("b1"))
    assert type(caught.value) is BackendError and caught.value.status == 400
    assert '{"error": "bad \ufffd\ufffd byte"}' in str(caught.value)


def test_the_no_batch_api_message_names_the_providers_that_have_one(recording: _Recording) -> None:
    recording.replies["/v1/batches"] = _reply(404, b"")
    with pytest.raises(BackendError) as caught:
        _run(BatchAPI(recording.url), lambda api: api.list())
    assert str(caught.value) == (
        f"HTTP 404 from {recording.url}/batches: the server at {recording.url} has no batch API (/files and "
        "/batches) -- drop --batch, or use a provider or server that has one (OpenAI, Azure OpenAI with api_version)"
    )


def test_only_the_collection_paths_themselves_mean_no_batch_api() -> None:
    assert path_is_collection("http://h/v1/batches/") and path_is_collection("http://h/v1/files?api-version=1")
    # a batch or file whose id ends in the characters a careless strip would take is not the collection
    assert not path_is_collection("http://h/v1/batches/XX") and not path_is_collection("http://h/v1/files/X/")
    assert not path_is_collection("http://h/v1/batches/b1/cancel")


def test_the_api_base_loses_only_its_trailing_slashes() -> None:
    assert BatchAPI("http://h/apiX//").api_base == "http://h/apiX"
    assert BatchAPI("http://h/v1").api_base == "http://h/v1"
