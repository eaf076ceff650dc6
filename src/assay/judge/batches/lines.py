"""Batch files line by line: the input line of one request, and what one output or error line says.

An output or error line is read into an :class:`Outcome`: the model's answer (a :class:`ChatResponse`, to be
validated by the prompt's output model as a direct call's is) or why there is none, as an :class:`Unscored` of the
kind a direct call would give (``truncated``, ``loop``, ``too_long``, ``content_filter``, ``backend_error``) or of a
batch's own kind (``batch_expired``, ``batch_cancelled``: the batch ended before the request was run).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from assay.errors import BackendError, ItemRejected
from assay.judge.backends.http import parse_completion, status_error
from assay.judge.base import ChatRequest, ChatResponse
from assay.judge.output_limits import truncated
from assay.types import Unscored

__all__ = ["ENDED_KINDS", "Outcome", "input_line", "read_lines", "rejected"]

ENDED_KINDS = {"batch_expired", "batch_cancelled"}


def input_line(custom_id: str, url: str, body: bytes) -> bytes:
    """One request of a batch input file (``body`` is the JSON a direct call would POST)."""
    head = json.dumps({"custom_id": custom_id, "method": "POST", "url": url})[:-1]
    return head.encode() + b', "body": ' + body + b"}\n"


@dataclass(frozen=True)
class Outcome:
    """One request's result in a batch: ``response`` when the provider answered 200, else ``unscored``."""

    custom_id: str
    response: ChatResponse | None
    unscored: Unscored | None


def read_lines(content: bytes, where: str) -> Iterator[Outcome]:
    """The outcomes of an output or error file (``where`` names it in messages); unreadable lines are skipped."""
    for raw in content.splitlines():
        try:
            item = json.loads(raw)
            custom_id = str(item["custom_id"])
        except (ValueError, KeyError, TypeError):
            continue
        yield _outcome(custom_id, item, where)


def _outcome(custom_id: str, item: dict[str, Any], where: str) -> Outcome:
    error, response = item.get("error"), item.get("response")
    if isinstance(error, dict) and not isinstance(response, dict):
        code = str(error.get("code") or "")
        kind = code if code in ENDED_KINDS else "backend_error"
        reason = f"the batch request failed ({code}): {error.get('message', '')}".strip()
        return Outcome(custom_id, None, Unscored(reason=reason, kind=kind, raw=None))
    if not isinstance(response, dict):
        return Outcome(custom_id, None, Unscored(reason=f"no response in {where}", kind="backend_error", raw=None))
    status, body = int(response.get("status_code") or 0), response.get("body")
    if status != 200:
        exc = status_error(status, json.dumps(body), model="batch", url=where)
        kind = exc.kind if isinstance(exc, ItemRejected) else "backend_error"
        return Outcome(custom_id, None, Unscored(reason=str(exc), kind=kind, raw=None))
    try:
        return Outcome(custom_id, parse_completion(body, where), None)
    except BackendError as exc:
        return Outcome(custom_id, None, Unscored(reason=str(exc), kind="backend_error", raw=None))


def rejected(request: ChatRequest, response: ChatResponse) -> Unscored | None:
    """Why an answer the provider gave cannot be used as it is (cut at max_tokens, withheld), or None."""
    if response.finish_reason == "length":
        exc = truncated(request, response)
    elif response.finish_reason == "content_filter":
        exc = ItemRejected.content_filter(f"finish_reason=content_filter, answer {response.content[:80]!r}")
    else:
        return None
    return Unscored(reason=str(exc), kind=exc.kind, raw=exc.raw)
