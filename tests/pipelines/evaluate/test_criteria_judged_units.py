"""The judged criteria's pieces without a server: what the judge is shown (the named inputs only, the history of a
conversation with this run's answers), why a question is not asked, how one judge's reply becomes a vote (label,
tree walk), and how a panel's votes and expected scores are combined. Every expectation is worked out by hand from
the evaluator's fixture (evaluate_fixture: product i's answer chunk, then its care chunk, in the good run)."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evaluate_fixture import PRODUCTS, answer_text, good_lines, make_golden, qid

from assay.judge import Judge, Judgement, make_judge
from assay.judge.base import ChatRequest, ChatResponse, TokenLogprob
from assay.judge.criteria import Criterion, parse_criterion
from assay.judge.offline import OfflineBackend
from assay.judge.panel import Panel
from assay.pipelines.evaluate.judging.criteria import (
    NOT_IN_SCALE,
    UNANSWERED,
    CriteriaJudged,
    CriterionCall,
    _combined,
    _expected_of,
    asking,
    criterion_item,
    criterion_variables,
    estimate_criteria,
    judge_criteria,
    plan_criteria,
    read_vote,
)
from assay.pipelines.evaluate.runs.loaded import RunLine
from assay.pipelines.evaluate.runs.read import load_run
from assay.results import CriterionVerdictRecord, CriterionVote
from assay.text import canonical_json, content_hash
from assay.types import Conversation, Turn, Unscored

N = 4
ALL_INPUTS = '["question", "answer", "passages", "reference_answer", "nuggets", "history"]'


def _criterion(front: str, body: str = "Judge it.\n", name: str = "c") -> Criterion:
    text = f'+++\nname = "{name}"\nversion = "2"\n{front}+++\n{body}'
    return parse_criterion(text.encode(), Path(f"{name}.md"))


SCALE = (
    '[[scale]]\nlabel = "good"\ndescription = "all of it"\nscore = 1.0\n'
    '[[scale]]\nlabel = "bad"\ndescription = "none of it"\nscore = 0.0\n'
    '[[scale]]\nlabel = "ok"\ndescription = "some of it"\nscore = 0.5\n'
)  # declared out of score order on purpose
TREE = (
    '[[scale]]\nlabel = "yes_all"\ndescription = "d1"\nscore = 1.0\n'
    '[[scale]]\nlabel = "half"\ndescription = "d2"\nscore = 0.5\n'
    '[[scale]]\nlabel = "nothing"\ndescription = "d3"\nscore = 0.0\n'
    '[[tree]]\nid = "a"\nquestion = "First?"\nyes = "b"\nno = "nothing"\n'
    '[[tree]]\nid = "b"\nquestion = "Second?"\nyes = "yes_all"\nno = "half"\n'
)


class _Output:
    def __init__(self, **data: Any) -> None:
        self.data = data

    def model_dump(self) -> dict[str, Any]:
        return dict(self.data)


def _judgement(
    output: _Output | None, unscored: Unscored | None = None, logprobs: tuple[TokenLogprob, ...] | None = None
) -> Judgement[Any]:
    return Judgement(output=output, unscored=unscored, cached=False, model="m", prompt="p", prompt_hash="h",
                     logprobs=logprobs)  # fmt: skip


def _conversational(n: int = N) -> Any:
    gold = make_golden(n=n)
    gold.conversations = [Conversation(id="c0", turns=[Turn(question_id=qid(i), utterance=f"turn {i}")
                                                      for i in range(3)])]  # fmt: skip
    return gold


def test_the_plan_shows_the_named_inputs_and_the_conversation_so_far_with_this_runs_answers() -> None:
    gold = _conversational()
    lines = good_lines(N)
    lines[1] = {"query_id": qid(1), "retrieved": [], "error": {"kind": "timeout"}}
    run = load_run(("good", lines), gold)
    everything = _criterion(f'inputs = {ALL_INPUTS}\nscale = "pass_fail"\n', name="every")
    judged = CriteriaJudged()
    calls = plan_criteria(gold, [run], [everything], context_k=2, judged=judged)
    assert [(c.run, c.query_id) for c in calls] == [("good", qid(0)), ("good", qid(2)), ("good", qid(3))]
    shown = {c.query_id: c.variables for c in calls}
    name, thing, days = PRODUCTS[2]
    assert shown[qid(2)]["question"] == f"How many days does the {name} {thing} warranty last?"
    assert shown[qid(2)]["answer"] == answer_text(2)
    assert shown[qid(2)]["passages"] == [answer_text(2), f"Clean the {name} {thing} with mild soap and let it dry "
                                         "before storage."]  # fmt: skip
    assert shown[qid(2)]["reference_answer"] == answer_text(2)
    assert shown[qid(2)]["nuggets"] == [
        {"text": f"The {name} {thing} warranty lasts {days} days.", "importance": "vital"},
        {"text": "The warranty starts at the date of purchase.", "importance": "okay"},
    ]
    # the earlier turns: the user's words and this run's answer (None where it failed); a question outside any
    # conversation has none, and the first turn none either
    assert shown[qid(2)]["history"] == [{"question": "turn 0", "answer": answer_text(0)},
                                        {"question": "turn 1", "answer": None}]  # fmt: skip
    assert shown[qid(0)]["history"] == [] and shown[qid(3)]["history"] == []
    assert judged.values["good"][qid(1)].unscored == {"criterion:every": "system_failed"}
    assert calls[0].prompt == "criterion"
    assert list(calls[0].shown) == ["question", "answer", "passages", "reference_answer", "nuggets", "history"]


def test_an_input_not_named_is_sent_as_nothing_and_the_criterion_rides_along() -> None:
    narrow = _criterion('description = "Says so."\ninputs = ["answer"]\nscale = "pass_fail"\n'
                        'steps = ["Look.", "Decide."]\n', body="", name="narrow")  # fmt: skip
    variables = criterion_variables(narrow, {"question": "Q?", "answer": "A.", "passages": ["p"]})
    assert variables == {
        "criterion": {"name": "narrow", "instructions": "Says so.", "hash": narrow.content_hash,
                      "steps": ["Look.", "Decide."],
                      "labels": [{"label": "pass", "description": narrow.labels[0].description},
                                 {"label": "fail", "description": narrow.labels[1].description}]},
        "question": None, "answer": "A.", "passages": None, "reference_answer": None, "nuggets": None,
        "history": None,
    }  # fmt: skip
    tree = _criterion(f'inputs = ["answer"]\n{TREE}', body="Walk it.\n", name="walk")
    assert criterion_variables(tree, {"answer": "A."})["criterion"] == {
        "name": "walk", "instructions": "Walk it.", "hash": tree.content_hash,
        "tree": [{"id": "a", "question": "First?"}, {"id": "b", "question": "Second?"}],
    }  # fmt: skip


def test_a_question_is_not_asked_without_what_the_criterion_reads() -> None:
    gold = make_golden(n=N)
    gold.questions[0].reference_answer = ""
    gold.questions[1].nuggets = []
    lines = good_lines(N)
    lines[2]["answer"] = "   "
    lines[3] = {"query_id": qid(3), "retrieved": [], "error": {"kind": "timeout"}}
    run = load_run(("good", lines), gold)
    reference = _criterion('inputs = ["reference_answer"]\nscale = "pass_fail"\nexpected = true\n', name="ref")
    nuggets = _criterion('inputs = ["nuggets"]\nscale = "pass_fail"\n', name="nug")
    answer = _criterion('inputs = ["answer"]\nscale = "pass_fail"\n', name="ans")
    judged = CriteriaJudged()
    calls = plan_criteria(gold, [run], [reference, nuggets, answer], context_k=3, judged=judged)
    asked = sorted((c.criterion.name, c.query_id) for c in calls)
    # the empty answer does not stop a criterion that does not read it; the failed system stops every one
    assert asked == [("ans", qid(0)), ("ans", qid(1)), ("nug", qid(0)), ("nug", qid(2)), ("ref", qid(1)),
                     ("ref", qid(2))]  # fmt: skip
    why = {q: v.unscored for q, v in judged.values["good"].items()}
    assert why[qid(0)] == {"criterion:ref": "no_reference_answer", "criterion:ref|expected": "no_reference_answer"}
    assert why[qid(1)] == {"criterion:nug": "no_nuggets"}
    assert why[qid(2)] == {"criterion:ans": "empty answer"}
    assert why[qid(3)] == dict.fromkeys(
        ["criterion:ref", "criterion:ref|expected", "criterion:nug", "criterion:ans"], "system_failed"
    )
    assert judged.values["good"][qid(0)].metrics == {"criterion:ref": None, "criterion:ref|expected": None}
    retrieval_only = load_run(("bare", good_lines(N, answers=False)), gold)
    other = CriteriaJudged()
    assert plan_criteria(gold, [retrieval_only], [answer], context_k=3, judged=other) == []
    assert {v.unscored["criterion:ans"] for v in other.values["bare"].values()} == {"no answers in this run"}


def test_a_reply_becomes_a_vote_with_its_label_as_the_scale_spells_it() -> None:
    scale = _criterion(f'inputs = ["answer"]\n{SCALE}')
    assert read_vote(scale, "m1", _judgement(_Output(label="  OK \n", reason="because"))) == CriterionVote(
        model="m1", label="ok", reason="because"
    )
    assert read_vote(scale, "m1", _judgement(_Output(label="fine", reason="hmm"))) == CriterionVote(
        model="m1", reason="hmm", unscored=NOT_IN_SCALE
    )
    failed = _judgement(None, Unscored(reason="cut", kind="truncated"))
    assert read_vote(scale, "m1", failed) == CriterionVote(model="m1", unscored="truncated")
    assert read_vote(scale, "m1", _judgement(None)) == CriterionVote(model="m1", unscored="unscored")
    expecting = _criterion(f'inputs = ["answer"]\nexpected = true\n{SCALE}')
    assert read_vote(expecting, "m1", failed) == CriterionVote(model="m1", unscored="truncated",
                                                               expected_unscored="truncated")  # fmt: skip
    # no token probabilities came back: the label stands, the expected score says why it has none
    vote = read_vote(expecting, "m1", _judgement(_Output(label="good", reason="r")))
    assert (vote.label, vote.expected, vote.expected_unscored) == ("good", None, "no_token_probabilities")
    # a label outside the scale: no label whose certainty to weigh, even with the probabilities there
    sure = _tokens('{"label": "', ("fine", [("fine", 0.3), ("good", 0.6), ("bad", 0.1)]), '", "reason": "hmm"}')
    outside = read_vote(expecting, "m1", _judgement(_Output(label="fine", reason="hmm"), logprobs=sure))
    assert (outside.label, outside.unscored, outside.expected, outside.expected_unscored) == (
        None, NOT_IN_SCALE, None, NOT_IN_SCALE)  # fmt: skip


def test_a_tree_walk_follows_yes_and_no_and_keeps_the_answered_steps() -> None:
    tree = _criterion(f'inputs = ["answer"]\n{TREE}')

    def walk(*answers: tuple[str, str, str]) -> CriterionVote:
        given = [{"id": i, "answer": a, "reason": r} for i, a, r in answers]
        return read_vote(tree, "m", _judgement(_Output(answers=given)))

    vote = walk(("b", "no", "not named"), ("a", "yes", "a number"))  # given out of order: read by id
    assert (vote.label, vote.reason, vote.unscored) == ("half", "not named", None)
    assert [(s.id, s.question, s.answer, s.reason) for s in vote.steps] == [
        ("a", "First?", "yes", "a number"),
        ("b", "Second?", "no", "not named"),
    ]
    stopped = walk(("a", "no", "nothing there"), ("b", "yes", "ignored"))
    assert (stopped.label, stopped.reason, [s.id for s in stopped.steps]) == ("nothing", "nothing there", ["a"])
    assert walk(("a", "yes", "x")).unscored == UNANSWERED and walk(("a", "yes", "x")).label is None
    silent = walk(("b", "yes", "y"))
    assert (silent.unscored, silent.steps, silent.reason) == (UNANSWERED, [], "")


def test_a_panel_combines_labels_ordered_by_declared_score_not_by_their_order_in_the_file() -> None:
    scale = _criterion(f'inputs = ["answer"]\n{SCALE}')

    def votes(*labels: str | None) -> list[CriterionVote]:
        return [CriterionVote(model=f"m{i}", label=label, unscored=None if label else "x")
                for i, label in enumerate(labels)]  # fmt: skip

    assert _combined(scale, votes("good", "ok"), "min") == ("ok", None)
    assert _combined(scale, votes("good", "bad", "ok"), "min") == ("bad", None)
    assert _combined(scale, votes("good", "bad"), "mean") == ("ok", None)  # ranks bad 0, ok 1, good 2: (2 + 0) / 2
    assert _combined(scale, votes("good", "ok", "ok"), "majority") == ("ok", None)
    assert _combined(scale, votes("good", None), "min") == (None, "no_quorum")
    assert _combined(scale, votes(None, "good"), None) == (None, "x")  # one judge: its own vote
    assert _combined(scale, votes("ok", None), None) == ("ok", None)


def test_a_verdicts_expected_score_is_the_mean_of_its_votes_or_the_first_reason() -> None:
    def vote(expected: float | None = None, why: str | None = None) -> CriterionVote:
        return CriterionVote(model="m", expected=expected, expected_unscored=why)

    assert _expected_of([vote(0.2), vote(why="a"), vote(0.5)]) == (0.35, None)
    assert _expected_of([vote(1 / 3), vote(0.0)]) == (0.166667, None)
    assert _expected_of([vote(why=None), vote(why="first"), vote(why="second")]) == (None, "first")
    assert _expected_of([vote(), vote()]) == (None, "unscored")


def test_a_recorded_verdict_without_its_reason_is_still_unscored_and_never_zero() -> None:
    expecting = _criterion('inputs = ["answer"]\nscale = "pass_fail"\nexpected = true\n', name="e")
    judged = CriteriaJudged()
    judged.scored(expecting, CriterionVerdictRecord(run="r", query_id="q", criterion="e", ref="e@2"))
    assert judged.values["r"]["q"].metrics == {"criterion:e": None, "criterion:e|expected": None}
    assert judged.values["r"]["q"].unscored == {"criterion:e": "unscored", "criterion:e|expected": "unscored"}
    judged.scored(expecting, CriterionVerdictRecord(run="r", query_id="q2", criterion="e", ref="e@2", label="pass",
                                                    score=1.0, expected=0.75))  # fmt: skip
    assert judged.values["r"]["q2"].metrics == {"criterion:e": 1.0, "criterion:e|expected": 0.75}
    assert judged.values["r"]["q2"].unscored == {}
    assert len(judged.records) == 2


def test_the_audit_item_is_a_digest_of_the_version_question_and_what_was_shown() -> None:
    shown = {"answer": "A."}
    item = criterion_item("c@2", "q1", shown)
    assert item == content_hash(canonical_json({"ref": "c@2", "query_id": "q1", "shown": shown}), 12)
    assert len(item) == 24  # 12 bytes, in hex
    assert len({item, criterion_item("c@3", "q1", shown), criterion_item("c@2", "q2", shown),
                criterion_item("c@2", "q1", {"answer": "B."})}) == 4  # fmt: skip


@pytest.mark.parametrize("rule", ["min", "mean", "majority"])
def test_every_rule_refuses_a_verdict_when_half_the_judges_failed(rule: str) -> None:
    scale = _criterion(f'inputs = ["answer"]\n{SCALE}')
    failed = [CriterionVote(model="a", label="good"), CriterionVote(model="b", unscored="truncated")]
    assert _combined(scale, failed, rule) == (None, "no_quorum")


def test_the_conversation_so_far_reads_context_turns_and_leaves_a_turn_without_a_line_as_nothing() -> None:
    gold = _conversational(5)
    gold.conversations[0].turns.extend(Turn(question_id=qid(i), utterance=f"turn {i}") for i in (3, 4))
    lines = good_lines(5)
    del lines[3]  # turn 3: no line at all
    run = load_run(("good", lines), gold)
    del run.lines[qid(1)]  # turn 1: a context turn of the run, its answer kept, never judged
    run.context[qid(1)] = RunLine(qid(1), [], {}, answer="from the context")
    history = _criterion('inputs = ["history"]\nscale = "pass_fail"\n', name="h")
    calls = plan_criteria(gold, [run], [history], context_k=1, judged=CriteriaJudged())
    last = next(c for c in calls if c.query_id == qid(4))
    assert last.variables["history"] == [{"question": "turn 0", "answer": answer_text(0)},
                                         {"question": "turn 1", "answer": "from the context"},
                                         {"question": "turn 2", "answer": answer_text(2)},
                                         {"question": "turn 3", "answer": None}]  # fmt: skip


def _tokens(*pieces: str | tuple[str, list[tuple[str, float]]]) -> tuple[TokenLogprob, ...]:
    """Certain tokens, and at a (token, alternatives) piece those alternatives with their probabilities."""
    out = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(TokenLogprob(piece, 0.0, ((piece, 0.0),)))
        else:
            token, alternatives = piece
            top = tuple((t, math.log(p)) for t, p in alternatives)
            out.append(TokenLogprob(token, dict(top)[token], top))
    return tuple(out)


def test_a_trees_expected_score_walks_every_path_from_the_first_question() -> None:
    tree = _criterion(f'inputs = ["answer"]\nexpected = true\n{TREE}')
    answers = [{"id": "a", "reason": "r", "answer": "yes"}, {"id": "b", "reason": "s", "answer": "no"}]
    tokens = _tokens(
        '{"answers": [{"id": "a", "reason": "r", "answer": "', ("yes", [("yes", 0.8), ("no", 0.2)]),
        '"}, {"id": "b", "reason": "s", "answer": "', ("no", [("no", 0.45), ("yes", 0.45), ("maybe", 0.1)]), '"}]}',
    )  # fmt: skip
    vote = read_vote(tree, "m", _judgement(_Output(answers=answers), logprobs=tokens))
    # b: P(yes) = 0.45 / 0.9 = 1/2, E(b) = 1/2 * 1.0 + 1/2 * 0.5 = 0.75; a: E = 0.8 * 0.75 + 0.2 * 0.0 = 0.6;
    # coverage: the lowest on the paths, b's 0.9
    assert (vote.label, vote.expected, vote.coverage, vote.expected_unscored) == ("half", 0.6, 0.9, None)
    # asked in the other order, the answers are matched to their questions by id
    swapped = _tokens(
        '{"answers": [{"id": "b", "reason": "s", "answer": "', ("no", [("no", 0.45), ("yes", 0.45), ("maybe", 0.1)]),
        '"}, {"id": "a", "reason": "r", "answer": "', ("yes", [("yes", 0.8), ("no", 0.2)]), '"}]}',
    )  # fmt: skip
    again = read_vote(tree, "m", _judgement(_Output(answers=answers[::-1]), logprobs=swapped))
    assert (again.label, again.expected, again.coverage) == ("half", 0.6, 0.9)
    scale = _criterion(f'inputs = ["answer"]\nexpected = true\n{SCALE}')
    labelled = _tokens('{"reason": "r", "label": "', ("ok", [("ok", 0.5), ("good", 0.3), ("bad", 0.2)]), '"}')
    # 0.5 * 0.5 + 0.3 * 1.0 + 0.2 * 0.0 = 0.55, every label named: coverage 1
    vote = read_vote(scale, "m", _judgement(_Output(label="ok", reason="r"), logprobs=labelled))
    assert (vote.label, vote.expected, vote.coverage) == ("ok", 0.55, 1.0)
    # kept to six decimals: a third of the probability off the scale leaves coverage 2/3; good 1/3 against bad 2/3
    # of the named choices expects 1/3
    third = _tokens('{"reason": "r", "label": "', ("ok", [("ok", 1 / 3), ("good", 1 / 3), ("zz", 1 / 3)]), '"}')
    vote = read_vote(scale, "m", _judgement(_Output(label="ok", reason="r"), logprobs=third))
    assert (vote.expected, vote.coverage) == (0.75, 0.666667)
    low = _tokens('{"reason": "r", "label": "', ("bad", [("bad", 0.4), ("good", 0.2), ("zz", 0.4)]), '"}')
    vote = read_vote(scale, "m", _judgement(_Output(label="bad", reason="r"), logprobs=low))
    assert (vote.expected, vote.coverage) == (0.333333, 0.6)


def test_the_dry_run_prices_each_criterion_per_judge_from_its_own_calls(tmp_path: Path) -> None:
    gold = make_golden(n=N)
    run = load_run(("good", good_lines(N)), gold)
    one = _criterion('inputs = ["answer"]\nscale = "pass_fail"\n', name="one")
    other = _criterion(f'inputs = ["question", "answer"]\n{TREE}', name="other")
    calls = plan_criteria(gold, [run], [one, other], context_k=1, judged=CriteriaJudged())
    first = [c for c in calls if c.criterion.name == "one"][:1] + [c for c in calls if c.criterion.name == "other"]
    x = make_judge("openai/judge-x", api_base="http://127.0.0.1:9", api_key="k", cache_dir=tmp_path / "c")
    y = make_judge("openai/judge-y", api_base="http://127.0.0.1:9", api_key="k", cache_dir=tmp_path / "c")
    alone = estimate_criteria(x, first)
    assert sorted(alone) == ["criterion:one", "criterion:other"]
    assert (alone["criterion:one"].calls, alone["criterion:other"].calls) == (1, N)
    both = estimate_criteria(Panel((x, y)), first)
    assert sorted(both) == ["criterion:one openai/judge-x", "criterion:one openai/judge-y",
                            "criterion:other openai/judge-x", "criterion:other openai/judge-y"]  # fmt: skip
    assert both["criterion:other openai/judge-y"].calls == N
    assert asking(x, one) is x  # no expected score: asked as is, no token probabilities (and their cache key)
    offline = make_judge("offline", cache_dir=tmp_path / "c")
    assert estimate_criteria(Panel((x, offline)), first).keys() == alone.keys()  # the offline judge asks nothing


class _Script:
    """A model's backend without a server, every request kept: a scale question is answered with the answer's text as
    the label (``label`` overrides it), a tree question with the answer's text read as ``ID=yes|no`` words. With
    ``tokens`` the scale's reply comes with those token probabilities."""

    name = "script"

    def __init__(self, label: str | None = None, tokens: tuple[TokenLogprob, ...] | None = None) -> None:
        self.label, self.tokens = label, tokens
        self.sent: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.sent.append(request)
        answer = str(request.variables["answer"])
        if request.prompt_name == "criterion_tree":
            said = [word.split("=") for word in answer.split()]
            replies = [{"id": i, "reason": f"{i} said {a}", "answer": a} for i, a in said]
            return ChatResponse(content=json.dumps({"answers": replies}), finish_reason="stop")
        label = self.label or answer
        content = json.dumps({"reason": f"reads {label}", "label": label})
        return ChatResponse(content=content, finish_reason="stop", logprobs=self.tokens)


