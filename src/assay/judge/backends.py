"""Backends that talk to models: an OpenAI-compatible one on aiohttp, and litellm for everything else.

Why two: client CPU per call decides throughput against fast self-hosted judges. Measured on 2 cores at concurrency
64 against a loopback server with 100 ms latency, litellm's ``acompletion`` costs about 8 ms of client CPU per call;
a bare aiohttp POST costs well under 1 ms. So OpenAI-compatible endpoints (``openai/...``, ``hosted_vllm/...``,
``ollama/...`` via its ``/v1``, any ``--api-base``: vLLM, a LiteLLM proxy, ...) use :class:`OpenAICompatBackend`;
providers that need request translation (``anthropic/...``, ``bedrock/...``, ``vertex_ai/...``, ``gemini/...``)
use :class:`LiteLLMBackend`. A Python user's own ``openai.AsyncOpenAI`` / ``AsyncAzureOpenAI`` client (Azure, custom
auth, proxies) goes through :class:`OpenAIClientBackend`. This is the only module of assay that imports litellm or
openai (lazily: litellm takes seconds; openai is needed only by a user who already has a client).

Errors: 429 (with ``Retry-After``), 408, 409, 5xx, connection errors, timeouts and malformed response bodies raise
:class:`TransientBackendError`; a 400 that says the prompt is longer than the model's context (llama.cpp's
``exceed_context_size_error``, vLLM's and OpenAI's "maximum context length") raises :class:`ItemRejected` (that item
is unscored, the run goes on); 400, 401, 403, 404 and other 4xx raise :class:`BackendError` with the fix.

Context window: :meth:`OpenAICompatBackend.context_window` asks the server how many tokens one request may hold
(llama.cpp's ``/props`` ``n_ctx``, per slot; vLLM's ``/v1/models`` ``max_model_len``); None where it does not say.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from assay.errors import BackendError, ConfigError, ItemRejected, TransientBackendError
from assay.judge.base import Backend, ChatRequest, ChatResponse, is_plain_message

if TYPE_CHECKING:
    import aiohttp
    from openai import AsyncOpenAI

__all__ = [
    "OPENAI_API_BASE",
    "LiteLLMBackend",
    "OpenAIClientBackend",
    "OpenAICompatBackend",
    "make_backend",
    "parse_retry_after",
    "status_error",
    "wire_model",
]

OPENAI_API_BASE = "https://api.openai.com/v1"
OLLAMA_API_BASE = "http://localhost:11434/v1"
# Prefixes that only tell litellm which OpenAI-compatible route to take; the server wants the name after them.
_COMPAT_PREFIXES = ("openai/", "hosted_vllm/", "ollama/", "ollama_chat/", "litellm_proxy/")
_TRANSIENT_STATUS = {408, 409, 425, 429}


def wire_model(spec: str) -> str:
    """The model name an OpenAI-compatible server expects: ``openai/gpt-4o-mini`` -> ``gpt-4o-mini``."""
    for prefix in _COMPAT_PREFIXES:
        if spec.startswith(prefix):
            return spec[len(prefix) :]
    return spec


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_CONTEXT_MARKERS = (
    "exceed_context_size",
    "exceeds the available context",
    "maximum context length",
    "context_length_exceeded",
    "context length",
    "too many tokens",
)


def _context_overflow(body: str, snippet: str) -> ItemRejected:
    said, sizes = snippet, ""
    try:
        error = json.loads(body).get("error", {})
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict):
        said = " ".join(str(error.get("message", snippet)).split())[:300]
        if "n_prompt_tokens" in error and "n_ctx" in error:
            sizes = f" ({error['n_prompt_tokens']} prompt tokens, {error['n_ctx']} in the context)"
    return ItemRejected(
        f"the prompt does not fit the model's context{sizes}; the server said: {said} -- use smaller groups "
        "(--listwise N) or chunks, or serve the model with a larger context per request (llama.cpp: raise -c or "
        "lower -np)",
        kind="too_long",
        status=400,
    )


def status_error(status: int, body: str, *, model: str, url: str, retry_after: float | None = None) -> BackendError:
    """The error for an HTTP status: transient for 408/409/429/5xx, :class:`ItemRejected` for a prompt over the
    context, otherwise a failure with the fix named."""
    snippet = " ".join(body.split())[:300]
    if status == 400 and any(marker in snippet.lower() for marker in _CONTEXT_MARKERS):
        return _context_overflow(body, snippet)
    if status in _TRANSIENT_STATUS or status >= 500:
        return TransientBackendError(f"HTTP {status} from {url}: {snippet}", status=status, retry_after=retry_after)
    lowered = snippet.lower()
    if status == 401:
        fix = "check the API key: set OPENAI_API_KEY (or the provider's key variable) or pass --api-key"
    elif status == 403:
        fix = f"the key has no access to model {model!r}; use a key or model you are allowed to use"
    elif status == 404:
        fix = f"check the model name {model!r} and the api base (an OpenAI-compatible base usually ends in /v1)"
    elif any(word in lowered for word in ("response_format", "json_schema", "structured", "unsupported")):
        fix = "the server rejects structured output or a parameter; rerun with --no-structured"
    else:
        fix = f"the server rejected the request for model {model!r}; check the model name and decoding parameters"
    return BackendError(f"HTTP {status} from {url}: {snippet} -- {fix}", status=status)


def _response_format(request: ChatRequest) -> dict[str, Any] | None:
    if request.response_schema is None:
        return None
    return {
        "type": "json_schema",
        "json_schema": {"name": request.schema_name, "schema": dict(request.response_schema), "strict": True},
    }


_BODY_KEYS = frozenset({"model", "messages", "response_format"})
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_json_str: Callable[[str], str] = json.encoder.encode_basestring
_FORMATS: dict[tuple[int, str], tuple[Mapping[str, Any], str]] = {}


def _message_json(role: str, content: str) -> str:
    if len(content) > 256:  # a system prompt: the same str object on every call, so its hash is cached
        return _long_message_json(role, content)
    return f'{{"role":{_json_str(role)},"content":{_json_str(content)}}}'


@functools.lru_cache(maxsize=32)
def _long_message_json(role: str, content: str) -> str:
    return f'{{"role":{_json_str(role)},"content":{_json_str(content)}}}'


def _response_format_json(request: ChatRequest) -> str:
    """``,"response_format":{...}`` for a structured request ("" otherwise), memoised by schema identity."""
    schema = request.response_schema
    if schema is None:
        return ""
    memo = _FORMATS.get((id(schema), request.schema_name))
    if memo is not None and memo[0] is schema:
        return memo[1]
    text = ',"response_format":' + _compact(_response_format(request))
    if len(_FORMATS) > 256:
        _FORMATS.clear()
    _FORMATS[(id(schema), request.schema_name)] = (schema, text)
    return text


def _parse_completion(data: Any, url: str) -> ChatResponse:
    try:
        choice = data["choices"][0]
        content = choice["message"].get("content")
        usage = data.get("usage") or {}
        return ChatResponse(
            content=content if isinstance(content, str) else "",
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=choice.get("finish_reason"),
            model=data.get("model"),
        )
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise TransientBackendError(f"malformed completion from {url}: missing {exc}") from exc


class OpenAICompatBackend:
    """POST ``{api_base}/chat/completions`` with aiohttp; one session per backend, made in the running loop.

    ``connections`` caps open connections (keep it at or above the judge's concurrency). ``timeout`` is per request
    in seconds. Close with :meth:`aclose` (the Judge does it).
    """

    name = "openai-compatible"

    def __init__(
        self,
        api_base: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        connections: int = 100,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.api_base = api_base.rstrip("/")
        self.url = f"{self.api_base}/chat/completions"
        self.model = model
        self.timeout = timeout
        self.connections = max(1, connections)
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        import aiohttp  # here, not at module level: it costs ~0.2 s and `assay --help` never needs it

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(limit=self.connections, limit_per_host=0, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            )
            self._loop = loop
        return self._session

    def _body(self, request: ChatRequest) -> bytes:
        """The JSON request body: model, messages, the decoding params, and ``response_format`` when structured.

        Built from pieces: the system prompt's and the schema's JSON are encoded once per prompt and reused.
        """
        model = self.model or wire_model(request.model)
        if _BODY_KEYS.isdisjoint(request.params) and all(is_plain_message(m) for m in request.messages):
            messages = ",".join(_message_json(m["role"], m["content"]) for m in request.messages)
            params = _compact(dict(request.params))[1:-1]
            tail = ("," + params if params else "") + _response_format_json(request)
            return f'{{"model":{_json_str(model)},"messages":[{messages}]{tail}}}'.encode()
        body: dict[str, Any] = {"model": model, "messages": request.messages}
        body.update(request.params)
        response_format = _response_format(request)
        if response_format is not None:
            body["response_format"] = response_format
        return _compact(body).encode()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion; raises TransientBackendError or BackendError on failure."""
        import aiohttp  # already loaded by _get_session; a lookup in sys.modules

        session = self._get_session()
        try:
            async with session.post(self.url, data=self._body(request)) as response:
                raw = await response.read()
                if response.status != 200:
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    text = raw.decode("utf-8", "replace")
                    raise status_error(
                        response.status, text, model=request.model, url=self.url, retry_after=retry_after
                    )
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise TransientBackendError(f"connection to {self.url} failed: {exc}") from exc
        except TimeoutError as exc:
            raise TransientBackendError(f"no answer from {self.url} within {self.timeout:g} s") from exc
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise TransientBackendError(f"malformed JSON body from {self.url}: {raw[:120]!r}") from exc
        return _parse_completion(data, self.url)

    async def context_window(self) -> int | None:
        """Tokens one request may hold, as the server says (llama.cpp ``/props``, vLLM ``/v1/models``), or None."""
        import aiohttp

        root = self.api_base.removesuffix("/v1")
        for url, read in ((f"{root}/props", _llama_cpp_context), (f"{self.api_base}/models", _vllm_context)):
            try:
                async with self._get_session().get(url) as response:
                    if response.status != 200:
                        continue
                    found = read(json.loads(await response.read()))
            except (aiohttp.ClientError, TimeoutError, ValueError):
                continue
            if found:
                return found
        return None

    async def aclose(self) -> None:
        """Close the HTTP session (a new one is made on the next call)."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


def _llama_cpp_context(data: Any) -> int | None:
    """``n_ctx`` per slot from llama.cpp's ``/props``."""
    try:
        value = data["default_generation_settings"]["n_ctx"]
    except (KeyError, TypeError):
        return None
    return int(value) if isinstance(value, int) and value > 0 else None


def _vllm_context(data: Any) -> int | None:
    """``max_model_len`` of the first model in vLLM's ``/v1/models``."""
    try:
        value = data["data"][0]["max_model_len"]
    except (KeyError, IndexError, TypeError):
        return None
    return int(value) if isinstance(value, int) and value > 0 else None


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
        response_format = _response_format(request)
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
        return _parse_completion(data, self.api_base or self.model)

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


def _offline_backend() -> Backend:
    import importlib

    try:
        module = importlib.import_module("assay.judge.offline")
    except ImportError as exc:
        raise ConfigError(f"the offline judge is not available ({exc})") from exc
    backend: Backend = module.OfflineBackend()
    return backend


def make_backend(
    spec: str,
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
    connections: int = 100,
) -> Backend:
    """The backend for a judge named as litellm names models (see the module docstring for the routing)."""
    if spec == "offline":
        return _offline_backend()
    if api_base:
        return OpenAICompatBackend(api_base, api_key=api_key, timeout=timeout, connections=connections)
    if spec.startswith("openai/"):
        if not api_key:
            raise ConfigError(
                f"judge {spec!r} needs an OpenAI API key: set OPENAI_API_KEY or pass --api-key "
                "(or --api-base for a server that needs no key)"
            )
        return OpenAICompatBackend(OPENAI_API_BASE, api_key=api_key, timeout=timeout, connections=connections)
    if spec.startswith(("ollama/", "ollama_chat/")):
        return OpenAICompatBackend(OLLAMA_API_BASE, api_key=api_key, timeout=timeout, connections=connections)
    if spec.startswith(("hosted_vllm/", "litellm_proxy/")):
        raise ConfigError(f"judge {spec!r} needs the server's address: pass --api-base http://HOST:PORT/v1")
    if "/" in spec:
        return LiteLLMBackend(spec, api_key=api_key, timeout=timeout)
    raise ConfigError(
        f"unknown judge {spec!r}: name it as litellm does (openai/gpt-4o-mini, anthropic/claude-..., "
        "hosted_vllm/MODEL with --api-base), pass --api-base for any OpenAI-compatible server, or use 'offline'"
    )


def _client_model(spec: str) -> str:
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
        response_format = _response_format(request)
        if response_format is not None:
            kwargs["response_format"] = response_format
        return kwargs

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion through the client, with the SDK's exceptions mapped to assay's."""
        model = self.model or _client_model(request.model)
        try:
            completion = await self._client.chat.completions.create(
                model=model, messages=request.messages, **self._kwargs(request)
            )
        except Exception as exc:
            raise self._map_error(exc, model) from exc
        data = completion.model_dump() if hasattr(completion, "model_dump") else completion
        return _parse_completion(data, self.where)

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
