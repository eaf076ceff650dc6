"""Test doubles for the judge: a fake OpenAI-compatible server and a fake backend.

:class:`FakeOpenAIServer` answers ``POST /v1/chat/completions`` on 127.0.0.1 (random port), and Azure OpenAI's
``POST /openai/deployments/{deployment}/chat/completions?api-version=...``, from a small HTTP/1.1 server on asyncio
streams, run in its own thread so sync tests can use it as a context manager. It has configurable latency, scripted
answers (a callable ``request body -> content`` or a queue), and injected faults per request (:class:`Fault`: 429
with Retry-After, 500, 503, other statuses, a malformed JSON body, truncated content, a hang). It records every
request body and path, and counts calls. It is built not to be the bottleneck: a listen backlog of 4096,
TCP_NODELAY, keep-alive, and one write per response. ``python -m assay.testing.fake_server --latency 0.1`` serves
from a separate process and prints its URL (the benchmark uses it so server CPU is not counted as client CPU).

:class:`FakeBackend` answers :class:`ChatRequest` objects in-process from a script and records them.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import hashlib
import json
import re
import socket
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from assay.errors import BackendError
from assay.judge.base import ChatRequest, ChatResponse

__all__ = ["FakeBackend", "FakeGrade", "FakeOpenAIServer", "Fault", "certain_logprobs", "default_answer"]

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests"}


class FakeGrade(BaseModel):
    """A small output model for tests of the judge: a reason, then a grade 0..3."""

    reason: str
    grade: int = Field(ge=0, le=3)


def default_answer(messages: list[dict[str, str]]) -> str:
    """A valid relevance answer whose grade is a stable function of the last message (so runs are comparable)."""
    digest = hashlib.blake2b(messages[-1]["content"].encode(), digest_size=2).digest()
    return json.dumps({"reason": "scripted answer", "grade": digest[0] % 4})


@dataclass(frozen=True)
class Fault:
    """A failure to inject: ``kind`` is an HTTP status ("429", "500", "503", "401", ...), "malformed" (a body that
    is not JSON), "truncated" (finish_reason "length"), "loop" (cut at the limit while repeating itself), "invalid"
    (content that is not JSON), "hang" (no answer), "content_filter" (a 400 shaped like Azure OpenAI's content filter
    refusing the prompt) or "filtered" (an answer withheld: finish_reason "content_filter")."""

    kind: str
    retry_after: float | None = None
    message: str | None = None


def _http(status: int, body: bytes, extra: dict[str, str] | None = None) -> bytes:
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **(extra or {})}
    head = f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode("latin-1") + b"\r\n" + body


def _prompt_tokens(body: dict[str, Any]) -> int:
    """The fake's token count of a request's messages: characters / 4, plus 1 (reported as usage, and what
    ``context`` is compared with)."""
    return sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4 + 1


LogprobMaker = Callable[[dict[str, Any], str], list[dict[str, Any]]]
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def certain_logprobs(body: dict[str, Any], content: str) -> list[dict[str, Any]]:
    """The fake's default ``logprobs.content``: the answer cut into words, spaces and single marks, each certain
    (log probability 0, itself its only alternative)."""
    tokens = _TOKEN.findall(content)
    return [{"token": t, "logprob": 0.0, "top_logprobs": [{"token": t, "logprob": 0.0}]} for t in tokens]


def _completion(
    content: str, body: dict[str, Any], finish: str = "stop", logprobs: LogprobMaker | None = None
) -> bytes:
    prompt_tokens = _prompt_tokens(body)
    data = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(content) // 4 + 1,
            "total_tokens": prompt_tokens + len(content) // 4 + 1,
        },
    }
    if body.get("logprobs") is True:  # asked for: the answer's tokens with their probabilities
        data["choices"][0]["logprobs"] = {"content": (logprobs or certain_logprobs)(body, content)}
    return json.dumps(data).encode()


class FakeOpenAIServer:
    """A fake chat-completions server on 127.0.0.1; ``url`` is its api base (``http://127.0.0.1:PORT/v1``).

    ``responder(body) -> content`` makes answers (default :func:`default_answer`); ``script`` is a queue of
    contents consumed first. A request with ``"logprobs": true`` gets ``logprobs.content`` from ``logprobs(body,
    content)`` (default :func:`certain_logprobs`: every token certain). ``faults`` (or :meth:`inject`) is a queue of
    :class:`Fault` or None, one per request. ``context`` (tokens per request, counted as the fake counts prompt
    tokens: characters / 4) makes it behave like llama.cpp's server: ``GET /props`` reports it as ``n_ctx``, and a
    longer prompt gets llama.cpp's 400 ``exceed_context_size_error``.
    """

    def __init__(
        self,
        responder: Callable[[dict[str, Any]], str] | None = None,
        *,
        latency: float = 0.0,
        script: Iterable[str] = (),
        faults: Iterable[Fault | None] = (),
        hang_seconds: float = 3600.0,
        record: bool = True,
        context: int | None = None,
        logprobs: LogprobMaker | None = None,
    ) -> None:
        self.responder = responder or (lambda body: default_answer(body["messages"]))
        self.logprobs = logprobs
        self.latency = latency
        self.hang_seconds = hang_seconds
        self.record = record
        self.context = context
        self.script: collections.deque[str] = collections.deque(script)
        self.faults: collections.deque[Fault | None] = collections.deque(faults)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.calls = 0
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        """The api base to give a client."""
        return f"http://127.0.0.1:{self.port}/v1"

    def inject(self, *faults: Fault | None) -> None:
        """Queue faults for the next requests (None = answer normally)."""
        self.faults.extend(faults)

    async def _route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> bytes:
        """The response to one request; a subclass serves more paths here (:mod:`assay.testing.fake_batches`)."""
        return await self._reply(path, raw)

    async def _reply(self, path: str, raw: bytes) -> bytes:
        if path.endswith("/props"):  # llama.cpp's server properties (not a model call)
            if self.context is None:
                return _http(404, b'{"error": {"message": "unknown path"}}')
            return _http(200, json.dumps({"default_generation_settings": {"n_ctx": self.context}}).encode())
        if path.endswith("/models"):  # the model list (not a model call); no max_model_len, as OpenAI's
            return _http(200, b'{"object": "list", "data": [{"id": "fake", "object": "model"}]}')
        self.calls += 1
        try:
            body = json.loads(raw)
        except ValueError:
            return _http(400, b'{"error": {"message": "request body is not JSON"}}')
        if self.record:
            self.requests.append(body)
            self.paths.append(path)
        fault = self.faults.popleft() if self.faults else None
        if self.latency:
            await asyncio.sleep(self.latency)
        if not path.partition("?")[0].endswith("/chat/completions"):
            return _http(404, b'{"error": {"message": "unknown path"}}')
        if fault is not None:
            return await self._fault(fault, body)
        too_long = self._over_context(body)
        if too_long is not None:
            return too_long
        content = self.script.popleft() if self.script else self.responder(body)
        return _http(200, _completion(content, body, logprobs=self.logprobs))

    def _over_context(self, body: dict[str, Any]) -> bytes | None:
        if self.context is None:
            return None
        tokens = _prompt_tokens(body)
        if tokens <= self.context:
            return None
        message = f"request ({tokens} tokens) exceeds the available context size ({self.context} tokens)"
        error = {"code": 400, "message": message, "type": "exceed_context_size_error", "n_prompt_tokens": tokens}
        return _http(400, json.dumps({"error": {**error, "n_ctx": self.context}}).encode())

    async def _fault(self, fault: Fault, body: dict[str, Any]) -> bytes:
        if fault.kind == "hang":
            await asyncio.sleep(self.hang_seconds)
        if fault.kind == "malformed":
            return _http(200, b'{"choices": [{"message": ')
        if fault.kind == "truncated":
            return _http(200, _completion('{"reason": "cut', body, finish="length"))
        if fault.kind == "loop":
            return _http(200, _completion('{"reason": "' + "the the the " * 40, body, finish="length"))
        if fault.kind == "invalid":
            return _http(200, _completion("I think the grade is two.", body))
        if fault.kind == "filtered":
            return _http(200, _completion("", body, finish="content_filter"))
        if fault.kind == "content_filter":
            policy = {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {"hate": {"filtered": True}}}
            error = {"code": "content_filter", "status": 400, "innererror": policy}
            said = "this prompt was filtered by the deployment's content policy (injected)"
            return _http(400, json.dumps({"error": {"message": said, **error}}).encode())
        extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else None
        message = json.dumps({"error": {"message": fault.message or f"injected {fault.kind}"}}).encode()
        return _http(int(fault.kind), message, extra)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
                headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                raw = await reader.readexactly(int(headers.get("content-length", "0")))
                writer.write(await self._route(lines[0].split(" ")[0], path, headers, raw))
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass  # the client went away, or the server is stopping
        finally:
            writer.close()

    async def _serve(self) -> None:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", self.port, backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        async with self._server:
            await self._server.serve_forever()

    def start(self) -> FakeOpenAIServer:
        """Start serving in a background thread; returns self once the port is bound."""
        loop = self._loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(self._serve())

        self._thread = threading.Thread(target=run, name="fake-openai-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the fake server did not start within 10 s")
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._loop is None or self._thread is None:
            return
        loop = self._loop

        def shutdown() -> None:
            for task in asyncio.all_tasks(loop):
                task.cancel()

        loop.call_soon_threadsafe(shutdown)
        self._thread.join(10)
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


Answer = str | ChatResponse | BaseException
Script = Callable[[ChatRequest], Answer]


class FakeBackend:
    """An in-process backend: answers from ``script`` (a callable, or a list consumed in order, then ``default``).

    An answer may be a content string, a full :class:`ChatResponse`, or an exception to raise. Requests are recorded.
    """

    def __init__(self, script: Script | Iterable[Answer] | None = None, *, name: str = "fake") -> None:
        self.name = name
        self._fn: Script | None = script if callable(script) else None
        self._queue: collections.deque[Answer] = collections.deque([] if script is None or callable(script) else script)
        self.requests: list[ChatRequest] = []

    @property
    def calls(self) -> int:
        """How many requests were made."""
        return len(self.requests)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer one request from the script."""
        self.requests.append(request)
        if self._queue:
            answer: Answer = self._queue.popleft()
        elif self._fn is not None:
            answer = self._fn(request)
        else:
            answer = default_answer(request.messages)
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, ChatResponse):
            return answer
        if not isinstance(answer, str):
            raise BackendError(f"fake backend script gave {type(answer).__name__}, not str/ChatResponse/exception")
        return ChatResponse(content=answer, prompt_tokens=100, completion_tokens=20, finish_reason="stop")


def main(argv: list[str] | None = None) -> None:
    """Serve a fake OpenAI-compatible API until killed; prints the api base URL on the first line."""
    parser = argparse.ArgumentParser(prog="python -m assay.testing.fake_server", description=main.__doc__)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds before each answer (default 0.1)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency=args.latency, record=False)
    server.port = args.port
    serve_until_interrupted(server)
    sys.exit(0)


def serve_until_interrupted(server: FakeOpenAIServer) -> None:
    """Start ``server`` (port set beforehand), print its api base URL on the first line, serve until Ctrl-C."""
    server.start()
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
