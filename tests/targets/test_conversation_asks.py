"""What each turn sends, from :func:`assay.targets.conversations.turn_asks` itself: a context turn's ask under
``--history own`` (its metadata, place and messages), the messages of a reference history, and the refusals of
``ways`` and ``Conversing`` written out whole."""

from __future__ import annotations

import pytest
from test_run_conversations import conversational, with_context

from assay.errors import ConfigError
from assay.targets.callers import Ask
from assay.targets.conversations import Conversing, after, messages_of, rewrites_name, turn_asks, ways


def test_own_history_asks_a_context_turn_with_its_metadata_just_before_the_next_judged_turn() -> None:
    asks = turn_asks(with_context(), Conversing(history="own"), repeat=1)
    assert [a.query_id for a in asks] == ["q1", "c1-t2", "q2", "q3", "q4"]
    context = asks[1]
    assert dict(context.metadata) == {"conversation_id": "c1", "turn": 2, "utterance": "and its colour?",
                                      "dependency": "pronoun"}  # fmt: skip
    assert (context.question, context.repeat, context.conversation_id, context.turn) == ("and its colour?", 1, "c1", 1)
    assert context.messages == ({"role": "user", "content": "and its colour?"},)
    # own history: a judged turn holds only itself until the answers come (after())
    assert asks[2].messages == ({"role": "user", "content": "and the next one?"},) and asks[2].turn == 2


def test_reference_history_and_rewrites_ask_no_context_turn() -> None:
    reference = turn_asks(with_context(), Conversing())
    assert [a.query_id for a in reference] == ["q1", "q2", "q3", "q4"]
    assert reference[1].messages == messages_of([("what is fact 1?", "ref 1"), ("and its colour?", "ctx ref")],
                                                "and the next one?")  # fmt: skip
    rewrites = turn_asks(conversational(), Conversing(mode="rewrites"))
    assert [(a.question, a.messages, a.turn) for a in rewrites][:2] == [("what is fact 1?", None, 0),
                                                                       (rewrites[1].question, None, 1)]  # fmt: skip
    assert rewrites[1].question != "and the next one?"  # the standalone rewrite, not the utterance


def test_messages_of_alternate_user_and_assistant() -> None:
    assert messages_of([("a?", "A"), ("b?", "")], "c?") == (
        {"role": "user", "content": "a?"}, {"role": "assistant", "content": "A"},
        {"role": "user", "content": "b?"}, {"role": "assistant", "content": ""},
        {"role": "user", "content": "c?"},
    )  # fmt: skip


def test_ways_and_their_refusals() -> None:
    gold = conversational()
    assert ways("app", Conversing(), gold) == [("app", Conversing())]
    assert ways("app", Conversing(mode="both", history="own"), gold) == [
        ("app", Conversing(history="own", mode="turns")), ("app (rewrites)", Conversing(history="own", mode="rewrites"))
    ]  # fmt: skip
    assert rewrites_name("bm25") == "bm25 (rewrites)"
    gold.conversations = []
    with pytest.raises(ConfigError) as caught:
        ways("app", Conversing(mode="both"), gold)
    assert str(caught.value) == (
        "--conversation-mode both asks app the raw turns and the rewrites of the golden set's conversations, but it "
        "has none (no conversations.jsonl): give turns, or a golden set built with assay build --conversations N"
    )
    with pytest.raises(ConfigError) as caught:
        Conversing(mode="all").checked(both=True)
    assert str(caught.value) == "--conversation-mode all: use one of turns, rewrites, both"
    with pytest.raises(ConfigError) as caught:
        Conversing(history="none").checked()
    assert str(caught.value) == "--history none: use one of reference, own"


def test_a_single_question_is_asked_alone_wherever_it_stands() -> None:
    gold = conversational()
    gold.questions.insert(0, gold.questions.pop())  # q4, no turn, first
    asks = turn_asks(gold, Conversing())
    assert [a.query_id for a in asks] == ["q4", "q1", "q2", "q3"]
    assert (dict(asks[0].metadata), asks[0].messages, asks[0].conversation_id) == ({"topic": "even"}, None, None)
    assert dict(asks[1].metadata) == {"topic": "odd"}


def test_after_puts_the_systems_own_answers_in_the_history() -> None:
    first, second = Ask("q1", "what is fact 1?"), Ask("q2", "and the next one?")
    third = Ask("q3", "how does it compare?")
    asked = after(third, [(first, {"answer": "A1"}), (second, {"retrieved": ["c1"]})])  # a retriever: no answer
    assert asked.messages == messages_of([("what is fact 1?", "A1"), ("and the next one?", "")], "how does it compare?")
    assert asked.query_id == "q3" and asked.question == "how does it compare?"


def test_both_is_refused_where_one_run_is_written_and_its_message_says_where_it_works() -> None:
    with pytest.raises(ConfigError) as caught:
        Conversing(mode="both").checked()
    assert str(caught.value) == (
        "--conversation-mode both asks a target twice, into two runs (NAME and NAME (rewrites)): assay eval "
        "--target-conversation-mode both and assay.evaluate(..., conversing=Conversing(mode='both')) do; assay run "
        "writes one run: give turns or rewrites, one run each"
    )
    with pytest.raises(ConfigError) as caught:
        Conversing(mode="all").checked()
    assert str(caught.value) == "--conversation-mode all: use one of turns, rewrites"
    assert Conversing(mode="both").checked(both=True) == Conversing(mode="both")
