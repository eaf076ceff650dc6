"""Backends over client libraries: litellm for providers that need request translation, and a user's own
``openai.AsyncOpenAI`` / ``AsyncAzureOpenAI`` client. Both libraries are imported here only, and lazily.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from assay.errors import BackendError, TransientBackendError
from assay.judge.backends.http import parse_completion, parse_retry_after, response_format_of, status_error, wire_model
from assay.judge.base import ChatRequest, ChatResponse

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["LiteLLMBackend", "OpenAIClientBackend", "client_model"]

_LITELLM_OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION", "HF_HUB_OFFLINE": "1"}


def _import_litellm() -> Any:
    for key, value in _LITELLM_OFFLINE.items():
        os.environ.setdefault(key, value)
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def _header(exc: Exception, name: str) -> str | None:
    """A response header of a litellm exception (it keeps them in ``litellm_response_headers`` or ``headers``)."""
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers is not None and hasattr(headers, "get") and headers.get(name) is not None:
            return str(headers.get(name))
    return None


class LiteLLMBackend:
    """``litellm.acompletion`` for providers that need translation; litellm's retries and cache are off."""

    name = "litellm"

    def __init__(
        self, model: str, *, api_base: str | None = None, api_key: str | None = None, timeout: float = 120.0
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self._litellm: Any = None

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"timeout": self.timeout, "num_retries": 0, "max_retries": 0, "caching": False}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        response_format = response_format_of(request)
        if response_format is not None:
            kwargs["response_format"] = response_format
        kwargs.update(request.params)
        return kwargs

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion through litellm, with its exceptions mapped to assay's."""
        if self._litellm is None:
            self._litellm = _import_litellm()
        try:
            response = await self._litellm.acompletion(
                model=self.model, messages=request.messages, **self._kwargs(request)
            )
        except Exception as exc:
            raise self._map_error(exc) from exc
        data = response.model_dump() if hasattr(response, "model_dump") else response
        return parse_completion(data, self.api_base or self.model)

    def _map_error(self, exc: Exception) -> BackendError:
        status = getattr(exc, "status_code", None)
        where = self.api_base or self.model
        if isinstance(exc, TimeoutError) or type(exc).__name__ in ("Timeout", "APITimeoutError"):
            return TransientBackendError(f"no answer from {where} within {self.timeout:g} s")
        if isinstance(status, int) and 400 <= status < 600:
            retry_after = parse_retry_after(_header(exc, "retry-after"))
            return status_error(status, str(exc), model=self.model, url=where, retry_after=retry_after)
        if type(exc).__name__ in ("APIConnectionError", "ServiceUnavailableError", "InternalServerError"):
            return TransientBackendError(f"connection to {where} failed: {exc}")
        return BackendError(f"litellm call for {self.model!r} failed: {type(exc).__name__}: {exc}")


def client_model(spec: str) -> str:
    """The model a user's openai client sends: ``openai/gpt-4o-mini`` -> ``gpt-4o-mini``, ``azure/DEP`` -> ``DEP``."""
    return wire_model(spec).removeprefix("azure/")


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` (Azure, OpenAI) or ``Retry-After``; None when neither is readable."""
    try:
        millis = float(headers.get("retry-after-ms"))
    except (TypeError, ValueError):
        return parse_retry_after(headers.get("retry-after"))
    return max(0.0, millis / 1000)


class OpenAIClientBackend:
    """A user's ``openai.AsyncOpenAI`` or ``openai.AsyncAzureOpenAI`` client as the judge's backend.

    For what the aiohttp backend does not cover: Azure deployments, Azure AD token providers, custom auth headers,
    proxies, a custom ``http_client``. The call is ``client.chat.completions.create(model, messages,
    response_format (when structured), **params)`` with ``model`` = the ``model`` given here, else the judge's
    model name without its route prefix (``openai/gpt-4o-mini`` -> ``gpt-4o-mini``, ``azure/DEPLOY`` -> ``DEPLOY``:
    for Azure, the deployment name). The client is used through ``client.with_options(max_retries=0)`` (and
    ``timeout`` when given), so the Judge's retries are the only ones; the user's client itself is not changed, and
    it is never closed here: its owner closes it. The openai SDK's errors map as the HTTP statuses do in
    :func:`status_error`: 429 (``retry-after-ms`` or ``Retry-After`` honoured), 408/409/5xx, connection errors and
    timeouts are transient; 400/401/403/404 fail with the fix. This module imports openai only once a call fails.

    Event loops: the client's connections belong to the event loop that opened them. Use it from async code, in the
    loop that owns the client (``await judge.ajudge_many(...)``, ``await grade_pairs(judge, pairs)``), and close it
    there (``await client.close()``). The synchronous entry points (``judge_many``, ``assay.evaluate``) run and
    close an event loop of their own: give each such call a new client; one reused across them finds its pooled
    connections dead (they fail as connection errors and the Judge retries them) and can no longer be closed.
    """

    name = "openai-client"

    def __init__(self, client: AsyncOpenAI, *, model: str | None = None, timeout: float | None = None) -> None:
        options: dict[str, Any] = {"max_retries": 0}
        if timeout is not None:
            options["timeout"] = timeout
        self.client = client
        self._client: Any = client.with_options(**options)
        self.model = model
        self.timeout = timeout
        self.where = str(getattr(client, "base_url", "the openai client")).rstrip("/")

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = dict(request.params)
        response_format = response_format_of(request)
        if response_format is not None:
            kwargs["response_format"] = response_format
        return kwargs

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion through the client, with the SDK's exceptions mapped to assay's."""
        model = self.model or client_model(request.model)
        try:
            completion = await self._client.chat.completions.create(
                model=model, messages=request.messages, **self._kwargs(request)
            )
        except Exception as exc:
            raise self._map_error(exc, model) from exc
        data = completion.model_dump() if hasattr(completion, "model_dump") else completion
        return parse_completion(data, self.where)

    def _map_error(self, exc: Exception, model: str) -> BackendError:
        """The assay error for an exception raised by the client (see the class docstring for the mapping)."""
        import openai  # loaded already: the client came from it

        if isinstance(exc, openai.APITimeoutError):
            limit = f" within {self.timeout:g} s" if self.timeout is not None else ""
            return TransientBackendError(f"no answer from {self.where}{limit}")
        if isinstance(exc, openai.APIConnectionError):
            cause = f" ({exc.__cause__!r})" if exc.__cause__ is not None else ""  # e.g. "Event loop is closed"
            return TransientBackendError(f"connection to {self.where} failed: {exc}{cause}")
        if isinstance(exc, openai.APIStatusError):
            response = exc.response
            return status_error(
                exc.status_code, response.text, model=model, url=self.where, retry_after=_retry_after(response.headers)
            )
        if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
            return TransientBackendError(f"malformed completion from {self.where}: {exc}")
        return BackendError(f"openai client call for {model!r} failed: {type(exc).__name__}: {exc}")
