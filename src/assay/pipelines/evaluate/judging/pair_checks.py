"""Exact claim x chunk entailment for the diagnosis: each claim checked against each retrieved chunk on its own, as
RAGChecker checks it (``--diagnosis answers``, the default, for the answer's claims; ``--diagnosis exact`` for the
reference claims too).

The one-call reading (``approx``) takes both support matrices from calls assay makes anyway: the ``support`` call
checks the reference claims against all top-K chunks at once and names the passages that support each (a claim the
passages support *together* is credited to each of them), and the ``answer_assessment`` call does the same for the
answer's claims (a claim judged supported with no passage named is credited to every chunk). RAGChecker instead
checks every (claim, chunk) pair: a chunk entails a claim only when that chunk alone entails it. Here the same
``support`` prompt is shown ONE chunk and up to :data:`JOINT` claims of one side per call, RAGChecker's default
joint checking of 5 claims per prompt: per sample with n answer claims, m reference claims and k chunks with text,
k ceil(n / 5) calls for the answer side and k ceil(m / 5) for the reference side, on top of the three calls the
diagnosis makes. Calls are cached per (chunk, claims) like any other.

``bench/diagnose.py`` measured on the demo (offline judge, 3 runs, top 5, 156 samples) how far each metric moves
from the one-call matrices to the exact ones: hallucination +0.051, faithfulness -0.051, relevant noise
sensitivity -0.051 (all from the answer matrix), every reference-side metric 0.000. Hence the default ``answers``:
the answer side checked per pair, the reference side read off the support call.

A cell is 1.0 when the verdict is ``support``, 0.5 for ``partial`` (not entailed: the diagnosis counts only 1.0),
0.0 for ``none``; NaN when the call failed or skipped the claim, which leaves the sample's diagnosis unscored with the
reason ``pair_check_unscored`` (counted, never read as 0). A checked side also rewrites the metric the diagnosis
shares with the one-call metrics: ``faithfulness`` (answer side) and ``context_recall`` (= retriever claim recall,
reference side), so the diagnosis table stays one partition of the answer's claims.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from assay.formats.golden import GoldenSet
from assay.judge import Judge, Judgement
from assay.pipelines.evaluate.judging.diagnosis import DiagnosisCall, estimate_calls
from assay.pipelines.evaluate.runs.loaded import LoadedRun

__all__ = [
    "DEFAULT_MODE",
    "DIAGNOSIS_MODES",
    "JOINT",
    "PAIR_STAGE",
    "SUPPORT_PROMPT",
    "PairCheck",
    "check_pairs",
    "estimate_pair_variables",
    "plan_pair_checks",
]

JOINT = 5  # claims per prompt, RAGChecker's default joint checking
Side = Literal["answer", "reference"]
_KEYS: dict[Side, str] = {"answer": "answer_claims", "reference": "reference_claims"}
# mode -> the sides checked per (claim, chunk) pair
DIAGNOSIS_MODES: dict[str, tuple[Side, ...]] = {"approx": (), "answers": ("answer",), "exact": ("answer", "reference")}
DEFAULT_MODE = "answers"
PAIR_STAGE = "diagnosis_pairs"
SUPPORT_PROMPT = "support"
_LEVEL = {"support": 1.0, "partial": 0.5, "none": 0.0}


@dataclass(frozen=True)
class PairCheck:
    """One call: ``rows`` (claim indices) of one side of ``calls[call]`` against its chunk in column ``column``."""

    call: int
    side: Side
    column: int
    rows: tuple[int, ...]
    variables: dict[str, Any]


def plan_pair_checks(calls: Sequence[DiagnosisCall], sides: Sequence[Side]) -> list[PairCheck]:
    """Every (chunk with text, batch of up to :data:`JOINT` claims) of the ``sides`` of each diagnosed sample."""
    out = []
    for index, call in enumerate(calls):
        for side in sides:
            claims = call.variables[_KEYS[side]]
            for column, text in enumerate(call.passages):
                for start in range(0, len(claims) if text else 0, JOINT):
                    rows = tuple(range(start, min(start + JOINT, len(claims))))
                    statements = [{"id": f"s{i + 1}", "text": claims[r]["text"]} for i, r in enumerate(rows)]
                    variables = {"statements": statements, "passages": [{"id": "1", "text": text}]}
                    out.append(PairCheck(index, side, column, rows, variables))
    return out


def estimate_pair_variables(
    golden: GoldenSet, runs: Sequence[LoadedRun], context_k: int, sides: Sequence[Side]
) -> list[dict[str, Any]]:
    """The pair checks' variables for ``--dry-run``, before any answer call: the answer's sentences stand in for its
    claims (as :func:`~.diagnosis.estimate_calls` does)."""
    return [check.variables for check in plan_pair_checks(estimate_calls(golden, runs, context_k), sides)]


def _fresh(calls: Sequence[DiagnosisCall], sides: Sequence[Side]) -> None:
    """Zero the checked sides' matrices (a chunk without text entails nothing, as in the one-call reading)."""
    for call in calls:
        call.checked = tuple(sides)
        if "answer" in sides:
            call.answer_support = np.zeros_like(call.answer_support)
        if "reference" in sides:
            call.reference_support = np.zeros_like(call.reference_support)


def _fill(check: PairCheck, call: DiagnosisCall, j: Judgement[Any]) -> None:
    matrix = call.answer_support if check.side == "answer" else call.reference_support
    found = {} if j.output is None else {a.statement_id: a.support for a in j.output.assignments}
    for i, row in enumerate(check.rows):
        level = found.get(f"s{i + 1}")
        matrix[row, check.column] = np.nan if level is None else _LEVEL[level]


async def check_pairs(
    judge: Judge,
    calls: Sequence[DiagnosisCall],
    sides: Sequence[Side] = ("answer", "reference"),
    *,
    on_result: Callable[[], None] | None = None,
) -> int:
    """Replace the ``sides`` matrices of ``calls`` by the exact per-(claim, chunk) checks; returns the calls made
    (cached ones included)."""
    checks = plan_pair_checks(calls, sides)
    _fresh(calls, sides)

    def done(index: int, j: Judgement[Any]) -> None:
        _fill(checks[index], calls[checks[index].call], j)
        if on_result is not None:
            on_result()

    if checks:
        await judge.ajudge_many(SUPPORT_PROMPT, [c.variables for c in checks], stage=PAIR_STAGE, on_result=done)
    return len(checks)
