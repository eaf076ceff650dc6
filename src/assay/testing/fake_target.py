"""A fake RAG system over HTTP on 127.0.0.1, for the tests and the benchmark of ``assay run``.

:class:`FakeTarget` answers ``POST`` requests from a small HTTP/1.1 server on asyncio streams (keep-alive), run in
its own thread so sync tests can use it as a context manager. Each request's JSON body is handed to ``answer(body)``
(default: the passages ``c-<query_id>`` and an answer naming the question) after ``latency`` seconds. ``fault(body,
attempt) -> kind or None`` injects a failure on the ``attempt``-th request (1-based) of a query id: ``"500"``,
``"503"``, ``"429"`` (with ``Retry-After: 7``), ``"400"`` (with the request path and query in the body),
``"malformed"`` (a 200 whose body is not JSON), ``"reset"`` (the connection closed without a reply), ``"hang"``
(no reply until the server stops). It records every request (path with query, headers, body) and counts requests
per query id. ``python -m assay.testing.fake_target --latency 0.2`` serves from a separate process and prints its URL
(the benchmark uses it so the server's CPU is not the client's).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["FakeTarget", "default_reply"]

Fault = Callable[[dict[str, Any], int], str | None]
_REASONS = {200: "OK", 400: "Bad Request", 429: "Too Many Requests", 500: "Internal Server Error",
            503: "Service Unavailable"}  # fmt: skip


def default_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Two passages named after the query id, and an answer quoting the question."""
    qid = str(body.get("query_id"))
    return {"retrieved": [f"c-{qid}", {"id": f"d-{qid}", "score": 0.5}], "answer": f"answer to {body.get('question')}"}


def _http(status: int, body: bytes, extra: dict[str, str] | None = None) -> bytes:
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", "Content-Type: application/json",
            f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in (extra or {}).items())]  # fmt: skip
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class FakeTarget:
    """A scripted RAG endpoint (module docstring); ``url`` is ``http://127.0.0.1:PORT/answer``."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        answer: Callable[[dict[str, Any]], Any] = default_reply,
        fault: Fault | None = None,
    ) -> None:
        self.latency, self.answer, self.fault = latency, answer, fault
        self.requests: list[dict[str, Any]] = []
        self.counts: collections.Counter[str] = collections.Counter()
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/answer"

    async def _reply(self, target: str, headers: dict[str, str], raw: bytes) -> bytes | None:
        body = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append({"path": target, "headers": headers, "body": body})
            key = str(body.get("query_id")) if isinstance(body, dict) else "?"
            self.counts[key] += 1
            attempt = self.counts[key]
        if self.latency:
            await asyncio.sleep(self.latency)
        kind = self.fault(body, attempt) if self.fault is not None else None
        if kind is None:
            return _http(200, json.dumps(self.answer(body)).encode())
        return await self._failure(kind, target)

    async def _failure(self, kind: str, target: str) -> bytes | None:
        if kind == "hang":
            await asyncio.Event().wait()
        if kind in ("reset",):
            return None
        if kind == "malformed":
            return _http(200, b'{"retrieved": ["c1"], "answer": ')
        if kind == "429":
            return _http(429, b'{"error": "slow down"}', {"Retry-After": "7"})
        status = int(kind)
        return _http(status, json.dumps({"error": f"failed on {target}"}).encode())

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            while True:
                request_line = await reader.readline()
                if not request_line:
                    break
                headers: dict[str, str] = {}
                while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                raw = await reader.readexactly(int(headers.get("content-length", "0")))
                reply = await self._reply(request_line.decode("latin-1").split(" ")[1], headers, raw)
                if reply is None:
                    writer.transport.abort()
                    return
                writer.write(reply)
                await writer.drain()
        writer.close()

    def start(self) -> FakeTarget:
        """Serve in a background thread until :meth:`stop`."""

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=4096)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()
            self._loop.run_forever()
            self._loop.close()

        self._thread = threading.Thread(target=run, daemon=True, name="fake-target")
        self._thread.start()
        self._ready.wait()
        return self

    def stop(self) -> None:
        """Stop serving (requests still hanging are dropped)."""
        if self._loop is None or self._server is None:
            return

        def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks(self._loop):
                task.cancel()
            self._loop.call_later(0.05, self._loop.stop)  # type: ignore[union-attr]

        self._loop.call_soon_threadsafe(shutdown)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeTarget:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """Serve a :class:`FakeTarget` (no faults) until killed; the first line printed is its URL."""
    parser = argparse.ArgumentParser(description="a fake RAG endpoint on 127.0.0.1")
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args(argv)
    server = FakeTarget(latency=args.latency).start()
    print(server.url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
