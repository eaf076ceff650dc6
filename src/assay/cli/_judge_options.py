"""The judge options and the judges made from them: one group shared by ``assay build``, ``grade``, ``eval`` and
``judge-check``.

The flags are read once, where click hands them over, into one frozen :class:`JudgeOptions` that the command receives
as ``judging`` (nothing else of the judge reaches it as loose values); :func:`judge_from_options` and the batch
helpers (:mod:`assay.cli._batch_options`) take that value. An option added to ``_OPTIONS`` (and a field of
:class:`JudgeOptions`) appears in every command, in the same place of their ``--help``. ``build`` and ``grade``
need a judge and take several (:func:`panel_options`: ``--judge`` repeated, ``--combine``, ``--batch``); ``eval``
can run without one (:func:`optional_judge_options`, with its ``--no-judge`` right after ``--judge``);
``judge-check`` measures one (:func:`judge_options`, no batches).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import click

from assay.aio import run_sync
from assay.cli.cache import CACHE_DIR, resolve_cache_dir
from assay.errors import ConfigError
from assay.judge import Judge, Price, make_judge
from assay.judge.batches import RETRY_POLICIES
from assay.judge.factory import make_dry_run_judge
from assay.judge.panel import COMBINE_RULES, Combine, Grader, Panel, judges_of
from assay.judge.prompts import prompt_names

__all__ = [
    "JudgeOptions",
    "api_key_for",
    "check_context",
    "draft_judge_options",
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


@dataclass(frozen=True)
class JudgeOptions:
    """The judge flags of one command, parsed and checked once (:meth:`from_flags`).

    ``specs``: the models named by ``--judge`` (none: ``eval`` without a judge); ``servers``: a model's own server
    (``--judge MODEL=URL``), else ``api_base``. ``price`` and ``max_tokens`` are parsed. ``combine``: the panel's
    rule (None: majority); ``batch``/``batch_retry``: ``--batch`` and ``--batch-retry`` (commands without them keep
    the defaults).
    """

    specs: tuple[str, ...] = ()
    servers: Mapping[str, str] = field(default_factory=dict)
    api_base: str | None = None
    api_key: str | None = None
    concurrency: int = 8
    rpm: int | None = None
    tpm: int | None = None
    cache_dir: Path | None = None
    no_cache: bool = False
    max_cost: float | None = None
    price: Price | None = None
    structured: bool = True
    timeout: float = 120.0
    max_tokens: Mapping[str, int] | None = None
    prompt_dir: Path | None = None
    combine: Combine | None = None
    batch: bool = False
    batch_retry: str = "batch"

    @classmethod
    def from_flags(cls, flags: dict[str, Any]) -> JudgeOptions:
        """Take the judge flags out of click's ``flags`` (removed from it) into one checked value."""
        given = flags.pop("judge_specs") if "judge_specs" in flags else (flags.pop("judge_spec"),)
        given = tuple(value for value in given if value is not None)  # an optional --judge not given
        split = [split_judge(value) for value in given]
        combine: Combine | None = flags.pop("combine", None)
        if combine and len(split) < 2:
            raise ConfigError(f"--combine {combine} combines several judges: give --judge twice or more")
        prompt_dir = flags.pop("prompt_dir")
        return cls(
            specs=tuple(spec for spec, _ in split),
            servers={spec: url for spec, url in split if url},
            api_base=flags.pop("api_base"),
            api_key=flags.pop("api_key"),
            concurrency=flags.pop("concurrency"),
            rpm=flags.pop("rpm"),
            tpm=flags.pop("tpm"),
            cache_dir=flags.pop("cache_dir"),
            no_cache=flags.pop("no_cache"),
            max_cost=flags.pop("max_cost"),
            price=parse_price(flags.pop("price")),
            structured=not flags.pop("no_structured"),
            timeout=flags.pop("timeout"),
            max_tokens=parse_max_tokens(flags.pop("max_tokens"), prompt_dir),
            prompt_dir=prompt_dir,
            combine=combine,
            batch=flags.pop("batch", False),
            batch_retry=flags.pop("batch_retry", "batch"),
        )

    @property
    def spec(self) -> str | None:
        """The first judge named (the one of a single-judge command), or None."""
        return self.specs[0] if self.specs else None

    def api_base_for(self, spec: str) -> str | None:
        """The server of judge ``spec``: its own (``--judge MODEL=URL``), else ``--api-base``."""
        return self.servers.get(spec) or self.api_base

    def cache_for(self, spec: str) -> Path | None:
        """The judge cache of ``spec``: none with ``--no-cache``, nor for the offline judge without ``--cache-dir``."""
        use_cache = not self.no_cache and (spec != "offline" or self.cache_dir is not None)
        return resolve_cache_dir(self.cache_dir) if use_cache else None

    def kept(self) -> str:
        """What a rerun after Ctrl-C reuses: where the judges' answers are cached."""
        caches = sorted({str(cache) for spec in self.specs if (cache := self.cache_for(spec)) is not None})
        if not caches:
            return "no judge answer is cached (--no-cache, or the offline judge without --cache-dir)"
        return f"every judge answer so far is cached in {', '.join(caches)}"

    def price_for(self, spec: str) -> Price | None:
        """``--price`` for a model judge; the offline judge stays free (a panel's ``--price`` is for its models)."""
        return None if spec == "offline" else self.price


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
# after the judge options of the commands that judge lists (build, grade, eval)
_BATCH = [
    click.option(
        "--batch",
        is_flag=True,
        help="Send the calls the cache does not answer through the provider's batch API (OpenAI-compatible: about "
        "half the price, results within 24 h); a rerun picks up batches already submitted.",
    ),
    click.option(
        "--batch-retry",
        type=click.Choice(RETRY_POLICIES),
        default="batch",
        show_default=True,
        help="Requests that fail inside a batch: one more batch, direct calls, or none (left unscored).",
    ),
]