def _call(criterion: Criterion, query_id: str, answer: str, run: str = "r") -> CriterionCall:
    return CriterionCall(run, query_id, criterion, criterion_variables(criterion, {"answer": answer}))


def _judge_all(grader: Any, calls: list[CriterionCall]) -> tuple[CriteriaJudged, int]:
    judged, reported = CriteriaJudged(), []
    asyncio.run(judge_criteria(grader, calls, judged, on_result=lambda: reported.append(1)))
    return judged, len(reported)


def test_each_call_becomes_a_verdict_with_its_declared_score_its_vote_and_what_the_judge_saw() -> None:
    scale = _criterion(f'inputs = ["answer"]\n{SCALE}', name="s")
    tree = _criterion(f'inputs = ["answer"]\n{TREE}', name="t")
    backend = _Script()
    judge = Judge(backend, model="openai/x")
    # the two criteria interleaved: each is asked with its own prompt, under its own stage
    calls = [_call(scale, "q1", "ok"), _call(tree, "q1", "a=yes b=no"), _call(scale, "q2", "fine", run="r2"),
             _call(tree, "q2", "a=no")]  # fmt: skip
    judged, reported = _judge_all(judge, calls)
    assert reported == 4  # on_result: once per answer
    assert sorted((r.prompt_name, r.variables["answer"]) for r in backend.sent) == [
        ("criterion", "fine"), ("criterion", "ok"), ("criterion_tree", "a=no"), ("criterion_tree", "a=yes b=no"),
    ]  # fmt: skip
    assert all(r.params.get("logprobs") is None for r in backend.sent)  # no expected score: no probabilities asked
    assert sorted(judge.usage) == ["criterion:s", "criterion:t"]
    ok, walked, outside, short = judged.records
    assert ok == CriterionVerdictRecord(
        run="r", query_id="q1", criterion="s", ref="s@2", item=calls[0].item, label="ok", score=0.5,
        votes=[CriterionVote(model="openai/x", label="ok", reason="reads ok")])  # fmt: skip
    assert (walked.label, walked.score, walked.unscored, walked.ref) == ("half", 0.5, None, "t@2")
    assert [(s.id, s.answer, s.reason) for s in walked.votes[0].steps] == [("a", "yes", "a said yes"),
                                                                            ("b", "no", "b said no")]  # fmt: skip
    assert (outside.run, outside.label, outside.score, outside.unscored) == ("r2", None, None, NOT_IN_SCALE)
    assert (short.label, short.score, short.unscored) == ("nothing", 0.0, None)  # "no" at a leads to nothing
    assert (outside.expected, outside.expected_unscored) == (None, None)  # no expected score asked
    assert judged.values["r"]["q1"].metrics == {"criterion:s": 0.5, "criterion:t": 0.5}
    assert judged.values["r2"]["q2"].unscored == {"criterion:s": NOT_IN_SCALE}
    assert judged.shown == {calls[0].item: {"answer": "ok"}, calls[1].item: {"answer": "a=yes b=no"},
                            calls[2].item: {"answer": "fine"}, calls[3].item: {"answer": "a=no"}}  # fmt: skip


