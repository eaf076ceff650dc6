"""The OpenAI-compatible backend on aiohttp (``openai/...``, ``hosted_vllm/...``, ``ollama/...``, any ``--api-base``),
with the HTTP error mapping every backend shares (:func:`status_error`) and the server's context window.

See :mod:`assay.judge.backends` for why this path exists beside litellm.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from assay.errors import BackendError, ItemRejected, TransientBackendError
from assay.judge.base import ChatRequest, ChatResponse, TokenLogprob, is_plain_message

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "OLLAMA_API_BASE",
    "OPENAI_API_BASE",
    "OpenAICompatBackend",
    "parse_completion",
    "parse_retry_after",
    "response_format_of",
    "status_error",
    "token_logprobs",
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


# A provider's content filter refusing one item (Azure OpenAI's error code and inner code, its message, litellm's
# error name), matched in the body lower-cased with its spaces taken out.
_FILTER_MARKERS = ("content_filter", "responsibleaipolicyviolation", "contentmanagementpolicy", "contentpolicy")


def _error_of(body: str) -> dict[str, Any]:
    """The ``error`` object of a JSON error body, or {} when the body is not one."""
    try:
        error = json.loads(body).get("error", {})
    except (ValueError, AttributeError):
        return {}
    return error if isinstance(error, dict) else {}


def _said(error: dict[str, Any], snippet: str) -> str:
    """The server's ``error.message`` on one line (300 characters at most), else the body's ``snippet``."""
    return " ".join(str(error.get("message", snippet)).split())[:300]


def _context_overflow(error: dict[str, Any], snippet: str) -> ItemRejected:
    sizes = ""
    if "n_prompt_tokens" in error and "n_ctx" in error:
        sizes = f" ({error['n_prompt_tokens']} prompt tokens, {error['n_ctx']} in the context)"
    return ItemRejected(
        f"the prompt does not fit the model's context{sizes}; the server said: {_said(error, snippet)} -- use "
        "smaller groups (--listwise N) or chunks, or serve the model with a larger context per request (llama.cpp: "
        "raise -c or lower -np)",
        kind="too_long",
        status=400,
    )


def status_error(status: int, body: str, *, model: str, url: str, retry_after: float | None = None) -> BackendError:
    """The error for an HTTP status: transient for 408/409/429/5xx, :class:`ItemRejected` for a prompt over the
    context or one the provider's content filter refuses, otherwise a failure with the fix named."""
    snippet = " ".join(body.split())[:300]
    if status == 400 and any(marker in snippet.lower() for marker in _CONTEXT_MARKERS):
        return _context_overflow(_error_of(body), snippet)
    if status == 400 and any(marker in "".join(body.lower().split()) for marker in _FILTER_MARKERS):
        return ItemRejected.content_filter(_said(_error_of(body), snippet), status=status)
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


def response_format_of(request: ChatRequest) -> dict[str, Any] | None:
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
    text = ',"response_format":' + _compact(response_format_of(request))
    if len(_FORMATS) > 256:
        _FORMATS.clear()
    _FORMATS[(id(schema), request.schema_name)] = (schema, text)
    return text


def parse_completion(data: Any, url: str) -> ChatResponse:
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
            logprobs=token_logprobs(choice.get("logprobs")),
        )
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        raise TransientBackendError(f"malformed completion from {url}: missing {exc}") from exc


def token_logprobs(given: Any) -> tuple[TokenLogprob, ...] | None:
    """The ``logprobs.content`` of an OpenAI-style choice as tokens; None when absent or not of that shape (a server
    that ignores ``logprobs`` answers without it: the answer stands, only its probabilities are missing)."""
    content = given.get("content") if isinstance(given, dict) else None
    if not isinstance(content, list) or not content:
        return None
    out = []
    for one in content:
        if not isinstance(one, dict) or not isinstance(one.get("token"), str):
            return None
        top = one.get("top_logprobs") or []
        alternatives = tuple(
            (str(t["token"]), float(t["logprob"])) for t in top if isinstance(t, dict) and "token" in t
        )
        out.append(TokenLogprob(one["token"], float(one.get("logprob", 0.0)), alternatives))
    return tuple(out)


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
        self.api_key = api_key
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
        response_format = response_format_of(request)
        if response_format is not None:
            body["response_format"] = response_format
        return _compact(body).encode()

    def request_body(self, request: ChatRequest) -> bytes:
        """The JSON body a direct call POSTs for ``request`` (a batch input line carries the same body)."""
        return self._body(request)

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
        return parse_completion(data, self.url)

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
