"""Values read from trace attributes (assay.formats.trace_values): the tally of wrong types and its one warning,
finite numbers, texts inside JSON values, flattened attributes as trees, and chat messages."""

from __future__ import annotations

import json
import math

from assay.formats.trace_values import (
    AttributeProblems,
    assistant_text,
    finite,
    first_number,
    last_user_message,
    message_text,
    messages,
    text_value,
    tree,
)


def test_problems_are_counted_per_attribute_and_kind_the_commonest_named_first() -> None:
    problems = AttributeProblems()
    assert problems.warning() is None and problems.total() == 0
    problems.add("a.score", "high", "a number", 3)
    problems.add("a.score", "low", "a number", 9)  # a different string: another kind of problem
    problems.add("b.id", [1], "a string", 5)
    problems.add("b.id", [2], "a string", 7)
    other = AttributeProblems()
    other.add("b.id", [3], "a string", 1)
    other.add("c.flag", True, "a string", 4)
    problems.merge(other)
    assert problems.total() == 6
    assert problems.warning() == (
        "6 attribute value(s) of the wrong type, left out (the rest of each trace kept): "
        "b.id: 3 x a list where a string belongs (first at line 5); "
        "a.score: 1 x a string 'high' where a number belongs (first at line 3); "
        "a.score: 1 x a string 'low' where a number belongs (first at line 9); "
        "c.flag: 1 x a boolean where a string belongs (first at line 4)."
    )


def test_a_warning_names_four_kinds_and_counts_the_others() -> None:
    problems = AttributeProblems()
    values = [{"k": 1}, 7, 2.5, math.inf, None, "x" * 30]
    for i, value in enumerate(values):
        problems.add(f"attr{i}", value, "text", i + 1)
    warning = problems.warning()
    assert warning is not None
    assert warning.startswith("6 attribute value(s) of the wrong type")
    assert "attr0: 1 x an object where text belongs (first at line 1); attr1: 1 x an integer where" in warning
    assert "attr2: 1 x a number where text belongs" in warning and "attr3: 1 x inf where text belongs" in warning
    assert warning.endswith("(first at line 4); and 2 more kind(s).")
    shown = AttributeProblems()
    shown.add("z", None, "text", 1)
    shown.add("y", "x" * 30, "text", 2)
    assert shown.warning() == (
        "2 attribute value(s) of the wrong type, left out (the rest of each trace kept): "
        "y: 1 x a string 'xxxxxxxxxxxxxxxxxxxx' where text belongs (first at line 2); "
        "z: 1 x a value where text belongs (first at line 1)."
    )


def test_finite_numbers() -> None:
    assert [finite(v) for v in (3, 2.5, True, "4", math.nan, -math.inf, None)] == [
        3.0,
        2.5,
        None,
        None,
        None,
        None,
        None,
    ]
    assert first_number({"a": "x", "b": 0, "c": 5}, "a", "b", "c") == 0.0
    assert first_number({"a": "x"}, "a", "missing") is None


def test_text_values_plain_or_inside_json() -> None:
    keys = ("question", "input")
    assert text_value("  plain  ", keys) == "plain"
    assert text_value("   ", keys) is None and text_value(3, keys) is None
    assert text_value('"quoted "', keys) == "quoted"
    assert text_value('" "', keys) is None
    assert text_value("{not json", keys) == "{not json"
    assert text_value("[1, 2]", keys) == "[1, 2]"  # no JSON object or string: the text itself
    assert text_value('"[1, 2]"', keys) == "[1, 2]"
    assert text_value(json.dumps({"input": "second", "question": "first"}), keys) == "first"
    assert text_value(json.dumps({"question": " ", "input": "kept"}), keys) == "kept"
    assert text_value(json.dumps({"other": "only one"}), keys) == "only one"
    assert text_value(json.dumps({"a": "one", "b": "two"}), keys) is None
    assert text_value(json.dumps({"a": 1, "b": " "}), keys) is None
    assert text_value(json.dumps({"k": [1]}), ()) is None


def test_flat_attributes_as_a_tree() -> None:
    attrs = {"docs.0": "replaced by its children", "docs.0.document.id": "a", "docs.0.document.score": 1,
             "docs.1.document.id": "b", "docsx.0": "no",
             "docs": "whole", "other": 1}  # fmt: skip
    assert tree(attrs, "docs") == {"0": {"document": {"id": "a", "score": 1}}, "1": {"document": {"id": "b"}}}
    assert tree({"m.0.role": "user", "m.0.content": "hi"}, "m") == {"0": {"role": "user", "content": "hi"}}


def test_messages_from_json_or_flattened() -> None:
    as_json = {"msgs": json.dumps([{"role": "user", "content": "q1"}, "noise", {"role": "assistant", "content": "a"}])}
    assert messages(as_json, "msgs") == [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a"}]
    assert messages({"msgs": "not json"}, "msgs") == [] and messages({"msgs": '{"a": 1}'}, "msgs") == []
    flat = {"msgs.10.role": "user", "msgs.2.role": "user", "msgs.2.content": "second", "msgs.10.content": "tenth",
            "msgs.x.role": "user", "msgs.3": "plain"}  # fmt: skip
    assert messages(flat, "msgs") == [{"role": "user", "content": "second"}, {"role": "user", "content": "tenth"}]
    assert last_user_message(flat, "msgs") == "tenth"
    assert last_user_message({}, "msgs") is None


def test_message_texts_in_each_shape() -> None:
    assert message_text({"content": "  plain "}) == "plain"
    contents = {
        "contents": {
            "1": {"message_content": {"text": "two"}},
            "0": {"message_content": {"text": "one"}},
            "x": {"message_content": {"text": "no"}},
            "2": "bad",
            "3": {"message_content": {}},
        }
    }
    assert message_text(contents) == "one\ntwo"
    parts = {"content": " ", "parts": [{"type": "text", "content": "a"}, {"type": "image", "content": "b"},
                                       {"text": "c"}, "bad", {"type": "text", "content": 5}]}  # fmt: skip
    assert message_text(parts) == "a\nc"
    flat_parts = {"parts": {"1": {"content": "second"}, "0": {"content": "first"}, "k": {"content": "no"}}}
    assert message_text(flat_parts) == "first\nsecond"
    assert message_text({"parts": [{"content": "  "}]}) is None and message_text({}) is None


def test_assistant_text_joins_the_assistants_and_models_messages() -> None:
    said = [
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "q"},
        {"content": "two"},
        {"role": "model", "parts": [{"type": "text", "content": "three"}]},
        {"role": "assistant", "content": " "},
    ]
    assert assistant_text({"out": json.dumps(said)}, "out") == "one\ntwo\nthree"
    assert assistant_text({"out": json.dumps([{"role": "user", "content": "q"}])}, "out") is None


def test_numbered_contents_and_parts_go_in_number_order_and_odd_entries_give_nothing() -> None:
    contents = {"contents": {"10": {"message_content": {"text": "tenth"}}, "2": {"message_content": {"text": "2nd"}},
                             "3": {"image": "no text"}}}  # fmt: skip
    assert message_text(contents) == "2nd\ntenth"
    parts = {"parts": {"10": {"content": "tenth"}, "2": {"content": "2nd"}}}
    assert message_text(parts) == "2nd\ntenth"
    assert messages({"msgs": "5"}, "msgs") == []  # JSON, but no list of messages
