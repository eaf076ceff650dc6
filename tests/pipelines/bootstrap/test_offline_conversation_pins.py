"""Pins for the offline conversation writer and the contradiction rule (the mutation habit on
assay.judge.offline_conversations): the anchor a follow-up leans on, the pronoun swap, the quantities a sentence
gives, the clash between two answers, and one whole conversation with a turn of every kind."""

from __future__ import annotations

from assay.judge.offline_conversations import (
    _anchor,
    _content,
    _ellipsis,
    _faithful,
    _focus,
    _pronoun,
    _quantities,
    _without,
    check_contradiction,
    check_rewrite,
    write_conversation,
)
from assay.judge.offline_questions import Source

BASE = "Offline lexical baseline, not an LLM: "


def test_the_anchor_prefers_a_run_that_names_something_then_the_longest() -> None:
    history = "I like the ranger tent and delivery"
    # "Ranger tent" names something (a capitalised word after the first); "delivery" does not
    assert _anchor("How long does delivery take for the Ranger tent?", history) == "Ranger tent"
    assert _anchor("What is the delivery time for the tent?", "delivery time was asked; the tent") == "delivery time"
    assert _anchor("What is the tent price?", "nothing here") is None
    assert _anchor("Does the tentpole fit?", "tent") is None  # whole words only
    assert _anchor("What happens on March 3?", "March 3 is a date") is None  # a date is no referent
    assert _anchor("Is the tent dry?", "write to tent@shop.com or tent.pdf") is None  # inside an address or a file
    assert _anchor("Is the tent dry?", "the tent@shop.com and the tent") == "tent"


def test_the_pronoun_replaces_the_anchor_with_its_article_and_capitalises() -> None:
    assert _pronoun("how long does the Ranger tent last?", "Ranger tent") == "How long does it last?"
    assert _pronoun("Is your Ranger tent dry?", "ranger tent", "them") == "Is them dry?"
    assert _pronoun("", "tent") == ""


def test_quantities_group_numbers_by_stemmed_unit() -> None:
    assert _quantities("Refunds take 1,000 days or 30.0 days and a 5% fee.") == {"day": {"1000", "30"}, "%": {"5"}}
    assert _quantities("No numbers here.") == {}


def test_without_takes_out_used_quotes_and_keeps_the_text_when_nothing_is_left() -> None:
    source = Source("p1", "A tent. A stove.", "H")
    assert _without(source, ["A tent."]) == Source("p1", "  A stove.", "H")
    assert _without(source, ["A tent.", "A stove."]) == source


def test_a_different_number_for_the_same_unit_and_thing_is_a_contradiction() -> None:
    earlier = [Source("1", "Refunds are paid within 30 days.", ""), Source("2", "Refunds are paid within 14 days.", "")]
    check = check_contradiction("Refunds are paid within 14 days.", earlier)
    assert check.contradicts is True and check.earlier_turns == [1]
    assert check.reason == BASE + "turn 1: 14 day now, 30 day before"
    same = check_contradiction("Refunds are paid within 30 days.", earlier[:1])
    assert (same.contradicts, same.earlier_turns) == (False, [])
    assert same.reason == BASE + "no number differs for the same thing"
    # an earlier source whose id is no turn number is not reported
    unnumbered = [Source("x", "Refunds are paid within 30 days.", "")]
    assert check_contradiction("Refunds are paid within 14 days.", unnumbered).contradicts is False


def test_the_same_unit_needs_two_shared_terms_and_a_shared_name() -> None:
    # only "days" and one other term in common: not the same thing
    refunds = [Source("1", "Refunds take 30 days.", "")]
    assert check_contradiction("Shipping takes 3 days.", refunds).contradicts is False
    named = [Source("1", "The Birch lantern's warranty lasts 30 days.", "")]
    assert check_contradiction("The Alder kettle's warranty lasts 14 days.", named).contradicts is False
    both = check_contradiction("The Birch lantern's warranty lasts 14 days.", named)
    assert both.contradicts is True and both.earlier_turns == [1]
    two = [Source("1", "Refunds are paid within 30 days.", ""), Source("3", "Refunds are paid within 7 days.", "")]
    many = check_contradiction("Refunds are paid within 14 days.", two)
    assert many.earlier_turns == [1, 3]
    assert many.reason == BASE + "turn 1: 14 day now, 30 day before; turn 3: 14 day now, 7 day before"


