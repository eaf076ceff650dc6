"""Pins of the judge's planned calls and how their answers are read (judging.calls), found by the mutation habit
(scripts/mutation.sh): the calls planned for hand-made lines of the passages fixture, and scripted answers read back
through ``assess_runs`` with a stand-in judge, every value written by hand (no model, no evaluation)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from passages_fixture import chunk_text, make_passages_golden
from pydantic import BaseModel

from assay.formats.golden import GoldenSet
from assay.judge import Judgement, Pair, make_judge
from assay.judge.outputs import (
    AnswerAssessment,
    ArgumentsCheck,
    ClaimVerdict,
    EquivalentCall,
    StatementSupport,
    SupportAssignments,
)
from assay.pipelines.evaluate.judging.calls import (
    assess_runs,
    judge_unlabelled,
    plan_calls,
    read_tool_args,
    unlabelled_pairs,
    vital_counts,
)
from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine, Search
from assay.results import RunCounts
from assay.types import (
    Claim,
    Conversation,
    Nugget,
    Provenance,
    Question,
    RelevanceLabel,
    RunError,
    ToolCall,
    ToolStep,
    Turn,
    Unscored,
)

NUGGETS = ["nugget_recall_all_strict", "nugget_recall_all_lenient", "nugget_recall_vital_strict",
           "nugget_recall_vital_lenient"]  # fmt: skip
ANSWER = ["faithfulness", "answer_relevance", "attribution_rate"]
Script = Callable[[Mapping[str, Any]], BaseModel | None]


class Scripted:
    """A stand-in judge: each prompt's answer comes from a function of the call's variables (None: unscored,
    kind ``refused``); the prompts and variables asked are kept."""

    def __init__(self, scripts: Mapping[str, Script]) -> None:
        self.scripts = scripts
        self.asked: list[tuple[str, str, Mapping[str, Any]]] = []

    async def ajudge_many(
        self,
        prompt: str,
        variables: Sequence[Mapping[str, Any]],
        *,
        stage: str,
        on_result: Callable[[int, Judgement[Any]], None] | None = None,
    ) -> list[Judgement[Any]]:
        out = []
        for i, one in enumerate(variables):
            self.asked.append((prompt, stage, one))
            output = self.scripts[prompt](one)
            unscored = None if output is not None else Unscored(reason="scripted refusal", kind="refused")
            j: Judgement[Any] = Judgement(output=output, unscored=unscored, cached=False, model="m", prompt=prompt,
                                          prompt_hash="h")  # fmt: skip
            if on_result is not None:
                on_result(i, j)
            out.append(j)
        return out


def _golden() -> GoldenSet:
    """The passages fixture with q1's claims and nuggets (two vital, one okay), q2's only nugget okay, q3 with no
    claims (its reference answer is one sentence), q4, unanswerable, and q5 with no reference answer."""
    gold = make_passages_golden()
    q1, q2, q3 = gold.questions
    q1.claims = [
        Claim(id="c1", text="Items may be returned within 30 days."),
        Claim(id="c2", text="Refunds take 5 business days."),
        Claim(id="c3", text="Software is final."),
    ]
    q1.nuggets = [Nugget(id="n1", text="30 days", importance="vital"),
                  Nugget(id="n2", text="full refund", importance="okay"),
                  Nugget(id="n3", text="unused items", importance="vital")]  # fmt: skip
    q2.nuggets = [Nugget(id="m1", text="3.2 kg", importance="okay")]
    q3.nuggets = [Nugget(id="e1", text="$12", importance="vital")]
    q4 = Question(id="q4", text="When do the stores open?", type="unanswerable", reference_answer="No idea. None.")
    q5 = Question(id="q5", text="Anything else?")
    return GoldenSet(gold.manifest, gold.documents, gold.chunks, [q1, q2, q3, q4, q5], gold.qrels, [])


def _run(name: str, lines: list[RunLine], *, answers: bool = True) -> LoadedRun:
    counts = RunCounts(with_answer=1 if answers else 0)
    return LoadedRun(name=name, path=Path(f"{name}.jsonl"), kind="jsonl", lines={line.query_id: line for line in lines},
                     counts=counts)  # fmt: skip


def _line(qid: str, ranked: list[str], answer: str | None = "Within 30 days.", **more: Any) -> RunLine:
    return RunLine(query_id=qid, ranked=ranked, scores={}, answer=answer, **more)


def _support(*items: tuple[str, str, list[str]]) -> SupportAssignments:
    return SupportAssignments(assignments=[StatementSupport(statement_id=sid, reason=f"why {sid}", support=level,
                                                            passage_ids=ids) for sid, level, ids in items])  # fmt: skip


RANKED = ["returns#1", "p:none", "returns#2", "returns#4"]  # p:none: no chunk, no text of the run's own
SHOWN = [{"id": "1", "text": chunk_text("returns#1")}, {"id": "3", "text": chunk_text("returns#2")}]


def test_a_context_call_shows_the_top_k_with_local_ids_and_states_the_claims() -> None:
    gold = _golden()
    lines = [_line("q1", RANKED), _line("q2", []), _line("q3", ["shipping#2"]), _line("q4", ["tent#1"]),
             _line("q5", ["tent#1"])]  # fmt: skip
    plan = plan_calls(gold, [_run("a", lines)], context_k=3, families={"context_recall"})
    assert [(c.run, c.query_id, c.prompt, c.kind) for c in plan.calls] == [
        ("a", "q1", "support", "context"), ("a", "q3", "support", "context")]  # fmt: skip
    one, three = plan.calls
    assert one.columns == ["returns#1", "p:none", "returns#2"]
    assert one.variables == {"statements": [{"id": "c1", "text": "Items may be returned within 30 days."},
                                            {"id": "c2", "text": "Refunds take 5 business days."},
                                            {"id": "c3", "text": "Software is final."}], "passages": SHOWN}  # fmt: skip
    # no claims: the reference answer's sentences
    assert three.variables["statements"] == [{"id": "c1", "text": "Express shipping costs $12"}]
    assessed = plan.assessed["a"]
    assert assessed["q2"].metrics["context_recall"] == 0.0  # nothing retrieved supports nothing
    # an unanswerable question's reference answer is no claim
    assert assessed["q4"].metrics["context_recall"] is None
    assert assessed["q4"].unscored["context_recall"] == "no_reference_claims"
    assert assessed["q5"].unscored["context_recall"] == "no_reference_claims"  # no reference answer: no claim


def test_context_support_is_read_per_named_passage_and_a_supported_claim_naming_none_credits_all() -> None:
    gold = _golden()
    gold.questions[2].claims = [Claim(id="e1", text="Express costs $12."), Claim(id="e2", text="It arrives next day.")]
    lines = [_line("q1", RANKED), _line("q3", ["shipping#2", "shipping#1"])]
    plan = plan_calls(gold, [_run("a", lines)], context_k=3, families={"context_recall"})
    judge = Scripted({"support": lambda v: _support(("c1", "support", ["3", "4", "0", "x"]), ("c2", "partial", []),
                                                    ("c3", "none", ["1"])) if len(v["statements"]) == 3 else
                      _support(("c2", "support", ["1"]))})  # fmt: skip
    got = asyncio.run(assess_runs(judge, gold, plan))  # type: ignore[arg-type]
    q1 = got["a"]["q1"]
    assert q1.metrics["context_recall"] == 1 / 3  # strict: c1 supported, c2 partial, c3 not
    assert [(r.run, r.query_id, r.kind, r.claim, r.verdict, r.reason, r.support) for r in q1.rows] == [
        ("a", "q1", "reference", "Items may be returned within 30 days.", "support", "why c1",
         {"returns#1": 0.0, "p:none": 0.0, "returns#2": 1.0}),
        ("a", "q1", "reference", "Refunds take 5 business days.", "partial", "why c2",
         {"returns#1": 0.5, "p:none": 0.5, "returns#2": 0.5}),
        ("a", "q1", "reference", "Software is final.", "none", "why c3",
         {"returns#1": 0.0, "p:none": 0.0, "returns#2": 0.0}),
    ]  # fmt: skip
    # the judge skipped q3's first claim: unscored, not unsupported; the second is still read
    q3 = got["a"]["q3"]
    assert q3.metrics["context_recall"] is None and q3.unscored["context_recall"] == "missing_claim_verdict"
    assert [(r.claim, r.support) for r in q3.rows] == [("It arrives next day.", {"shipping#2": 1.0, "shipping#1": 0.0})]
    assert [(prompt, stage) for prompt, stage, _ in judge.asked] == [("support", "context_recall")] * 2


def test_an_answer_call_is_read_into_faithfulness_relevance_attribution_and_rows() -> None:
    gold = _golden()
    cited = _line("q1", RANKED, citations=["p:none"])
    vague = _line("q3", ["shipping#2"], answer="Hard to say.")
    blind = _line("q2", [], answer="Hard to say.")  # nothing retrieved: no attribution to measure
    plan = plan_calls(gold, [_run("a", [cited, vague, blind])], context_k=3, families={"answer"})
    assert plan.calls[0].variables == {"question": gold.question("q1").text, "answer": "Within 30 days.",
                                       "passages": SHOWN}  # fmt: skip
    assert plan.calls[0].prompt == "answer_assessment" and plan.calls[0].citations == ["p:none"]

    def answer(v: Mapping[str, Any]) -> AnswerAssessment:
        if v["answer"] == "Hard to say.":
            return AnswerAssessment(claims=[], relevance_reason="vague", relevance=3, noncommittal=True)
        claims = [ClaimVerdict(claim="a", reason="ra", verdict="supported", passage_ids=["1"]),
                  ClaimVerdict(claim="b", reason="rb", verdict="unsupported", passage_ids=["3"]),
                  ClaimVerdict(claim="c", reason="rc", verdict="partial", passage_ids=[])]  # fmt: skip
        return AnswerAssessment(claims=claims, relevance_reason="ok", relevance=2, noncommittal=False)

    judge = Scripted({"answer_assessment": answer})
    got = asyncio.run(assess_runs(judge, gold, plan))  # type: ignore[arg-type]
    assert {stage for _, stage, _ in judge.asked} == {"answer"}
    assert got["a"]["q2"].metrics["attribution_rate"] is None
    assert got["a"]["q2"].unscored["attribution_rate"] == "nothing_retrieved"
    q1 = got["a"]["q1"]
    assert q1.metrics["faithfulness"] == 1 / 3  # strict: one of three claims supported
    assert q1.metrics["answer_relevance"] == 2 / 3
    assert q1.metrics["attribution_rate"] == 2 / 3  # returns#1 (a supported claim) and p:none (cited); not returns#2
    assert [(r.kind, r.claim, r.verdict, r.reason, r.support) for r in q1.rows] == [
        ("answer", "a", "supported", "ra", {"returns#1": 1.0, "p:none": 0.0, "returns#2": 0.0}),
        ("answer", "b", "unsupported", "rb", {"returns#1": 0.0, "p:none": 0.0, "returns#2": 0.0}),
        ("answer", "c", "partial", "rc", {"returns#1": 0.0, "p:none": 0.0, "returns#2": 0.0}),
    ]  # fmt: skip
    q3 = got["a"]["q3"]
    assert q3.metrics["answer_relevance"] == 0.0  # noncommittal: 0 whatever the score
    assert q3.metrics["faithfulness"] is None and q3.unscored["faithfulness"] == "no_claims"
    assert q3.metrics["attribution_rate"] == 0.0


def test_no_answer_to_judge_says_why_and_an_empty_or_failed_answer_scores_the_nuggets_0() -> None:
    gold = _golden()
    answering = _run("a", [_line("q1", RANKED, answer="  "), _line("q2", ["tent#1"], answer=None,
                                                                                error=RunError(kind="timeout")),
                           _line("q3", ["shipping#2"], answer="It costs $12.")])  # fmt: skip
    quiet = _run("b", [_line("q1", RANKED, answer=None)], answers=False)
    plan = plan_calls(gold, [answering, quiet], context_k=3, families={"answer", "nugget_recall"})
    assert [(c.run, c.query_id, c.kind) for c in plan.calls] == [("a", "q3", "answer"), ("a", "q3", "nuggets")]
    nuggets = plan.calls[1]
    assert nuggets.columns == [] and nuggets.prompt == "support"
    assert nuggets.variables == {"statements": [{"id": "e1", "text": "$12"}],
                                 "passages": [{"id": "answer", "text": "It costs $12."}]}  # fmt: skip
    a, b = plan.assessed["a"], plan.assessed["b"]
    for name in ANSWER:
        assert a["q1"].unscored[name] == "empty answer" and a["q2"].unscored[name] == "system_failed"
        assert b["q1"].unscored[name] == "no answers in this run" and a["q1"].metrics[name] is None
    for name in NUGGETS:
        assert a["q1"].metrics[name] == 0.0  # an empty answer holds no nugget
        assert b["q1"].metrics[name] is None and b["q1"].unscored[name] == "no answers in this run"
    assert a["q2"].metrics["nugget_recall_all_strict"] == 0.0  # the system failed: its nugget not supported
    assert a["q2"].metrics["nugget_recall_vital_strict"] is None  # q2's only nugget is okay: no vital one
    assert a["q2"].unscored["nugget_recall_vital_strict"] == "no_vital_nuggets"


def test_nugget_verdicts_are_read_and_the_vital_counts_kept_only_when_every_vital_one_has_a_verdict() -> None:
    gold = _golden()
    gold.questions[1].nuggets = [Nugget(id="m1", text="3.2 kg", importance="okay"),
                                 Nugget(id="m2", text="tent", importance="vital")]  # fmt: skip
    gold.questions[2].nuggets = [Nugget(id="e1", text="$12", importance="okay")]  # no vital nugget
    lines = [_line("q1", RANKED), _line("q2", ["tent#1"], answer="3.2 kg."), _line("q4", [], answer="Nine."),
             _line("q3", ["shipping#2"], answer="$12.")]  # fmt: skip
    plan = plan_calls(gold, [_run("a", lines)], context_k=3, families={"nugget_recall"})

    def nuggets(v: Mapping[str, Any]) -> SupportAssignments:
        if v["statements"][0]["id"] == "n1":
            return _support(("n1", "support", []), ("n2", "partial", []), ("n3", "support", []))
        if v["statements"][0]["id"] == "e1":
            return _support(("e1", "support", []))
        return _support(("m1", "support", []))  # m2 (vital) skipped

    judge = Scripted({"support": nuggets})
    got = asyncio.run(assess_runs(judge, gold, plan))  # type: ignore[arg-type]
    assert {stage for _, stage, _ in judge.asked} == {"nuggets"}
    q1 = got["a"]["q1"].metrics
    # n1 and n3 supported, n2 partly: all strict 2/3, lenient 2.5/3; vital (n1, n3) 1 either way
    assert [q1[name] for name in NUGGETS] == [2 / 3, 2.5 / 3, 1.0, 1.0]
    assert got["a"]["q3"].unscored["nugget_recall_vital_strict"] == "no_vital_nuggets"
    q2 = got["a"]["q2"]
    assert q2.metrics["nugget_recall_vital_strict"] is None
    assert q2.unscored["nugget_recall_vital_strict"] == "missing_nugget_verdict"
    assert got["a"]["q4"].unscored["nugget_recall_all_strict"] == "no_nuggets"
    # q1: both its vital nuggets; q2: a vital verdict missing (None); q3: no vital nugget, q4 no nuggets (left out)
    assert vital_counts(got) == {"a": {"q1": (2, 2), "q2": None}}


def test_a_refused_call_leaves_its_measures_unscored_with_the_kind() -> None:
    gold = _golden()
    plan = plan_calls(gold, [_run("a", [_line("q1", RANKED)])], context_k=3, families={"context_recall", "answer"})
    got = asyncio.run(assess_runs(Scripted({"support": lambda v: None, "answer_assessment": lambda v: None}), gold,
                                  plan))  # type: ignore[arg-type]  # fmt: skip
    for name in ["context_recall", *ANSWER]:
        assert got["a"]["q1"].metrics[name] is None and got["a"]["q1"].unscored[name] == "refused"


def test_tool_argument_calls_are_planned_only_where_a_judge_can_change_the_value() -> None:
    gold = _golden()
    q1, q2, q3, _, _ = gold.questions
    q1.tool_calls = [ToolCall(name="calc", arguments={"x": "1+2", "a": 1})]
    q2.tool_calls = [ToolCall(name="calc", arguments={"x": "2*3"}), ToolCall(name="look", arguments={"q": "tent"})]
    q3.tool_calls = [ToolCall(name="calc", arguments={"x": "12"})]
    lines = [
        _line("q1", [], steps=[ToolStep(kind="tool", name="calc", arguments={"x": "2+1", "a": 1})]),
        _line("q2", [], steps=[ToolStep(kind="tool", name="look", arguments={"q": "tent"}),
                               ToolStep(kind="tool", name="calc", arguments={"x": "2*3"})]),
        _line("q3", [], steps=[Search(query="express", units=())]),
        _line("q4", [], steps=[ToolStep(kind="tool", name="calc", arguments={})]),
    ]  # fmt: skip
    failed = _line("q1", [], error=RunError(kind="timeout"))
    plan = plan_calls(gold, [_run("a", lines), _run("b", [failed])], context_k=3, families={"tool_args"})
    (call,) = plan.calls
    assert (call.run, call.query_id, call.prompt, call.kind) == ("a", "q1", "tool_arguments", "tool_args")
    assert call.variables == {"question": q1.text,
                              "reference": [{"id": "r1", "name": "calc", "arguments": '{"a":1,"x":"1+2"}'}],
                              "calls": [{"id": "s1", "name": "calc", "arguments": '{"a":1,"x":"2+1"}'}]}  # fmt: skip
    a = plan.assessed["a"]
    assert a["q2"].metrics["tool_args_judged"] == 1.0  # both made as given, in another order: no call
    assert a["q3"].metrics["tool_args_judged"] == 0.0  # no call made: nothing to judge
    assert a["q4"].metrics["tool_args_judged"] is None
    assert a["q4"].unscored["tool_args_judged"] == "no_reference_tool_calls"
    assert plan.assessed["b"]["q1"].unscored["tool_args_judged"] == "system_failed"
    got = asyncio.run(assess_runs(Scripted({"tool_arguments": lambda v: ArgumentsCheck(
        reason="same", equivalent=[EquivalentCall(reference="r1", call="s1")])}), gold, plan))  # type: ignore[arg-type]  # fmt: skip
    assert got["a"]["q1"].metrics["tool_args_judged"] == 1.0
    # tool calls made but the measure not asked for: no call, no value
    unasked = plan_calls(gold, [_run("a", lines)], context_k=3, families={"context_recall"})
    assert all(c.kind == "context" for c in unasked.calls)
    assert all("tool_args_judged" not in one.metrics for one in unasked.assessed["a"].values())
    # no line of any run has steps: no tool measure at all
    plain = plan_calls(gold, [_run("a", [_line("q1", [])])], context_k=3, families={"tool_args"})
    assert plain.calls == [] and "tool_args_judged" not in plain.assessed["a"]["q1"].metrics


def test_judged_pairs_count_only_known_ids_of_calls_to_the_same_tool() -> None:
    question = Question(id="q", text="t", tool_calls=[ToolCall(name="add", arguments={"x": "1+2"}),
                                                      ToolCall(name="mul", arguments={"x": "2*3"}),
                                                      ToolCall(name="pow", arguments={"x": "2^3"})])  # fmt: skip
    steps = [ToolStep(kind="tool", name="add", arguments={"x": "2+1"}),
             ToolStep(kind="tool", name="sub", arguments={"x": "3*2"}),
             ToolStep(kind="tool", name="pow", arguments={"x": "2^3"})]  # fmt: skip
    line = RunLine(query_id="q", ranked=[], scores={}, steps=list(steps))
    # r3~s3 exact without asking; r1~s1 same tool, paired; r2~s2 another tool's name, refused; r4 and s9 name none
    data = {"equivalent": [{"reference": "r1", "call": "s1"}, {"reference": "r2", "call": "s2"},
                           {"reference": "r4", "call": "s1"}, {"reference": "r2", "call": "s9"}]}  # fmt: skip
    assert read_tool_args(question, line, data) == 2 / 3


def test_unlabelled_pairs_are_the_top_depth_chunks_without_a_scored_label_each_once() -> None:
    gold = _golden()
    unscored = RelevanceLabel(query_id="q1", chunk_id="tent#1", grade=None, provenance=Provenance(source="judge"))
    gold = GoldenSet(gold.manifest, gold.documents, gold.chunks, gold.questions, [*gold.qrels, unscored], [])
    a = _run("a", [_line("q1", ["returns#1", "returns#3", "p:none", "tent#1", "tent#2"])])
    b = _run("b", [_line("q1", ["returns#3"])])
    text = gold.question("q1").text
    assert unlabelled_pairs(gold, [a, b], 4) == [
        Pair("q1", text, "returns#3", chunk_text("returns#3")),
        Pair("q1", text, "tent#1", chunk_text("tent#1")),
    ]  # tent#2 is fifth
    calls: list[int] = []
    assert asyncio.run(judge_unlabelled(None, [], listwise=5, seed=0, on_label=lambda g: calls.append(1))) == []  # type: ignore[arg-type]
    assert calls == []  # nothing to grade: no judge asked
    pairs = unlabelled_pairs(gold, [a, b], 4)
    labels = asyncio.run(judge_unlabelled(make_judge("offline"), pairs, listwise=5, seed=3,
                                          on_label=lambda g: calls.append(1)))  # fmt: skip
    assert [(label.query_id, label.chunk_id) for label in labels] == [("q1", "returns#3"), ("q1", "tent#1")]
    assert calls == [1, 1]  # told of each label


def _conversation() -> GoldenSet:
    """_golden with one conversation: q1, then q2, then q3."""
    gold = _golden()
    gold.conversations = [Conversation(id="c0", turns=[Turn(question_id=q, utterance=f"turn {q}")
                                                       for q in ("q1", "q2", "q3")])]  # fmt: skip
    return gold


def test_a_checked_turn_without_an_answer_of_its_own_is_unscored_with_why_and_makes_no_call() -> None:
    """q1 answers; q2 (checked against q1) gives an empty answer, q3 (checked against q1) failed: no contradiction
    call, each turn unscored with its reason; with a third answering turn, one call against the two answers before."""
    gold = _conversation()
    lines = [_line("q1", RANKED), _line("q2", [], answer=" "), _line("q3", [], answer=None, error=RunError(kind="x"))]
    plan = plan_calls(gold, [_run("a", lines)], context_k=3, families={"contradiction"})
    assert plan.calls == []
    got = plan.assessed["a"]
    assert (got["q2"].metrics, got["q2"].unscored) == ({"contradiction": None}, {"contradiction": "empty answer"})
    assert (got["q3"].metrics, got["q3"].unscored) == ({"contradiction": None}, {"contradiction": "system_failed"})
    assert "contradiction" not in got["q1"].metrics  # a first turn is not checked
    lines[2] = _line("q3", [], answer="It costs $12.")
    (call,) = plan_calls(gold, [_run("a", lines)], context_k=3, families={"contradiction"}).calls
    assert (call.query_id, call.kind, call.prompt) == ("q3", "contradiction", "contradiction")
    assert call.variables == {"question": gold.question("q3").text, "answer": "It costs $12.",
                              "earlier": [{"id": "1", "question": "turn q1", "text": "Within 30 days."}]}  # fmt: skip


def test_contradiction_calls_only_when_the_families_ask_for_them() -> None:
    gold = _conversation()
    lines = [_line("q1", []), _line("q2", [], answer="It weighs 3.2 kg.")]
    plan = plan_calls(gold, [_run("a", lines)], context_k=3, families={"answer"})
    assert [(c.query_id, c.kind) for c in plan.calls] == [("q1", "answer"), ("q2", "answer")]
    assert all("contradiction" not in one.metrics for one in plan.assessed["a"].values())
    every = plan_calls(gold, [_run("a", lines)], context_k=3, families=None)
    assert [c.query_id for c in every.calls if c.kind == "contradiction"] == ["q2"]
