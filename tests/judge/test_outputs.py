"""Output models: reason first, constrained labels, strict-mode JSON schemas."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, ValidationError

from assay.judge.json_schema import strict_schema
from assay.judge.outputs import (
    OUTPUT_MODELS,
    AnswerRelevance,
    Attribution,
    ListwiseRelevance,
    QuestionCritique,
    RelevanceGrade,
    SupportAssignments,
)

MODELS = sorted(OUTPUT_MODELS.items())
IDS = [name for name, _ in MODELS]
# Keywords OpenAI's strict json_schema mode accepts; anything else in a schema is refused or silently ignored.
ALLOWED = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref", "$defs",
    "title", "description",
}  # fmt: skip
LABELS = {"grade", "score", "support", "verdict", "passage_ids", "answerable", "importance", "question"}


def _objects(node: Any, path: str = "#") -> list[tuple[str, dict[str, Any]]]:
    """Every schema node (dicts that describe a value) with its JSON pointer."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        found.append((path, node))
        for name, prop in node.get("properties", {}).items():
            found += _objects(prop, f"{path}/properties/{name}")
        for name, sub in node.get("$defs", {}).items():
            found += _objects(sub, f"{path}/$defs/{name}")
        if "items" in node:
            found += _objects(node["items"], f"{path}/items")
        for i, sub in enumerate(node.get("anyOf", [])):
            found += _objects(sub, f"{path}/anyOf/{i}")
    return found


def test_output_models_are_named_by_their_class() -> None:
    assert all(model.__name__ == name for name, model in MODELS)
    assert len(OUTPUT_MODELS) == 21


@pytest.mark.parametrize(("name", "model"), MODELS, ids=IDS)
def test_strict_schema_is_openai_strict_valid(name: str, model: type[BaseModel]) -> None:
    schema = strict_schema(model)
    assert schema["type"] == "object"
    jsonschema.Draft202012Validator.check_schema(schema)
    for path, node in _objects(schema):
        assert set(node) <= ALLOWED, f"{name} {path}: {set(node) - ALLOWED}"
        if node.get("type") == "object":
            assert node["additionalProperties"] is False, f"{name} {path}"
            assert sorted(node["required"]) == sorted(node["properties"]), f"{name} {path}"
        if "$ref" in node:
            assert node["$ref"].removeprefix("#/$defs/") in schema["$defs"]


@pytest.mark.parametrize(("name", "model"), MODELS, ids=IDS)
def test_pydantic_schema_already_forbids_extras_and_requires_all(name: str, model: type[BaseModel]) -> None:
    """Every field is required except ``quotes``, which defaults to none: a relevance answer cached before quotes (or
    from a backend without a strict schema) still validates; the strict schema sent to the model requires it."""
    for path, node in _objects(model.model_json_schema()):
        if node.get("type") == "object":
            assert node.get("additionalProperties") is False, f"{name} {path}"
            assert sorted(node.get("required", [])) == sorted(set(node["properties"]) - {"quotes"}), f"{name} {path}"


@pytest.mark.parametrize(("name", "model"), MODELS, ids=IDS)
def test_reason_comes_before_every_label(name: str, model: type[BaseModel]) -> None:
    for path, node in _objects(model.model_json_schema()):
        fields = list(node.get("properties", {}))
        if "reason" in fields:
            labels = [f for f in fields if f in LABELS]
            assert all(fields.index("reason") < fields.index(f) for f in labels), f"{name} {path}: {fields}"
    nested = any("reason" in n.get("properties", {}) for _, n in _objects(model.model_json_schema()))
    assert nested or name in ("Claims", "Nuggets")


def test_strict_schema_turns_small_ranges_into_enums_and_leaves_the_model_alone() -> None:
    schema = strict_schema(QuestionCritique)
    assert schema["properties"]["answerable"]["enum"] == [1, 2, 3, 4, 5]
    assert strict_schema(RelevanceGrade)["properties"]["grade"]["enum"] == [0, 1, 2, 3]
    assert QuestionCritique.model_json_schema()["properties"]["answerable"]["minimum"] == 1


def test_a_valid_answer_passes_the_strict_schema_and_the_model() -> None:
    answer = {"judgements": [{"id": "c1", "reason": "states it", "grade": 3, "quotes": ["It is 3."]}]}
    jsonschema.validate(answer, strict_schema(ListwiseRelevance))
    assert ListwiseRelevance.model_validate(answer).by_id()["c1"].quotes == ["It is 3."]
    without = {"judgements": [{"id": "c1", "reason": "states it", "grade": 3}]}
    with pytest.raises(jsonschema.ValidationError):  # the strict schema asks every judgement for its quotes
        jsonschema.validate(without, strict_schema(ListwiseRelevance))
    assert ListwiseRelevance.model_validate(without).by_id()["c1"].quotes == []


@pytest.mark.parametrize(
    ("model", "bad"),
    [
        (RelevanceGrade, {"reason": "r", "grade": 4}),
        (RelevanceGrade, {"reason": "r", "grade": -1}),
        (RelevanceGrade, {"grade": 2}),
        (RelevanceGrade, {"reason": "r", "grade": 2, "confidence": 0.9}),
        (AnswerRelevance, {"reason": "r", "score": 2}),
        (QuestionCritique, {"reason": "r", "answerable": 0, "self_contained": 3, "clear": 3}),
        (
            SupportAssignments,
            {"assignments": [{"statement_id": "s", "reason": "r", "support": "yes", "passage_ids": []}]},
        ),
    ],
)
def test_out_of_scale_missing_and_extra_fields_are_rejected(model: type[BaseModel], bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(bad)


@pytest.mark.parametrize(
    ("model", "item", "key"),
    [
        (ListwiseRelevance, {"id": "c1", "reason": "r", "grade": 1}, "judgements"),
        (
            SupportAssignments,
            {"statement_id": "s1", "reason": "r", "support": "none", "passage_ids": []},
            "assignments",
        ),
        (Attribution, {"sentence_id": "a1", "reason": "r", "passage_ids": []}, "sentences"),
    ],
)
def test_an_id_twice_is_rejected(model: type[BaseModel], item: dict[str, Any], key: str) -> None:
    model.model_validate({key: [item]})
    with pytest.raises(ValidationError, match="appears twice"):
        model.model_validate({key: [item, item]})