def test_a_conversation_with_every_kind_of_turn() -> None:
    sources = [
        Source("p1", "The Ranger tent sleeps four people. The Ranger tent weighs 3 kg. Delivery takes 5 days.", ""),
        Source("p2", "The Alder kettle holds 2 litres. The Alder kettle costs 40 dollars.", ""),
    ]
    plan = [
        {"number": 1, "dependency": "none", "passage": "p1"},
        {"number": 2, "dependency": "pronoun", "passage": "p1"},
        {"number": 3, "dependency": "ellipsis", "passage": "p1"},
        {"number": 4, "dependency": "comparison", "passage": "p2"},
        {"number": 5, "dependency": "topic_shift", "passage": "p2"},
        {"number": 6, "dependency": "unanswerable"},
    ]
    conversation = write_conversation(sources, plan)
    assert conversation.scenario == "A user asks: How many kgs does the Ranger tent weigh?"
    assert conversation.reason == (
        BASE + "follow-ups written by rule from the passages (pronoun, ellipsis, comparison, shift)."
    )
    got = [(t.dependency, t.utterance, t.rewrite, t.reason, [e.quote for e in t.evidence]) for t in conversation.turns]
    opening = "How many kgs does the Ranger tent weigh?"
    assert got == [
        ("none", opening, opening, BASE + "a standalone opening question.", ["The Ranger tent weighs 3 kg."]),
        # the weight sentence is used: the follow-up asks about the other one naming the Ranger tent
        ("pronoun", "What should I know about it sleeps?", "What should I know about Ranger tent sleeps?",
         BASE + "'Ranger tent', named earlier, replaced by 'it'.", ["The Ranger tent sleeps four people."]),
        # the only sentence left shares no word with the history: written standalone
        ("none", "How many days does Delivery take?", "How many days does Delivery take?",
         BASE + "planned ellipsis, but the rewrite shares no words with the history.", ["Delivery takes 5 days."]),
        ("comparison", "What are the differences between that and Alder kettle holds?",
         "What are the differences between Ranger tent weighs and Alder kettle holds?",
         BASE + "'Ranger tent weighs', named earlier, replaced by 'that'.",
         ["The Ranger tent weighs 3 kg.", "The Alder kettle holds 2 litres."]),
        # the kettle's capacity was quoted by the comparison: the shift asks about its price
        ("topic_shift", "And how many dollars does the Alder kettle cost?",
         "How many dollars does the Alder kettle cost?", BASE + "a new subject, from passage p2.",
         ["The Alder kettle costs 40 dollars."]),
        ("unanswerable", "Does the documentation on Ranger tent weighs mention shipping to Antarctica?",
         "Does the documentation on Ranger tent weighs mention shipping to Antarctica?",
         BASE + "a question on a concept the passages never mention.", []),
    ]  # fmt: skip


def test_two_shared_terms_besides_the_unit_are_enough() -> None:
    # "refund" and "take" are shared besides the unit "day"
    check = check_contradiction("Refunds take 14 days.", [Source("1", "Refunds take 30 days.", "")])
    assert check.contradicts is True and check.reason == BASE + "turn 1: 14 day now, 30 day before"


def test_a_one_word_anchor_is_it_and_a_plural_one_them() -> None:
    def second_turn(text: str) -> tuple[str, str]:
        turns = write_conversation([Source("p1", text, "")], [{"dependency": "none"}, {"dependency": "pronoun"}]).turns
        return turns[1].utterance, turns[1].reason

    assert second_turn("The tent sleeps four people. The tent weighs 3 kg.") == (
        "What does the documentation say about it sleeps four?",
        BASE + "'tent', named earlier, replaced by 'it'.",
    )
    assert second_turn("Refunds are sent by bank. Refunds take 5 days to arrive.") == (
        "Can you tell me about them?",
        BASE + "'refunds', named earlier, replaced by 'them'.",
    )


def test_focus_keeps_the_sentences_sharing_a_name_else_two_terms_else_all() -> None:
    text = "The Ranger tent sleeps four. Poles are made of steel and aluminium. Delivery of tent poles takes days."
    source = Source("p", text, "h")
    assert _focus(source, "the Ranger is good") == Source("p", "The Ranger tent sleeps four.", "h")
    # "Poles ..." shares one term with the history, "Delivery ..." two
    assert _focus(source, "tent poles") == Source("p", "Delivery of tent poles takes days.", "h")
    assert _focus(source, "nothing shared") == source


def test_content_words_are_no_stop_frame_or_punctuation_words() -> None:
    assert [_content(w) for w in ("---", "what", "the", "tent", "A1")] == [False, False, False, True, True]


