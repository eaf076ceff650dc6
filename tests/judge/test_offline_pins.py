"""Pins of the offline judge's handlers (judge.offline), found by the mutation habit (scripts/mutation.sh): the
errors that name a missing or mistyped variable, the tool_arguments rule over JSON and non-JSON arguments, the nuggets'
order, the attribution's notes and the backend's answer, each written by hand."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from assay.errors import BackendError
from assay.judge.base import ChatRequest
from assay.judge.offline import OfflineBackend, offline_answer
from assay.judge.offline_lexical import BASELINE
from assay.text import canonical_json, count_tokens

PASSAGES = [{"id": "p1", "text": "The Brackenhow 4 tent weighs 3.2 kg."}]


def _message(prompt: str, variables: dict[str, Any]) -> str:
    with pytest.raises(BackendError) as info:
        offline_answer(prompt, variables)
    return str(info.value)


def test_a_missing_or_mistyped_variable_is_named_with_what_it_must_be_and_what_came() -> None:
    assert _message("relevance", {"question": 3, "passage": "x"}) == (
        "offline judge, prompt 'relevance': variable 'question' must be text, got int; pass it in the prompt's "
        "variables"
    )
    assert _message("claims", {}) == (
        "offline judge, prompt 'claims': variable 'text' must be text, got nothing; pass it in the prompt's variables"
    )
    assert "variable 'passages' must be a list of {id, text} objects, got str;" in _message(
        "relevance_listwise", {"question": "q", "passages": "p1"}
    )
    assert "variable 'passages' must be a list of {id, text} objects, got list;" in _message(
        "relevance_listwise", {"question": "q", "passages": ["p1"]}
    )
    for item in ({"id": 1, "text": "t"}, {"id": "p", "text": None}):
        assert "variable 'passages' must be a list of {id, text} objects with string id and text, got list;" in (
            _message("relevance_listwise", {"question": "q", "passages": [item]})
        )


def test_each_handler_that_checks_its_own_variables_says_what_it_needs() -> None:
    generation = {"passages": [], "question_type": "factoid"}
    assert "variable 'passages' must be a non-empty list of {id, text, heading} objects, got list" in _message(
        "question_generation", generation
    )
    plan = [{"number": 1, "dependency": "none", "passage": "p1"}]
    assert "variable 'passages' must be a non-empty list of {id, text, heading} objects" in _message(
        "conversation", {"passages": [], "turns": plan}
    )
    for turns in (None, [], ["turn"], "turns"):
        assert "variable 'turns' must be a non-empty list of {number, dependency, passage} objects" in _message(
            "conversation", {"passages": PASSAGES, "turns": turns}
        )
    rewrite = {"utterance": "u", "rewrite": "r", "answer": "a", "passages": PASSAGES}
    for history in (None, ["h"], "h"):
        assert "variable 'history' must be a list of {utterance, answer} objects" in _message(
            "rewrite_check", {**rewrite, "history": history}
        )
    for tools in (None, [{"description": "no name"}], ["calc"], [{"name": ""}]):
        assert "variable 'tools' must be a list of {name, description, parameters} objects" in _message(
            "tool_calls", {"question": "q", "passages": PASSAGES, "tools": tools}
        )
    for key in ("reference", "calls"):
        variables: dict[str, Any] = {"question": "q", "reference": [], "calls": []}
        for bad in (None, ["r1"], "r1"):
            variables[key] = bad
            assert f"variable {key!r} must be a list of {{id, name, arguments}} objects" in _message(
                "tool_arguments", variables
            )


def test_a_heading_is_read_only_when_it_is_text() -> None:
    # a heading that is not text is no heading: the same question as with none
    plain = offline_answer("question_generation", {"passages": PASSAGES, "question_type": "factoid"})
    numbered = [{**PASSAGES[0], "heading": 7}]
    assert offline_answer("question_generation", {"passages": numbered, "question_type": "factoid"}) == plain


def test_tool_arguments_pair_calls_of_the_same_tool_whose_arguments_hold_the_same_terms() -> None:
    reference = [
        {"id": "r1", "name": "calc", "arguments": {"expression": "3.2 + 12"}},
        {"id": "r2", "name": "look", "arguments": '{"item": "Brackenhow 4"}'},  # JSON text: read as its object
        {"id": "r3", "name": "echo", "arguments": "not json {"},  # not JSON: one argument, the text
        {"id": "r4", "name": "count", "arguments": 7},  # neither: one argument, the value
    ]
    calls = [
        {"id": "s1", "name": "calc", "arguments": {"expression": "12+3.20"}},
        {"id": "s2", "name": "calc", "arguments": {"expression": "3.2 + 13"}},
        {"id": "s3", "name": "look", "arguments": {"item": "brackenhow 4"}},
        {"id": "s4", "name": "echo", "arguments": {"input": "JSON not {"}},
        {"id": "s5", "name": "count", "arguments": {"input": 7.0}},
        {"id": "s6", "name": "look", "arguments": {"item": "Brackenhow 4", "shop": "x"}},
        {"id": "s7", "name": "plus", "arguments": {"expression": "3.2 + 12"}},  # r1's arguments, another tool
    ]
    got = offline_answer("tool_arguments", {"question": "q", "reference": reference, "calls": calls}).model_dump()
    assert got == {
        "reason": f"{BASELINE}: the same tool and, per argument, the same numbers and words.",
        "equivalent": [{"reference": "r1", "call": "s1"}, {"reference": "r2", "call": "s3"},
                       {"reference": "r3", "call": "s4"}, {"reference": "r4", "call": "s5"}],
    }  # fmt: skip


def test_nuggets_put_the_vital_sentences_first_and_skip_those_that_assert_nothing() -> None:
    answer = "It is light. The tent weighs 3.2 kg. Thanks! Campers like it."
    got = offline_answer("nuggets", {"question": "How heavy is the tent?", "answer": answer}).model_dump()
    assert got["nuggets"][0] == {"text": "The tent weighs 3.2 kg.", "importance": "vital"}
    assert all(n["text"] != "Thanks!" for n in got["nuggets"])
    assert [n["importance"] for n in got["nuggets"]] == sorted(
        (n["importance"] for n in got["nuggets"]), key=lambda level: level != "vital"
    )


def test_a_nugget_is_vital_for_a_number_a_name_or_a_question_term_and_every_sentence_is_read() -> None:
    answer = "Thanks! The Brackenhow sleeps four people. Campers say the tent is heavy. Campers like sunny weather."
    got = offline_answer("nuggets", {"question": "How heavy is the tent?", "answer": answer}).model_dump()
    assert got["nuggets"] == [
        {"text": "The Brackenhow sleeps four people.", "importance": "vital"},  # a name, no question term
        {"text": "Campers say the tent is heavy.", "importance": "vital"},  # question terms, no name or number
        {"text": "Campers like sunny weather.", "importance": "okay"},
    ]  # "Thanks!" asserts nothing: left out, and the sentences after it still read


def test_a_graded_passage_quotes_its_sentences_sharing_the_question_terms() -> None:
    question, passage = (
        "How much does the Brackenhow 4 tent weigh?",
        "The Brackenhow 4 tent weighs 3.2 kg. It is green.",
    )
    got = offline_answer("relevance", {"question": question, "passage": passage}).model_dump()
    assert (got["grade"], got["quotes"]) == (3, ["The Brackenhow 4 tent weighs 3.2 kg."])
    listed = offline_answer("relevance_listwise", {"question": question, "passages": [{"id": "p", "text": passage}]})
    assert listed.model_dump()["judgements"][0]["quotes"] == ["The Brackenhow 4 tent weighs 3.2 kg."]


def test_attribution_names_the_passages_each_sentence_uses_or_says_none_does() -> None:
    variables = {
        "passages": [{"id": "p1", "text": "The Brackenhow 4 tent weighs 3.2 kg."},
                     {"id": "p2", "text": "Express shipping costs $12."},
                     {"id": "p3", "text": "The Brackenhow 4 tent weighs 3.2 kg and sleeps four."}],
        "answer_sentences": [{"id": "a1", "text": "The Brackenhow 4 tent weighs 3.2 kg."},
                             {"id": "a2", "text": "Penguins migrate south."}],
    }  # fmt: skip
    got = offline_answer("attribution", variables).model_dump()["sentences"]
    assert got == [
        {"sentence_id": "a1", "passage_ids": ["p1", "p3"],
         "reason": f"{BASELINE}: passages holding half the sentence's terms or more; uses p1, p3."},
        {"sentence_id": "a2", "passage_ids": [],
         "reason": f"{BASELINE}: passages holding half the sentence's terms or more; no passage covers half of its "
                   "terms."},
    ]  # fmt: skip


def test_claim_check_says_which_text_each_statement_was_held_against() -> None:
    variables = {
        "answer": "The tent weighs 3.2 kg.",
        "reference": "The Brackenhow 4 tent weighs 3.2 kg and sleeps four.",
        "answer_claims": [{"id": "a1", "text": "The tent weighs 3.2 kg."}],
        "reference_claims": [{"id": "r1", "text": "The tent sleeps four people."}],
    }
    got = offline_answer("claim_check", variables).model_dump()
    ((a1,), (r1,)) = got["answer_claims"], got["reference_claims"]
    assert (a1["statement_id"], a1["verdict"]) == ("a1", "entailed") and a1["reason"].endswith(" (reference)")
    assert (r1["statement_id"], r1["verdict"]) == ("r1", "neutral") and r1["reason"].endswith(" (answer)")


def test_an_unknown_prompt_and_an_answer_that_does_not_validate_are_named() -> None:
    assert _message("poetry", {}) == (
        "the offline judge has no method for prompt 'poetry'; it knows answer_assessment, answer_relevance, "
        "attribution, claim_check, claims, contradiction, conversation, faithfulness, nuggets, question_critic, "
        "question_generation, reference_draft, relevance, relevance_listwise, rewrite_check, support, tool_arguments, "
        "tool_calls. Use a model judge (e.g. --judge openai/gpt-4o-mini) for other prompts"
    )
    twice = {"statements": [{"id": "s1", "text": "a b"}, {"id": "s1", "text": "c d"}], "passages": PASSAGES}
    assert _message("support", twice) == (
        "offline judge, prompt 'support': its answer does not validate (Value error, statement id 's1' appears "
        "twice; give exactly one entry per statement id); check the variables (an id given twice?)"
    )


def test_the_backend_answers_with_the_json_of_the_output_and_estimated_token_counts() -> None:
    variables = {"question": "How heavy is the tent?", "passage": "The tent weighs 3.2 kg."}
    messages = [{"role": "system", "content": "Grade it."}, {"role": "user", "content": "The question and passage."}]
    request = ChatRequest(model="offline", messages=messages, prompt_name="relevance", prompt_version="1",
                          variables=variables)  # fmt: skip
    response = asyncio.run(OfflineBackend().complete(request))
    expected = offline_answer("relevance", variables)
    assert json.loads(response.content) == expected.model_dump()
    assert response.prompt_tokens == count_tokens("Grade it.\nThe question and passage.")
    assert response.completion_tokens == count_tokens(response.content)
    assert (response.finish_reason, response.model) == ("stop", "offline")
    bare = ChatRequest(model="offline", messages=[], prompt_name="relevance", prompt_version="1", variables=variables)
    assert asyncio.run(OfflineBackend().complete(bare)).prompt_tokens == count_tokens(canonical_json(variables))
    # a message without content adds an empty line
    silent = ChatRequest(model="offline", messages=[{"role": "system"}, messages[1]], prompt_name="relevance",
                         prompt_version="1", variables=variables)  # fmt: skip
    assert asyncio.run(OfflineBackend().complete(silent)).prompt_tokens == count_tokens("\nThe question and passage.")
    assert (OfflineBackend.name, OfflineBackend.cache_model.split("/")[0]) == ("offline", "offline")
