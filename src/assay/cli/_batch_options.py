"""What ``--batch`` and ``--batch-retry`` (options of :mod:`assay.cli._judge_options`) do in ``assay build``,
``grade`` and ``eval``, and what they print.

:func:`start_batches` turns a judge made by :func:`assay.cli._judge_options.judge_from_options` into one that sends
its uncached calls through the provider's batch API (for a panel, each judge that calls an OpenAI-compatible server:
their batches run side by side; the offline judge is called directly); progress lines go to stderr.
:func:`batch_dry_run` prices a dry run at the batch price and :func:`batch_line` says what the same calls cost
direct.
"""

from __future__ import annotations

from collections.abc import Callable

import click

from assay.cli._judge_options import JudgeOptions
from assay.errors import ConfigError
from assay.judge import Judge, Price
from assay.judge.batches import BatchRunner, use_batches
from assay.judge.batches.setup import batch_price, can_batch
from assay.judge.batches.status import batches
from assay.judge.panel import Grader, Panel, judges_of

__all__ = [
    "batch_dry_run",
    "batch_line",
    "batch_summary",
    "echo_batch_summary",
    "saving_line",
    "start_batches",
]


def start_batches(judge: Grader, judging: JudgeOptions) -> dict[str, BatchRunner]:
    """With ``--batch``: the judge's lists go through batches from now on (progress lines on stderr); for a panel,
    the lists of each judge that can (an OpenAI-compatible server), with its model before each progress line. The
    runners by judge model (none without ``--batch``)."""
    if not judging.batch:
        return {}
    judges = judges_of(judge)
    several = len(judges) > 1
    batched = [one for one in judges if can_batch(one)] if several else list(judges)
    if not batched:
        raise ConfigError(
            "--batch uses the OpenAI-compatible batch API, and no judge of the panel is called that way (openai/..., "
            "or a server given by --api-base): drop --batch"
        )
    return {
        one.model: use_batches(one, retry=judging.batch_retry, report=_reporter(one.model if several else None))
        for one in batched
    }


def _reporter(model: str | None) -> Callable[[str], None]:
    prefix = f"{model}: " if model else ""
    return lambda line: click.echo(prefix + line, err=True)


def echo_batch_summary(runners: dict[str, BatchRunner]) -> None:
    """Print one line per batched judge on what went through batches and what it saved (nothing without
    ``--batch``)."""
    for model, runner in runners.items():
        click.echo((f"{model}: " if len(runners) > 1 else "") + batch_summary(runner))


def batch_summary(runner: BatchRunner) -> str:
    """What went through batches: requests, batches, resumed, cost at the batch price and the saving."""
    t = runner.totals
    head = f"batch: {t.submitted} requests submitted in {batches(t.batches)}, {t.resumed} picked up from earlier runs"
    if t.cost_usd is None:
        return f"{head}; cost unknown (no price for this model; give --price)"
    direct = "" if t.direct_cost_usd is None else f", ${t.direct_cost_usd:.4f} direct"
    saved = "" if t.direct_cost_usd is None else f" (saved ${t.direct_cost_usd - t.cost_usd:.4f})"
    return f"{head}; {t.answered} answers cost ${t.cost_usd:.4f} at the batch price{direct}{saved}"


def batch_dry_run(judge: Grader, judging: JudgeOptions) -> Price | None:
    """With ``--batch``, price the dry-run judge at the batch price; the direct price it replaced (else None). For a
    panel, each judge that can batch at its batch price (None: there is no one direct price to compare with)."""
    if not judging.batch:
        return None
    if isinstance(judge, Panel):
        for one in judge.judges:
            if _batched(one, judging):
                one.price = batch_price(one)
        return None
    if not _batched(judge, judging):
        raise ConfigError(
            f"batch judging uses the OpenAI-compatible batch API (openai/..., or a server given by --api-base); "
            f"judge {judge.model!r} is not called that way: drop --batch"
        )
    direct, judge.price = judge.price, batch_price(judge)
    return direct


def _batched(judge: Judge, judging: JudgeOptions) -> bool:
    """Whether a dry-run judge would be called through the OpenAI-compatible API (so batched): ``openai/...`` or a
    server of its own or from ``--api-base``; the offline judge never is. (A dry-run judge has no backend to ask.)"""
    return judge.model != "offline" and bool(judging.api_base_for(judge.model) or judge.model.startswith("openai/"))


def batch_line(judge: Grader, batch_cost: float | None, direct: Price | None) -> str:
    """:func:`saving_line` for one judge; for a panel, which judges the costs price at their batch price."""
    if isinstance(judge, Panel):
        models = [one.model for one in judge.judges if one.model != "offline"]
        return f"with --batch: the costs of {', '.join(models)} are at their batch prices (the offline judge is free)"
    return saving_line(batch_cost, direct, judge.price)


def saving_line(batch_cost: float | None, direct: Price | None, batch: Price | None) -> str:
    """``costs are at the batch price; direct: $X (batch saves $Y)``, from a cost at the batch price."""
    if batch_cost is None or direct is None or batch is None:
        return "with --batch: no price for this model (give --price), so no saving can be shown"
    ratios = [b / d for b, d in ((batch.input_per_token, direct.input_per_token),
                                 (batch.output_per_token, direct.output_per_token)) if d > 0]  # fmt: skip
    if not ratios or min(ratios) >= 1:
        return "with --batch: costs at the batch price, which is the direct price here (no batch price known)"
    low, high = batch_cost / max(ratios), batch_cost / min(ratios)
    said = f"${low:.4f}" if abs(high - low) < 1e-12 else f"${low:.4f}-${high:.4f}"
    saves = (
        f"${low - batch_cost:.4f}" if abs(high - low) < 1e-12 else f"${low - batch_cost:.4f}-${high - batch_cost:.4f}"
    )
    return f"with --batch: costs at the batch price; the same calls direct: {said} (batch saves {saves})"
