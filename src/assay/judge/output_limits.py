"""Output limits of judge calls: the ``max_tokens`` setting, room for the prompt in the model's context, and what
an answer cut at its limit means (a generation loop, or a limit to raise).

A cut answer is :class:`ItemRejected`, not a transient failure: at temperature 0 the same request is cut the same
way, so asking again only pays twice. The reason says which: a loop (the text ends in one piece repeated, numbers
read as one symbol) is not fixed by a larger limit; a plain cut is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from assay.errors import ConfigError, ItemRejected
from assay.judge.base import ChatRequest, ChatResponse

__all__ = ["check_max_tokens", "check_room", "repeats_itself", "truncated"]


def check_max_tokens(value: int | Mapping[str, int] | None) -> dict[str, int]:
    """``max_tokens`` as ``{prompt name or "*": limit}``; every limit a positive whole number."""
    limits = {} if value is None else ({"*": value} if isinstance(value, int) else dict(value))
    for name, limit in limits.items():
        if not isinstance(limit, int) or limit < 1:
            where = "" if name == "*" else f" for prompt {name!r}"
            raise ConfigError(f"max_tokens{where} must be a whole number of at least 1, got {limit!r}")
    return limits


def repeats_itself(text: str, *, times: int = 4, longest: int = 200) -> bool:
    """True when ``text`` ends in one piece written ``times`` times over (a generation loop): ``"ab ab ab ab "``.

    Numbers are read as one symbol, so a list that counts on without end (``{"id": "81"}, {"id": "82"}, ...``, what
    a small model does with a listwise prompt) is a loop too."""
    if len(text) - len(text.rstrip()) >= 8 * times:  # blank lines or spaces without end
        return True
    tail = re.sub(r"\d+", "0", text.rstrip())[-times * longest :]
    if len(tail) < 2 * times:
        return False
    for period in range(1, len(tail) // times + 1):
        piece = tail[-period:]
        if tail.endswith(piece * times) and piece.strip():
            return True
    return False


def truncated(request: ChatRequest, response: ChatResponse) -> ItemRejected:
    limit = request.params.get("max_tokens")
    at = f" at max_tokens={limit}" if limit is not None else ""
    if repeats_itself(response.content):
        return ItemRejected(
            f"the answer was cut{at} while repeating itself (a generation loop): a larger limit will not help; "
            "use a larger model or another prompt",
            kind="loop",
            raw=response.content[-500:],
            answer=response.content,
        )
    return ItemRejected(
        f"the answer was cut{at} (finish_reason=length): raise it with --max-tokens {request.prompt_name}=N "
        "(or --max-tokens N for every prompt)",
        kind="truncated",
        raw=response.content[-500:],
        answer=response.content,
    )


def check_room(limits: Mapping[str, Any], window: int) -> None:
    """Raise :class:`ConfigError` for the first prompt whose ``max_tokens`` takes 3/4 or more of ``window`` (the tokens
    one request may hold), leaving too little for its input; the message gives a limit that fits."""
    for name, limit in limits.items():
        if isinstance(limit, int) and limit >= window * 3 // 4:
            raise ConfigError(
                f"prompt {name!r} reserves max_tokens={limit} for its answer but the model's server holds "
                f"{window} tokens per request, leaving too little for the prompt: pass --max-tokens "
                f"{name}={window // 4} (or a smaller number for all prompts), or give the server a larger context"
            )
