"""The pairwise judging's pieces without a server: which pairs of runs are compared, what the judge is shown in
each order, the pairs decided without a call, how one order's answer names a run and how two orders make an outcome.
The judge is a stand-in that answers from a script (the HTTP path is pinned by test_pairwise)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from evaluate_fixture import good_lines, make_golden, qid

from assay.errors import ConfigError
from assay.judge import Estimate, Judge, Judgement
from assay.judge.criteria import Criterion
from assay.judge.outputs import Preference
from assay.pipelines.evaluate.judging import pairwise
from assay.pipelines.evaluate.judging.pairwise import (
    BUILTIN,
    NEITHER,
    PairCall,
    criterion_of,
    estimate_pairwise,
    judge_pairwise,
    order_variables,
    pair_outcome,
    plan_pairwise,
    read_order,
    run_pairs,
)
from assay.pipelines.evaluate.runs.read import load_run
from assay.results import OrderVerdict, PairJudgement
from assay.types import Unscored

# -- the pairs ------------------------------------------------------------------------------------------------------


def test_all_pairs_come_in_the_runs_order() -> None:
    assert run_pairs(["a", "b"], "all", None) == [("a", "b")]
    assert run_pairs(["a", "b", "c"], "all", "b") == [("a", "b"), ("a", "c"), ("b", "c")]


def test_baseline_pairs_put_the_baseline_first_the_first_run_unless_one_is_named() -> None:
    assert run_pairs(["a", "b", "c"], "baseline", None) == [("a", "b"), ("a", "c")]
    assert run_pairs(["a", "b", "c"], "baseline", "b") == [("b", "a"), ("b", "c")]


@pytest.mark.parametrize(
    ("names", "mode", "baseline", "message"),
    [
        (["a", "b"], "some", None, "--pairs some: use one of all, baseline"),
        (["a"], "some", None, "--pairs some: use one of all, baseline"),  # the mode is checked first
        (["a"], "all", None, "--pairwise compares the answers of two runs or more; give at least two runs"),
        ([], "baseline", None, "--pairwise compares the answers of two runs or more; give at least two runs"),
        (["a", "b"], "baseline", "c", "--baseline c: no run of that name (runs: a, b)"),
    ],
)
def test_run_pairs_refuses_a_bad_mode_one_run_or_an_unknown_baseline(
    names: list[str], mode: str, baseline: str | None, message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        run_pairs(names, mode, baseline)
    assert str(raised.value) == message


# -- what the judge is shown ----------------------------------------------------------------------------------------


def _criterion(instructions: str) -> Criterion:
    return Criterion(name="terse", version="1", description="Short answers win.", inputs=("question", "answer"),
                     path=Path("terse.md"), content_hash="h123", instructions=instructions)  # fmt: skip


def test_the_criterion_variable_is_the_file_s_instructions_else_its_description_else_the_builtin_one() -> None:
    assert criterion_of(_criterion("Prefer the shorter one.")) == {"name": "terse",
                                                                  "instructions": "Prefer the shorter one.",
                                                                  "hash": "h123"}  # fmt: skip
    assert criterion_of(_criterion("")) == {"name": "terse", "instructions": "Short answers win.", "hash": "h123"}
    builtin = criterion_of(None)
    assert builtin == {"name": BUILTIN, "instructions": pairwise._BUILTIN_TEXT, "hash": ""}
    assert builtin["instructions"].startswith("Prefer the answer that better answers the question")


def test_order_variables_show_the_first_answer_as_a_and_drop_an_empty_reference() -> None:
    spec = {"name": "n"}
    assert order_variables(spec, "Q?", "Ref.", "one", "two") == {
        "criterion": spec, "question": "Q?", "reference_answer": "Ref.", "answer_a": "one", "answer_b": "two"
    }  # fmt: skip
    assert order_variables(spec, "Q?", "", "one", "two")["reference_answer"] is None
    assert order_variables(spec, "Q?", None, "one", "two")["reference_answer"] is None


def _run(name: str, answers: Mapping[int, str | None], n: int = 4) -> Any:
    """A run of the fixture's questions whose answer to question i is ``answers[i]`` (None: no answer field, an
    absent i: the question not in the run)."""
    lines = []
    for i, line in enumerate(good_lines(n)):
        if i not in answers:
            continue
        kept = {k: v for k, v in line.items() if k != "answer"}
        if answers[i] is not None:
            kept["answer"] = answers[i]
        lines.append(kept)
    return load_run((name, lines), make_golden(n=n))


def test_plan_asks_both_orders_where_both_answered_and_decides_the_rest_without_a_call() -> None:
    gold = make_golden(n=4)
    gold.questions[1].reference_answer = ""
    # q0: both answered; q1: both answered (no reference); q2: only y answered ("   " is no answer); q3: neither.
    x = _run("x", {0: "x0", 1: "x1", 2: "   ", 3: None})
    y = _run("y", {3: None, 2: "y2", 1: "y1", 0: "y0"})
    calls, decided = plan_pairwise(gold, [x, y], [("x", "y")], None)
    spec = criterion_of(None)
    q0, q1 = gold.question(qid(0)), gold.question(qid(1))
    assert calls == [
        PairCall(qid(0), "x", "y", "x", order_variables(spec, q0.text, q0.reference_answer, "x0", "y0")),
        PairCall(qid(0), "x", "y", "y", order_variables(spec, q0.text, q0.reference_answer, "y0", "x0")),
        PairCall(qid(1), "x", "y", "x", order_variables(spec, q1.text, None, "x1", "y1")),
        PairCall(qid(1), "x", "y", "y", order_variables(spec, q1.text, None, "y1", "x1")),
    ]
    assert calls[0].variables["question"] == "How many days does the Alder kettle warranty last?"
    assert decided == [PairJudgement(query_id=qid(2), run_a="x", run_b="y", winner="y"),
                       PairJudgement(query_id=qid(3), run_a="x", run_b="y", unscored=NEITHER)]  # fmt: skip


def test_plan_takes_the_questions_both_runs_were_asked_in_the_first_run_s_order_and_the_criterion_given() -> None:
    gold = make_golden(n=4)
    x = _run("x", {2: "x2", 0: "x0", 1: None})
    y = _run("y", {0: "y0", 1: "y1", 3: "y3"})  # q2 not in y, q3 not in x
    z = _run("z", {0: "z0", 1: "z1", 2: "z2", 3: "z3"})
    calls, decided = plan_pairwise(gold, [x, y, z], [("y", "x"), ("z", "x")], _criterion("Be brief."))
    assert [(c.query_id, c.run_a, c.run_b, c.first) for c in calls] == [
        (qid(0), "y", "x", "y"), (qid(0), "y", "x", "x"),
        (qid(0), "z", "x", "z"), (qid(0), "z", "x", "x"), (qid(2), "z", "x", "z"), (qid(2), "z", "x", "x"),
    ]  # fmt: skip
    assert all(c.variables["criterion"] == criterion_of(_criterion("Be brief.")) for c in calls)
    assert [(d.query_id, d.run_a, d.winner, d.unscored) for d in decided] == [(qid(1), "y", "y", None),
                                                                              (qid(1), "z", "z", None)]  # fmt: skip


# -- reading the answers --------------------------------------------------------------------------------------------


def _judged(preferred: str | None, reason: str = "because", kind: str | None = None) -> Judgement[Any]:
    output = Preference(reason=reason, preferred=preferred) if preferred is not None else None  # type: ignore[arg-type]
    unscored = Unscored(reason="failed", kind=kind) if kind is not None else None
    return Judgement(output=output, unscored=unscored, cached=False, model="m", prompt="pairwise", prompt_hash="h")


def test_read_order_names_the_run_at_the_preferred_position() -> None:
    right = OrderVerdict(shown_first="x", preferred="A", winner="x", reason="x is right")
    assert read_order("x", "y", _judged("A", "x is right")) == right
    assert read_order("y", "x", _judged("B", "x again")) == OrderVerdict(shown_first="y", preferred="B", winner="x",
                                                                         reason="x again")  # fmt: skip
    assert read_order("y", "x", _judged("tie", "same")) == OrderVerdict(shown_first="y", preferred="tie", winner="tie",
                                                                        reason="same")  # fmt: skip


def test_read_order_keeps_why_a_call_failed() -> None:
    failed = OrderVerdict(shown_first="x", unscored="backend_error")
    assert read_order("x", "y", _judged(None, kind="backend_error")) == failed
    assert read_order("y", "x", _judged(None)) == OrderVerdict(shown_first="y", unscored="unscored")


def _order(first: str, winner: str | None, unscored: str | None = None) -> OrderVerdict:
    return OrderVerdict(shown_first=first, winner=winner, unscored=unscored)


def test_two_orders_make_a_winner_only_when_they_agree() -> None:
    assert pair_outcome([_order("x", "x"), _order("y", "x")]) == ("x", None)
    assert pair_outcome([_order("x", "x"), _order("y", "y")]) == ("tie", None)
    assert pair_outcome([_order("x", "tie"), _order("y", "tie")]) == ("tie", None)
    assert pair_outcome([_order("x", "tie"), _order("y", "y")]) == ("tie", None)


def test_a_failed_order_leaves_the_pair_unscored_with_the_first_failure() -> None:
    assert pair_outcome([_order("x", "x"), _order("y", None, "timeout")]) == (None, "timeout")
    assert pair_outcome([_order("x", None, "refused"), _order("y", None, "timeout")]) == (None, "refused")


# -- the calls ------------------------------------------------------------------------------------------------------


class _Scripted:
    """A judge that answers each call's variables with ``answer(variables)``; None: no result for that call."""

    def __init__(self, answer: Callable[[Mapping[str, Any]], Judgement[Any] | None]) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str, list[Mapping[str, Any]]]] = []
        self.estimated: list[tuple[str, list[Mapping[str, Any]]]] = []

    async def ajudge_many(self, prompt_name: str, variables: Sequence[Mapping[str, Any]], *, stage: str,
                          on_result: Callable[[int, Judgement[Any]], None]) -> list[Judgement[Any]]:  # fmt: skip
        self.asked.append((prompt_name, stage, list(variables)))
        out = []
        for index in reversed(range(len(variables))):  # results may arrive in any order
            judgement = self.answer(variables[index])
            if judgement is not None:
                on_result(index, judgement)
                out.append(judgement)
        return out

    def estimate(self, prompt_name: str, variables: Sequence[Mapping[str, Any]]) -> Estimate:
        self.estimated.append((prompt_name, list(variables)))
        return Estimate(calls=len(variables), cached=0, prompt_tokens=7, cost_usd=None)


