"""What a system returns, pinned by hand: a pydantic-like ``model_dump`` and nested dataclasses, the rewrite (or
query) kept, passages given as text objects, every refusal's words, and a JSON pointer that stops at a list's end or
at a value that is not an object."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from assay.targets.outputs import TargetFailure, normalize, resolve_pointer


def _refusal(value: Any) -> str:
    with pytest.raises(TargetFailure) as failed:
        normalize(value)
    assert failed.value.kind == "invalid_output" and not failed.value.transient
    return failed.value.message


class Model:
    """A pydantic-like reply: ``model_dump`` says what it holds (its attributes are not read)."""

    answer = "from the attribute"

    def model_dump(self) -> dict[str, Any]:
        return {"answer": "from model_dump", "contexts": ["p"]}


@dataclass
class Passage:
    id: str
    score: float


@dataclass
class Reply:
    answer: str
    retrieved: list[Passage] = field(default_factory=list)


def test_a_model_dump_is_read_and_nested_dataclasses_become_objects() -> None:
    assert normalize(Model()) == {"retrieved": [{"text": "p"}], "answer": "from model_dump", "citations": []}
    reply = Reply("yes", [Passage("c1", 2.0), Passage("c2", 1.0)])
    assert normalize(reply)["retrieved"] == [{"id": "c1", "score": 2.0}, {"id": "c2", "score": 1.0}]


def test_the_systems_rewrite_or_query_is_kept_when_it_says_something() -> None:
    assert normalize({"answer": "a", "rewrite": "what is X?"})["rewrite"] == "what is X?"
    assert normalize({"answer": "a", "query": "what is Y?"})["rewrite"] == "what is Y?"
    assert normalize({"answer": "a", "rewrite": "R", "query": "Q"})["rewrite"] == "R"
    assert "rewrite" not in normalize({"answer": "a", "rewrite": "  "})
    assert "rewrite" not in normalize({"answer": "a", "rewrite": 3})


def test_passages_given_as_text_objects_are_kept() -> None:
    assert normalize({"retrieved": [{"text": "passage one"}]})["retrieved"] == [{"text": "passage one"}]
    assert normalize({"contexts": [{"text": "t", "score": 1}]})["retrieved"] == [{"text": "t", "score": 1}]


def test_each_refusal_names_what_was_wrong() -> None:
    assert _refusal({"retrieved": ["c1"], "contexts": ["t"]}) == (
        "returned both 'retrieved' and 'contexts': give one of them"
    )
    nine = {f"k{i}": i for i in range(9)}
    assert _refusal(nine) == (
        "returned none of contexts, retrieved, answer (keys: ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'])"
    )
    assert _refusal({"retrieved": "c1"}) == "'retrieved' is a str, not a list"
    assert _refusal({"contexts": ["a", 5]}) == ("retrieved item 1 is a int: give an id, or an object with id or text")
    seven = {key: 1 for key in "abcdefg"}
    assert _refusal({"retrieved": [seven]}) == (
        "retrieved item 0 has no 'id', 'text' or 'doc_id' string (keys: ['a', 'b', 'c', 'd', 'e', 'f'])"
    )
    assert _refusal({"answer": "a", "citations": "c1"}) == "'citations' is a str, not a list"
    assert _refusal({"answer": "a", "citations": ["c1", 2]}) == "'citations' holds something other than strings"
    assert _refusal({"answer": "a", "usage": 5}) == "'usage' is a int, not an object"


def test_a_pointer_stops_at_a_lists_end_and_at_a_value_that_is_not_an_object() -> None:
    document = {"docs": ["a", "b"], "text": "abc"}
    assert resolve_pointer(document, "") is document
    assert resolve_pointer(document, "/docs/1") == "b"
    for pointer, stopped in (("/docs/2", "2"), ("/docs/a", "a"), ("/text/b", "b")):
        with pytest.raises(TargetFailure) as failed:
            resolve_pointer(document, pointer)
        assert failed.value.message == f"the response has nothing at {pointer!r} (stopped at {stopped!r})"