def test_an_empty_plan_and_the_passages_a_plan_names() -> None:
    sources = [Source("p1", "The tent sleeps four people.", ""), Source("p2", "The kettle holds 2 litres.", "")]
    empty = write_conversation(sources, [])
    assert (empty.scenario, empty.turns) == ("A user asks: ", [])
    # the opening asks about the passage named; a follow-up naming no known passage asks about the first
    turns = write_conversation(sources, [{"passage": "p2"}, {"dependency": "topic_shift", "passage": "zz"}]).turns
    assert [(t.dependency, t.utterance) for t in turns] == [
        ("none", "How many litres does the kettle hold?"),
        ("topic_shift", "And what does the documentation say about tent sleeps four?"),
    ]


def test_the_anchor_skips_bare_numbers_and_never_counts_the_first_word_or_a_day_as_a_name() -> None:
    assert _anchor("Is 30 right?", "30") is None  # a number alone is no referent
    # "Delivery" is capitalised only as the first word: the longer "tent poles" wins
    assert _anchor("Delivery takes how long for tent poles?", "delivery and tent poles") == "tent poles"
    # "Monday" names nothing: the longer "big discount code" wins over "Monday sale"
    history = "the monday sale and the big discount code"
    assert _anchor("Is the Monday sale or the big discount code better?", history) == "big discount code"


def test_the_pronoun_replaces_the_first_mention_only() -> None:
    assert _pronoun("Is the tent by the tent?", "tent") == "Is it by the tent?"


def test_a_unit_that_stems_to_nothing_is_kept_lowercased_and_numbers_are_listed_sorted() -> None:
    assert _quantities("5 OF them") == {"of": {"5"}}
    earlier = [Source("2", "Refunds take 30 days. Refunds take 9 days.", "")]
    # the first clashing pair of sentences is reported, with every number each gives for the unit
    check = check_contradiction("Refunds take 15 days or 14 days.", earlier)
    assert check.reason == BASE + "turn 2: 14 or 15 day now, 30 day before"
    thirty = [Source("2", "Refunds take 30 days.", "")]
    first = check_contradiction("Refunds take 15 days. Refunds take 14 days.", thirty)
    assert first.reason == BASE + "turn 2: 15 day now, 30 day before"


def test_the_rewrite_check_knows_the_history_answers_and_adds_nothing_for_a_missing_field() -> None:
    passages = ["The tent fits a rope and a lamp."]
    history = [{"answer": "It comes with a rope."}, {"utterance": "Does it fit a lamp?"}]
    # "rope" is only in an answer of the history: nothing added
    assert check_rewrite(history, "and a lamp?", "Does the lamp fit a rope?", "Yes.", passages).faithful == 5
    # a missing utterance or answer is no text: "none", "xx" and "xxxx" are still found nowhere before
    odd = check_rewrite(history, "and a lamp?", "Does the lamp fit none, xx, xxxx?", "Yes.", passages)
    assert odd.faithful == 3 and odd.reason.endswith("adds terms found nowhere before: none, xx, xxxx.")


def test_an_utterance_without_content_terms_is_kept_whole() -> None:
    assert _faithful("and?", "Is the tent dry?", "the tent is dry") == (5, "keeps 100% of the utterance's terms")


def test_an_ellipsis_turn_drops_the_anchor_and_falls_back_to_a_pronoun() -> None:
    def second_turn(text: str) -> tuple[str, str, str]:
        plan = [{"dependency": "none"}, {"dependency": "ellipsis"}]
        turn = write_conversation([Source("p1", text, "")], plan).turns[1]
        return turn.dependency, turn.utterance, turn.reason

    assert second_turn("The Ranger tent weighs 3 kg. Delivery of the Ranger tent takes 5 days.") == (
        "ellipsis",
        "And delivery takes how many days?",
        BASE + "'Ranger tent' and its preposition left out, as said before.",
    )
    # no preposition before the anchor: the turn is a pronoun one
    assert second_turn("The Ranger tent weighs 3 kg. The Ranger tent costs 120 dollars.") == (
        "pronoun",
        "How many dollars does it cost?",
        BASE + "'Ranger tent', named earlier, replaced by 'it'.",
    )


def test_the_ellipsis_cuts_the_first_mention_only_and_tidies_the_punctuation() -> None:
    twice = "How long does delivery take for the Ranger tent, and for the Ranger tent stove?"
    assert _ellipsis(twice, "Ranger tent") == "And how long does delivery take, and for the Ranger tent stove?"
    assert _ellipsis("Delivery times for the Ranger tent , how long?", "Ranger tent") == "And delivery times, how long?"


def test_the_faithfulness_note_lists_five_added_terms_at_most() -> None:
    note = _faithful("tent", "tent cup spoon knife fork bowl plate", "")[1]
    assert note.endswith("adds terms found nowhere before: bowl, cup, fork, knif, plat")  # six added, sorted


