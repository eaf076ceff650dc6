"""The audit page's guard: allowed Host names, a CSRF token and a same-origin check on every write, size limits.

Threats, for a page that serves corpus text on a local port: another site in the same browser posting labels
(cross-site request forgery), a site that rebinds its own name to 127.0.0.1 (DNS rebinding), and corpus or judge text
that carries markup (handled by the page, which renders data with ``textContent`` only, and by the CSP below).

* Every request must name an allowed host in its ``Host`` header (loopback names, plus the host the server was bound
  to); otherwise 400.
* Every request that is not GET or HEAD must carry the per-server-start token in ``X-Assay-Token`` (the page holds
  it in a meta tag; other sites cannot read it), send JSON, and, when the browser says where it comes from
  (``Origin``, ``Sec-Fetch-Site``), come from this very origin; otherwise 403.
* Bodies above :data:`MAX_BODY` bytes are refused with 413 (checked on ``Content-Length`` and while reading).
* Responses carry a Content-Security-Policy that allows only this origin's script and style, no inline script,
  no framing.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOOPBACK_HOSTS", "MAX_BODY", "BodyTooLarge", "Guard", "read_json"]

MAX_BODY = 64 * 1024
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
TOKEN_HEADER = "x-assay-token"  # noqa: S105 (a header name, not a secret)
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class BodyTooLarge(Exception):
    """A request body above the limit."""


def host_name(host_header: str) -> str:
    """The host part of a Host header value (``[::1]:8765`` -> ``[::1]``, ``127.0.0.1:80`` -> ``127.0.0.1``)."""
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


class Guard:
    """ASGI middleware enforcing the rules of the module docstring around ``app``."""

    def __init__(self, app: ASGIApp, *, token: str, hosts: Iterable[str]) -> None:
        self.app = app
        self.token = token
        self.hosts = {h.lower() for h in hosts} | LOOPBACK_HOSTS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = self.refusal(scope)
        if problem is not None:
            status, message = problem
            await JSONResponse({"error": message}, status_code=status, headers=SECURITY_HEADERS)(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in SECURITY_HEADERS.items():
                    headers.setdefault(key, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, message) when the request must be refused, else None."""
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if host_name(host.lower()) not in self.hosts:
            return 400, f"unknown Host {host[:100]!r}; open the page at the URL that assay audit printed"
        if scope["method"] in ("GET", "HEAD"):
            return None
        if not hmac.compare_digest(headers.get(TOKEN_HEADER, "").encode(), self.token.encode()):
            return 403, "missing or wrong X-Assay-Token; reload the page (the token changes when the server restarts)"
        origin = headers.get("origin")
        if origin is not None and (urlsplit(origin).netloc.lower() != host.lower() or origin == "null"):
            return 403, f"cross-site request from {origin[:100]!r} refused"
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return 403, "cross-site request refused"
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return 415, "send the body as application/json"
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return 413, f"request body over {MAX_BODY} bytes"
        return None


async def read_json(request: Request) -> dict[str, Any]:
    """The JSON object in the body, read up to :data:`MAX_BODY` bytes; ValueError or BodyTooLarge otherwise."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise BodyTooLarge(f"request body over {MAX_BODY} bytes")
        chunks.append(chunk)
    data = json.loads(b"".join(chunks) or b"null")
    if not isinstance(data, dict):
        raise ValueError("the body must be a JSON object")
    return data