def _with(options: list[Any], function: F) -> F:
    """``function`` with ``options`` (in --help order), receiving them as one :class:`JudgeOptions`, ``judging``."""

    @functools.wraps(function)
    def wrapper(*args: Any, **flags: Any) -> Any:
        return function(*args, judging=JudgeOptions.from_flags(flags), **flags)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


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
    return _with([judge, *_OPTIONS], function)


def draft_judge_options(function: F) -> F:
    """The judge options with ``--judge`` optional and given once (no ``specs`` when not given): a command that asks
    a judge only when told to (``assay import`` drafting claims and nuggets)."""
    judge = click.option("--judge", "judge_spec", default=None, help=f"{_JUDGE_HELP} MODEL=URL: its server.")
    return _with([judge, *_OPTIONS], function)


def panel_options(function: F) -> F:
    """The judge options with ``--judge`` required and repeatable, ``--combine`` after it, and the batch options."""
    judge = click.option("--judge", "judge_specs", required=True, multiple=True, help=_PANEL_HELP)
    return _with([judge, _COMBINE, *_OPTIONS, *_BATCH], function)


def optional_judge_options(*after_judge: Any) -> Callable[[F], F]:
    """The judge options with ``--judge`` optional and repeatable (no ``specs`` when not given), then ``after_judge``
    options (left to the command as they are), then ``--combine``, the judge options and the batch options."""
    judge = click.option("--judge", "judge_specs", multiple=True, help=_PANEL_HELP)
    return lambda function: _with([judge, *after_judge, _COMBINE, *_OPTIONS, *_BATCH], function)


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


def _panel(judges: list[Judge], judging: JudgeOptions) -> Grader:
    return judges[0] if len(judges) == 1 else Panel(tuple(judges), combine=judging.combine or "majority")


def judge_from_options(judging: JudgeOptions) -> Grader:
    """A judge from the values of :func:`judge_options` (the offline judge uses a cache only with --cache-dir), or a
    panel of one judge per ``--judge`` when several are named."""
    return _panel([_one_judge(spec, judging) for spec in judging.specs], judging)


def one_judge(judging: JudgeOptions) -> Judge:
    """The one judge of a command that measures a single judge (:func:`judge_options`)."""
    return _one_judge(judging.specs[0], judging)


def one_dry_run_judge(judging: JudgeOptions) -> Judge:
    """:func:`one_judge` for ``--dry-run``: renders prompts and reads the cache, never calls a model."""
    return _one_dry_run_judge(judging.specs[0], judging)


def _one_judge(spec: str, judging: JudgeOptions) -> Judge:
    server = judging.api_base_for(spec)
    return make_judge(
        spec,
        api_base=server,
        api_key=api_key_for(spec, judging.api_key, server),
        cache_dir=judging.cache_for(spec),
        concurrency=judging.concurrency,
        rpm=judging.rpm,
        tpm=judging.tpm,
        max_cost=judging.max_cost,
        structured=judging.structured,
        timeout=judging.timeout,
        prompt_dir=judging.prompt_dir,
        price=judging.price_for(spec),
        max_tokens=judging.max_tokens,
    )


def dry_run_judge(judging: JudgeOptions) -> Grader:
    """A judge (or a panel of them) that renders prompts and reads the cache but never calls a model."""
    return _panel([_one_dry_run_judge(spec, judging) for spec in judging.specs], judging)


def _one_dry_run_judge(spec: str, judging: JudgeOptions) -> Judge:
    return make_dry_run_judge(
        spec,
        cache_dir=judging.cache_for(spec),
        prompt_dir=judging.prompt_dir,
        structured=judging.structured,
        price=judging.price_for(spec),
        max_tokens=judging.max_tokens,
    )
