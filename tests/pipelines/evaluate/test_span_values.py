"""The span metrics of ``assay eval`` per query (scoring.spans) on a hand-made run line and a stand-in span index:
which names are the defaults, how passages found in no document count, and the reasons of unscored values."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from assay.corpus.align import Span
from assay.pipelines.evaluate.runs.loaded import RunLine
from assay.pipelines.evaluate.runs.locate import Located
from assay.pipelines.evaluate.scoring.spans import default_span_names, span_values


def span(doc: str, start: int, end: int) -> Span:
    return Span(doc_id=doc, start=start, end=end, match="exact", score=1.0)


class Index:
    """What scoring.spans reads of a SpanIndex: evidence spans and graded chunk spans per question."""

    def __init__(self, evidence: dict[str, list[Span]], graded: dict[str, list[tuple[Span, int]]]) -> None:
        self._evidence, self._graded = evidence, graded

    def evidence(self, qid: str) -> list[Span]:
        return self._evidence.get(qid, [])

    def graded(self, qid: str) -> list[tuple[Span, int]]:
        return self._graded.get(qid, [])


def golden(*qids: str) -> Any:
    return SimpleNamespace(questions=[SimpleNamespace(id=qid) for qid in qids])


def run(*lines: RunLine) -> Any:
    return SimpleNamespace(lines={line.query_id: line for line in lines}, path=Path("run.jsonl"))


def test_default_names_are_against_evidence_when_some_question_has_it() -> None:
    index = Index({"q2": [span("d", 0, 5)]}, {"q1": [(span("d", 0, 5), 3)]})
    assert default_span_names([1, 3], golden("q1", "q2"), index) == [  # type: ignore[arg-type]
        "span_recall@1", "span_precision@1", "span_iou@1", "span_recall@3", "span_precision@3", "span_iou@3",
    ]  # fmt: skip


def test_default_names_fall_back_to_chunks_graded_two_or_more() -> None:
    index = Index({}, {"q1": [(span("d", 0, 5), 1)], "q2": [(span("d", 5, 9), 2)]})  # a grade of exactly 2 counts
    assert default_span_names([5], golden("q1", "q2"), index) == [  # type: ignore[arg-type]
        "span_recall@5|g>=2", "span_precision@5|g>=2", "span_iou@5|g>=2",
    ]  # fmt: skip
    only_ones = Index({}, {"q1": [(span("d", 0, 5), 1)]})
    assert default_span_names([5], golden("q1"), only_ones) == []  # type: ignore[arg-type]


def test_passages_in_no_document_count_their_text_length_in_the_retrieved_characters() -> None:
    # a: located d[0:10]; b: matched nowhere (5 characters of text); c: never located (3); e: unknown, no text (0)
    line = RunLine(
        query_id="q1",
        ranked=["a", "b", "c", "e"],
        scores={},
        texts={"b": "bbbbb", "c": "ccc"},
        located={"a": Located("a", "exact", span("d", 0, 10), None), "b": Located("b", "unmatched", None, "bbbbb")},
    )
    index = Index({"q1": [span("d", 0, 20)]}, {})
    names = ["span_recall@4", "span_precision@4", "span_iou@4", "span_precision@1"]
    values = span_values(run(line), index, names)["q1"]  # type: ignore[arg-type]
    # R = 10 located + 5 + 3 + 0 outside = 18 characters, E = 20, R ∩ E = 10
    assert values.metrics == {
        "span_recall@4": pytest.approx(10 / 20),
        "span_precision@4": pytest.approx(10 / 18),
        "span_iou@4": pytest.approx(10 / (18 + 20 - 10)),
        "span_precision@1": pytest.approx(1.0),
    }
    assert values.unscored == {}


def test_graded_spans_below_the_grade_are_not_evidence_and_unscored_values_give_their_reason() -> None:
    line = RunLine(query_id="q1", ranked=["a"], scores={}, located={"a": Located("a", "exact", span("d", 0, 10), None)})
    index = Index({}, {"q1": [(span("d", 0, 10), 2), (span("d", 10, 30), 1)]})
    values = span_values(run(line), index, ["span_recall@1|g>=2", "span_recall@1", "span_iou@1|g>=3"])  # type: ignore[arg-type]
    assert values["q1"].metrics == {"span_recall@1|g>=2": 1.0, "span_recall@1": None, "span_iou@1|g>=3": None}
    assert values["q1"].unscored == {"span_recall@1": "no_evidence_spans", "span_iou@1|g>=3": "no_graded_chunks"}
