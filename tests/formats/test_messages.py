"""An agent's chat messages read into steps, answer and context (assay.formats.messages), rule by rule, in the
OpenAI and the RAGAS shapes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay.formats.messages import MessagesError, steps_from_messages


def _openai_agent() -> list[dict[str, Any]]:
    hits_1 = [{"id": "c1", "text": "A was founded in 1900.", "score": 9.1}, {"id": "c9", "text": "Oslo."}]
    hits_2 = [{"id": "c2", "page_content": "B was founded in 1950."}, {"id": "c1", "text": "A was founded in 1900."}]
    return [
        {"role": "system", "content": "You answer with the tools."},
        {"role": "user", "content": "How much older is A than B?"},
        {"role": "assistant", "content": None, "usage": {"prompt_tokens": 50, "completion_tokens": 9},
         "tool_calls": [{"id": "t1", "type": "function",
                         "function": {"name": "kb", "arguments": json.dumps({"query": "A founded"})}}]},
        {"role": "tool", "tool_call_id": "t1", "content": json.dumps(hits_1)},
        {"role": "assistant", "content": "",
         "tool_calls": [{"id": "t2", "type": "function", "function": {"name": "kb", "arguments": '{"q": "B"}'}},
                        {"id": "t3", "type": "function",
                         "function": {"name": "calculator", "arguments": '{"expression": "1950 - 1900"}'}}]},
        {"role": "tool", "tool_call_id": "t3", "content": "50"},  # answered out of order, by id
        {"role": "tool", "tool_call_id": "t2", "content": json.dumps(hits_2)},
        {"role": "assistant",
         "content": [{"type": "text", "text": "A is "}, {"type": "text", "text": "50 years older."}]},
    ]  # fmt: skip


def test_openai_messages_give_every_step_the_answer_and_the_context() -> None:
    found = steps_from_messages(_openai_agent())
    assert [s["kind"] for s in found.steps] == ["llm", "retrieval", "llm", "retrieval", "tool", "llm"]
    assert found.steps[0] == {"kind": "llm", "prompt_tokens": 50, "completion_tokens": 9}
    first, second, calc = found.steps[1], found.steps[3], found.steps[4]
    assert first == {"kind": "retrieval", "tool": "kb", "query": "A founded",
                     "retrieved": [{"id": "c1", "text": "A was founded in 1900.", "score": 9.1},
                                   {"id": "c9", "text": "Oslo."}]}  # fmt: skip
    assert second["query"] == "B" and [p["id"] for p in second["retrieved"]] == ["c2", "c1"]
    assert calc == {"kind": "tool", "name": "calculator", "arguments": {"expression": "1950 - 1900"}, "output": "50"}
    assert found.answer == "A is 50 years older."
    # each passage once, in the order first seen, scores left out (two searches' scores are not on one scale)
    assert found.context == [{"id": "c1", "text": "A was founded in 1900."}, {"id": "c9", "text": "Oslo."},
                             {"id": "c2", "text": "B was founded in 1950."}]  # fmt: skip


def test_ragas_messages_answer_the_earliest_open_call() -> None:
    messages = [
        {"type": "human", "content": "Weather in Oslo, and what does the guide say?"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "weather", "args": {"city": "Oslo"}},
                                                     {"name": "guide", "args": {"topic": "Oslo"}}]},
        {"type": "tool", "content": "12 C"},
        {"type": "tool", "content": json.dumps(["Oslo is the capital.", "It has fjords."])},
        {"type": "ai", "content": "12 C; Oslo is the capital."},
    ]  # fmt: skip
    found = steps_from_messages(messages)
    weather, guide = found.steps[1], found.steps[2]
    assert weather == {"kind": "tool", "name": "weather", "arguments": {"city": "Oslo"}, "output": "12 C"}
    assert guide["kind"] == "retrieval" and guide["query"] == "Oslo"  # the only string argument
    assert found.context == [{"text": "Oslo is the capital."}, {"text": "It has fjords."}]
    assert found.answer == "12 C; Oslo is the capital."


@pytest.mark.parametrize(
    ("output", "search"),
    [
        (json.dumps([]), False),  # an empty list is no passage list
        (json.dumps([{"title": "x"}]), False),  # objects without text or id
        (json.dumps({"text": "x"}), False),  # one object, not a list
        ("plain words", False),
        (json.dumps([{"id": 7}]), True),
    ],
)
def test_rule_3_a_search_is_told_by_its_output_not_its_name(output: str, search: bool) -> None:
    messages = [
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": output},
    ]
    assert (steps_from_messages(messages).steps[1]["kind"] == "retrieval") is search


def test_an_answer_is_only_a_final_message_that_calls_no_tool() -> None:
    messages = [{"role": "assistant", "content": "let me look", "tool_calls": [{"id": "a", "function": {"name": "x"}}]}]
    assert steps_from_messages(messages).answer is None


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        (["hi"], "message 0 is a str"),
        ([{"role": "assistant", "tool_calls": {"name": "x"}}], "message 0: tool_calls is a dict"),
        ([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}], "tool call 0 has no name"),
        ([{"role": "assistant", "tool_calls": [{"name": "x", "args": "x ="}]}], "arguments 'x =' are not JSON"),
        ([{"role": "assistant", "tool_calls": [{"name": "x", "args": [1]}]}], "arguments are a list"),
        ([{"role": "tool", "content": "x"}], "message 0 is a tool reply to no call"),
        ([{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "x"}}]},
          {"role": "tool", "tool_call_id": "b", "content": "x"}], "no tool call has id 'b'"),
    ],
)  # fmt: skip
def test_bad_messages_name_the_message(messages: list[Any], said: str) -> None:
    with pytest.raises(MessagesError, match=None) as caught:
        steps_from_messages(messages)
    assert said in str(caught.value)


def test_usage_from_langchain_metadata_and_zero_tokens_kept() -> None:
    messages = [
        {"type": "ai", "content": "a", "response_metadata": {"token_usage": {"input_tokens": 0, "output_tokens": 3}}},
        {"role": "assistant", "content": "b", "usage": {"prompt_tokens": -1, "completion_tokens": "5"}},
    ]
    steps = steps_from_messages(messages).steps
    assert steps == [{"kind": "llm", "prompt_tokens": 0, "completion_tokens": 3}, {"kind": "llm"}]


def test_a_tool_reply_that_is_not_text_is_kept_as_json_and_an_id_never_meets_a_text() -> None:
    messages = [
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "kb", "arguments": '{"k": "x", "n": 1}'}},
                                             {"id": "b", "function": {"name": "count"}}]},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps([{"id": "same"}, {"text": "same"}])},
        {"role": "tool", "tool_call_id": "b", "content": {"z": 1, "a": 2}},
        {"role": "assistant", "content": [{"type": "image"}, "plain"]},
    ]  # fmt: skip
    found = steps_from_messages(messages)
    search, count = found.steps[1], found.steps[2]
    assert search["query"] == "x"  # the only string argument
    assert found.context == [{"id": "same"}, {"text": "same"}]  # an id and a text that read alike are two passages
    assert count["output"] == '{"a": 2, "z": 1}'
    assert found.answer is None  # content parts without text give no answer


def test_a_search_with_no_string_argument_has_no_query_and_a_tool_reply_needs_its_call() -> None:
    messages = [
        {"role": "assistant", "tool_calls": [{"id": 5, "function": {"name": "kb", "arguments": '{"k": 3}'}}]},
        {"role": "tool", "content": json.dumps(["p"])},  # no tool_call_id: the earliest open call
    ]
    search = steps_from_messages(messages).steps[1]
    assert search == {"kind": "retrieval", "tool": "kb", "retrieved": [{"text": "p"}]}
    with pytest.raises(MessagesError) as caught:
        steps_from_messages([{"role": "tool", "tool_call_id": "z", "content": "x"}])
    assert str(caught.value) == "message 0 is a tool reply to no call (no tool call has id 'z')"
    with pytest.raises(MessagesError) as caught:
        steps_from_messages([{"role": "tool", "content": "x"}])
    assert str(caught.value) == "message 0 is a tool reply to no call"
    with pytest.raises(MessagesError) as caught:
        steps_from_messages([{"role": "assistant", "tool_calls": [7]}])
    assert str(caught.value) == "message 0, tool call 0 is a int, not an object"
    long_bad = "x" * 100
    with pytest.raises(MessagesError) as caught:
        steps_from_messages([{"role": "assistant", "tool_calls": [{"name": "t", "args": long_bad}]}])
    assert str(caught.value) == f"message 0, tool call 0: arguments {'x' * 60!r} are not JSON"
