"""The RAGAS export read the way RAGAS 0.4.3 reads it, without importing RAGAS.

RAGAS documents (ragas.dataset_schema, ragas.testset.synthesizers.testset_schema): a ``SingleTurnSample`` is a
pydantic model whose fields are all optional (user_input, retrieved_contexts, reference_contexts,
retrieved_context_ids, reference_context_ids, response, multi_responses, reference, rubrics, persona_name,
query_style, query_length) and that ignores unknown fields; a ``RagasTestsetSample`` is ``eval_sample`` plus a required
``synthesizer_name``. ``from_jsonl`` turns every line into a dict. ``Testset.from_list`` takes
``synthesizer_name`` out of each row (a row without one is refused) and reads the rest as a single-turn sample when
``user_input`` is not a list; ``EvaluationDataset.from_list`` reads each row as a single-turn sample. The models
below (named Ragas...) are written here from those documented fields.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError
from transfer_fixture import make_golden

from assay.pipelines.transfer import export_golden, import_beir, import_ragas
from assay.pipelines.transfer.export import synthesizer_name
from assay.types import Question


class RagasSingleTurnSample(BaseModel):
    model_config = ConfigDict(extra="ignore")

    user_input: str | None = None
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    retrieved_context_ids: list[str | int] | None = None
    reference_context_ids: list[str | int] | None = None
    response: str | None = None
    multi_responses: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str] | None = None
    persona_name: str | None = None
    query_style: str | None = None
    query_length: str | None = None


class RagasTestsetSample(BaseModel):
    eval_sample: RagasSingleTurnSample
    synthesizer_name: str


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]  # every line is a sample


def read_as_testset(path: Path) -> list[RagasTestsetSample]:
    samples = []
    for row in _lines(path):
        if "synthesizer_name" not in row:
            raise KeyError("synthesizer_name")  # what RAGAS's Testset.from_list raises
        name = row.pop("synthesizer_name")
        if not isinstance(row.get("user_input"), str):
            raise TypeError("user_input is not a string: RAGAS would read a multi-turn sample")
        samples.append(RagasTestsetSample(eval_sample=RagasSingleTurnSample(**row), synthesizer_name=name))
    return samples


def read_as_evaluation_dataset(path: Path) -> list[RagasSingleTurnSample]:
    return [RagasSingleTurnSample(**row) for row in _lines(path)]


def test_the_ragas_export_is_a_ragas_testset_and_an_evaluation_dataset(tmp_path: Path) -> None:
    golden = make_golden()
    export_golden(golden, "ragas", tmp_path / "ragas")
    path = tmp_path / "ragas" / "ragas.jsonl"
    testset = read_as_testset(path)
    assert [s.eval_sample.user_input for s in testset] == [q.text for q in golden.questions]
    assert [s.synthesizer_name for s in testset] == ["assay_" + q.type.replace("-", "_") for q in golden.questions]
    table = golden.qrels_map()
    for sample, question in zip(testset, golden.questions, strict=True):
        eval_sample = sample.eval_sample
        assert eval_sample.reference == question.reference_answer
        ids = [str(i) for i in eval_sample.reference_context_ids or []]
        assert {c for c, g in table.get(question.id, {}).items() if g >= 2} == set(ids)
        assert eval_sample.reference_contexts == [golden.chunk(c).text for c in ids]
    dataset = read_as_evaluation_dataset(path)
    assert [s.model_dump() for s in dataset] == [s.eval_sample.model_dump() for s in testset]


def test_the_checking_reader_refuses_what_ragas_refuses(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"user_input": "q?", "reference_contexts": ["c"]}) + "\n")
    with pytest.raises(KeyError, match="synthesizer_name"):
        read_as_testset(path)
    path.write_text(json.dumps({"user_input": "q?", "reference_contexts": "c", "synthesizer_name": "s"}) + "\n")
    with pytest.raises(ValidationError):
        read_as_testset(path)


def test_synthesizer_name_survives_a_ragas_round_trip_and_imported_queries_get_one(tmp_path: Path) -> None:
    fixtures = Path(__file__).parents[2] / "fixtures" / "transfer"
    back = import_ragas(fixtures / "ragas" / "testset.jsonl").golden
    export_golden(back, "ragas", tmp_path / "ragas", min_grade=1)
    names = [s.synthesizer_name for s in read_as_testset(tmp_path / "ragas" / "ragas.jsonl")]
    assert names[:2] == ["single_hop_specifc_query_synthesizer", "multi_hop_abstract_query_synthesizer"]
    assert names[2] == "assay_unknown"  # the third row has no synthesizer_name: its type is unknown
    beir = import_beir(fixtures / "beir", source="human").golden
    export_golden(beir, "ragas", tmp_path / "beir-ragas", min_grade=1)
    assert {s.synthesizer_name for s in read_as_testset(tmp_path / "beir-ragas" / "ragas.jsonl")} == {"assay_unknown"}


def test_a_question_type_with_a_hyphen_becomes_a_ragas_style_name() -> None:
    question = Question(id="q", text="?", type="multi-hop", provenance={"source": "generator"})
    assert synthesizer_name(question) == "assay_multi_hop"


def test_binary_qrels_are_told_to_export_grade_one(tmp_path: Path) -> None:
    golden = make_golden()
    golden.qrels = [label.model_copy(update={"grade": 1}) for label in golden.qrels if label.grade is not None]
    summary = export_golden(golden, "ragas", tmp_path / "default")
    assert any("have no chunk graded >= 2" in n and "export with --min-grade 1" in n for n in summary.notes)
    export_golden(golden, "ragas", tmp_path / "binary", min_grade=1)
    samples = read_as_testset(tmp_path / "binary" / "ragas.jsonl")
    labelled = {label.query_id for label in golden.qrels}
    assert {s.eval_sample.user_input for s in samples if s.eval_sample.reference_contexts} == {
        q.text for q in golden.questions if q.id in labelled
    }
