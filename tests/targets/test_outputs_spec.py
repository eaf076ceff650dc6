"""What a system returns becomes run fields (or an invalid_output failure naming why); specs keep secrets out."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from assay.targets.outputs import TargetFailure, normalize, resolve_pointer
from assay.targets.spec import TargetSpec, expand, redact


class Reply(BaseModel):
    retrieved: list[Any]
    answer: str


class Attributes:
    def __init__(self) -> None:
        self.contexts = ["a", "b"]
        self.answer = "x"


def test_forms_of_reply() -> None:
    assert normalize("just text") == {"retrieved": [], "answer": "just text", "citations": []}
    assert normalize(Reply(retrieved=["c1", {"doc_id": "d", "start": 1, "end": 9}], answer="y"))["retrieved"] == [
        "c1", {"doc_id": "d", "start": 1, "end": 9}]  # fmt: skip
    assert normalize(Attributes())["retrieved"] == [{"text": "a"}, {"text": "b"}]
    mixed = normalize({"contexts": ["t", {"id": "c2", "text": "u", "score": 2}], "usage": {"cost_usd": 1e-4}})
    assert mixed == {"retrieved": [{"text": "t"}, {"id": "c2", "text": "u", "score": 2}], "answer": None,
                     "citations": [], "usage": {"cost_usd": 1e-4}}  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"retrieved": ["c1"], "contexts": ["t"]}, "both 'retrieved' and 'contexts'"),
        ({"citations": ["c1"]}, "none of contexts, retrieved, answer"),
        ({"contexts": "one string"}, "'contexts' is a str, not a list"),
        ({"retrieved": [3]}, "retrieved item 0 is a int"),
        ({"retrieved": [{"score": 1}]}, "retrieved item 0 has no 'id', 'text' or 'doc_id'"),
        ({"retrieved": [{"id": "c", "score": "high"}]}, "score 'high', not a number"),
        ({"answer": 5}, "'answer' is a int"),
        ({"answer": "a", "citations": [1]}, "'citations' holds something other than strings"),
        (42, "returned a int without contexts"),
    ],
)
def test_bad_replies_are_invalid_output(reply: Any, message: str) -> None:
    with pytest.raises(TargetFailure, match=message) as caught:
        normalize(reply)
    assert caught.value.kind == "invalid_output" and not caught.value.transient


def test_json_pointer() -> None:
    doc = {"a/b": {"m~n": [10, {"x": 1}]}, "": 5}
    assert resolve_pointer(doc, "/a~1b/m~0n/1/x") == 1
    assert resolve_pointer(doc, "") is doc and resolve_pointer(doc, "/") == 5
    with pytest.raises(TargetFailure, match="nothing at '/a~1b/m~0n/7'"):
        resolve_pointer(doc, "/a~1b/m~0n/7")


def test_secrets_are_referenced_expanded_and_redacted() -> None:
    spec = TargetSpec("https://api/x?k=${KEY}", body='{"t": "${TOKEN}"}', headers=(("Auth", "B ${TOKEN}"),))
    assert spec.references() == ["KEY", "TOKEN"]
    assert spec.display() == "https://api/x?k=${KEY}" and "TOKEN" not in str(spec.identity()["headers"])
    assert expand("a ${KEY} b", {"KEY": "s3"}) == "a s3 b"
    assert redact("got s3 and s3cret", {"KEY": "s3", "T": "s3cret"}) == "got ${KEY} and ${T}"
    assert TargetSpec("https://u:hunter2@api/x").display() == "https://u:***@api/x"
    assert TargetSpec("https://u:${PW}@api/x").display() == "https://u:${PW}@api/x"
