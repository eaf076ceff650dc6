"""Backends that talk to models: an OpenAI-compatible one on aiohttp, and litellm for everything else.

Why two: client CPU per call decides throughput against fast self-hosted judges. Measured on 2 cores at concurrency
64 against a loopback server with 100 ms latency, litellm's ``acompletion`` costs about 8 ms of client CPU per call;
a bare aiohttp POST costs well under 1 ms. So OpenAI-compatible endpoints (``openai/...``, ``hosted_vllm/...``,
``ollama/...`` via its ``/v1``, any ``--api-base``: vLLM, a LiteLLM proxy, ...) use :class:`OpenAICompatBackend`;
providers that need request translation (``anthropic/...``, ``bedrock/...``, ``vertex_ai/...``, ``gemini/...``)
use :class:`LiteLLMBackend`. A Python user's own ``openai.AsyncOpenAI`` / ``AsyncAzureOpenAI`` client (Azure, custom
auth, proxies) goes through :class:`OpenAIClientBackend`. This package (its ``sdk`` module) is the only place in
assay that imports litellm or openai (lazily: litellm takes seconds; openai is needed only by a user who already has
a client). :mod:`.http` holds the aiohttp backend and the HTTP error mapping, :mod:`.sdk` the two client libraries.

Errors: 429 (with ``Retry-After``), 408, 409, 5xx, connection errors, timeouts and malformed response bodies raise
:class:`TransientBackendError`; a 400 that says the prompt is longer than the model's context (llama.cpp's
``exceed_context_size_error``, vLLM's and OpenAI's "maximum context length"), or that a content filter refused
the prompt (Azure OpenAI's ``content_filter`` / ``ResponsibleAIPolicyViolation``, litellm's content-policy error)
raises :class:`ItemRejected` (that item is unscored, the run goes on); 400, 401, 403, 404 and other 4xx raise
:class:`BackendError` with the fix.

Context window: :meth:`OpenAICompatBackend.context_window` asks the server how many tokens one request may hold
(llama.cpp's ``/props`` ``n_ctx``, per slot; vLLM's ``/v1/models`` ``max_model_len``); None where it does not say.
"""

from __future__ import annotations

from assay.errors import ConfigError
from assay.judge.backends.http import (
    OLLAMA_API_BASE,
    OPENAI_API_BASE,
    OpenAICompatBackend,
    parse_retry_after,
    status_error,
    wire_model,
)
from assay.judge.backends.sdk import LiteLLMBackend, OpenAIClientBackend, client_model
from assay.judge.base import Backend

__all__ = [
    "OPENAI_API_BASE",
    "LiteLLMBackend",
    "OpenAIClientBackend",
    "OpenAICompatBackend",
    "client_model",
    "make_backend",
    "parse_retry_after",
    "status_error",
    "wire_model",
]


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
