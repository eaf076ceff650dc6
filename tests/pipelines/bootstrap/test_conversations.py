"""``assay build --conversations``: planning, the offline writer and checker, the cut, counts, the golden folder,
the dry run, the budget, resume from the cache, a panel, and a build that accepts no conversation."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from build_helpers import backend_script, fake_judge

from assay.errors import BudgetExceeded, ConfigError, NothingProduced
from assay.formats.golden import GoldenSet
from assay.judge import Judge, JudgeCache, make_judge
from assay.judge.offline import offline_answer
from assay.judge.offline_conversations import _anchor as anchor
from assay.judge.offline_conversations import check_rewrite, write_conversation
from assay.judge.offline_questions import Source
from assay.judge.panel import Panel
from assay.pipelines.bootstrap import DEMO_CONVERSATIONS, DROP_COUNTS, BuildSettings, build_golden, estimate_build
from assay.pipelines.bootstrap.conversations import cut_conversations, history_of, plan_conversations
from assay.pipelines.bootstrap.sampling import prepare_corpus
from assay.testing import FakeBackend
from assay.types import Conversation, Question, Turn

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "datasets" / "demo" / "corpus"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[GoldenSet, Path]:
    out = tmp_path_factory.mktemp("talks") / "golden"
    build_golden(DEMO, judge=make_judge("offline"), settings=DEMO_CONVERSATIONS, output=out)
    return GoldenSet.load(out), out


def test_turns_are_questions_graded_against_the_rewrite(built: tuple[GoldenSet, Path]) -> None:
    golden, folder = built
    assert (folder / "conversations.jsonl").is_file() and golden.conversations
    turn_ids = [t.question_id for c in golden.conversations for t in c.turns if t.judged]
    assert sorted(turn_ids) == sorted(q.id for q in golden.questions)  # --questions 0: every question is a turn
    for conversation in golden.conversations:
        assert len(conversation.turns) >= 2 and any(t.judged for t in conversation.turns)
        assert [t.question_id for t in conversation.turns] == [
            f"{conversation.id}-t{n}" for n in range(1, len(conversation.turns) + 1)
        ]  # a prefix: no gap
        first = conversation.turns[0]
        assert first.dependency == "none" and not first.depends_on_history
        assert first.utterance == golden.turn_texts(first)[0]
        for turn in conversation.turns:
            assert turn.rewrite_provenance is not None and turn.rewrite_provenance.source == "generator"
            assert turn.depends_on_history == (turn.dependency in ("pronoun", "ellipsis", "comparison"))
    graded = {label.query_id for label in golden.qrels}
    assert graded == set(turn_ids)  # every judged turn pooled and graded, no context turn
    dependent = [t for c in golden.conversations for t in c.turns if t.depends_on_history]
    assert dependent and all(t.utterance != golden.turn_texts(t)[0] for t in dependent)


def test_the_demo_keeps_turns_the_leakage_filter_dropped_as_context(built: tuple[GoldenSet, Path]) -> None:
    golden, _ = built
    context = [t for c in golden.conversations for t in c.turns if not t.judged]
    assert context and all(t.dropped == "leakage" and t.rewrite and t.answer for t in context)
    assert not {t.question_id for t in context} & {q.id for q in golden.questions}


def test_counts_add_up(built: tuple[GoldenSet, Path]) -> None:
    counts = built[0].manifest.counts
    assert (
        counts["conversation_seeds"]
        == 8
        == counts["conversations_generated"] + counts["dropped_by_conversation_unscored"]
    )
    assert counts["generated"] == counts["turns_generated"]
    assert (
        counts["generated"]
        == counts["accepted"] + sum(counts[k] for k in DROP_COUNTS) + counts["dropped_by_conversation_cut"]
    )
    assert counts["conversations_accepted"] == len(built[0].conversations)
    assert counts["turns_accepted"] == counts["accepted"] == len(built[0].questions)
    turns = [t for c in built[0].conversations for t in c.turns]
    assert counts["context_turns"] == sum(not t.judged for t in turns) > 0
    assert counts["turns_accepted"] + counts["context_turns"] == len(turns)
    assert counts["context_turns"] <= counts["dropped_by_leakage"] + counts["dropped_by_near_duplicate"]
    prompts = built[0].manifest.prompts
    assert any(ref.startswith("conversation@") for ref in prompts) and any(
        r.startswith("rewrite_check@") for r in prompts
    )


def test_build_is_deterministic(built: tuple[GoldenSet, Path]) -> None:
    again = build_golden(DEMO, judge=make_judge("offline"), settings=DEMO_CONVERSATIONS)
    assert [c.model_dump(exclude={"turns"}) for c in again.conversations] == [
        c.model_dump(exclude={"turns"}) for c in built[0].conversations
    ]
    assert [q.text for q in again.questions] == [q.text for q in built[0].questions]


def test_plan_starts_standalone_and_spreads_the_kinds() -> None:
    settings = BuildSettings(questions=0, conversations=10, turns=(3, 6))
    _, chunks, index = prepare_corpus(DEMO, settings)
    plans = plan_conversations(chunks, index, settings)
    assert len(plans) == 10 and len({p.id for p in plans}) == 10
    assert all(p.plan[0] == ("none", "P1") and 3 <= len(p.plan) <= 6 for p in plans)
    kinds = {kind for p in plans for kind, _ in p.plan[1:]}
    assert kinds == {"pronoun", "ellipsis", "comparison", "topic_shift", "unanswerable"}
    assert all(p.plan[1][0] in ("pronoun", "ellipsis", "comparison") for p in plans)  # the first follow-up leans
    assert plans == plan_conversations(chunks, index, settings)


def test_a_chunk_opens_one_conversation_and_a_small_corpus_plans_fewer_with_a_warning(tmp_path: Path) -> None:
    settings = BuildSettings(questions=0, conversations=200, turns=(2, 3))
    _, chunks, index = prepare_corpus(DEMO, settings)
    plans = plan_conversations(chunks, index, settings)
    firsts = [p.chunk_ids[0] for p in plans]
    assert len(plans) == len(chunks) == len(set(firsts))  # every chunk once, none twice
    fewer = replace(settings, conversations=len(chunks) - 5)
    assert len({p.chunk_ids[0] for p in plan_conversations(chunks, index, fewer)}) == len(chunks) - 5
    estimate = estimate_build(DEMO, judge=make_judge("offline"), settings=settings)
    said = [w for w in estimate.warnings if "200 conversations were asked for" in w]
    assert said == [f"200 conversations were asked for, but the corpus has {len(chunks)} chunks and a chunk opens "
                    f"one conversation: {len(chunks)} are planned."]  # fmt: skip


def test_a_turn_links_only_the_documents_of_the_passages_it_cites(built: tuple[GoldenSet, Path]) -> None:
    golden, _ = built
    chunks = {c.id: c for c in golden.chunks}
    for question in golden.questions:
        if "conversation_id" not in question.metadata:
            continue
        cited = question.source_chunk_ids or question.metadata["seed_chunk_ids"][:1]
        assert question.source_doc_ids == list(dict.fromkeys(chunks[c].doc_id for c in cited)), question.id


SOURCES = [
    Source("P1", "The Ranger tent weighs 2.1 kg. The Ranger tent sleeps two people.", "Tents > Ranger"),
    Source("P2", "Delivery of the Ranger tent takes 3 days to Scotland.", ""),
    Source("P3", "The Summit stove burns for 90 minutes on one canister.", "Stoves"),
]


def test_the_rewrite_checks_history_is_every_earlier_turn_up_to_the_one_just_before() -> None:
    def turn(n: int) -> Question:
        return Question(id=f"c7-t{n}", text=f"rewrite {n}", reference_answer=f"answer {n}",
                        metadata={"conversation_id": "c7", "turn": n, "utterance": f"utterance {n}"})  # fmt: skip

    generated = {q.id: q for q in (turn(1), turn(2), turn(3), turn(4))}
    assert history_of(turn(3), generated) == [
        {"utterance": "utterance 1", "answer": "answer 1"},
        {"utterance": "utterance 2", "answer": "answer 2"},
    ]
    assert history_of(turn(1), generated) == []
    del generated["c7-t2"]  # a turn not generated (dropped earlier) is left out, the others kept in order
    assert [h["utterance"] for h in history_of(turn(4), generated)] == ["utterance 1", "utterance 3"]


def test_offline_writer_replaces_the_named_thing_with_a_pronoun() -> None:
    plan = [
        {"number": 1, "dependency": "none", "passage": "P1"},
        {"number": 2, "dependency": "pronoun", "passage": "P1"},
    ]
    talk = write_conversation(SOURCES, plan)
    first, second = talk.turns
    assert first.utterance == first.rewrite and first.dependency == "none"
    assert second.dependency == "pronoun" and "Ranger" in second.rewrite
    assert "Ranger" not in second.utterance and " it" in f" {second.utterance}".lower()
    assert second.utterance == second.rewrite.replace("Ranger", "it")
    assert second.evidence[0].quote != first.evidence[0].quote  # a follow-up asks about another sentence


RENTED = (
    "Stoves must be returned clean. The Skerry 2 can be rented for $18 per night in the hills. "
    "Write to help@skerry.example for long walks in the hills."
)


def test_offline_writer_refers_to_the_named_thing_the_conversation_is_about() -> None:
    """The pronoun stands for what the history names (a product), not a longer common phrase, not a date, not a word
    inside an address; the follow-up asks about a sentence that names it."""
    sources = [
        Source("P1", "The Skerry 2 tent weighs 2.4 kg and packs small for long walks in the hills.", "Tents"),
        Source("P2", RENTED, ""),
    ]
    plan = [{"number": 1, "dependency": "none", "passage": "P1"},
            {"number": 2, "dependency": "pronoun", "passage": "P2"}]  # fmt: skip
    second = write_conversation(sources, plan).turns[1]
    assert second.dependency == "pronoun" and "Skerry 2" in second.rewrite, second
    assert second.utterance == "It can be rented for how much per night in the hills?"
    assert second.evidence[0].quote.startswith("The Skerry 2 can be rented")
    assert anchor("Ships on 14 March to help@skerry.example?", "on 14 March we wrote help@skerry.example") is None
    assert anchor("How long is the Skerry warranty in the hills?", "the Skerry tent in the hills") == "Skerry"


def test_offline_writer_marks_a_turn_that_cannot_lean_on_the_history_as_standalone() -> None:
    sources = [Source("P1", "Gift cards never expire."), Source("P2", "Kayaks are rented by the hour in summer.")]
    plan = [
        {"number": 1, "dependency": "none", "passage": "P1"},
        {"number": 2, "dependency": "pronoun", "passage": "P2"},
    ]
    second = write_conversation(sources, plan).turns[1]
    assert second.dependency == "none" and second.utterance == second.rewrite


def test_offline_writer_topic_shift_and_unanswerable() -> None:
    plan = [{"number": 1, "dependency": "none", "passage": "P1"}, {"number": 2, "dependency": "topic_shift",
            "passage": "P3"}, {"number": 3, "dependency": "unanswerable", "passage": ""}]  # fmt: skip
    _, shift, absent = write_conversation(SOURCES, plan).turns
    assert shift.dependency == "topic_shift" and shift.utterance == f"And {shift.rewrite[0].lower()}{shift.rewrite[1:]}"
    assert "stove" in shift.rewrite.lower() or "Summit" in shift.rewrite
    assert absent.dependency == "unanswerable" and absent.evidence == [] and absent.nuggets == []


def test_offline_rewrite_check_scores_faithfulness() -> None:
    history = [{"utterance": "How much does the Ranger tent weigh?", "answer": "The Ranger tent weighs 2.1 kg."}]
    passages = [s.text for s in SOURCES]
    good = check_rewrite(history, "How many people does it sleep?", "How many people does the Ranger tent sleep?",
                         "The Ranger tent sleeps two people.", passages)  # fmt: skip
    bad = check_rewrite(history, "How many people does it sleep?", "How long does the Summit stove burn on gas?",
                        "90 minutes.", passages)  # fmt: skip
    assert good.faithful == 5 and bad.faithful <= 2
    dangling = check_rewrite(history, "Does it sleep two?", "Does it sleep two?", "Yes.", passages)
    assert dangling.self_contained < 5  # a rewrite that keeps the pronoun is not standalone


def test_offline_judge_names_a_bad_plan() -> None:
    from assay.errors import BackendError

    with pytest.raises(BackendError, match="'turns'"):
        offline_answer("conversation", {"passages": [{"id": "P1", "text": "x"}], "turns": "two"})


def _turn(cid: str, n: int) -> tuple[Question, Turn]:
    qid = f"{cid}-t{n}"
    return Question(id=qid, text=f"q{n}", metadata={"conversation_id": cid, "turn": n}), Turn(
        question_id=qid, utterance=f"u{n}"
    )


def test_cut_keeps_the_prefix_before_the_first_dropped_turn() -> None:
    a = [_turn("a", n) for n in (1, 2, 3, 4)]
    b = [_turn("b", n) for n in (1, 2)]
    single = Question(id="q-single", text="standalone")
    talks = [Conversation(id="a", turns=[t for _, t in a]), Conversation(id="b", turns=[t for _, t in b])]
    kept = [a[0][0], a[1][0], a[3][0], b[0][0], single]  # a-t3 and b-t2 were dropped by a filter
    out, survivors = cut_conversations(talks, kept)
    assert [q.id for q in out.records] == ["a-t1", "a-t2", "q-single"]
    assert [c.id for c in survivors] == ["a"] and [t.question_id for t in survivors[0].turns] == ["a-t1", "a-t2"]
    assert out.counts["dropped_by_conversation_cut"] == 2  # a-t4 after the gap, b-t1 left alone
    assert {q.id: q.flags["dropped"] for q in out.dropped} == {"a-t4": "conversation_cut", "b-t1": "conversation_cut"}


def _dropped(question: Question, reason: str) -> Question:
    question.flags["dropped"] = reason
    question.reference_answer = f"answer of {question.id}"
    return question


@pytest.mark.parametrize("dropped", [1, 2])
@pytest.mark.parametrize("reason", ["leakage", "near_duplicate"])
def test_a_turn_too_easy_or_repeated_as_a_test_item_stays_as_context(dropped: int, reason: str) -> None:
    turns = [_turn("a", n) for n in (1, 2, 3)]
    talks = [Conversation(id="a", turns=[t for _, t in turns])]
    gone = _dropped(turns[dropped - 1][0], reason)
    kept = [q for q, _ in turns if q is not gone]
    out, [survivor] = cut_conversations(talks, kept, {gone.id: gone})
    assert [q.id for q in out.records] == [q.id for q in kept] and out.counts["dropped_by_conversation_cut"] == 0
    context = survivor.turns[dropped - 1]
    assert [t.question_id for t in survivor.turns] == ["a-t1", "a-t2", "a-t3"]
    assert (context.judged, context.dropped, context.utterance) == (False, reason, f"u{dropped}")
    assert (context.rewrite, context.answer) == (f"q{dropped}", f"answer of a-t{dropped}")
    assert [t.judged for t in survivor.turns if t is not context] == [True, True]
    counts = out.counts
    assert (counts["turns_accepted"], counts["context_turns"], counts["conversations_accepted"]) == (2, 1, 1)


@pytest.mark.parametrize("reason", ["evidence", "critic", "critic_unscored"])
def test_a_turn_dropped_by_a_check_that_cuts_still_cuts(reason: str) -> None:
    turns = [_turn("a", n) for n in (1, 2, 3, 4)]
    talks = [Conversation(id="a", turns=[t for _, t in turns])]
    leak, gone = _dropped(turns[1][0], "leakage"), _dropped(turns[2][0], reason)
    out, [survivor] = cut_conversations(talks, [turns[0][0], turns[3][0]], {leak.id: leak, gone.id: gone})
    assert [(t.question_id, t.judged) for t in survivor.turns] == [("a-t1", True), ("a-t2", False)]
    assert [q.id for q in out.dropped] == ["a-t4"] and out.counts["dropped_by_conversation_cut"] == 1


def test_a_conversation_left_without_a_judged_turn_or_second_turn_is_dropped() -> None:
    only = [_turn("only", n) for n in (1, 2)]  # both turns too easy: context turns only
    short = [_turn("short", n) for n in (1, 2, 3)]  # t1 too easy, t2 not grounded: one turn left
    talks = [Conversation(id=c, turns=[t for _, t in turns]) for c, turns in (("only", only), ("short", short))]
    dropped = [_dropped(only[0][0], "leakage"), _dropped(only[1][0], "near_duplicate"),
               _dropped(short[0][0], "near_duplicate"), _dropped(short[1][0], "evidence")]  # fmt: skip
    out, survivors = cut_conversations(talks, [short[2][0]], {q.id: q for q in dropped})
    assert survivors == [] and out.records == [] and [q.id for q in out.dropped] == ["short-t3"]
    assert [out.counts[k] for k in ("conversations_accepted", "turns_accepted", "context_turns")] == [0, 0, 0]


def test_the_second_cut_keeps_context_turns_and_cuts_at_an_answered_unanswerable_turn() -> None:
    turns = [_turn("a", n) for n in (1, 2, 3, 4)]
    leak = _dropped(turns[0][0], "leakage")
    first, [talk] = cut_conversations([Conversation(id="a", turns=[t for _, t in turns])],
                                      [q for q, _ in turns[1:]], {leak.id: leak})  # fmt: skip
    answered = _dropped(turns[3][0], "unanswerable_answered")  # the unanswerable check drops a-t4: no map given
    second, [again] = cut_conversations([talk], [q for q in first.records if q is not answered])
    assert [(t.question_id, t.judged) for t in again.turns] == [("a-t1", False), ("a-t2", True), ("a-t3", True)]
    assert second.counts["context_turns"] == 1 and second.counts["turns_accepted"] == 2


def test_no_conversation_accepted_fails_saying_why_and_writes_nothing(tmp_path: Path) -> None:
    def strict(request: Any) -> str:
        return json.dumps({"reason": "no", "answerable": 5, "self_contained": 1, "faithful": 1, "clear": 5})

    backend = FakeBackend(backend_script({"rewrite_check": strict, "conversation": _offline}))
    settings = BuildSettings(questions=0, conversations=2, pool_k=3)
    with pytest.raises(NothingProduced, match=r"no conversation was accepted.*rewrite"):
        build_golden(DEMO, judge=fake_judge(backend), settings=settings, output=tmp_path / "g")
    assert not (tmp_path / "g").exists()


def _offline(request: Any) -> str:
    return offline_answer(request.prompt_name, request.variables).model_dump_json()


def test_unparsable_conversations_fail_clearly(tmp_path: Path) -> None:
    backend = FakeBackend(backend_script({"conversation": lambda request: "not json"}))
    with pytest.raises(NothingProduced, match="no conversation was written"):
        build_golden(DEMO, judge=fake_judge(backend), settings=BuildSettings(questions=0, conversations=2))


def test_settings_reject_bad_turns_and_questions_zero_alone() -> None:
    with pytest.raises(ConfigError, match="--turns"):
        BuildSettings(conversations=2, turns=(1, 3))
    with pytest.raises(ConfigError, match="--conversations N"):
        BuildSettings(questions=0)


def test_dry_run_counts_the_conversation_stage_exactly() -> None:
    settings = BuildSettings(questions=0, conversations=3, turns=(2, 3))
    estimate = estimate_build(DEMO, judge=make_judge("offline"), settings=settings)
    stages = {s.stage: s for s in estimate.stages}
    assert stages["conversation"].calls == 3 and stages["conversation"].exact
    ingested, chunks, index = prepare_corpus(DEMO, settings)
    turns = sum(len(p.plan) for p in plan_conversations(chunks, index, settings, ingested.documents))
    assert stages["rewrite_check"].calls == turns and stages["generation"].calls == 0
    assert "3 conversations" in estimate.plan


def test_budget_stops_cleanly_and_a_rerun_resumes_from_the_cache(tmp_path: Path) -> None:
    settings = BuildSettings(questions=0, conversations=3, pool_k=3)
    cache = JudgeCache(tmp_path / "cache")
    first = FakeBackend(backend_script({"conversation": _offline, "rewrite_check": _offline}))
    with pytest.raises(BudgetExceeded):
        build_golden(DEMO, judge=fake_judge(first, cache=cache, max_cost=0.001), settings=settings,
                     output=tmp_path / "g")  # fmt: skip
    assert not (tmp_path / "g").exists() and first.calls > 0
    second = FakeBackend(backend_script({"conversation": _offline, "rewrite_check": _offline}))
    golden = build_golden(DEMO, judge=fake_judge(second, cache=cache), settings=settings, output=tmp_path / "g")
    third = FakeBackend(backend_script({"conversation": _offline, "rewrite_check": _offline}))
    build_golden(DEMO, judge=fake_judge(third, cache=cache), settings=settings)
    assert golden.conversations and third.calls == 0  # every call of the finished build is in the cache
    assert second.calls < first.calls + second.calls  # the rerun paid only for what the first did not


def test_a_panel_grades_every_turn(tmp_path: Path) -> None:
    script = {"conversation": _offline, "rewrite_check": _offline}
    one, two = (Judge(FakeBackend(backend_script(script)), model=m) for m in ("fake/a", "fake/b"))
    panel = Panel((one, two), combine="majority")
    golden = build_golden(DEMO, judge=panel, settings=replace(DEMO_CONVERSATIONS, conversations=3, pool_k=3))
    assert golden.conversations and all(label.votes and len(label.votes) == 2 for label in golden.qrels)


def test_fake_server_scripted_judge_answers_the_conversation_prompts() -> None:
    from assay.judge.limits import RetryPolicy
    from assay.pipelines.bootstrap.conversations import conversation_variables
    from assay.testing import FakeOpenAIServer
    from assay.testing.scripted_judges import responder

    settings = BuildSettings(questions=0, conversations=1, turns=(3, 3))
    ingested, chunks, index = prepare_corpus(DEMO, settings)
    plan = plan_conversations(chunks, index, settings, ingested.documents)[0]
    variables = conversation_variables(plan, {c.id: c for c in chunks})
    with FakeOpenAIServer(responder("unbiased", {})) as server:
        judge = make_judge("openai/fake-model", api_base=server.url, api_key="k", retry=RetryPolicy.immediate())
        check_vars = {"history": [], "utterance": "u", "rewrite": "r", "answer": "a", "passages": variables["passages"]}
        written, check = judge.judge_many("conversation", [variables]) + judge.judge_many("rewrite_check", [check_vars])
    assert written.output is not None and [t.dependency for t in written.output.turns] == ["none", "pronoun", "pronoun"]
    assert check.output is not None and check.output.faithful == 4