def test_a_panel_combines_by_its_rule_and_a_panel_left_with_one_model_judge_takes_its_vote(tmp_path: Path) -> None:
    scale = _criterion(f'inputs = ["answer"]\n{SCALE}', name="s")
    calls = [_call(scale, "q1", "good"), _call(scale, "q2", "odd")]
    x, y = Judge(_Script(), model="openai/x"), Judge(_Script(label="ok"), model="openai/y")
    judged, reported = _judge_all(Panel((x, y), combine="min"), calls)
    assert reported == 4  # two judges, two answers each
    good, odd = judged.records
    assert (good.label, good.score, good.unscored) == ("ok", 0.5, None)  # min of good (x) and ok (y)
    assert [(v.model, v.label) for v in good.votes] == [("openai/x", "good"), ("openai/y", "ok")]
    assert (odd.label, odd.unscored) == (None, "no_quorum")  # x's label is off the scale: one vote of two
    # the offline judge asks nothing: x alone decides, its own reason kept (no quorum rule over one vote)
    offline = Judge(OfflineBackend(), model="offline")
    alone, reported = _judge_all(Panel((Judge(_Script(), model="openai/x"), offline), combine="min"), calls)
    assert reported == 2
    assert [(r.label, r.unscored) for r in alone.records] == [("good", None), (None, NOT_IN_SCALE)]
    assert [[v.model for v in r.votes] for r in alone.records] == [["openai/x"], ["openai/x"]]


