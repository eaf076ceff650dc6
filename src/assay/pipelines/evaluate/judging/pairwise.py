"""Pairwise preferences (``assay eval --pairwise``): per question, each pair of runs' answers judged in both orders.

The criterion is a criterion file (its body, or its description, tells the judge what to prefer) or the built-in
:data:`BUILTIN` ("which answer better answers the question, given the reference"). Pairs (:func:`run_pairs`): every
pair of runs (``all``), or each run with one baseline (``baseline``). Per question and pair, two ``pairwise`` calls:
run_a shown as answer A, then run_b shown as answer A. Each order names a winner (the run at the position the judge
preferred) or a tie; the outcome is that run when both orders name it, and a **tie when the orders disagree** (a
judge that always prefers position A ties every pair: its preference says nothing about the answers).

A question where one run has an answer and the other none (empty, failed, not answered) goes to the answering run
without a call; with neither answering it is unscored (``no answer from either run``). A failed call leaves the
question's pair unscored with the call's reason, never a tie. The panel's first judge answers (one preference per
order; the criteria of :mod:`~.criteria` ask each judge).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge import Estimate, Judge, Judgement
from assay.judge.criteria import Criterion
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.results import OrderVerdict, PairJudgement

__all__ = [
    "BUILTIN",
    "NEITHER",
    "PAIRWISE_PROMPT",
    "PAIR_MODES",
    "PairCall",
    "criterion_of",
    "estimate_pairwise",
    "judge_pairwise",
    "order_variables",
    "pair_outcome",
    "plan_pairwise",
    "read_order",
    "run_pairs",
]

PAIRWISE_PROMPT = "pairwise"
BUILTIN = "builtin"
PAIR_MODES = ("all", "baseline")
NEITHER = "no answer from either run"
_BUILTIN_TEXT = ("Prefer the answer that better answers the question: correct, complete and to the point, as the "
                 "reference answer says when one is given. An answer that declines when the question can be answered "
                 "is worse than one that answers it correctly.")  # fmt: skip
_POSITIONS = ("A", "B")


def run_pairs(names: Sequence[str], mode: str, baseline: str | None) -> list[tuple[str, str]]:
    """The pairs of runs to compare, in the runs' order: every pair, or (``baseline``) the baseline run (the named
    one, else the first) with each other run."""
    if mode not in PAIR_MODES:
        raise ConfigError(f"--pairs {mode}: use one of {', '.join(PAIR_MODES)}")
    if len(names) < 2:
        raise ConfigError("--pairwise compares the answers of two runs or more; give at least two runs")
    if mode == "all":
        return list(combinations(names, 2))
    base = baseline if baseline is not None else names[0]
    if base not in names:
        raise ConfigError(f"--baseline {base}: no run of that name (runs: {', '.join(names)})")
    return [(base, other) for other in names if other != base]


def criterion_of(source: Criterion | None) -> dict[str, str]:
    """The prompt's ``criterion`` variable: a file's name, instructions and hash, or the built-in one."""
    if source is None:
        return {"name": BUILTIN, "instructions": _BUILTIN_TEXT, "hash": ""}
    return {"name": source.name, "instructions": source.instructions or source.description,
            "hash": source.content_hash}  # fmt: skip


@dataclass(frozen=True)
class PairCall:
    """One order of one pair on one question: ``first`` is the run shown as answer A."""

    query_id: str
    run_a: str
    run_b: str
    first: str
    variables: dict[str, Any]


def order_variables(criterion: dict[str, str], question: str, reference: str | None, first: str,
                    second: str) -> dict[str, Any]:  # fmt: skip
    """The ``pairwise`` prompt's variables for one order: ``first`` shown as answer A."""
    return {"criterion": criterion, "question": question, "reference_answer": reference or None, "answer_a": first,
            "answer_b": second}  # fmt: skip


