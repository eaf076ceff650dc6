"""Pins of the conversation stages' own rules (assay.pipelines.bootstrap.conversations), on hand-made inputs: a
conversation's turns as questions field by field, the plan's passages per kind, and the planner's passages."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assay.errors import NothingProduced
from assay.judge.client import Judgement
from assay.judge.outputs import EvidenceQuote, GeneratedConversation, GeneratedTurn, NuggetItem, RewriteCheck
from assay.pipelines.bootstrap import BuildSettings
from assay.pipelines.bootstrap.conversations import (
    ConversationSeed,
    _check_variables,
    _plan,
    _turns,
    check_conversations,
    critique_turns,
    cut_conversations,
    generate_conversations,
    history_of,
    plan_conversations,
)
from assay.pipelines.bootstrap.sampling import prepare_corpus
from assay.text import content_hash
from assay.types import Chunk, Claim, Conversation, Nugget, Provenance, Question, Turn, Unscored

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "datasets" / "demo" / "corpus"

SEED = ConversationSeed(id="cv", chunk_ids=("a1", "a2", "b7"), doc_ids=("A", "B"), chunk_docs=("A", "A", "B"),
                        plan=(("none", "P1"), ("pronoun", "P2"), ("comparison", "P3"), ("unanswerable", "")),
                        style="terse", language="de")  # fmt: skip


def _turn(dependency: str, n: int, evidence: list[tuple[str, str]], **extra: object) -> GeneratedTurn:
    return GeneratedTurn(
        reason=f"why {n}", dependency=dependency, utterance=f"  utterance {n} ", rewrite=f" rewrite {n}\n",  # type: ignore[arg-type]
        answer=f" answer {n} ", evidence=[EvidenceQuote(passage_id=p, quote=q) for p, q in evidence],
        claims=[f"claim {n}", " "], nuggets=[NuggetItem(text=f"nugget {n}", importance="vital")], **extra,
    )  # fmt: skip


def _judged(turns: list[GeneratedTurn]) -> Judgement[GeneratedConversation]:
    output = GeneratedConversation(reason="r", scenario="s", turns=turns)
    return Judgement(output=output, unscored=None, cached=False, model="gen-m", prompt="conversation@3",
                     prompt_hash="ph")  # fmt: skip


def test_each_turn_is_a_question_of_its_own_with_the_plan_and_the_passages_it_cites() -> None:
    made = [
        _turn("none", 1, [(" P1 ", "q one")]),
        _turn("pronoun", 2, [("P2", "q two"), ("P9", "nowhere")]),
        _turn("comparison", 3, [("P3", "q three"), ("P1", "q one again")]),
        _turn("unanswerable", 4, [("P1", "ignored")]),
        _turn("ellipsis", 5, [("P1", "beyond the plan")]),  # more turns than planned: cut to the plan
    ]
    turns = _turns(SEED, _judged(made))
    assert len(turns) == 4
    base = Provenance(source="generator", model="gen-m", prompt="conversation@3", prompt_hash="ph")
    meta = {"conversation_id": "cv", "style": "terse", "language": "de", "seed_chunk_ids": ["a1", "a2", "b7"]}
    expected = [
        ("factoid", ["a1"], ["A"], ["a1"], ["q one"], "none", "none"),
        ("factoid", ["a2"], ["A"], ["a2", None], ["q two", "nowhere"], "pronoun", "pronoun"),
        ("comparison", ["b7", "a1"], ["A", "B"], ["b7", "a1"], ["q three", "q one again"], "comparison", "comparison"),
        ("unanswerable", [], ["A"], [], [], "unanswerable", "unanswerable"),
    ]
    for n, ((question, turn), want) in enumerate(zip(turns, expected, strict=True), start=1):
        qtype, sources, docs, cited, quotes, dependency, planned = want
        answerable = qtype != "unanswerable"
        assert question == Question(
            id=f"cv-t{n}", text=f"rewrite {n}", type=qtype, reference_answer=f"answer {n}", source_doc_ids=docs,
            source_chunk_ids=sources, evidence=quotes,
            claims=[Claim(id=f"cv-t{n}-c1", text=f"claim {n}")] if answerable else [],
            nuggets=[Nugget(id=f"cv-t{n}-n1", text=f"nugget {n}", importance="vital")] if answerable else [],
            metadata={**meta, "evidence_chunk_ids": cited, "turn": n, "utterance": f"utterance {n}",
                      "dependency": dependency, "planned_dependency": planned},
            provenance=base.model_copy(update={"rationale": f"why {n}"}),
        )  # fmt: skip
        assert turn == Turn(question_id=f"cv-t{n}", utterance=f"utterance {n}", dependency=dependency,
                            depends_on_history=dependency in ("pronoun", "comparison"),
                            rewrite_provenance=base)  # fmt: skip


def test_a_turn_citing_no_known_passage_rests_on_the_seed_chunk_and_the_planned_kind_is_kept() -> None:
    seed = ConversationSeed(id="cw", chunk_ids=("b7", "a1"), doc_ids=("B", "A"), chunk_docs=("B", "A"),
                            plan=(("none", "P1"), ("ellipsis", "P1")), style="s", language="en")  # fmt: skip
    [_, (question, turn)] = _turns(seed, _judged([_turn("none", 1, []), _turn("pronoun", 2, [("P7", "x")])]))
    assert (question.source_chunk_ids, question.source_doc_ids) == (["b7"], ["B"])
    assert question.metadata["planned_dependency"] == "ellipsis" and question.metadata["dependency"] == "pronoun"
    assert turn.depends_on_history is True


@pytest.mark.parametrize(("utterance", "rewrite"), [(" ", "r"), ("u", "\n"), ("", "")])
def test_a_turn_with_an_empty_utterance_or_rewrite_loses_the_whole_conversation(utterance: str, rewrite: str) -> None:
    empty = _turn("pronoun", 2, []).model_copy(update={"utterance": utterance, "rewrite": rewrite})
    assert _turns(SEED, _judged([_turn("none", 1, []), empty])) == []
    assert _turns(SEED, _judged([])) == []
    failed = Judgement(output=None, unscored=None, cached=False, model="m", prompt="p", prompt_hash="h")
    assert _turns(SEED, failed) == []


def _kinds(plan: tuple[tuple[str, str], ...]) -> list[str]:
    return [kind for kind, _ in plan]


@pytest.mark.parametrize("seed", range(12))
def test_the_plan_gives_each_kind_its_passage(seed: int) -> None:
    """Seeded shuffles of the five kinds; whatever the order, the passage rule (module doc, step 1) holds."""
    with_other = _plan(random.Random(seed), 11, has_next=True, other=3)
    assert with_other[0] == ("none", "P1") and len(with_other) == 11
    cycle = _kinds(with_other)[1:6]
    assert sorted(cycle) == sorted(["pronoun", "ellipsis", "comparison", "topic_shift", "unanswerable"])
    assert cycle[0] in ("pronoun", "ellipsis", "comparison")
    assert _kinds(with_other)[6:11] == cycle  # the order repeats
    wanted = {"pronoun": "P2", "ellipsis": "P2", "comparison": "P3", "topic_shift": "P3", "unanswerable": ""}
    assert all(passage == wanted[kind] for kind, passage in with_other[1:])
    alone = _plan(random.Random(seed), 6, has_next=False, other=None)  # no P2, no P3
    swapped = [{"comparison": "pronoun", "topic_shift": "pronoun"}.get(k, k) for k in cycle]
    assert _kinds(alone)[1:] == swapped
    assert all(passage == ("" if kind == "unanswerable" else "P1") for kind, passage in alone[1:])
    only_other = _plan(random.Random(seed), 6, has_next=False, other=2)
    assert all(passage == {"comparison": "P2", "topic_shift": "P2", "unanswerable": ""}.get(kind, "P1")
               for kind, passage in only_other[1:])  # fmt: skip


def test_a_planned_conversation_takes_the_next_chunk_and_one_of_another_document() -> None:
    settings = BuildSettings(questions=0, conversations=6, turns=(2, 5), seed=4)
    ingested, chunks, index = prepare_corpus(DEMO, settings)
    by_id = {c.id: c for c in chunks}
    following = {(c.doc_id, c.ordinal): c.id for c in chunks}
    plans = plan_conversations(chunks, index, settings, ingested.documents)
    assert len(plans) == 6
    assert plan_conversations(chunks, index, BuildSettings(questions=3, conversations=0)) == []
    for plan in plans:
        first = by_id[plan.chunk_ids[0]]
        assert plan.id == "c-" + content_hash(f"{first.id}|conversation|1", 5)
        nxt = following.get((first.doc_id, first.ordinal + 1))
        rest = list(plan.chunk_ids[1:])
        if nxt is not None:
            assert rest.pop(0) == nxt
        assert len(rest) <= 1 and all(by_id[c].doc_id != first.doc_id for c in rest)
        assert plan.chunk_docs == tuple(by_id[c].doc_id for c in plan.chunk_ids)
        assert plan.doc_ids == tuple(dict.fromkeys(plan.chunk_docs))
        assert 2 <= len(plan.plan) <= 5 and plan.language == "English" and plan.style
        other = len(plan.chunk_ids) if rest else None  # P3, or P2 when the first chunk has no next one
        for kind, passage in plan.plan[1:]:
            if kind in ("comparison", "topic_shift"):
                assert other is not None and passage == f"P{other}"
            else:
                assert passage == {"unanswerable": ""}.get(kind, "P1" if nxt is None else "P2")
    assert any(len(p.chunk_ids) == 3 for p in plans) and any(len(p.chunk_ids) == 2 for p in plans)


def _question(n: int, **metadata: object) -> Question:
    meta = {"conversation_id": "k", "turn": n, "seed_chunk_ids": ["x1", "x2"], **metadata}
    return Question(id=f"k-t{n}", text=f"rewrite {n}", reference_answer=None, metadata=meta)


def test_the_rewrite_check_is_sent_the_utterance_the_rewrite_and_plain_passages() -> None:
    chunks = {cid: Chunk(id=cid, doc_id="D", ordinal=i, text=f"text {cid}", heading_path=["Top", cid])
              for i, cid in enumerate(("x1", "x2"))}  # fmt: skip
    first, second = _question(1, utterance="what is x?"), _question(2)  # the second has no utterance recorded
    first.reference_answer = "x is y"
    sent = _check_variables(second, {q.id: q for q in (first, second)}, SimpleNamespace(chunks=chunks))  # type: ignore[arg-type]
    assert sent == {
        "history": [{"utterance": "what is x?", "answer": "x is y"}],
        "utterance": "rewrite 2",  # no utterance: the rewrite stands for it
        "rewrite": "rewrite 2",
        "answer": "",
        "passages": [{"id": "P1", "text": "text x1"}, {"id": "P2", "text": "text x2"}],  # no headings
    }
    assert history_of(_question(3), {q.id: q for q in (first, second)}) == [
        {"utterance": "what is x?", "answer": "x is y"}, {"utterance": "rewrite 2", "answer": ""}]  # fmt: skip


def test_a_cut_turn_says_why_and_a_context_turn_without_an_answer_keeps_an_empty_one() -> None:
    made = [_question(n) for n in (1, 2, 3, 4)]
    talk = Conversation(id="k", turns=[Turn(question_id=q.id, utterance=f"u{q.id}") for q in made])
    made[1].flags["dropped"] = "leakage"  # too easy: stays as context, its answer None -> ""
    made[2].flags["dropped"] = "evidence"  # cuts: the fourth turn goes with it
    out, [kept] = cut_conversations([talk], [made[0], made[3]], {q.id: q for q in made[1:3]})
    assert [(t.question_id, t.judged, t.rewrite, t.answer) for t in kept.turns] == [
        ("k-t1", True, None, None), ("k-t2", False, "rewrite 2", "")]  # fmt: skip
    [cut] = out.dropped
    assert cut.id == "k-t4" and cut.flags == {
        "dropped": "conversation_cut",
        "dropped_detail": "an earlier turn of its conversation was dropped by a check that cuts, or its conversation "
        "kept fewer than two turns or no judged turn",
    }


class _Stub:
    """A judge that answers ``ajudge_many`` with prepared judgements, recording what it was asked."""

    def __init__(self, answers: list[Judgement[Any]]) -> None:
        self.answers, self.asked = answers, []  # type: ignore[var-annotated]

    async def ajudge_many(self, name: str, variables: list[Any], *, stage: str = "default",
                          on_result: Any = None) -> list[Judgement[Any]]:  # fmt: skip
        self.asked.append((name, variables, stage))
        for i, answer in enumerate(self.answers):
            if on_result is not None:
                on_result(i, answer)
        return list(self.answers)


def _failed(reason: str | None) -> Judgement[Any]:
    unscored = Unscored(reason=reason) if reason is not None else None
    return Judgement(output=None, unscored=unscored, cached=False, model="m", prompt="p", prompt_hash="h")


def _check(**scores: int) -> Judgement[RewriteCheck]:
    given = {"answerable": 4, "self_contained": 4, "faithful": 4, "clear": 4, **scores}
    return Judgement(output=RewriteCheck(reason="fine", **given), unscored=None, cached=False, model="m",
                     prompt="rewrite_check@1", prompt_hash="h")  # fmt: skip


def test_the_rewrite_check_drops_a_turn_scoring_below_the_minimum_and_keeps_its_scores() -> None:
    chunks = {cid: Chunk(id=cid, doc_id="D", ordinal=i, text=cid) for i, cid in enumerate(("x1", "x2"))}
    turns = [_question(n) for n in (1, 2, 3, 4, 5, 6, 7, 8)]
    turns[4].type = turns[7].type = "unanswerable"
    answers = [_check(), _check(faithful=3), _check(clear=2, self_contained=1), _failed("no JSON"),
               _check(answerable=1), _failed(None), _check(answerable=2), _check(clear=1)]  # fmt: skip
    judge, seen = _Stub(answers), []
    settings = BuildSettings(questions=0, conversations=1, critic_min=4)
    out = asyncio.run(critique_turns(turns, {q.id: q for q in turns}, judge=judge, settings=settings,  # type: ignore[arg-type]
                                     ctx=SimpleNamespace(chunks=chunks), progress=lambda *a: seen.append(a)))  # type: ignore[arg-type]  # fmt: skip
    assert [q.id for q in out.records] == ["k-t1", "k-t5"]  # t5 is unanswerable: its answerable score is not read
    assert out.counts == {"dropped_by_critic": 4, "dropped_by_critic_unscored": 2}
    details = {q.id: (q.flags["dropped"], q.flags["dropped_detail"]) for q in out.dropped}
    assert details == {
        "k-t2": ("critic", "rewrite check scores below 4: faithful=3"),
        "k-t3": ("critic", "rewrite check scores below 4: self_contained=1, clear=2"),
        "k-t4": ("critic_unscored", "no JSON"),
        "k-t6": ("critic_unscored", "no check"),
        "k-t7": ("critic", "rewrite check scores below 4: answerable=2"),
        "k-t8": ("critic", "rewrite check scores below 4: clear=1"),  # unanswerable: its other scores still count
    }
    assert turns[2].flags["critic"] == {"answerable": 4, "self_contained": 1, "faithful": 4, "clear": 2,
                                        "reason": "fine"}  # fmt: skip
    [(name, variables, stage)] = judge.asked
    assert (name, stage, len(variables)) == ("rewrite_check", "rewrite_check", 8)
    assert variables[1]["history"] == [{"utterance": "rewrite 1", "answer": ""}]
    assert seen == [("rewrite_check", i, 8) for i in range(9)]
    off = asyncio.run(critique_turns(turns, {}, judge=judge, settings=replace(settings, critic=False),  # type: ignore[arg-type]
                                     ctx=SimpleNamespace(chunks=chunks), progress=None))  # type: ignore[arg-type]  # fmt: skip
    assert off.records == turns and off.counts == {"dropped_by_critic": 0, "dropped_by_critic_unscored": 0}
    assert len(judge.asked) == 1  # nothing asked with the critic off


def test_writing_counts_each_conversation_and_turn_and_drops_the_unparsable() -> None:
    two = ConversationSeed(id="c2", chunk_ids=("a1",), doc_ids=("A",), chunk_docs=("A",),
                           plan=(("none", "P1"), ("pronoun", "P1")), style="s", language="en")  # fmt: skip
    good = _judged([_turn("none", 1, [("P1", "q")]), _turn("pronoun", 2, [("P1", "q")])])
    blank = _judged([_turn("none", 1, [])]).output
    assert blank is not None
    blank.scenario = "  "
    chunks = {"a1": Chunk(id="a1", doc_id="A", ordinal=0, text="a one"), "a2": Chunk(id="a2", doc_id="A", ordinal=1,
              text="a two"), "b7": Chunk(id="b7", doc_id="B", ordinal=0, text="b seven")}  # fmt: skip
    answers = [_failed("cut"), good, _judged([]), dataclasses.replace(good, output=blank)]
    judge, seen = _Stub(answers), []
    seeds = [SEED, SEED, two, two]
    out, talks = asyncio.run(generate_conversations(seeds, judge, SimpleNamespace(chunks=chunks),  # type: ignore[arg-type]
                                                    lambda *a: seen.append(a)))  # fmt: skip
    assert out.counts == {"conversations_generated": 2, "dropped_by_conversation_unscored": 2, "turns_generated": 3,
                          "generated": 3}  # fmt: skip
    assert [q.id for q in out.records] == ["cv-t1", "cv-t2", "c2-t1"]
    assert [(t.id, t.scenario, t.source_doc_ids, len(t.turns)) for t in talks] == [
        ("cv", "s", ["A", "B"], 2), ("c2", None, ["A"], 1)]  # fmt: skip
    [(name, variables, stage)] = judge.asked
    assert (name, stage, [v["style"] for v in variables]) == ("conversation", "conversation", ["terse"] * 2 + ["s"] * 2)
    assert seen == [("conversation", i, 4) for i in range(5)]


def test_a_build_that_accepts_no_conversation_fails_saying_where_the_turns_went() -> None:
    asked = BuildSettings(questions=0, conversations=3)
    check_conversations({}, BuildSettings(questions=2, conversations=0))  # none asked for: nothing to say
    check_conversations({"conversations_accepted": 1}, asked)
    with pytest.raises(NothingProduced) as unwritten:
        check_conversations({"conversation_seeds": 3}, asked, "; unscored judge answers: 3 x no JSON")
    assert str(unwritten.value) == (
        "no conversation was written: the model's answers to all 3 conversation prompts did not parse (or had an "
        "empty turn); unscored judge answers: 3 x no JSON. Nothing was written; try a larger model with --judge"
    )
    with pytest.raises(NothingProduced) as unaccepted:
        check_conversations({"conversation_seeds": 3, "conversations_generated": 2, "turns_generated": 7,
                             "dropped_by_conversation_cut": 4, "conversations_accepted": 0}, asked)  # fmt: skip
    assert str(unaccepted.value) == (
        "no conversation was accepted: 3 planned, 2 written with 7 turns, 4 turns cut after a dropped earlier turn. "
        "A conversation needs two turns before its first turn dropped by the evidence or rewrite check, one of them "
        "judged (a turn dropped by the leakage or near-duplicate filter stays as an unjudged context turn; see the "
        "dropped_by_* counts: turns whose rewrite is not standalone or does not mean the utterance fail the rewrite "
        "check). Nothing was written; try a larger model with --judge, or more --turns"
    )
    with pytest.raises(
        NothingProduced, match=r"^no conversation was accepted: 0 planned, 1 written with 0 turns, 0 turns"
    ):
        check_conversations({"conversations_generated": 1}, asked)