def test_an_expected_score_asks_for_token_probabilities_and_is_the_mean_of_the_judges() -> None:
    expecting = _criterion(f'inputs = ["answer"]\nexpected = true\n{SCALE}', name="e")
    sure = _tokens('{"reason": "reads ok", "label": "', ("ok", [("ok", 1.0)]), '"}')
    torn = _tokens('{"reason": "reads ok", "label": "', ("ok", [("ok", 0.5), ("good", 0.5)]), '"}')
    x, y = _Script(label="ok", tokens=sure), _Script(label="ok", tokens=torn)
    panel = Panel((Judge(x, model="openai/x"), Judge(y, model="openai/y")), combine="mean")
    judged, _ = _judge_all(panel, [_call(expecting, "q1", "ok")])
    assert [(r.params["logprobs"], r.params["top_logprobs"]) for r in x.sent + y.sent] == [(True, 10), (True, 10)]
    [record] = judged.records
    # x: 0.5 for sure; y: half ok (0.5), half good (1.0) = 0.75; the verdict's: (0.5 + 0.75) / 2
    assert [v.expected for v in record.votes] == [0.5, 0.75]
    assert (record.label, record.score, record.expected, record.expected_unscored) == ("ok", 0.5, 0.625, None)
    assert judged.values["r"]["q1"].metrics == {"criterion:e": 0.5, "criterion:e|expected": 0.625}
    # without probabilities from either judge: the first reason
    bare = Panel((Judge(_Script(label="ok"), model="openai/x"), Judge(_Script(label="ok"), model="openai/y")))
    [none] = _judge_all(bare, [_call(expecting, "q1", "ok")])[0].records
    assert (none.expected, none.expected_unscored) == (None, "no_token_probabilities")


class _Silent(Judge):
    """A judge that reports no answer for the items ``skip`` names (as a call that never came back)."""

    skip: tuple[int, ...] = (1,)

    async def ajudge_many(
        self, prompt_name: str, list_of_variables: Any, *, stage: str = "default",
        on_result: Callable[[int, Judgement[Any]], None] | None = None,
    ) -> list[Judgement[Any]]:  # fmt: skip
        def some(index: int, judgement: Judgement[Any]) -> None:
            if index not in self.skip and on_result is not None:
                on_result(index, judgement)

        return await super().ajudge_many(prompt_name, list_of_variables, stage=stage, on_result=some)


def test_an_answer_never_reported_is_that_judges_unscored_vote() -> None:
    scale = _criterion(f'inputs = ["answer"]\n{SCALE}', name="s")
    judged, reported = _judge_all(_Silent(_Script(), model="openai/x"), [_call(scale, "q1", "bad"),
                                                                         _call(scale, "q2", "good")])  # fmt: skip
    assert reported == 1
    first, second = judged.records
    assert (first.label, first.score) == ("bad", 0.0)
    assert second.votes == [CriterionVote(model="openai/x", unscored="unscored")]
    assert (second.label, second.score, second.unscored) == (None, None, "unscored")
