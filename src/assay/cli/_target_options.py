"""The options of a target, shared by ``assay run`` and ``assay eval --target``; the environment read for secrets.

:func:`target_options` adds the flags and hands the command one frozen :class:`TargetOptions`, ``asking``, read once.

Secrets come only from environment variables the command line names as ``${NAME}`` (in the URL, a ``--header``
value, the ``--body`` or a command argument): exactly those are read, and their values go nowhere but the call.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import platformdirs
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.given import NamedRun
from assay.targets import Conversing, RunStats, TargetRun, TargetSettings, TargetSpec, run_target
from assay.targets.conversations import BOTH, CONVERSATION_MODES, HISTORY_MODES, ways
from assay.targets.spec import parse_pairs

__all__ = [
    "RunBar",
    "TargetOptions",
    "ask_targets",
    "default_label",
    "summary_line",
    "target_options",
]


@dataclass(frozen=True)
class TargetOptions:
    """The target flags of one command, read once: the http options (``body``, ``mapping``, ``headers``, parsed),
    ``--label`` as given, ``--refresh``, the call limits as :class:`TargetSettings`, the answers cache and the
    passages asked for (``--top-k``)."""

    body: str | None
    mapping: tuple[tuple[str, str], ...]
    headers: tuple[tuple[str, str], ...]
    label: str | None
    refresh: bool
    settings: TargetSettings
    cache_dir: Path
    repeats: int = 1
    conversing: Conversing = field(default_factory=Conversing)
    top_k: int | None = None

    @classmethod
    def from_flags(cls, flags: dict[str, Any]) -> TargetOptions:
        """Take the target flags out of click's ``flags`` (removed from it) into one checked value."""
        settings = TargetSettings(concurrency=flags.pop("t_concurrency"), timeout=flags.pop("t_timeout"),
                                  attempts=flags.pop("t_attempts"), rpm=flags.pop("t_rpm"))  # fmt: skip
        return cls(
            body=flags.pop("body"),
            mapping=parse_pairs(flags.pop("mapping"), "--map", "="),
            headers=parse_pairs(flags.pop("headers"), "--header", ":"),
            label=flags.pop("label"),
            refresh=flags.pop("refresh"),
            settings=settings,
            cache_dir=flags.pop("t_cache_dir") or Path(platformdirs.user_cache_dir("assay")) / "targets",
            repeats=flags.pop("t_repeats"),
            top_k=flags.pop("t_top_k"),
            conversing=Conversing(history=flags.pop("t_history"), mode=flags.pop("t_conversation_mode")).checked(
                both=True
            ),
        )

    def spec(self, text: str) -> TargetSpec:
        """The target spec of ``text`` with the http options, checked."""
        return TargetSpec(text=text, body=self.body, mapping=self.mapping, headers=self.headers).check()

    def run(
        self, golden: GoldenSet | Path, spec: TargetSpec, output: Path, progress: RunBar, how: Conversing | None = None
    ) -> TargetRun:
        """Ask ``spec`` every question of ``golden`` into ``output`` (:func:`assay.targets.run_target`), the turns of
        conversations as ``how`` says (default: the flags')."""
        if spec.kind == "python":
            importable_cwd()
        return run_target(golden, spec, output, label=default_label(self.label), settings=self.settings,
                          cache_dir=self.cache_dir, refresh=self.refresh, secrets=secrets_for(spec),
                          progress=progress, repeats=self.repeats, conversing=how or self.conversing,
                          top_k=self.top_k)  # fmt: skip


