"""The OpenAI-compatible batch protocol over aiohttp: upload an input file, create, check, list and cancel batches,
download output and error files.

The same paths serve OpenAI (``https://api.openai.com/v1``), servers that copy its batch API, and Azure OpenAI:
give ``api_version`` and an api base ending in ``/openai`` (``https://NAME.openai.azure.com/openai``); requests
then carry ``?api-version=`` and the key in an ``api-key`` header, and each input line's ``url`` is
``/chat/completions`` with the deployment name as its model. An HTTP failure raises as a direct call's does
(:func:`~assay.judge.backends.status_error`): transient for 429 and 5xx, a :class:`BackendError` with the fix for
the rest.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from assay.errors import BackendError, TransientBackendError
from assay.judge.backends.http import parse_retry_after, status_error

if TYPE_CHECKING:
    import aiohttp

__all__ = ["BatchAPI"]


def path_is_collection(url: str) -> bool:
    """Whether ``url`` is the files or batches collection itself (a 404 there means no batch API at all)."""
    return url.partition("?")[0].rstrip("/").endswith(("/files", "/batches"))


class BatchAPI:
    """One provider's batch endpoints (see the module docstring); close with :meth:`aclose`."""

    def __init__(
        self, api_base: str, *, api_key: str | None = None, api_version: str | None = None, timeout: float = 600.0
    ) -> None:
        self.api_base = api_base.rstrip("/")
        self.api_version = api_version
        self.timeout = timeout
        self._headers: dict[str, str] = {}
        if api_key:
            self._headers["api-key" if api_version else "Authorization"] = (
                api_key if api_version else f"Bearer {api_key}"
            )
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def line_url(self) -> str:
        """The ``url`` of each input line: ``/v1/chat/completions`` (Azure: ``/chat/completions``)."""
        return "/chat/completions" if self.api_version else "/v1/chat/completions"

    def _url(self, path: str) -> str:
        query = f"?api-version={self.api_version}" if self.api_version else ""
        return f"{self.api_base}/{path}{query}"

    def _get_session(self) -> aiohttp.ClientSession:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            timeout = aiohttp.ClientTimeout(total=self.timeout)
            self._session = aiohttp.ClientSession(headers=self._headers, timeout=timeout)
            self._loop = loop
        return self._session

    async def _request(self, method: str, path: str, **kwargs: Any) -> bytes:
        import aiohttp

        url = self._url(path)
        try:
            async with self._get_session().request(method, url, **kwargs) as response:
                raw = await response.read()
                if response.status != 200:
                    raise self._error(response.status, raw, url, response.headers.get("Retry-After"))
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise TransientBackendError(f"connection to {url} failed: {exc}") from exc
        except TimeoutError as exc:
            raise TransientBackendError(f"no answer from {url} within {self.timeout:g} s") from exc
        return raw

    def _error(self, status: int, raw: bytes, url: str, retry_after: str | None) -> BackendError:
        text = raw.decode("utf-8", "replace")
        if status in (404, 405) and path_is_collection(url):
            return BackendError(
                f"HTTP {status} from {url}: the server at {self.api_base} has no batch API (/files and /batches) -- "
                "drop --batch, or use a provider or server that has one (OpenAI, Azure OpenAI with api_version)",
                status=status,
            )
        return status_error(status, text, model="batch", url=url, retry_after=parse_retry_after(retry_after))

    async def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        raw = await self._request(method, path, **kwargs)
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise BackendError(f"the batch API at {self._url(path)} answered something that is not JSON") from exc
        if not isinstance(data, dict):
            raise BackendError(f"the batch API at {self._url(path)} answered {type(data).__name__}, not an object")
        return data

    async def upload(self, content: bytes, filename: str) -> str:
        """Upload a JSONL input file (purpose ``batch``); its file id."""
        import aiohttp

        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", content, filename=filename, content_type="application/jsonl")
        return str((await self._json("POST", "files", data=form))["id"])

    async def create(self, input_file_id: str, metadata: dict[str, str]) -> dict[str, Any]:
        """Create a batch of chat completions over an uploaded file, to finish within 24 hours."""
        body = {
            "input_file_id": input_file_id,
            "endpoint": self.line_url,
            "completion_window": "24h",
            "metadata": metadata,
        }
        return await self._json("POST", "batches", json=body)

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        """A batch object: ``status``, ``request_counts``, ``output_file_id``, ``error_file_id``, ..."""
        return await self._json("GET", f"batches/{batch_id}")

    async def cancel(self, batch_id: str) -> dict[str, Any]:
        """Ask the provider to cancel a batch (what it answered stays in its output file)."""
        return await self._json("POST", f"batches/{batch_id}/cancel")

    async def list(self) -> list[dict[str, Any]]:
        """The provider's recent batches, newest first (the first page)."""
        data = (await self._json("GET", "batches")).get("data")
        return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []

    async def content(self, file_id: str) -> bytes:
        """The bytes of an output or error file."""
        return await self._request("GET", f"files/{file_id}/content")

    async def aclose(self) -> None:
        """Close the HTTP session."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
