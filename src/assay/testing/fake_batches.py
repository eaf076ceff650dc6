"""A fake of the OpenAI batch API (``/v1/files`` and ``/v1/batches``) on top of :class:`FakeOpenAIServer`.

:class:`FakeBatchServer` serves everything the chat-completions fake does, plus (also under Azure OpenAI's
``/openai/files`` and ``/openai/batches`` with ``?api-version=``):

- ``POST /v1/files`` (multipart: ``purpose=batch`` and the JSONL ``file``), ``GET /v1/files/{id}`` and
  ``GET /v1/files/{id}/content``; an input file is checked as the provider checks it: one JSON object a line with
  a unique ``custom_id``, ``method`` POST, the batch endpoint as ``url``, a ``body`` naming one model for the whole
  file, at most ``max_requests`` lines and ``max_bytes`` bytes (OpenAI's limits by default);
- ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/batches`` and ``POST /v1/batches/{id}/cancel``.

A batch's answers are made when it is created (with the same responder as a direct call, so a batch and a direct
call agree) and become visible as the fake's clock moves: ``turnaround`` seconds after creation it is
``completed``; before that ``request_counts`` grows in proportion to the time passed. With ``expires_after``
shorter than ``turnaround`` it ends ``expired`` with the requests answered by then in its output file and the rest
in its error file (code ``batch_expired``); a cancelled batch keeps what it answered and lists the rest as
``batch_cancelled``. :meth:`FakeBatchServer.advance` moves the clock (tests never sleep). ``batch_faults`` is a
queue of :class:`Fault` or None, one per request in the order batches are created: an HTTP status (``"500"``,
``"400"``) or ``content_filter`` puts the request in the error file; ``invalid``, ``truncated``, ``loop`` and
``filtered`` answer 200 with that fault's content. ``answered`` counts how many times each request body was
answered with status 200 (what a provider charges for), so a test or the benchmark can check that nothing was paid
for twice. ``python -m assay.testing.fake_batches --turnaround 3`` serves one from a separate process (the benchmark
uses it, so the provider's CPU is not counted as assay's).
"""

from __future__ import annotations

import argparse
import collections
import email.parser
import email.policy
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from assay.testing.fake_server import FakeOpenAIServer, Fault, _completion, _http, serve_until_interrupted

__all__ = ["MAX_BATCH_BYTES", "MAX_BATCH_REQUESTS", "FakeBatchServer"]

MAX_BATCH_REQUESTS = 50_000  # OpenAI's limits on one batch input file
MAX_BATCH_BYTES = 200 * 1024 * 1024
_ROUTE = re.compile(r"/(files|batches)(?:/([^/]+))?(?:/(content|cancel))?$")
_ENDED = {"cancelled": "batch_cancelled", "expired": "batch_expired"}


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    window: str
    metadata: dict[str, Any]
    created: float
    results: list[tuple[str, dict[str, Any], bool]]  # (custom_id, response object, ok)
    hashes: list[str]  # each request body's body_hash
    stopped: tuple[str, float] | None = None  # ("cancelled", when)
    files: tuple[str | None, str | None] | None = None  # (output, error) once ended


@dataclass
class _Files:
    data: dict[str, bytes] = field(default_factory=dict)
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, content: bytes, name: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{len(self.data) + 1:06d}"
        self.data[file_id] = content
        self.meta[file_id] = {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
        }
        return self.meta[file_id]


def _json(status: int, data: Any) -> bytes:
    return _http(status, json.dumps(data).encode())


def _error(status: int, message: str) -> bytes:
    return _json(status, {"error": {"message": message, "type": "invalid_request_error"}})


def body_hash(body: dict[str, Any]) -> str:
    """A request body's identity: the hash of its canonical JSON."""
    return hashlib.blake2b(json.dumps(body, sort_keys=True).encode(), digest_size=12).hexdigest()


