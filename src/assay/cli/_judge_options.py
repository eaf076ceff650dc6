"""The judge options and the judges made from them: one group shared by ``assay build``, ``grade``, ``eval`` and
``judge-check``.

An option added to ``_OPTIONS`` (and read in :func:`judge_from_options`) appears in all of them, in the same place of
their ``--help``. ``build`` and ``grade`` need a judge and take several (:func:`panel_options`: ``--judge`` repeated,
``--combine``); ``eval`` can run without one (:func:`optional_judge_options`, with its ``--no-judge`` right after
``--judge``); ``judge-check`` measures one (:func:`judge_options`). Commands read ``judge_spec`` (the first judge, or
None) and ``judge_specs`` (all of them) from the options.
"""

from __future__ import annotations

import functools
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
from assay.judge.panel import COMBINE_RULES, Grader, Panel, judges_of
from assay.judge.prompts import prompt_names

__all__ = [
    "api_base_for",
    "api_key_for",
    "check_context",
    "dry_run_judge",
    "judge_from_options",
    "judge_options",
    "one_dry_run_judge",
    "one_judge",
    "optional_judge_options",
    "panel_options",
    "parse_max_tokens",
    "parse_price",
    "split_judge",
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


_PANEL_HELP = (
    f"{_JUDGE_HELP} Repeat for a panel: each relevance pair judged by each (other prompts: the first); "
    "MODEL=URL gives that judge its own server (else --api-base)."
)
_COMBINE = click.option(
    "--combine",
    type=click.Choice(COMBINE_RULES),
    default=None,
    help="How a panel's grades of a pair combine (default majority; ties and halves go to the lower grade).",
)


def judge_options(function: F) -> F:
    """Add the judge options (``--judge`` required, once ... ``--prompt-dir``); :func:`one_judge` reads them."""
    judge = click.option("--judge", "judge_spec", required=True, help=f"{_JUDGE_HELP} MODEL=URL: its server.")
    return _with([judge, *_OPTIONS], _split(function))


def _split(function: F) -> F:
    """Read ``--judge`` values (``judge_specs``, repeatable, or ``judge_spec``, once) as models with optional
    ``=URL``: ``judge_specs`` (all models), ``judge_spec`` (the first, or None) and ``judge_api_bases``
    (model -> URL) reach the command."""

    @functools.wraps(function)
    def wrapper(*args: Any, **options: Any) -> Any:
        values = options["judge_specs"] if "judge_specs" in options else (options["judge_spec"],)
        split = [split_judge(value) for value in values]
        options["judge_specs"] = tuple(spec for spec, _ in split)
        options["judge_api_bases"] = {spec: url for spec, url in split if url}
        options["judge_spec"] = options["judge_specs"][0] if options["judge_specs"] else None
        return function(*args, **options)

    return wrapper  # type: ignore[return-value]


def split_judge(value: str) -> tuple[str, str | None]:
    """``hosted_vllm/qwen=http://gpu:8000/v1`` -> (``hosted_vllm/qwen``, its server); a plain model -> (model, None)."""
    spec, sep, url = value.partition("=")
    if not sep:
        return value, None
    if not url.startswith(("http://", "https://")) or not spec:
        raise ConfigError(
            f"--judge {value!r}: give MODEL, or MODEL=URL with the judge's OpenAI-compatible server, e.g. "
            "hosted_vllm/qwen=http://gpu:8000/v1"
        )
    if spec == "offline":
        raise ConfigError(f"--judge {value!r}: the offline judge calls no server; give --judge offline")
    return spec, url


def api_base_for(spec: str, options: dict[str, Any]) -> str | None:
    """The server of judge ``spec``: its own (``--judge MODEL=URL``), else ``--api-base``."""
    own: dict[str, str] = options["judge_api_bases"]
    return own.get(spec) or options["api_base"]


def panel_options(function: F) -> F:
    """The judge options with ``--judge`` required and repeatable, and ``--combine`` after it."""
    judge = click.option("--judge", "judge_specs", required=True, multiple=True, help=_PANEL_HELP)
    return _with([judge, _COMBINE, *_OPTIONS], _split(function))


def optional_judge_options(*after_judge: Any) -> Callable[[F], F]:
    """The judge options with ``--judge`` optional and repeatable (``judge_spec`` None when not given), then
    ``after_judge`` options, then ``--combine``."""
    judge = click.option("--judge", "judge_specs", multiple=True, help=_PANEL_HELP)
    return lambda function: _with([judge, *after_judge, _COMBINE, *_OPTIONS], _split(function))


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


def check_context(judge: Grader, prompt_names: Sequence[str]) -> None:
    """Ask each model's server how many tokens a request may hold (when it says) and refuse, before any call, a
    prompt whose ``max_tokens`` leaves no room for its input; then close the connection made for asking."""
    asking = [j for j in judges_of(judge) if hasattr(j.backend, "context_window")]  # not offline, litellm

    async def ask() -> None:
        for one in asking:
            try:
                await one.acheck_output_limits(prompt_names)
            finally:
                await one.aclose()

    if asking:
        run_sync(ask)


def _cache_dir(spec: str, options: dict[str, Any]) -> Path | None:
    use_cache = not options["no_cache"] and (spec != "offline" or options["cache_dir"] is not None)
    return resolve_cache_dir(options["cache_dir"]) if use_cache else None


def _specs(options: dict[str, Any]) -> tuple[str, ...]:
    """The judges named (``--judge`` once or more), checked against ``--combine``."""
    specs: tuple[str, ...] = options["judge_specs"]
    if len(specs) == 1 and options.get("combine"):
        raise ConfigError(f"--combine {options['combine']} combines several judges: give --judge twice or more")
    return specs


def _panel(judges: list[Judge], options: dict[str, Any]) -> Grader:
    return judges[0] if len(judges) == 1 else Panel(tuple(judges), combine=options.get("combine") or "majority")


def judge_from_options(options: dict[str, Any]) -> Grader:
    """A judge from the values of :func:`judge_options` (the offline judge uses a cache only with --cache-dir), or a
    panel of one judge per ``--judge`` when several are named."""
    return _panel([_one_judge(spec, options) for spec in _specs(options)], options)


def _price(spec: str, options: dict[str, Any]) -> Price | None:
    """``--price`` for a model judge; the offline judge stays free (a panel's ``--price`` is for its models)."""
    return None if spec == "offline" else parse_price(options["price"])


def one_judge(options: dict[str, Any]) -> Judge:
    """The one judge of a command that measures a single judge (:func:`judge_options`)."""
    return _one_judge(options["judge_spec"], options)


def one_dry_run_judge(options: dict[str, Any]) -> Judge:
    """:func:`one_judge` for ``--dry-run``: renders prompts and reads the cache, never calls a model."""
    return _one_dry_run_judge(options["judge_spec"], options)


def _one_judge(spec: str, options: dict[str, Any]) -> Judge:
    return make_judge(
        spec,
        api_base=api_base_for(spec, options),
        api_key=api_key_for(spec, options["api_key"], api_base_for(spec, options)),
        cache_dir=_cache_dir(spec, options),
        concurrency=options["concurrency"],
        rpm=options["rpm"],
        tpm=options["tpm"],
        max_cost=options["max_cost"],
        structured=not options["no_structured"],
        timeout=options["timeout"],
        prompt_dir=options["prompt_dir"],
        price=_price(spec, options),
        max_tokens=parse_max_tokens(options["max_tokens"], options["prompt_dir"]),
    )


def dry_run_judge(options: dict[str, Any]) -> Grader:
    """A judge (or a panel of them) that renders prompts and reads the cache but never calls a model."""
    return _panel([_one_dry_run_judge(spec, options) for spec in _specs(options)], options)


def _one_dry_run_judge(spec: str, options: dict[str, Any]) -> Judge:
    return make_dry_run_judge(
        spec,
        cache_dir=_cache_dir(spec, options),
        prompt_dir=options["prompt_dir"],
        structured=not options["no_structured"],
        price=_price(spec, options),
        max_tokens=parse_max_tokens(options["max_tokens"], options["prompt_dir"]),
    )
