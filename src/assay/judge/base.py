"""The seams of the judge layer: what a backend is asked, what it answers, and the Backend protocol.

A :class:`ChatRequest` carries both the rendered chat messages (for model backends) and the prompt's name and input
variables (for the offline backend, which computes its answer from the inputs instead of reading prose). Backends
implement one async method, :meth:`Backend.complete`, and raise :class:`assay.errors.TransientBackendError` for
failures worth retrying and :class:`assay.errors.BackendError` for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["Backend", "ChatRequest", "ChatResponse", "TokenLogprob", "is_plain_message"]


@dataclass(frozen=True)
class TokenLogprob:
    """One token of an answer as the server returned it with ``logprobs``: its text, its log probability, and the
    most likely tokens at its place (``top``: text and log probability, the token itself among them)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class ChatRequest:
    """One call to a model, fully rendered.

    ``params`` holds decoding parameters only (temperature, max_tokens, seed, top_p): they are part of the cache key.
    ``response_schema`` is the JSON schema of the prompt's output model, sent as ``response_format`` when the backend
    asks for structured output. ``variables`` are the prompt's inputs, as given to the renderer.
    """

    model: str
    messages: list[dict[str, str]]
    prompt_name: str
    prompt_version: str
    variables: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    response_schema: Mapping[str, Any] | None = None
    schema_name: str = "output"


@dataclass(frozen=True)
class ChatResponse:
    """What the model answered: the raw text content, token counts, why it stopped (``length`` = truncated), and
    the answer's tokens with their probabilities when they were asked for (``logprobs``) and the server gave them."""

    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    model: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None


@runtime_checkable
class Backend(Protocol):
    """Something that answers chat requests. ``name`` goes on every label the backend's answers become."""

    name: str

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


def is_plain_message(message: Mapping[str, Any]) -> bool:
    """True for ``{"role": str, "content": str}`` and nothing else (the form the prompts render)."""
    return len(message) == 2 and type(message.get("role")) is str and type(message.get("content")) is str
