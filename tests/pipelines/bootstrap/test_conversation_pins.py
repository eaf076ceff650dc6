"""Pins of the conversation stages' own rules (assay.pipelines.bootstrap.conversations), on hand-made inputs: a
conversation's turns as questions field by field, the plan's passages per kind, and the planner's passages."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from assay.judge.client import Judgement
from assay.judge.outputs import EvidenceQuote, GeneratedConversation, GeneratedTurn, NuggetItem
from assay.pipelines.bootstrap import BuildSettings
from assay.pipelines.bootstrap.conversations import (
    ConversationSeed,
    _check_variables,
    _plan,
    _turns,
    cut_conversations,
    history_of,
    plan_conversations,
)
from assay.pipelines.bootstrap.sampling import prepare_corpus
from assay.text import content_hash
from assay.types import Chunk, Claim, Conversation, Nugget, Provenance, Question, Turn

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