def target_options(prefix: str = "", *, both: bool = False) -> Callable[[Any], Any]:
    """``--body``, ``--map``, ``--header``, ``--label``, ``--refresh``, the call limits and ``--top-k``; in ``assay
    eval`` the limits are ``--target-concurrency`` and so on (``prefix`` ``"target-"``), apart from the judge's own.
    ``both``: the conversation mode may be ``both`` (a command that evaluates the two runs it writes)."""
    p = prefix
    modes = (*CONVERSATION_MODES, BOTH) if both else CONVERSATION_MODES
    said = ("Conversations: ask each turn as typed, with its history (turns), its standalone rewrite alone "
            "(rewrites), or both, as two runs NAME and 'NAME (rewrites)' with their history gain (both)."
            if both else "Conversations: ask each turn as typed, with its history (turns), or its standalone "
            "rewrite alone (rewrites; compare the two: history gain).")  # fmt: skip
    options = [
        click.option("--body", default=None,
                     help="http: JSON body template with {question}, {query_id}, {metadata} (and {top_k})."),
        click.option("--map", "mapping", multiple=True, metavar="FIELD=POINTER",
                     help="http: where a field (contexts, retrieved, answer, citations, usage, rewrite, steps, "
                          "messages) is in the reply, as a JSON pointer."),
        click.option("--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                     help="http: a request header; write a secret as ${ENV_VAR} (read from the environment)."),
        click.option("--label", default=None, help="Version name of the system (default: git commit of the cwd)."),
        click.option("--refresh", is_flag=True, help="Ask every question again (ignore cached answers)."),
        click.option(f"--{p}concurrency", "t_concurrency", type=click.IntRange(1, 1024), default=8,
                     show_default=True, help="Calls of the system at once."),
        click.option(f"--{p}timeout", "t_timeout", type=click.FloatRange(0.001), default=60.0, show_default=True,
                     help="Seconds per call."),
        click.option(f"--{p}attempts", "t_attempts", type=click.IntRange(1, 20), default=4, show_default=True,
                     help="Tries per question on transient failures (429, 5xx, resets, timeouts, bad JSON)."),
        click.option(f"--{p}rpm", "t_rpm", type=click.IntRange(1), default=None, help="At most N calls a minute."),
        click.option(f"--{p}repeats", "t_repeats", type=click.IntRange(1, 100), default=1, show_default=True,
                     metavar="N", help="Ask every question N times (each repeat cached apart); assay eval scores each "
                     "repeat and averages per question."),
        click.option(f"--{p}top-k", "t_top_k", type=click.IntRange(1), default=None, metavar="N",
                     help="Ask the system for N passages a question: a python target's top_k (or k) parameter, "
                     '"top_k" in an http body (place "{top_k}" in a --body) or a command\'s JSON; recorded in the '
                     "run's header. Use it when the report says a run does not fill the budget."),
        click.option(f"--{p}conversation-mode", "t_conversation_mode", type=click.Choice(modes),
                     default="turns", show_default=True, help=said),
        click.option(f"--{p}history", "t_history", type=click.Choice(HISTORY_MODES), default="reference",
                     show_default=True, help="Conversations asked as turns: earlier turns carry the golden reference "
                     "answers (reference; turns asked concurrently) or the system's own answers (own; in order)."),
        click.option(f"--{p}cache-dir", "t_cache_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Answers cache (default: the user cache dir's assay/targets)."),
    ]  # fmt: skip

    def wrap(f: Any) -> Any:
        @functools.wraps(f)
        def wrapper(*args: Any, **flags: Any) -> Any:
            return f(*args, asking=TargetOptions.from_flags(flags), **flags)

        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper

    return wrap


def secrets_for(spec: TargetSpec) -> dict[str, str]:
    """The values of the environment variables the spec names; one that is not set stops with the fix."""
    missing = [name for name in spec.references() if name not in os.environ]
    if missing:
        raise ConfigError(f"environment variable {missing[0]} is named in the target but not set: export it first")
    return {name: os.environ[name] for name in spec.references()}


def default_label(option: str | None) -> str | None:
    """``--label``, else the git commit of the working directory (``-dirty`` with uncommitted changes), else None."""
    if option:
        return option
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], check=False, capture_output=True, text=True,
                              timeout=10)  # fmt: skip
        if head.returncode != 0:
            return None
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], check=False,
                                capture_output=True, text=True, timeout=10)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if status.stdout.strip() else "")


