"""History gain: what a conversational system gains (or loses) by being asked the raw turns with their history
rather than each turn's standalone rewrite.

The two runs are found by their headers (``assay run --conversation-mode rewrites`` and ``turns``, written by
``assay run``): each pair of a ``rewrites`` run and a ``turns`` run of the same target is one
:class:`~assay.results.HistoryGain`; without the target in a header (runs written by hand), any ``rewrites`` run
pairs with any ``turns`` run. On the metric given (the evaluation's primary), turns minus rewrites is compared per
turn as two runs are (:func:`~assay.pipelines.evaluate.statistics.compare.compare_runs`: paired randomization test,
resampling clusters, so a conversation's turns move together) over every judged turn, the turns that depend on the
history and the standalone ones; the questions that are no turn are left out, and context turns (unjudged) are no
questions: never scored, never compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from assay.formats.golden import GoldenSet
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.pipelines.evaluate.statistics.compare import compare_runs
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.results import Comparison, HistoryGain, QueryResult

__all__ = ["history_gains"]


def _mode(run: LoadedRun) -> str | None:
    return run.header.conversation_mode if run.header is not None else None


def _pairs(runs: Sequence[LoadedRun]) -> list[tuple[LoadedRun, LoadedRun]]:
    """(rewrites run, turns run) of the same target (any, when a header names none), in the runs' order."""
    rewrites = [run for run in runs if _mode(run) == "rewrites"]
    turns = [run for run in runs if _mode(run) == "turns"]

    def target(run: LoadedRun) -> str | None:
        return run.header.target if run.header is not None else None

    return [(r, t) for r in rewrites for t in turns if None in (target(r), target(t)) or target(r) == target(t)]


def history_gains(
    gold: GoldenSet,
    runs: Sequence[LoadedRun],
    per_run: Mapping[str, Mapping[str, QueryResult]],
    metric: str | None,
    settings: StatSettings,
) -> list[HistoryGain]:
    """One :class:`HistoryGain` per (rewrites, turns) pair of ``runs`` on ``metric`` (module docstring)."""
    if metric is None or not gold.conversations:
        return []
    depends = {t.question_id: t.depends_on_history for c in gold.conversations for t in c.turns if t.judged}
    alone = replace(settings, primary=None, baseline=None)
    out = []
    for rewrites, turns in _pairs(runs):
        header = turns.header
        gain = HistoryGain(rewrites=rewrites.name, turns=turns.name, metric=metric,
                           history=header.history if header is not None else None)  # fmt: skip
        for part, keep in (("all", (True, False)), ("dependent", (True,)), ("standalone", (False,))):
            chosen = {name: {qid: row for qid, row in per_run.get(name, {}).items()
                             if qid in depends and depends[qid] in keep}
                      for name in (rewrites.name, turns.name)}  # fmt: skip
            setattr(gain, part, _compared(chosen, metric, alone))
        out.append(gain)
    return out


def _compared(rows: Mapping[str, Mapping[str, QueryResult]], metric: str, settings: StatSettings) -> Comparison | None:
    found = compare_runs(rows, [metric], settings)
    return found[0] if found else None
