"""The judge options and the judges made from them: one group shared by ``assay build``, ``grade`` and ``eval``.

An option added to ``_OPTIONS`` (and read in :func:`judge_from_options`) appears in all three commands, in the same
place of their ``--help``. ``build`` and ``grade`` need a judge (:func:`judge_options`); ``eval`` can run without
one (:func:`optional_judge_options`, with its ``--no-judge`` right after ``--judge``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from assay.aio import run_sync
from assay.cli.cache import CACHE_DIR, resolve_cache_dir
from assay.errors import ConfigError
from assay.judge import Judge, Price, make_judge
from assay.judge.factory import make_dry_run_judge
from assay.judge.prompts import prompt_names

__all__ = [
    "api_key_for",
    "check_context",
    "dry_run_judge",
    "judge_from_options",
    "judge_options",
    "optional_judge_options",
    "parse_max_tokens",
    "parse_price",
]

F = TypeVar("F", bound=Callable[..., Any])


def parse_price(value: str | None) -> Price | None:
    """``--price IN/OUT`` (USD per million tokens) -> Price; None when not given."""
    if value is None:
        return None
    try:
        given_in, given_out = (float(x) for x in value.split("/"))
    except ValueError:
        raise ConfigError(f"--price {value!r}: give USD per million tokens as INPUT/OUTPUT, e.g. 0.15/0.60") from None
    return Price.per_million(given_in, given_out)


def api_key_for(judge: str, api_key: str | None, api_base: str | None) -> str | None:
    """The API key: ``--api-key``, else ``$OPENAI_API_KEY`` for ``openai/...`` models and ``--api-base`` servers."""
    if api_key or not (judge.startswith("openai/") or api_base):
        return api_key
    return os.environ.get("OPENAI_API_KEY")


_JUDGE_HELP = "offline, openai/MODEL, anthropic/MODEL, hosted_vllm/MODEL..."
# everything after --judge, in --help order
_OPTIONS = [
    click.option("--api-base", default=None, help="Base URL of an OpenAI-compatible server (vLLM, Ollama /v1, proxy)."),
    click.option("--api-key", default=None, help="API key (default: $OPENAI_API_KEY for openai/ and --api-base)."),
    click.option("--concurrency", default=8, show_default=True, type=click.IntRange(1, 1024), help="Calls at once."),
    click.option("--rpm", type=click.IntRange(1), default=None, help="At most this many requests per minute."),
    click.option("--tpm", type=click.IntRange(1), default=None, help="At most this many tokens a minute (estimated)."),
    CACHE_DIR,
    click.option("--no-cache", is_flag=True, help="Neither read nor write the judge cache."),
    click.option("--max-cost", type=float, default=None, help="Stop cleanly once this many USD are spent."),
    click.option("--price", default=None, help="USD per million tokens IN/OUT for a model without a known price."),
    click.option("--no-structured", is_flag=True, help="For servers without response_format json_schema support."),
    click.option("--timeout", default=120.0, show_default=True, help="Seconds per model call."),
    click.option(
        "--max-tokens",
        "max_tokens",
        multiple=True,
        metavar="N|PROMPT=N",
        help="Output token limit for every prompt (N) or one (PROMPT=N, repeatable); default: each prompt's own.",
    ),
    click.option(
        "--prompt-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help="Prompt overrides."
    ),
]


def _with(options: list[Any], function: F) -> F:
    for option in reversed(options):
        function = option(function)
    return function


def judge_options(function: F) -> F:
    """Add the judge options (``--judge`` required ... ``--prompt-dir``); :func:`judge_from_options` reads them."""
    return _with([click.option("--judge", "judge_spec", required=True, help=_JUDGE_HELP), *_OPTIONS], function)


def optional_judge_options(*after_judge: Any) -> Callable[[F], F]:
    """The judge options with ``--judge`` optional (None when not given), and ``after_judge`` options right after it."""
    judge = click.option("--judge", "judge_spec", default=None, help=_JUDGE_HELP)
    return lambda function: _with([judge, *after_judge, *_OPTIONS], function)


def parse_max_tokens(values: Sequence[str], prompt_dir: Path | None = None) -> dict[str, int] | None:
    """``--max-tokens 512`` -> ``{"*": 512}``; ``--max-tokens relevance_listwise=1024`` -> per prompt (repeatable);
    a prompt name must be a bundled prompt's or one in ``prompt_dir``."""
    limits: dict[str, int] = {}
    known = prompt_names(prompt_dir) if any("=" in value for value in values) else []
    for value in values:
        name, _, number = value.rpartition("=")
        if not number.strip().isdigit() or int(number) < 1:
            raise ConfigError(f"--max-tokens {value!r}: give a whole number N >= 1, or PROMPT=N (e.g. relevance=1024)")
        if name and name not in known:
            raise ConfigError(f"--max-tokens {value!r}: no prompt {name!r}; prompts: {', '.join(known)}")
        limits[name or "*"] = int(number)
    return limits or None


def check_context(judge: Judge, prompt_names: Sequence[str]) -> None:
    """Ask the model's server how many tokens a request may hold (when it says) and refuse, before any call, a
    prompt whose ``max_tokens`` leaves no room for its input; then close the connection made for asking."""
    if not hasattr(judge.backend, "context_window"):  # the offline judge, litellm: nothing to ask
        return

    async def ask() -> None:
        try:
            await judge.acheck_output_limits(prompt_names)
        finally:
            await judge.aclose()

    run_sync(ask)


def _cache_dir(options: dict[str, Any]) -> Path | None:
    use_cache = not options["no_cache"] and (options["judge_spec"] != "offline" or options["cache_dir"] is not None)
    return resolve_cache_dir(options["cache_dir"]) if use_cache else None


def judge_from_options(options: dict[str, Any]) -> Judge:
    """A judge from the values of :func:`judge_options` (the offline judge uses a cache only with --cache-dir)."""
    spec = options["judge_spec"]
    return make_judge(
        spec,
        api_base=options["api_base"],
        api_key=api_key_for(spec, options["api_key"], options["api_base"]),
        cache_dir=_cache_dir(options),
        concurrency=options["concurrency"],
        rpm=options["rpm"],
        tpm=options["tpm"],
        max_cost=options["max_cost"],
        structured=not options["no_structured"],
        timeout=options["timeout"],
        prompt_dir=options["prompt_dir"],
        price=parse_price(options["price"]),
        max_tokens=parse_max_tokens(options["max_tokens"], options["prompt_dir"]),
    )


def dry_run_judge(options: dict[str, Any]) -> Judge:
    """A judge that renders prompts and reads the cache but never calls a model (for ``--dry-run``)."""
    return make_dry_run_judge(
        options["judge_spec"],
        cache_dir=_cache_dir(options),
        prompt_dir=options["prompt_dir"],
        structured=not options["no_structured"],
        price=parse_price(options["price"]),
        max_tokens=parse_max_tokens(options["max_tokens"], options["prompt_dir"]),
    )