def _call(qid_: str, run_a: str, run_b: str, first: str) -> PairCall:
    shown = (run_a, run_b) if first == run_a else (run_b, run_a)
    return PairCall(qid_, run_a, run_b, first, order_variables({}, qid_, None, f"{qid_}:{shown[0]}",
                                                               f"{qid_}:{shown[1]}"))  # fmt: skip


def _prefer(run: str) -> Callable[[Mapping[str, Any]], Judgement[Any] | None]:
    """Prefers ``run``'s answer wherever it is shown; q9 gets no result, q8 a failed call."""

    def answer(variables: Mapping[str, Any]) -> Judgement[Any] | None:
        if variables["question"] == "q9":
            return None
        if variables["question"] == "q8":
            return _judged(None, kind="refused")
        a, b = variables["answer_a"].endswith(f":{run}"), variables["answer_b"].endswith(f":{run}")
        return _judged("A" if a else "B" if b else "tie", reason=f"{run} shown {'A' if a else 'B'}")

    return answer


def test_judge_pairwise_asks_every_order_once_and_groups_them_by_question_and_pair() -> None:
    calls = [_call("q0", "x", "y", "x"), _call("q0", "x", "y", "y"), _call("q0", "z", "y", "z"),
             _call("q0", "z", "y", "y"), _call("q1", "x", "y", "x"), _call("q1", "x", "y", "y")]  # fmt: skip
    judge = _Scripted(_prefer("y"))
    seen: list[int] = []
    found = asyncio.run(judge_pairwise(cast(Judge, judge), calls, on_result=lambda: seen.append(1)))
    assert [(name, stage, len(asked)) for name, stage, asked in judge.asked] == [("pairwise", "pairwise", 6)]
    assert judge.asked[0][2] == [c.variables for c in calls]
    assert len(seen) == 6
    assert found == [
        PairJudgement(query_id="q0", run_a="x", run_b="y", winner="y",
                      orders=[OrderVerdict(shown_first="x", preferred="B", winner="y", reason="y shown B"),
                              OrderVerdict(shown_first="y", preferred="A", winner="y", reason="y shown A")]),
        PairJudgement(query_id="q0", run_a="z", run_b="y", winner="y",
                      orders=[OrderVerdict(shown_first="z", preferred="B", winner="y", reason="y shown B"),
                              OrderVerdict(shown_first="y", preferred="A", winner="y", reason="y shown A")]),
        PairJudgement(query_id="q1", run_a="x", run_b="y", winner="y",
                      orders=[OrderVerdict(shown_first="x", preferred="B", winner="y", reason="y shown B"),
                              OrderVerdict(shown_first="y", preferred="A", winner="y", reason="y shown A")]),
    ]  # fmt: skip