class FakeBatchServer(FakeOpenAIServer):
    """:class:`FakeOpenAIServer` with the batch API (see the module docstring); ``clock`` gives seconds."""

    def __init__(
        self,
        responder: Callable[[dict[str, Any]], str] | None = None,
        *,
        turnaround: float = 0.0,
        expires_after: float | None = None,
        batch_faults: Iterable[Fault | None] = (),
        max_requests: int = MAX_BATCH_REQUESTS,
        max_bytes: int = MAX_BATCH_BYTES,
        clock: Callable[[], float] = time.monotonic,
        **options: Any,
    ) -> None:
        super().__init__(responder, **options)
        self.turnaround = turnaround
        self.expires_after = expires_after
        self.batch_faults: collections.deque[Fault | None] = collections.deque(batch_faults)
        self.max_requests, self.max_bytes = max_requests, max_bytes
        self.answered: collections.Counter[str] = collections.Counter()
        self.batches: dict[str, _Batch] = {}
        self._files = _Files()
        self._clock = clock
        self._skipped = 0.0

    def now(self) -> float:
        """The fake's clock: ``clock()`` plus every :meth:`advance`."""
        return self._clock() + self._skipped

    def advance(self, seconds: float) -> None:
        """Move the fake's clock forward (batches progress, complete or expire)."""
        self._skipped += seconds

    def paid_twice(self) -> int:
        """Request bodies answered more than once across batches."""
        return sum(1 for n in self.answered.values() if n > 1)

    async def _route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> bytes:
        match = _ROUTE.search(path.partition("?")[0])
        if match is None:
            return await super()._route(method, path, headers, raw)
        what, ident, action = match.groups()
        if what == "files":
            return self._file_route(method, ident, action, headers.get("content-type", ""), raw)
        return self._batch_route(method, ident, action, raw)

    # -- files -----------------------------------------------------------------------------------------------------

    def _file_route(self, method: str, ident: str | None, action: str | None, ctype: str, raw: bytes) -> bytes:
        if method == "POST" and ident is None:
            return self._upload(ctype, raw)
        if ident is None or ident not in self._files.data:
            return _error(404, f"No such File object: {ident}")
        if action == "content":
            return _http(200, self._files.data[ident])
        return _json(200, self._files.meta[ident])

    def _upload(self, ctype: str, raw: bytes) -> bytes:
        parser = email.parser.BytesParser(policy=email.policy.HTTP)
        message = parser.parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + raw)
        fields: dict[str, tuple[str, bytes]] = {}
        for part in message.iter_parts() if message.is_multipart() else ():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            fields[str(name)] = (str(part.get_filename() or ""), payload if isinstance(payload, bytes) else b"")
        if "file" not in fields or fields.get("purpose", ("", b""))[1] != b"batch":
            return _error(400, "upload a multipart form with purpose=batch and a file")
        problem = self._check_input(fields["file"][1])
        if problem is not None:
            return _error(400, problem)
        return _json(200, self._files.add(fields["file"][1], fields["file"][0], "batch"))

    def _check_input(self, content: bytes) -> str | None:
        if len(content) > self.max_bytes:
            return f"the file has {len(content)} bytes; the limit is {self.max_bytes}"
        lines = content.splitlines()
        if len(lines) > self.max_requests:
            return f"the file has {len(lines)} requests; the limit is {self.max_requests}"
        ids, models = set(), set()
        for number, line in enumerate(lines, 1):
            try:
                item = json.loads(line)
                ids.add(item["custom_id"])
                models.add(item["body"]["model"])
                if item["method"] != "POST" or not item["url"].endswith("/chat/completions"):
                    return f"line {number}: method must be POST and url /v1/chat/completions"
            except (ValueError, KeyError, TypeError):
                return f"line {number}: not a request object with custom_id, method, url and body.model"
            if len(ids) != number:
                return f"line {number}: custom_id {item['custom_id']!r} is repeated"
        return None if len(models) <= 1 else f"one model per file; this one names {sorted(models)}"

    # -- batches ---------------------------------------------------------------------------------------------------

    def _batch_route(self, method: str, ident: str | None, action: str | None, raw: bytes) -> bytes:
        if ident is None:
            return self._create(raw) if method == "POST" else self._list()
        batch = self.batches.get(ident)
        if batch is None:
            return _error(404, f"No such Batch object: {ident}")
        if action == "cancel" and method == "POST" and self._status(batch) == "in_progress":
            batch.stopped = ("cancelled", self.now())
        return _json(200, self._object(batch))

    def _list(self) -> bytes:
        data = [self._object(batch) for batch in reversed(self.batches.values())]
        return _json(200, {"object": "list", "data": data, "has_more": False})

    def _create(self, raw: bytes) -> bytes:
        try:
            request = json.loads(raw)
            content = self._files.data[request["input_file_id"]]
        except (ValueError, KeyError, TypeError):
            return _error(400, "give input_file_id (an uploaded file), endpoint and completion_window")
        batch_id = f"batch_{len(self.batches) + 1:06d}"
        lines = [json.loads(line) for line in content.splitlines()]
        results = [self._answer(line) for line in lines]
        batch = _Batch(
            id=batch_id,
            input_file_id=request["input_file_id"],
            endpoint=str(request.get("endpoint", "/v1/chat/completions")),
            window=str(request.get("completion_window", "24h")),
            metadata=dict(request.get("metadata") or {}),
            created=self.now(),
            results=results,
            hashes=[body_hash(line["body"]) for line in lines],
        )
        self.batches[batch_id] = batch
        return _json(200, self._object(batch))

    def _answer(self, line: dict[str, Any]) -> tuple[str, dict[str, Any], bool]:
        """One request's response object as the output or error file will hold it, and whether it succeeded."""
        body = line["body"]
        fault = self.batch_faults.popleft() if self.batch_faults else None
        if self.record:
            self.requests.append(body)
        if fault is None:
            content = self.script.popleft() if self.script else self.responder(body)
            return line["custom_id"], _response(200, json.loads(_completion(content, body))), True
        return line["custom_id"], *_faulty(fault, body)

    def _answered_count(self, batch: _Batch) -> int:
        end = batch.stopped[1] if batch.stopped else self.now()
        if self.expires_after is not None and self.expires_after < self.turnaround:
            end = min(end, batch.created + self.expires_after)
        elapsed = end - batch.created
        if elapsed >= self.turnaround:
            return len(batch.results)
        return int(len(batch.results) * elapsed / self.turnaround)

    def _status(self, batch: _Batch) -> str:
        if batch.stopped is not None:
            return batch.stopped[0]
        elapsed = self.now() - batch.created
        if elapsed >= self.turnaround:
            return "completed"
        if self.expires_after is not None and elapsed >= self.expires_after:
            return "expired"
        return "in_progress"

    def _object(self, batch: _Batch) -> dict[str, Any]:
        status = self._status(batch)
        done = self._answered_count(batch)
        failed = sum(1 for _, _, ok in batch.results[:done] if not ok)
        output_id, error_id = self._end_files(batch, status, done) if status in ("completed", *_ENDED) else (None, None)
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "errors": None,
            "input_file_id": batch.input_file_id,
            "completion_window": batch.window,
            "status": status,
            "output_file_id": output_id,
            "error_file_id": error_id,
            "created_at": int(batch.created),
            "request_counts": {"total": len(batch.results), "completed": done - failed, "failed": failed},
            "metadata": batch.metadata,
        }

    def _end_files(self, batch: _Batch, status: str, done: int) -> tuple[str | None, str | None]:
        """The output and error files of an ended batch, written once; its answers are counted as paid then."""
        if batch.files is None:
            lines: tuple[list[bytes], list[bytes]] = ([], [])
            for index, (custom_id, response, ok) in enumerate(batch.results):
                error = None if index < done else {"code": _ENDED[status], "message": f"the batch was {status}"}
                item = {"id": f"{batch.id}_req_{index}", "custom_id": custom_id, "response": response, "error": error}
                if error is not None:
                    item["response"] = None
                lines[0 if ok and error is None else 1].append(json.dumps(item).encode())
            self.answered.update(h for h, (_, _, ok) in zip(batch.hashes[:done], batch.results, strict=False) if ok)
            output, errors = (self._files.add(b"\n".join(x) + b"\n", "", "batch_output") if x else None for x in lines)
            batch.files = (output["id"] if output else None, errors["id"] if errors else None)
        return batch.files


