"""How far each diagnosis metric moves between the one-call claim x chunk matrices and the exact pair checks.

Used by ``bench/diagnose.py`` (its docstring says what is measured). Per sample the claim verdicts (``claim_check``)
are the same in both readings; only the answer and reference support matrices change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assay.aio import run_sync
from assay.formats.golden import GoldenSet
from assay.judge import Judge
from assay.metrics.diagnosis import DIAGNOSIS_METRICS, diagnose
from assay.pipelines.evaluate.judging.calls import assess_runs, plan_calls
from assay.pipelines.evaluate.judging.diagnosis import DiagnosisCall, diagnose_runs, plan_diagnosis
from assay.pipelines.evaluate.judging.pair_checks import check_pairs
from assay.pipelines.evaluate.runs.read import load_runs

THRESHOLD = 0.05
NAMES = [name for names in DIAGNOSIS_METRICS.values() for name in names]


@dataclass(frozen=True)
class Movement:
    """One metric: mean over the samples both readings score, with each reading, and the count of those samples."""

    name: str
    approx: float
    exact: float
    n: int

    @property
    def moved(self) -> float:
        return abs(self.exact - self.approx)


@dataclass(frozen=True)
class Measured:
    movements: list[Movement]
    samples: int
    pair_calls: int
    diagnosis_calls: int  # 3 per diagnosed sample (support, answer_assessment, claim_check)
    unscored_pairs: int


def _judged_calls(
    golden: GoldenSet, runs: list[tuple[str, Path]], judge: Judge, k: int
) -> tuple[list[DiagnosisCall], list[DiagnosisCall], int]:
    """The diagnosed samples with their one-call matrices and claim verdicts, the same samples with the exact
    matrices, and the pair-check calls made."""
    loaded = load_runs(runs, golden)
    plan = plan_calls(golden, loaded, context_k=k, families={"context_recall", "answer"})

    async def work() -> tuple[list[DiagnosisCall], list[DiagnosisCall], int]:
        try:
            await assess_runs(judge, golden, plan)
            calls = plan_diagnosis(golden, loaded, plan.assessed, context_k=k)
            await diagnose_runs(judge, golden, calls, plan.assessed)
            approx = [_copy(call) for call in calls]
            made = await check_pairs(judge, calls)
        finally:
            await judge.aclose()
        return approx, calls, made

    return run_sync(work)


def _copy(call: DiagnosisCall) -> DiagnosisCall:
    return DiagnosisCall(call.run, call.query_id, call.variables, call.columns, call.answer_support.copy(),
                         call.reference_support.copy(), list(call.correct), list(call.recalled))  # fmt: skip


def _per_sample(calls: list[DiagnosisCall]) -> dict[str, np.ndarray]:
    return diagnose([c.correct for c in calls], [c.recalled for c in calls], [c.answer_support for c in calls],
                    [c.reference_support for c in calls])  # fmt: skip


def measure(golden: GoldenSet, runs: list[tuple[str, Path]], judge: Judge, k: int) -> Measured:
    approx_calls, exact_calls, made = _judged_calls(golden, runs, judge, k)
    keep = [i for i, c in enumerate(exact_calls) if c.correct]  # claim_check answered
    approx = _per_sample([approx_calls[i] for i in keep])
    exact = _per_sample([exact_calls[i] for i in keep])
    movements = []
    for name in NAMES:
        both_scored = ~(np.isnan(approx[name]) | np.isnan(exact[name]))
        n = int(both_scored.sum())
        a, e = (float(x[both_scored].mean()) if n else math.nan for x in (approx[name], exact[name]))
        movements.append(Movement(name, a, e, n))
    unscored = sum(int(np.isnan(c.answer_support).sum() + np.isnan(c.reference_support).sum()) for c in exact_calls)
    return Measured(movements, len(keep), made, 3 * len(exact_calls), unscored)


def print_movement(measured: Measured, label: str) -> list[str]:
    """Print the table; return the metrics that moved by more than :data:`THRESHOLD`."""
    print(f"\nmovement, one-call matrices -> exact pair checks ({label}; {measured.samples} diagnosed samples)")
    print(f"  pair checks: {measured.pair_calls} calls ({measured.pair_calls / max(measured.samples, 1):.2f} per "
          f"sample, on top of 3); cells unscored: {measured.unscored_pairs}")  # fmt: skip
    print(f"  {'metric':<30}{'one-call':>9}{'exact':>9}{'moved':>9}{'n':>5}")
    moved = []
    for m in measured.movements:
        flag = "  > 0.05" if m.moved > THRESHOLD else ""
        print(f"  {m.name:<30}{m.approx:>9.3f}{m.exact:>9.3f}{m.exact - m.approx:>+9.3f}{m.n:>5}{flag}")
        if m.moved > THRESHOLD:
            moved.append(m.name)
    return moved