def test_judge_pairwise_marks_a_call_without_a_result_unscored_and_works_without_a_callback() -> None:
    calls = [_call("q9", "x", "y", "x"), _call("q9", "x", "y", "y"), _call("q8", "x", "y", "x"),
             _call("q8", "x", "y", "y")]  # fmt: skip
    found = asyncio.run(judge_pairwise(cast(Judge, _Scripted(_prefer("x"))), calls))
    assert found == [
        PairJudgement(query_id="q9", run_a="x", run_b="y", unscored="unscored",
                      orders=[OrderVerdict(shown_first="x", unscored="unscored"),
                              OrderVerdict(shown_first="y", unscored="unscored")]),
        PairJudgement(query_id="q8", run_a="x", run_b="y", unscored="refused",
                      orders=[OrderVerdict(shown_first="x", unscored="refused"),
                              OrderVerdict(shown_first="y", unscored="refused")]),
    ]  # fmt: skip


def test_no_calls_ask_nothing_and_estimate_nothing() -> None:
    judge = _Scripted(_prefer("x"))
    assert asyncio.run(judge_pairwise(cast(Judge, judge), [])) == []
    assert estimate_pairwise(cast(Judge, judge), []) == {}
    assert judge.asked == [] and judge.estimated == []


def test_the_estimate_counts_every_order_under_the_pairwise_stage() -> None:
    judge = _Scripted(_prefer("x"))
    calls = [_call("q0", "x", "y", "x"), _call("q0", "x", "y", "y")]
    assert estimate_pairwise(cast(Judge, judge), calls) == {"pairwise": Estimate(2, 0, 7, None)}
    assert judge.estimated == [("pairwise", [c.variables for c in calls])]
