"""Pins of the offline judge's drafts (judge/offline_drafts.py): which sentences a drafted reference takes and what
it says of them, and when the reference tool call is drafted, over which numbers and with which expression (every
expected value worked out by hand from the rule in the module docstring)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay.judge.offline_drafts import draft_reference, draft_tool_calls
from assay.judge.offline_lexical import BASELINE
from assay.judge.offline_questions import Source

# the question's stemmed terms: refund, damag, kettl, paid
ASKED = "When are refunds for damaged kettles paid?"
BEST = "Refunds for damaged kettles are paid by Kettlecorp within 14 days."  # all 4 terms


def _kinds(sources: list[Source], question: str = ASKED) -> list[str]:
    return [n.importance for n in draft_reference(question, sources).nuggets]


# --------------------------------------------------------------------------------------------- draft_reference


def test_no_passage_text_drafts_nothing() -> None:
    for sources in ([], [Source(id="p", text="   ")]):
        out = draft_reference(ASKED, sources)
        assert out.reason == f"{BASELINE}: no passage text"
        assert (out.answer, out.evidence, out.claims, out.nuggets) == ("", [], [], [])


def test_the_best_sentence_and_a_second_from_another_passage_holding_half_the_terms() -> None:
    first = Source(id="p1", text=f"Our shop opens at nine. {BEST}")
    second = Source(id="p2", text="Damaged  kettles\ngo back to the depot.")  # 2 of the 4 terms: exactly half
    out = draft_reference(ASKED, [first, second])
    assert out.reason == f"{BASELINE}: the sentences sharing most terms with the question (4 terms)"
    assert out.answer == f"{BEST} Damaged kettles go back to the depot."
    assert out.claims == [BEST, "Damaged kettles go back to the depot."]
    # evidence quotes each passage as written (its own spacing), the claims are the sentences
    assert [(e.passage_id, e.quote) for e in out.evidence] == [
        ("p1", BEST),
        ("p2", "Damaged  kettles\ngo back to the depot."),
    ]
    # the first is always vital; the second has no number and no name: okay
    assert [(n.text, n.importance) for n in out.nuggets] == [
        (BEST, "vital"),
        ("Damaged kettles go back to the depot.", "okay"),
    ]


def test_a_second_with_less_than_half_the_terms_is_left_out() -> None:
    three = Source(id="p1", text="Refunds for damaged kettles come quickly.")  # refund, damag, kettl
    one = Source(id="p2", text="Kettles ship in a box.")  # kettl: 1 * 2 < 3
    out = draft_reference(ASKED, [three, one])
    assert out.claims == ["Refunds for damaged kettles come quickly."]
    assert out.reason.endswith("(3 terms)")
    two = Source(id="p2", text="Damaged kettles ship in a box.")  # 2 * 2 >= 3: kept
    assert draft_reference(ASKED, [three, two]).claims == [
        "Refunds for damaged kettles come quickly.",
        "Damaged kettles ship in a box.",
    ]


def test_one_passage_gives_its_best_sentence_alone() -> None:
    only = Source(id="p1", text=f"Damaged kettles are refunds too. {BEST}")
    out = draft_reference(ASKED, [only])
    assert out.claims == [BEST] and [e.passage_id for e in out.evidence] == ["p1"]
    assert draft_reference(ASKED, [Source(id="p1", text=BEST)]).answer == BEST


def test_two_terms_against_one_is_exactly_half() -> None:
    two = Source(id="p1", text="Damaged kettles come back.")
    one = Source(id="p2", text="Kettles ship in a box.")
    assert draft_reference(ASKED, [two, one]).claims == ["Damaged kettles come back.", "Kettles ship in a box."]


def test_the_second_comes_from_another_passage_even_when_the_same_passage_has_a_better_sentence() -> None:
    same = Source(id="p1", text=f"{BEST} Damaged kettles are refunds too.")  # its second sentence holds 3 terms
    other = Source(id="p2", text="Kettles ship in a box.")  # 1 term: less than half of 4
    assert draft_reference(ASKED, [same, other]).claims == [BEST]


def test_ties_go_to_the_earlier_passage_then_the_earlier_sentence() -> None:
    a = Source(id="a", text="Kettles are paid. Kettles are refunds.")  # 2 terms each
    b = Source(id="b", text="Damaged kettles break.")  # 2 terms
    out = draft_reference(ASKED, [a, b])
    assert out.claims == ["Kettles are paid.", "Damaged kettles break."]
    assert [e.passage_id for e in out.evidence] == ["a", "b"]
    assert draft_reference(ASKED, [b, a]).claims == ["Damaged kettles break.", "Kettles are paid."]


def test_a_second_sentence_with_a_number_or_a_name_is_a_vital_nugget() -> None:
    first = Source(id="p1", text=BEST)
    number = Source(id="p2", text="Damaged kettles wait 3 days.")
    name = Source(id="p3", text="Damaged kettles go to Brixton.")
    assert _kinds([first, number]) == ["vital", "vital"]
    assert _kinds([first, name]) == ["vital", "vital"]


def test_a_question_sharing_no_term_gets_the_first_passage_s_first_sentence_alone() -> None:
    first = Source(id="p1", text="Our shop opens at nine. It closes at six.")
    other = Source(id="p2", text="The depot is far away.")
    out = draft_reference("What about penguins?", [first, other])
    assert out.claims == ["Our shop opens at nine."] and out.answer == "Our shop opens at nine."
    assert out.reason == f"{BASELINE}: the sentences sharing most terms with the question (0 terms)"
    assert [n.importance for n in out.nuggets] == ["vital"]


# -------------------------------------------------------------------------------------------- draft_tool_calls

CALCULATOR: dict[str, Any] = {"name": "calculator", "parameters": {"required": ["expression"]}}
WEIGHTS = "The tent weighs 12 kg. The stove weighs 5 kg."


def _call(question: str, passages: list[str], tools: list[dict[str, Any]]) -> list[tuple[str, dict[str, str]]]:
    return [(c.name, json.loads(c.arguments)) for c in draft_tool_calls(question, passages, tools).calls]


@pytest.mark.parametrize(
    "asked",
    [
        "How many more kg does the tent weigh?",
        "How much heavier is the tent?",
        "HOW MUCH OLDER is the tent?",
        "how many fewer kg does the stove weigh?",
        "What is the difference in weight?",
    ],
)
def test_a_difference_is_the_larger_minus_the_smaller(asked: str) -> None:
    assert _call(asked, [WEIGHTS], [CALCULATOR]) == [("calculator", {"expression": "12 - 5"})]
    # the smaller number first: still larger - smaller
    assert _call(asked, ["The stove weighs 5 kg.", "The tent weighs 12 kg."], [CALCULATOR]) == [
        ("calculator", {"expression": "12 - 5"})
    ]


@pytest.mark.parametrize("asked", ["What do they weigh in total?", "Their combined weight?", "Altogether?",
                                   "The sum of the weights?"])  # fmt: skip
def test_a_total_is_the_two_numbers_added_in_passage_order(asked: str) -> None:
    assert _call(asked, ["The stove weighs 5 kg.", "The tent weighs 12 kg."], [CALCULATOR]) == [
        ("calculator", {"expression": "5 + 12"})
    ]


@pytest.mark.parametrize(
    "asked",
    ["How heavy is the tent?", "Give a summary of the weights.", "What is the difference between them?",
     "How much is the tent?", "How many kg more?"],
)  # fmt: skip
def test_other_questions_need_no_call(asked: str) -> None:
    out = draft_tool_calls(asked, [WEIGHTS], [CALCULATOR])
    assert out.calls == []
    assert out.reason == f"{BASELINE}: no difference or total asked over two numbers, so no call."


def test_the_reason_of_a_call_names_the_difference_or_the_total() -> None:
    difference = draft_tool_calls("How much heavier is the tent?", [WEIGHTS], [CALCULATOR])
    assert difference.reason == f"{BASELINE}: the question asks for a difference of the passages' first two numbers."
    total = draft_tool_calls("What do they weigh in total?", [WEIGHTS], [CALCULATOR])
    assert total.reason == f"{BASELINE}: the question asks for a total of the passages' first two numbers."


def test_the_first_two_distinct_numbers_that_are_not_a_name_s() -> None:
    # "Skerry 2" is a model's number; 12 again is not a new number; 7 is the third: not used
    passages = ["The Skerry 2 tent weighs 12 kg and the Trail-Lite 3 12 kg too.", "Its pegs weigh 0.5 kg, poles 7."]
    assert _call("How much heavier is the tent?", passages, [CALCULATOR]) == [
        ("calculator", {"expression": "12 - 0.5"})
    ]
    # numbers inside words, versions and dates written with dots are not numbers of the text
    noisy = ["Model v2 runs release 1.2.3 on x86 hardware; it holds 40 litres and 2.5 more at most."]
    assert _call("What is that in total?", noisy, [CALCULATOR]) == [("calculator", {"expression": "40 + 2.5"})]


def test_fewer_than_two_numbers_is_no_call() -> None:
    out = draft_tool_calls("How much heavier is the tent?", ["The tent weighs 12 kg, 12 kg packed."], [CALCULATOR])
    assert out.calls == [] and "no difference or total asked over two numbers" in out.reason


def test_whole_numbers_are_written_without_a_decimal_point() -> None:
    assert _call("In total?", ["It weighs 2.0 kg and 3.25 kg."], [CALCULATOR]) == [
        ("calculator", {"expression": "2 + 3.25"})
    ]


@pytest.mark.parametrize(
    "tool",
    [
        {"name": "calc", "description": "Calculates a value.", "parameters": {"required": ["x"]}},
        {"name": "evaluate", "description": "Arithmetic on numbers.", "parameters": {"required": ["x"]}},
        {"name": "evaluate", "description": "Does the maths.", "parameters": {"required": ["x"]}},
        {"name": "evaluate", "description": "Reads one expression", "parameters": {"required": ["x"]}},
        {"name": "CALCULATOR", "parameters": {"required": ["x"]}},
    ],
)
def test_an_arithmetic_tool_by_name_or_description_with_one_required_argument(tool: dict[str, Any]) -> None:
    assert _call("In total?", [WEIGHTS], [tool]) == [(tool["name"], {"x": "12 + 5"})]


@pytest.mark.parametrize(
    "tool",
    [
        {"name": "calculator", "parameters": {"required": ["a", "b"]}},
        {"name": "calculator", "parameters": {"required": []}},
        {"name": "calculator", "parameters": {"required": "expression"}},
        {"name": "calculator", "parameters": {}},
        {"name": "calculator", "parameters": ["expression"]},
        {"name": "calculator"},
        {"name": "lookup", "description": "Finds an order.", "parameters": {"required": ["x"]}},
        {"description": "Looks up a row.", "parameters": {"required": ["x"]}},
    ],
)
def test_other_tools_are_not_arithmetic(tool: dict[str, Any]) -> None:
    out = draft_tool_calls("In total?", [WEIGHTS], [tool])
    assert out.calls == [] and out.reason == f"{BASELINE}: no arithmetic tool, so no call."


def test_the_first_arithmetic_tool_of_the_list_is_called() -> None:
    lookup = {"name": "lookup", "description": "Finds an order.", "parameters": {"required": ["order"]}}
    other = {"name": "math_engine", "parameters": {"required": ["formula"]}}
    assert _call("In total?", [WEIGHTS], [lookup, CALCULATOR, other]) == [("calculator", {"expression": "12 + 5"})]
