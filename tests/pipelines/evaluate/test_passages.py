"""Runs that name passages by text or offsets (issue 20): every item form, alignment to the golden documents, labels
carried over by span, span metrics, RAGAS evaluation data, failed questions, runs in memory, and bad input.

Expected values are worked out by hand from the fixture's text (passages_fixture.py) or computed independently as
sets of characters."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from evaluate_fixture import write_run
from passages_fixture import DOCS, chunk_text, save_passages_golden

from assay.errors import FormatError
from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.pipelines.evaluate import EvalSettings, evaluate
from assay.pipelines.evaluate.runs.locate import ALIGNMENT_CACHE

FAST = EvalSettings(k_values=(1, 3), n_boot=200, add_labels=False)


def by_id_run() -> list[dict]:
    return [
        {"query_id": "q1", "retrieved": ["returns#1", "returns#2", "shipping#1"]},
        {"query_id": "q2", "retrieved": ["tent#2", "tent#1", "tent#3"]},
        {"query_id": "q3", "retrieved": ["shipping#1", "returns#4", "shipping#2"]},
    ]


def as_text(run: list[dict]) -> list[dict]:
    """The same run with each chunk given by its text only, upper-cased and with its spaces doubled."""
    return [
        {
            "query_id": line["query_id"],
            "retrieved": [{"text": chunk_text(c).upper().replace(" ", "  ")} for c in line["retrieved"]],
        }
        for line in run
    ]


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return save_passages_golden(tmp_path / "golden")


def metrics(result, name: str) -> dict[str, float | None]:  # type: ignore[no-untyped-def]
    run = next(r for r in result.runs if r.name == name)
    return {m: s.mean for m, s in run.metrics.items()}


def test_own_chunks_by_text_score_exactly_as_by_id(golden: Path) -> None:
    result, _ = evaluate(golden, {"ids": by_id_run(), "texts": as_text(by_id_run())}, settings=FAST)
    assert metrics(result, "ids") == metrics(result, "texts")
    texts = next(r for r in result.runs if r.name == "texts")
    assert texts.counts.matched_by == {"exact": 9}
    assert texts.passage_labels == {"chunk": 9}  # the top 3 of 3 queries, each a golden chunk


def test_every_item_form_in_one_run(golden: Path, tmp_path: Path) -> None:
    start = DOCS["tent"].index("The Brackenhow 4 tent")
    end = DOCS["tent"].index("four people.") + len("four people.")
    line = {
        "query_id": "q2",
        "retrieved": [
            {"doc_id": "tent", "start": start, "end": end},  # the weight paragraph by offsets: that chunk
            {"id": "my-7", "score": None, "text": "its FLYSHEET is rated to 3000 mm of water pressure"},
            "tent#3",
            {"text": "Nothing in this passage comes from the golden documents at all."},
        ],
    }
    path = write_run(tmp_path / "mixed.jsonl", [line])
    result, per_query = evaluate(golden, [path], settings=FAST)
    run = result.runs[0]
    assert run.counts.matched_by == {"exact": 1, "id": 1, "offsets": 1, "unmatched": 1}
    assert run.counts.unknown_chunk_ids == 0  # the unmatched item has a text: it is not an unknown id
    row = per_query[0]
    assert row.metrics["P@1"] == 1.0  # the offsets span is exactly chunk tent#1, graded 3
    assert row.metrics["P@3"] == pytest.approx(1 / 3)  # flysheet (0), tent#3 (unlabelled: not relevant)


def test_labels_carried_over_by_span(golden: Path) -> None:
    text = DOCS["returns"]
    two_paragraphs = text[text.index("Customers") : text.index("5 business days.") + 16]  # holds the evidence
    fragment_of_zero = "Clearance items and opened software"  # inside returns#4, graded 0 for q1
    heading_and_more = "## Exceptions Clearance items and opened software cannot be returned."  # reaches returns#3
    run = [{"query_id": "q1", "retrieved": [{"text": t} for t in (two_paragraphs, fragment_of_zero, heading_and_more)]}]
    result, per_query = evaluate(golden, {"mine": run}, settings=FAST)
    mine = result.runs[0]
    # rule 2 (evidence inside: the grade of returns#1, 3), rule 3a (a part of 0-graded text), rule 4 (unlabelled)
    assert mine.passage_labels == {"rule": 2, "unlabelled": 1}
    # label-based measures count golden chunks the passages show at least half of: the two paragraphs show returns#1
    # (3) and 72 of returns#2's 73 characters (1), the fragment 35 of returns#4's 55 (0), the last passage returns#3
    # (the word "Exceptions": 10 of 13 characters, unlabelled) in fourth place, below the top 3
    assert {g: n for g, n in mine.grade_histogram.items() if n} == {"3": 1, "1": 1, "0": 1}
    assert per_query[0].metrics["P@1"] == 1.0
    assert per_query[0].metrics["P@3"] == pytest.approx(2 / 3)
    assert mine.judged_at_k["3"] == 1.0


def chars(doc: str, start: int, end: int) -> set[tuple[str, int]]:
    return {(doc, i) for i in range(start, end)}


def test_span_metrics_against_character_sets(golden: Path) -> None:
    tent = DOCS["tent"]
    passage = "The Brackenhow 4 tent weighs 3.2 kg and sleeps four people. Its flysheet is rated"
    run = [{"query_id": "q2", "retrieved": [{"text": passage}, {"text": "Pitch the inner tent first"}]}]
    result, per_query = evaluate(golden, {"mine": run}, settings=FAST)
    row = per_query[0].metrics
    evidence = chars("tent", tent.index("weighs 3.2 kg"), tent.index("weighs 3.2 kg") + len("weighs 3.2 kg"))
    first = chars("tent", tent.index("The Brackenhow 4"), tent.index("is rated") + len("is rated"))
    second = chars("tent", tent.index("Pitch"), tent.index("first in") + len("first"))
    for k, retrieved in ((1, first), (3, first | second)):
        both = retrieved & evidence
        assert row[f"span_recall@{k}"] == pytest.approx(len(both) / len(evidence))
        assert row[f"span_precision@{k}"] == pytest.approx(len(both) / len(retrieved))
        assert row[f"span_iou@{k}"] == pytest.approx(len(both) / len(retrieved | evidence))
    assert result.runs[0].metrics["span_recall@1"].n_unscored == 0


def test_graded_chunks_as_evidence_variant(golden: Path) -> None:
    settings = EvalSettings(k_values=(1,), n_boot=200, add_labels=False, metrics=("span_recall@1|g>=1",))
    run = [{"query_id": "q3", "retrieved": ["shipping#2"]}]
    _, per_query = evaluate(golden, {"r": run}, settings=settings)
    standard, express = (len(chunk_text(c)) for c in ("shipping#1", "shipping#2"))
    assert per_query[0].metrics["span_recall@1|g>=1"] == pytest.approx(express / (standard + express))


def test_a_failed_question_scores_0_on_what_it_retrieved(golden: Path) -> None:
    """A failed call retrieved nothing: 0 on the retrieval measures (as an empty list scores), in the mean; a measure
    of an answer it never gave (none here without a judge) would be unscored (``system_failed``)."""
    run = [*by_id_run()[:2], {"query_id": "q3", "error": {"kind": "timeout", "message": "no answer in 30 s"}}]
    result, per_query = evaluate(golden, {"sys": run}, settings=FAST)
    assert result.runs[0].counts.failed == 1
    failed = next(r for r in per_query if r.query_id == "q3")
    assert set(failed.metrics.values()) == {0.0} and failed.unscored == {}
    ndcg = result.runs[0].metrics["ndcg@3"]
    others = [r.metrics["ndcg@3"] for r in per_query if r.query_id != "q3"]
    assert ndcg.n_scored == 3 and ndcg.mean == pytest.approx(sum(v or 0.0 for v in others) / 3)
    assert any("failed on 1 question" in w for w in result.warnings)


def ragas_rows() -> list[dict]:
    return [
        {"user_input": "how long do CUSTOMERS have to return an item ?", "response": "30 days.",
         "retrieved_contexts": [chunk_text("returns#1"), chunk_text("returns#2")], "reference": "30 days"},
        {"user_input": "How much does the Brackenhow 4 tent weigh?", "response": "3.2 kg",
         "retrieved_contexts": [chunk_text("tent#1")], "retrieved_context_ids": ["tent#1"]},
        {"user_input": "Which colours does the tent come in?", "retrieved_contexts": ["green"], "response": "Green"},
        {"query_id": "q3", "user_input": "express cost", "retrieved_contexts": [chunk_text("shipping#2")],
         "response": "$12"},
    ]  # fmt: skip


def test_ragas_evaluation_data_jsonl_and_csv(golden: Path, tmp_path: Path) -> None:
    jsonl = tmp_path / "ragas_eval.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in ragas_rows()), encoding="utf-8")
    table = tmp_path / "ragas_eval.csv"
    with table.open("w", newline="", encoding="utf-8") as out:
        columns = ["query_id", "user_input", "retrieved_contexts", "retrieved_context_ids", "response", "reference"]
        writer = csv.DictWriter(out, columns)
        writer.writeheader()
        for row in ragas_rows():
            writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()})
    result, per_query = evaluate(golden, [("j", jsonl), ("c", table)], settings=FAST)
    for run in result.runs:
        assert run.counts.unmatched_rows == 1
        assert run.counts.queries_evaluated == 3 and run.counts.with_answer == 3
    assert any("j: 1 RAGAS row" in w and "line 3" in w and "colours" in w for w in result.warnings)
    assert any("c: 1 RAGAS row" in w and "line 4" in w for w in result.warnings)  # the header is CSV line 1
    rows = {(r.run, r.query_id): r.metrics for r in per_query}
    for name in ("j", "c"):
        assert rows[(name, "q1")]["P@1"] == 1.0 and rows[(name, "q2")]["P@1"] == 1.0
        assert rows[(name, "q3")]["P@1"] == 1.0  # matched by its query_id, whatever its question text


def test_bad_items_name_file_and_line(golden: Path, tmp_path: Path) -> None:
    cases = [
        ({"query_id": "q1", "retrieved": [{}]}, "has no id, text or offsets"),
        ({"query_id": "q1", "retrieved": [{"doc_id": "tent", "start": 5, "end": 9999}]}, "outside document 'tent'"),
        ({"query_id": "q1", "retrieved": [{"doc_id": "nope", "start": 0, "end": 3}]}, "unknown doc_id 'nope'"),
        ({"query_id": "q1", "retrieved": [{"doc_id": "tent", "start": 3}]}, "needs doc_id, start and end"),
    ]
    for line, problem in cases:
        path = write_run(tmp_path / "bad.jsonl", [by_id_run()[1], line])
        with pytest.raises(FormatError, match=problem) as caught:
            evaluate(golden, [path], settings=FAST)
        assert str(caught.value).startswith(f"{path}:3")  # header, a good line, the bad one
    ragas = tmp_path / "bad_ragas.jsonl"
    ragas.write_text(json.dumps({"retrieved_contexts": ["x"], "response": "y"}) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match="user_input") as caught:
        evaluate(golden, [ragas], settings=FAST)
    assert str(caught.value).startswith(f"{ragas}:1")
    assert not (golden / "passages.jsonl").exists()


def test_passages_judged_once_then_reused(golden: Path) -> None:
    outside = "Our stores open at nine every morning and close at six in the evening."
    run = [{"query_id": "q1", "retrieved": [{"text": outside}, "returns#1"]}]
    settings = EvalSettings(k_values=(1, 3), n_boot=200, metrics=("P@1", "P@3"))
    first_judge = make_judge("offline")
    first, _ = evaluate(golden, {"r": run}, judge=first_judge, settings=settings)
    assert first.runs[0].passage_labels == {"judged": 1, "chunk": 1}
    assert first.usage["relevance"].calls == 1
    saved = GoldenSet.load(golden)
    assert [p.match for p in saved.passages] == ["unmatched"] and len(saved.passages[0].labels) == 1
    assert saved.passages[0].labels[0].provenance.model == "offline"
    second, _ = evaluate(golden, {"r": run}, judge=make_judge("offline"), settings=settings)
    assert second.runs[0].passage_labels == {"stored": 1, "chunk": 1}
    assert "relevance" not in second.usage  # nothing asked again


def test_alignment_cache_is_reused(golden: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = {"t": as_text(by_id_run())}
    evaluate(golden, run, settings=FAST)
    assert (golden / ALIGNMENT_CACHE).is_file()
    from assay.corpus import align

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("located again instead of read from the cache")

    monkeypatch.setattr(align.Aligner, "locate", refuse)
    result, _ = evaluate(golden, run, settings=FAST)
    assert result.runs[0].counts.matched_by == {"exact": 9}


def test_length_note_when_chunkings_differ(golden: Path) -> None:
    sentences = [{"query_id": "q1", "retrieved": [{"text": "within 30 days of delivery"}]}]
    result, _ = evaluate(golden, {"short": sentences, "chunks": by_id_run()}, settings=FAST)
    assert any(w.startswith("The runs cut their text differently") for w in result.warnings)
    same, _ = evaluate(golden, {"a": by_id_run(), "b": as_text(by_id_run())}, settings=FAST)
    assert not any("cut their text differently" in w for w in same.warnings)


def test_chunks_an_undecided_passage_reaches_are_judged_first(golden: Path) -> None:
    """The heading "## Exceptions" (returns#3) has no label for q1: with a judge it is graded and kept in the golden
    set, then the rule labels the passage (it lies wholly in graded chunks now); no passage call is made."""
    passage = "## Exceptions\n\nClearance items and opened software cannot be returned."
    run = [{"query_id": "q1", "retrieved": [{"text": passage}]}]
    settings = EvalSettings(k_values=(1,), n_boot=200, metrics=("P@1",))
    result, _ = evaluate(golden, {"r": run}, judge=make_judge("offline"), settings=settings)
    assert result.runs[0].passage_labels == {"rule": 1}
    saved = GoldenSet.load(golden)
    new = [label for label in saved.qrels if (label.query_id, label.chunk_id) == ("q1", "returns#3")]
    assert len(new) == 1 and new[0].provenance.model == "offline" and new[0].grade is not None
    assert result.usage["relevance"].calls == 1 and not saved.passages  # the chunk, not the passage


def test_coverage_and_citations_follow_passages(golden: Path) -> None:
    """A passage covering more than half of a nugget's supporting chunk meets the nugget; a citation of the run's own
    id is read as the passage it names."""
    gold = GoldenSet.load(golden)
    from assay.types import Nugget, NuggetSupport

    gold.questions[1].nuggets = [Nugget(id="n1", text="The tent weighs 3.2 kg.")]
    gold.nuggets = [NuggetSupport(query_id="q2", nugget_id="n1", chunk_ids=["tent#1"])]
    weight = chunk_text("tent#1")
    half = weight[: len(weight) // 2 - 2]  # less than half of the chunk
    run = [
        {"query_id": "q2", "retrieved": [{"id": "mine-1", "text": weight[3:]}], "citations": ["mine-1"]},
    ]
    short = [{"query_id": "q2", "retrieved": [{"id": "mine-1", "text": half}]}]
    from assay.pipelines.evaluate.runs.read import load_runs

    at = DOCS["tent"].index(weight)
    # the span runs from "Brackenhow" (after "The " and the space the slice kept) to "people" (the final period is
    # not a word)
    expected = f"p:tent:{at + 4}-{at + len(weight) - 1}"
    assert load_runs([("r", run)], gold)[0].lines["q2"].citations == [expected]
    settings = EvalSettings(k_values=(1,), n_boot=200, add_labels=False, metrics=("coverage_recall@1",))
    _, rows = evaluate(gold, {"long": run, "short": short}, settings=settings)
    values = {row.run: row.metrics["coverage_recall@1"] for row in rows}
    assert values == {"long": 1.0, "short": 0.0}