def test_a_named_run_beats_a_longer_one_and_the_first_of_equals_wins() -> None:
    history = "the alder kettle and the small blue steel kettle"
    assert _anchor("Does Alder kettle beat the small blue steel kettle?", history) == "Alder kettle"
    assert _anchor("Is the red tent or the tan tent cheaper?", "red tent and tan tent") == "red tent"
    assert _anchor("Is the tent dry or not", "the tent") == "tent"  # a run ending in a stop word is skipped
    assert _anchor("Is it 30 of 40?", "30 of 40") is None  # numbers and a stop word: no referent


def test_focus_joins_the_chosen_sentences_as_paragraphs() -> None:
    source = Source("p", "The Ranger tent sleeps four. Poles are steel. The Ranger tent weighs 3 kg.", "h")
    assert _focus(source, "the Ranger").text == "The Ranger tent sleeps four.\n\nThe Ranger tent weighs 3 kg."


def test_an_ellipsis_asks_a_numeric_question_where_a_pronoun_asks_a_factoid() -> None:
    # After the opening (the weight), two sentences are left: a definition naming the Ranger tent (factoid salience:
    # name + definition + length = 5) and a delivery time without a full stop (name + number + length - 6 = 0, but
    # + 6 for a numeric question's cue). A pronoun turn asks a factoid, so the definition; an ellipsis turn asks a
    # numeric question, so the delivery time.
    text = (
        "The Ranger tent weighs 3 kg. The Ranger tent is a dome shelter for hikers. "
        "Delivery of the Ranger tent takes 5 days"
    )

    def second_turn(kind: str) -> tuple[str, str, str, list[str]]:
        turn = write_conversation([Source("p1", text, "")], [{"dependency": "none"}, {"dependency": kind}]).turns[1]
        return turn.dependency, turn.utterance, turn.rewrite, [e.quote for e in turn.evidence]

    assert second_turn("ellipsis") == (
        "ellipsis",
        "And delivery takes how many days?",
        "Delivery of the Ranger tent takes how many days?",
        ["Delivery of the Ranger tent takes 5 days"],
    )
    assert second_turn("pronoun") == (
        "pronoun",
        "Can you explain what it is?",
        "Can you explain what the Ranger tent is?",
        ["The Ranger tent is a dome shelter for hikers."],
    )


def test_a_later_turn_planned_standalone_is_asked_as_written() -> None:
    # A plan step saying "none" (or naming no dependency: "none" is the default) after the opening is a standalone
    # turn: its utterance is its rewrite. It used to go through the pronoun swap and come out as "Can you explain
    # what it is?" labelled "none", a turn leaning on the history while saying it does not.
    text = "The Ranger tent weighs 3 kg. The Ranger tent is a dome shelter for hikers."
    for step in ({"dependency": "none"}, {"passage": "p1"}):
        turn = write_conversation([Source("p1", text, "")], [{"dependency": "none"}, step]).turns[1]
        assert (turn.dependency, turn.utterance, turn.rewrite, turn.reason) == (
            "none",
            "Can you explain what the Ranger tent is?",
            "Can you explain what the Ranger tent is?",
            BASE + "planned standalone, asked as written.",
        )


def test_an_anchor_ending_in_double_s_or_of_several_words_is_it() -> None:
    def second_turn(text: str) -> str:
        turns = write_conversation([Source("p1", text, "")], [{"dependency": "none"}, {"dependency": "pronoun"}]).turns
        return turns[1].reason

    # "compass" ends in s but is no plural ("ss"); "Alder Series" ends in s but is two words: only one plural word
    # is "them"
    assert second_turn("The compass points north. The compass weighs 40 grams.") == (
        BASE + "'compass', named earlier, replaced by 'it'."
    )
    assert second_turn("The Alder Series holds four kettles. The Alder Series costs 40 dollars.") == (
        BASE + "'Alder Series', named earlier, replaced by 'it'."
    )


def test_a_dangling_pronoun_lowers_self_contained_down_to_one_at_least() -> None:
    # "Is it?": the critic's self-contained is 5 - 2 (leans on a pronoun) - 1 (fewer than two terms) = 2; the kept
    # "it" lowers it by 2, floored at 1
    check = check_rewrite([], "and?", "Is it?", "yes", ["The tent is dry."])
    assert check.self_contained == 1


def test_an_answer_giving_two_numbers_for_the_unit_is_quoted_with_or() -> None:
    later = check_contradiction("Refunds take 7 days.", [Source("1", "Refunds take 14 days or 30 days.", "")])
    assert later.reason == BASE + "turn 1: 7 day now, 14 or 30 day before"
    earlier = check_contradiction("Refunds take 7 days or 9 days.", [Source("1", "Refunds take 14 days.", "")])
    assert earlier.reason == BASE + "turn 1: 7 or 9 day now, 14 day before"