def _response(status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"status_code": status, "request_id": f"req_{id(body):x}", "body": body}


def _faulty(fault: Fault, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    contents = {
        "invalid": ("I think the grade is two.", "stop"),
        "truncated": ('{"reason": "cut', "length"),
        "loop": ('{"reason": "' + "the the the " * 40, "length"),
        "filtered": ("", "content_filter"),
    }
    if fault.kind in contents:
        content, finish = contents[fault.kind]
        return _response(200, json.loads(_completion(content, body, finish=finish))), True
    if fault.kind == "content_filter":
        error = {"message": "filtered by the deployment's content policy (injected)", "code": "content_filter"}
        return _response(400, {"error": error}), False
    return _response(int(fault.kind), {"error": {"message": fault.message or f"injected {fault.kind}"}}), False


def main(argv: list[str] | None = None) -> None:
    """Serve the fake chat-completions and batch API until killed; prints the api base URL on the first line."""
    parser = argparse.ArgumentParser(prog="python -m assay.testing.fake_batches", description=main.__doc__)
    parser.add_argument("--turnaround", type=float, default=0.0, help="seconds a batch takes (default 0)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = FakeBatchServer(turnaround=args.turnaround, record=False)
    server.port = args.port
    serve_until_interrupted(server)


if __name__ == "__main__":
    main()
