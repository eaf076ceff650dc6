"""``assay run`` / :func:`assay.run`: ask the system every golden question and write the run.

The run file is written once, atomically, when every question has an answer or a failure: a header
``{"assay": "runs", "version": 1, "assay_version", "target" (secrets removed), "label", "started", "ended"}`` (and
``top_k`` when the system was asked for a number of passages), then
one line per golden question in the golden set's order (``repeats`` N > 1: the header says N, and the set comes N
times, each line with its ``repeat``). A golden set with conversations: the header says how their turns were asked
(``conversation_mode``, ``history``: :mod:`.conversations`), and a turn's line carries ``conversation_id`` and
``turn``; with ``--history own`` the context turns (unjudged, no question) have lines too, for the system's own
history (``assay eval`` skips them). Answers are kept in the cache (:mod:`.journal`) as they
arrive when ``cache_dir`` is given, so an interrupted run loses nothing and its rerun asks only the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.aio import run_sync
from assay.errors import ConfigError, NothingProduced
from assay.formats.golden import GoldenSet
from assay.formats.jsonl import write_jsonl
from assay.targets.callers import Ask, make_caller
from assay.targets.conversations import Conversing, turn_asks
from assay.targets.journal import Journal
from assay.targets.runner import Progress, RunStats, TargetSettings, ask_all
from assay.targets.spec import TargetSpec, redact

__all__ = ["TargetRun", "asks_of", "run_target"]

Target = TargetSpec | Callable[..., Any]


@dataclass
class TargetRun:
    """A finished run: its header, one line per question, the figures, and the file written (if any)."""

    header: dict[str, Any]
    lines: list[dict[str, Any]]
    stats: RunStats
    path: Path | None = None

    @property
    def failed(self) -> int:
        """Questions the system failed on."""
        return sum(1 for line in self.lines if "error" in line)

    def check(self) -> TargetRun:
        """This run, or :class:`NothingProduced` when the system answered no question (naming the failures)."""
        if self.lines and self.failed == len(self.lines):
            kinds = ", ".join(f"{n} {kind}" for kind, n in self.stats.failed.most_common())
            first = next(line["error"]["message"] for line in self.lines if "error" in line)
            where = f" (written to {self.path})" if self.path else ""
            raise NothingProduced(
                f"the target answered none of {len(self.lines)} questions{where}: {kinds or 'all failed'}; the first: "
                f"{first}. Check that the system runs (try one question by hand), then rerun"
            )
        return self


def asks_of(golden: GoldenSet, repeats: int = 1, conversing: Conversing | None = None) -> list[Ask]:
    """One :class:`Ask` per golden question (its id, text and metadata), in the golden set's order; with ``repeats``
    N > 1, every question N times, numbered 0 to N - 1, the whole set once per repeat. The turns of conversations
    are asked as ``conversing`` says (default: raw turns with the reference history; with own history the context
    turns are asked too; :mod:`.conversations`)."""
    if repeats < 1:
        raise ConfigError(f"--repeats must be at least 1 (how many times each question is asked), got {repeats}")
    how = (conversing or Conversing()).checked()
    if golden.conversations:
        return [ask for r in range(repeats) for ask in turn_asks(golden, how, r if repeats > 1 else None)]
    if repeats == 1:
        return [Ask(q.id, q.text, dict(q.metadata)) for q in golden.questions]
    return [Ask(q.id, q.text, dict(q.metadata), repeat=r) for r in range(repeats) for q in golden.questions]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_target(
    golden: GoldenSet | str | Path,
    target: Target,
    output: str | Path | None = None,
    *,
    label: str | None = None,
    settings: TargetSettings | None = None,
    cache_dir: str | Path | None = None,
    refresh: bool = False,
    secrets: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    repeats: int = 1,
    conversing: Conversing | None = None,
    top_k: int | None = None,
) -> TargetRun:
    """Ask ``target`` (a :class:`TargetSpec` or a Python function) every question of ``golden``.

    ``output``: the run file to write (atomically, at the end). ``label``: the system's version name, recorded and
    part of the cache key. ``cache_dir``: keep every answer there as it arrives and reuse the answers of the same
    target and label (``refresh`` asks again); None keeps nothing. ``secrets``: the values of the ``${NAME}``
    references of the spec (never written anywhere). Failures are recorded per question, not raised; call
    :meth:`TargetRun.check` to fail when nothing was answered. ``repeats``: ask every question this many times (an
    LLM application answers differently when asked again); each line then carries ``repeat`` (0 to N - 1), each
    repeat is cached apart (the first shares the plain run's answers), and ``assay eval`` scores every repeat and
    averages per question. ``conversing``: how the turns of the golden set's conversations are asked (raw turns
    with the golden reference history by default; :mod:`assay.targets.conversations`). ``top_k``: the passages
    every question asks for (a python target's ``top_k`` or ``k`` parameter, ``"top_k"`` in an HTTP body or a
    command's JSON; :class:`~assay.targets.callers.PythonCaller`), recorded in the header; None leaves the number to
    the system.
    """
    gold = golden if isinstance(golden, GoldenSet) else GoldenSet.load(golden)
    how = (conversing or Conversing()).checked()
    asks = [replace(ask, top_k=top_k) for ask in asks_of(gold, repeats, how)]
    config = settings or TargetSettings()
    values = dict(secrets or {})
    name, identity, caller = make_caller(target, secrets=values, concurrency=config.concurrency, top_k=top_k)
    journal = Journal(cache_dir, identity, label) if cache_dir is not None else None
    started = _now()
    try:
        lines, stats = run_sync(lambda: ask_all(asks, caller, settings=config, journal=journal,
                                                refresh=refresh, redact=lambda t: redact(t, values),
                                                progress=progress, own_history=how.own))  # fmt: skip
    finally:
        if journal is not None:
            journal.close()
    header: dict[str, Any] = {"target": name, "label": label, "started": started, "ended": _now()}
    if repeats > 1:
        header["repeats"] = repeats
    if top_k is not None:
        header["top_k"] = top_k
    if gold.conversations:
        header["conversation_mode"] = how.mode
        if how.mode == "turns":
            header["history"] = how.history
    if output is not None:
        write_jsonl(output, "runs", lines, header=header)
    return TargetRun(header, lines, stats, Path(output) if output is not None else None)
