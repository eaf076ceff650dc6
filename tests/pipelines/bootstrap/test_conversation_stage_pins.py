"""Pins of the conversation stages called directly with a stub judge: the check that a build accepted a
conversation (its two messages word for word), the writing stage's counts, records and conversations, and the
rewrite check's verdicts at each score's boundary."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from assay.corpus.pooling import Bm25Index
from assay.errors import NothingProduced
from assay.judge.outputs import EvidenceQuote, GeneratedConversation, GeneratedTurn, RewriteCheck
from assay.judge.results import Judgement
from assay.pipelines.bootstrap.conversations import (
    ConversationSeed,
    _distinct,
    check_conversations,
    conversation_variables,
    critique_turns,
    generate_conversations,
    planned_note,
)
from assay.pipelines.bootstrap.judging import BuildContext
from assay.pipelines.bootstrap.settings import BuildSettings
from assay.types import Chunk, Question, Unscored


class StubJudge:
    """Answers ``ajudge_many`` with prepared judgements, calling ``on_result(index, judgement)`` for each as the real
    judge does, and keeps what it was asked."""

    def __init__(self, judgements: list[Judgement[Any]]) -> None:
        self.judgements = judgements
        self.calls: list[tuple[str, list[dict[str, Any]], str]] = []

    async def ajudge_many(self, name: str, variables: list[dict[str, Any]], stage: str = "", on_result: Any = None):
        self.calls.append((name, list(variables), stage))
        for i, j in enumerate(self.judgements):
            if on_result is not None:
                on_result(i, j)
        return list(self.judgements)


def judged(output: Any, unscored: Unscored | None = None) -> Judgement[Any]:
    return Judgement(output=output, unscored=unscored, cached=False, model="m1", prompt="p1", prompt_hash="h1")


CHUNKS = {
    "ca": Chunk(id="ca", doc_id="d1", ordinal=0, text="Alpha text.", heading_path=["Intro", "Alpha"]),
    "cb": Chunk(id="cb", doc_id="d1", ordinal=1, text="Beta text.", heading_path=["Beta"]),
    "cc": Chunk(id="cc", doc_id="d2", ordinal=0, text="Gamma text."),
}


def ctx() -> BuildContext:
    return BuildContext(CHUNKS, Bm25Index.build(list(CHUNKS.values())))


# ---- check_conversations ----


def test_check_conversations_returns_when_none_asked_or_one_accepted() -> None:
    assert check_conversations({}, BuildSettings(conversations=0)) is None
    assert check_conversations({"conversations_accepted": 1}, BuildSettings(conversations=2)) is None


def test_check_conversations_none_written_message_word_for_word() -> None:
    counts = {"conversation_seeds": 3, "conversations_generated": 0}
    with pytest.raises(NothingProduced) as caught:
        check_conversations(counts, BuildSettings(conversations=3), "; unscored judge answers: 3 invalid")
    assert str(caught.value) == (
        "no conversation was written: the model's answers to all 3 conversation prompts did not parse (or had an "
        "empty turn); unscored judge answers: 3 invalid. Nothing was written; try a larger model with --judge"
    )


def test_check_conversations_missing_counts_are_zero() -> None:
    with pytest.raises(NothingProduced) as caught:
        check_conversations({}, BuildSettings(conversations=3))
    assert str(caught.value) == (
        "no conversation was written: the model's answers to all 0 conversation prompts did not parse (or had an "
        "empty turn). Nothing was written; try a larger model with --judge"
    )


def _tail() -> str:
    return (
        ". A conversation needs two turns before its first turn dropped by the evidence or rewrite check, one of them "
        "judged (a turn dropped by the leakage or near-duplicate filter stays as an unjudged context turn; see the "
        "dropped_by_* counts: turns whose rewrite is not standalone or does not mean the utterance fail the rewrite "
        "check). Nothing was written; try a larger model with --judge, or more --turns"
    )


def test_check_conversations_none_accepted_message_word_for_word() -> None:
    counts = {
        "conversation_seeds": 4,
        "conversations_generated": 2,
        "turns_generated": 5,
        "dropped_by_conversation_cut": 3,
        "conversations_accepted": 0,
    }
    with pytest.raises(NothingProduced) as caught:
        check_conversations(counts, BuildSettings(conversations=4), "; unscored judge answers: 2 refused")
    assert str(caught.value) == (
        "no conversation was accepted: 4 planned, 2 written with 5 turns, 3 turns cut after a dropped earlier turn"
        "; unscored judge answers: 2 refused" + _tail()
    )
    with pytest.raises(NothingProduced) as caught:
        check_conversations({"conversations_generated": 1}, BuildSettings(conversations=4))
    assert str(caught.value) == (
        "no conversation was accepted: 0 planned, 1 written with 0 turns, 0 turns cut after a dropped earlier turn"
        + _tail()
    )


# ---- planned_note, _distinct, conversation_variables ----


def test_planned_note_only_when_fewer_are_planned() -> None:
    assert planned_note(3, BuildSettings(conversations=3), 3) is None
    assert planned_note(2, BuildSettings(conversations=3), 2) == (
        "3 conversations were asked for, but the corpus has 2 chunks and a chunk opens one conversation: 2 are planned."
    )


def test_distinct_replaces_a_chunk_drawn_again_by_the_next_in_corpus_order() -> None:
    chunks = list(CHUNKS.values())
    assert [c.id for c in _distinct([chunks[0], chunks[0]], chunks)] == ["ca", "cb"]


SEED_A = ConversationSeed(
    id="c-a",
    chunk_ids=("ca", "cb", "cc"),
    doc_ids=("d1", "d2"),
    chunk_docs=("d1", "d1", "d2"),
    plan=(("none", "P1"), ("comparison", "P3")),
    style="casual",
    language="en",
)


def test_conversation_variables_in_full() -> None:
    assert conversation_variables(SEED_A, CHUNKS) == {
        "passages": [
            {"id": "P1", "text": "Alpha text.", "heading": "Intro > Alpha"},
            {"id": "P2", "text": "Beta text.", "heading": "Beta"},
            {"id": "P3", "text": "Gamma text.", "heading": ""},
        ],
        "turns": [
            {"number": 1, "dependency": "none", "passage": "P1"},
            {"number": 2, "dependency": "comparison", "passage": "P3"},
        ],
        "style": "casual",
        "language": "en",
    }


# ---- generate_conversations ----


def _turn(dependency: str, utterance: str, rewrite: str, passage: str = "P1") -> GeneratedTurn:
    return GeneratedTurn(
        reason=f"why {utterance}",
        dependency=dependency,
        utterance=utterance,
        rewrite=rewrite,
        answer="An answer.",
        evidence=[EvidenceQuote(passage_id=passage, quote="text")],
        claims=[],
        nuggets=[],
    )


def _seed(cid: str, doc_ids: tuple[str, ...]) -> ConversationSeed:
    return ConversationSeed(cid, ("ca", "cc"), doc_ids, ("d1", "d2"), (("none", "P1"), ("pronoun", "P1")), "s", "en")


def test_generate_conversations_counts_records_conversations_and_progress() -> None:
    seeds = [_seed("c-1", ("d1",)), _seed("c-2", ("d1", "d2")), _seed("c-3", ("d1",)), _seed("c-4", ("d1",))]
    two = [_turn("none", "What is alpha?", "What is alpha?"), _turn("pronoun", "And it?", "And alpha?")]
    judgements = [
        judged(GeneratedConversation(reason="r", scenario="  planning a trip  ", turns=two)),
        judged(GeneratedConversation(reason="r", scenario="   ", turns=two)),
        judged(None, Unscored(reason="bad json")),
        judged(GeneratedConversation(reason="r", scenario="x", turns=[two[0], _turn("pronoun", "  ", "Beta?")])),
    ]
    judge = StubJudge(judgements)
    calls: list[tuple[str, int, int]] = []
    out, conversations = asyncio.run(
        generate_conversations(seeds, judge, ctx(), lambda *a: calls.append(a))  # type: ignore[arg-type]
    )
    assert out.counts == {
        "conversations_generated": 2,
        "dropped_by_conversation_unscored": 2,
        "turns_generated": 4,
        "generated": 4,
    }
    assert [q.id for q in out.records] == ["c-1-t1", "c-1-t2", "c-2-t1", "c-2-t2"]
    assert [c.id for c in conversations] == ["c-1", "c-2"]
    assert [c.scenario for c in conversations] == ["planning a trip", None]
    assert [c.source_doc_ids for c in conversations] == [["d1"], ["d1", "d2"]]
    assert [[t.question_id for t in c.turns] for c in conversations] == [["c-1-t1", "c-1-t2"], ["c-2-t1", "c-2-t2"]]
    assert calls == [("conversation", i, 4) for i in range(5)]
    assert [(name, stage) for name, _, stage in judge.calls] == [("conversation", "conversation")]
    assert judge.calls[0][1] == [conversation_variables(s, CHUNKS) for s in seeds]


def test_generate_conversations_without_progress() -> None:
    two = [_turn("none", "What is alpha?", "What is alpha?"), _turn("pronoun", "And it?", "And alpha?")]
    judge = StubJudge([judged(GeneratedConversation(reason="r", scenario="s", turns=two))])
    out, conversations = asyncio.run(generate_conversations([_seed("c-1", ("d1",))], judge, ctx(), None))  # type: ignore[arg-type]
    assert out.counts["generated"] == 2 and len(conversations) == 1


# ---- critique_turns / _verdict ----


def _question(n: int, qtype: str = "factoid") -> Question:
    meta = {"conversation_id": "c-1", "turn": n, "utterance": f"u{n}", "seed_chunk_ids": ["ca", "cb"]}
    return Question(id=f"c-1-t{n}", text=f"rewrite {n}", type=qtype, reference_answer=f"a{n}", metadata=meta)


def _check(a: int, s: int, f: int, c: int) -> Judgement[Any]:
    return judged(RewriteCheck(reason="because", answerable=a, self_contained=s, faithful=f, clear=c))


def _run(turns: list[Question], judgements: list[Judgement[Any]], **settings: Any) -> tuple[Any, StubJudge, list]:
    judge = StubJudge(judgements)
    calls: list[tuple[str, int, int]] = []
    generated = {q.id: q for q in turns}
    out = asyncio.run(
        critique_turns(
            turns,
            generated,
            judge=judge,  # type: ignore[arg-type]
            settings=BuildSettings(**settings),
            ctx=ctx(),
            progress=lambda *a: calls.append(a),
        )
    )
    return out, judge, calls


def test_critic_off_passes_every_turn_and_asks_nothing() -> None:
    turns = [_question(1), _question(2)]
    out, judge, calls = _run(turns, [], critic=False)
    assert out.records == turns
    assert out.counts == {"dropped_by_critic": 0, "dropped_by_critic_unscored": 0}
    assert judge.calls == [] and calls == []


def test_rewrite_check_verdicts_messages_and_flags() -> None:
    turns = [_question(1), _question(2), _question(3, "unanswerable"), _question(4), _question(5)]
    judgements = [
        _check(3, 3, 3, 3),
        _check(2, 3, 1, 2),
        _check(1, 5, 5, 5),
        judged(None, Unscored(reason="no JSON in the answer")),
        judged(None, None),
    ]
    out, judge, calls = _run(turns, judgements, critic_min=3)
    assert [q.id for q in out.records] == ["c-1-t1", "c-1-t3"]
    assert out.counts == {"dropped_by_critic": 1, "dropped_by_critic_unscored": 2}
    assert [(q.id, q.flags["dropped"], q.flags["dropped_detail"]) for q in out.dropped] == [
        ("c-1-t2", "critic", "rewrite check scores below 3: answerable=2, faithful=1, clear=2"),
        ("c-1-t4", "critic_unscored", "no JSON in the answer"),
        ("c-1-t5", "critic_unscored", "no check"),
    ]
    assert turns[0].flags["critic"] == {
        "answerable": 3,
        "self_contained": 3,
        "faithful": 3,
        "clear": 3,
        "reason": "because",
    }
    assert "critic" not in turns[3].flags
    assert calls == [("rewrite_check", i, 5) for i in range(6)]
    assert [(name, stage) for name, _, stage in judge.calls] == [("rewrite_check", "rewrite_check")]
    assert judge.calls[0][1][1] == {
        "history": [{"utterance": "u1", "answer": "a1"}],
        "utterance": "u2",
        "rewrite": "rewrite 2",
        "answer": "a2",
        "passages": [{"id": "P1", "text": "Alpha text."}, {"id": "P2", "text": "Beta text."}],
    }


@pytest.mark.parametrize("key", ["answerable", "self_contained", "faithful", "clear"])
def test_each_score_one_below_the_minimum_fails_alone(key: str) -> None:
    scores = {"answerable": 4, "self_contained": 4, "faithful": 4, "clear": 4}
    low = {**scores, key: 3}
    judgement = judged(RewriteCheck(reason="r", **low))
    out, _, _ = _run([_question(1)], [judgement], critic_min=4)
    assert [q.flags["dropped_detail"] for q in out.dropped] == [f"rewrite check scores below 4: {key}=3"]
    out, _, _ = _run([_question(1)], [judged(RewriteCheck(reason="r", **scores))], critic_min=4)
    assert len(out.records) == 1 and out.dropped == []


def test_an_unanswerable_turn_fails_on_the_other_scores() -> None:
    out, _, _ = _run([_question(1, "unanswerable")], [_check(1, 2, 5, 5)], critic_min=3)
    assert [q.flags["dropped_detail"] for q in out.dropped] == ["rewrite check scores below 3: self_contained=2"]


def test_a_judge_answering_fewer_items_than_asked_is_an_error_not_a_silent_loss() -> None:
    # every turn or plan must get its verdict: a missing answer must not let a turn through unchecked or vanish
    two = [_turn("none", "What is alpha?", "What is alpha?"), _turn("pronoun", "And it?", "And alpha?")]
    judge = StubJudge([judged(GeneratedConversation(reason="r", scenario="s", turns=two))])
    seeds = [_seed("c-1", ("d1",)), _seed("c-2", ("d1",))]
    with pytest.raises(ValueError):
        asyncio.run(generate_conversations(seeds, judge, ctx(), None))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        _run([_question(1), _question(2)], [_check(5, 5, 5, 5)])