def plan_pairwise(
    gold: GoldenSet, runs: Sequence[LoadedRun], pairs: Sequence[tuple[str, str]], criterion: Criterion | None
) -> tuple[list[PairCall], list[PairJudgement]]:
    """The calls to make, and the pair judgements decided without one (one side or neither answered)."""
    by_name = {run.name: run for run in runs}
    spec = criterion_of(criterion)
    calls: list[PairCall] = []
    decided: list[PairJudgement] = []
    for run_a, run_b in pairs:
        lines_a, lines_b = by_name[run_a].lines, by_name[run_b].lines
        for qid in [q for q in lines_a if q in lines_b]:  # the questions both runs were asked, in run_a's order
            given_a, given_b = lines_a[qid].given_answer, lines_b[qid].given_answer
            if given_a is None or given_b is None:
                given = [run for run, text in ((run_a, given_a), (run_b, given_b)) if text is not None]
                decided.append(PairJudgement(query_id=qid, run_a=run_a, run_b=run_b,
                                             winner=given[0] if given else None,
                                             unscored=None if given else NEITHER))  # fmt: skip
                continue
            question = gold.question(qid)
            for first, shown in ((run_a, (given_a, given_b)), (run_b, (given_b, given_a))):
                variables = order_variables(spec, question.text, question.reference_answer, *shown)
                calls.append(PairCall(qid, run_a, run_b, first, variables))
    return calls, decided


def read_order(first: str, second: str, judgement: Judgement[Any]) -> OrderVerdict:
    """One order's answer, ``first`` shown as answer A and ``second`` as B: the run (or system) it prefers."""
    if judgement.output is None:
        kind = judgement.unscored.kind if judgement.unscored is not None else "unscored"
        return OrderVerdict(shown_first=first, unscored=kind)
    preferred, reason = judgement.output.preferred, judgement.output.reason
    winner = "tie" if preferred == "tie" else (first if preferred == _POSITIONS[0] else second)
    return OrderVerdict(shown_first=first, preferred=preferred, winner=winner, reason=reason)


def pair_outcome(orders: Sequence[OrderVerdict]) -> tuple[str | None, str | None]:
    """(winner, why unscored) of a pair's two orders (module doc)."""
    failed = next((o.unscored for o in orders if o.unscored is not None), None)
    if failed is not None:
        return None, failed
    winners = {o.winner for o in orders}
    return (winners.pop() if len(winners) == 1 else "tie"), None


async def judge_pairwise(
    judge: Judge, calls: Sequence[PairCall], *, on_result: Callable[[], None] | None = None
) -> list[PairJudgement]:
    """Make ``calls`` (both orders of each pair and question) and read each pair's outcome."""
    orders: list[OrderVerdict | None] = [None] * len(calls)

    def done(index: int, judgement: Judgement[Any]) -> None:
        call = calls[index]
        orders[index] = read_order(call.first, call.run_b if call.first == call.run_a else call.run_a, judgement)
        if on_result is not None:
            on_result()

    if calls:
        await judge.ajudge_many(PAIRWISE_PROMPT, [c.variables for c in calls], stage=PAIRWISE_PROMPT,
                                on_result=done)  # fmt: skip
    grouped: dict[tuple[str, str, str], list[OrderVerdict]] = {}
    for call, verdict in zip(calls, orders, strict=True):
        given = verdict if verdict is not None else OrderVerdict(shown_first=call.first, unscored="unscored")
        grouped.setdefault((call.run_a, call.run_b, call.query_id), []).append(given)
    out = []
    for (run_a, run_b, qid), two in grouped.items():
        winner, why = pair_outcome(two)
        out.append(PairJudgement(query_id=qid, run_a=run_a, run_b=run_b, winner=winner, unscored=why, orders=two))
    return out


def estimate_pairwise(judge: Judge, calls: Sequence[PairCall]) -> dict[str, Estimate]:
    """The dry run's ``pairwise`` stage: 2 x pairs x questions calls (fewer where a side has no answer)."""
    return {PAIRWISE_PROMPT: judge.estimate(PAIRWISE_PROMPT, [c.variables for c in calls])} if calls else {}