def importable_cwd() -> None:
    """Let ``python:pkg.mod:func`` name modules of the working directory, as ``python -m`` does."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def _figures(stats: RunStats) -> str:
    if stats.asked == 0:
        return f"nothing asked  cached {stats.cached}"
    errors = sum(stats.failed.values())
    return (f"{stats.throughput():.1f} q/s  p50 {_ms(stats.percentile(50))}  p95 {_ms(stats.percentile(95))}  "
            f"errors {errors}  retries {stats.retries}  cached {stats.cached}")  # fmt: skip


class RunBar:
    """A progress bar of questions asked, with throughput, p50/p95 latency, errors, retries and cached answers."""

    def __init__(self, name: str, console: Console) -> None:
        columns = (TextColumn(f"asking {name}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"))
        self.bar = Progress(*columns, TimeElapsedColumn(), console=console, disable=not console.is_terminal)
        self.task: TaskID | None = None

    def __call__(self, stats: RunStats) -> None:
        if self.task is None:
            self.task = self.bar.add_task(_figures(stats), total=stats.total)
        self.bar.update(self.task, completed=stats.done, description=_figures(stats))


def parse_target(value: str) -> tuple[str, str]:
    """``NAME=SPEC`` -> (name, spec); the first ``=`` splits (a URL may hold more)."""
    name, sep, spec = value.partition("=")
    if not sep or not name or not spec or "/" in name or ":" in name:
        raise ConfigError(f"--target {value!r}: write NAME=SPEC, e.g. --target app=python:examples.rag_app:answer")
    return name, spec


def ask_targets(golden: Path, values: Sequence[str], folder: Path, asking: TargetOptions) -> list[NamedRun]:
    """Run every ``--target NAME=SPEC`` into ``folder/NAME.jsonl`` (as ``assay run`` does); ``(name, path)`` each.
    With ``--target-conversation-mode both`` a target is asked twice, into ``NAME`` (the turns) and ``NAME
    (rewrites)`` (:func:`assay.targets.conversations.ways`). Every spec, mode and name is checked before the first
    is asked; a target that answers nothing stops with the reason."""
    if not values:
        return []
    gold = GoldenSet.load(golden)
    specs = [(name, asking.spec(text)) for name, text in map(parse_target, values)]
    runs = [(called, spec, how) for name, spec in specs for called, how in ways(name, asking.conversing, gold)]
    names = [called for called, _, _ in runs]
    twice = next((called for called in names if names.count(called) > 1), None)
    if twice is not None:
        raise ConfigError(f"two runs would be named {twice!r}: give each --target a name of its own")
    out = []
    for called, spec, how in runs:
        bar = RunBar(called, Console(stderr=True))
        with bar.bar:
            done = asking.run(gold, spec, folder / f"{called}.jsonl", bar, how)
        click.echo(f"{called}: {summary_line(done, gold)}", err=True)
        out.append(NamedRun(called, done.check().path or folder / f"{called}.jsonl"))
    return out


def summary_line(run: TargetRun, golden: GoldenSet | None = None) -> str:
    """One line: questions (and the context turns asked for the history, when ``golden`` is given), answered, cached,
    failed by kind, retries, latency and throughput."""
    s = run.stats
    failed = ", ".join(f"{n} {kind}" for kind, n in s.failed.most_common())
    where = f"wrote {run.path}: " if run.path else ""
    repeats = int(run.header.get("repeats") or 1)
    known = {q.id for q in golden.questions} if golden is not None else None
    context = sum(line["query_id"] not in known for line in run.lines) if known is not None else 0
    asked = f"{(s.total - context) // repeats} questions" + (f" x {repeats} repeats" if repeats > 1 else "")
    turns = context // repeats
    asked += f" and {turns} context turn{'s' * (turns != 1)} (asked for the history, not scored)" if context else ""
    return (f"{where}{asked}, {s.total - run.failed} answered ({s.cached} from the cache), "
            f"{run.failed} failed{f' ({failed})' if failed else ''}, {s.retries} retries; {_figures(s)}")  # fmt: skip
