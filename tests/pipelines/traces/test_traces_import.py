"""Traces in, a run out (assay.pipelines.traces.imports): matching to golden questions by query id then by words,
unmatched traces counted and named, a repeated question kept once (the latest), ids of their own without a golden
set, and the written run read back by the evaluator (passages located by text, system facts kept)."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluate"))
from otlp_fixture import T0, rag_trace, span, trace_id, write_lines
from passages_fixture import DOCS, QUESTIONS, chunk_text, make_passages_golden

from assay.errors import NothingProduced
from assay.formats.jsonl import read_header
from assay.pipelines.evaluate.runs.read import load_run
from assay.pipelines.traces.imports import import_traces, trace_query_id, write_traces_run

Q1, Q2, Q3 = (QUESTIONS[q][0] for q in ("q1", "q2", "q3"))


def traffic(tmp_path: Path) -> Path:
    """Five traces: q1 with its id in the metadata, q2 reworded in case and punctuation, q3 twice (the later one
    kept), and a question the golden set does not have."""
    return write_lines(
        tmp_path / "traces.jsonl",
        rag_trace(1, "Where is my parcel?", [chunk_text("shipping#1")], "On its way.", start_ms=0),
        rag_trace(2, "how long do customers have to RETURN an item", [chunk_text("returns#1")], "30 days.",
                  start_ms=100, metadata={"query_id": "q1"}),
        rag_trace(3, f"  {Q2.upper()}  ", [chunk_text("tent#1"), chunk_text("tent#2")], "3.2 kg.", start_ms=200),
        rag_trace(4, Q3, [chunk_text("shipping#1")], "Not sure.", start_ms=300),
        rag_trace(5, Q3, [chunk_text("shipping#2")], "$12.", start_ms=400),
    )  # fmt: skip


def test_traces_are_matched_by_query_id_then_by_words(tmp_path: Path) -> None:
    result = import_traces(traffic(tmp_path), make_passages_golden())
    assert [(line["query_id"], line["trace_id"]) for line in result.lines] == [
        ("q1", trace_id(2)), ("q2", trace_id(3)), ("q3", trace_id(5))
    ]  # fmt: skip
    assert result.matched_by == {"query_id": 1, "question": 2}
    assert result.traces == 5 and result.spans == 15 and result.repeated == 1
    assert [t.trace_id for t in result.unmatched] == [trace_id(1)]
    notes = " ".join(result.notes())
    assert "1 trace(s) match no golden question by query id or text (left out of the run: line 1: 'Where is my" in notes
    assert "1 trace(s) asked a question another, later trace asked too (the latest kept)" in notes


def test_a_query_id_the_golden_set_lacks_falls_back_to_the_question_text(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "t.jsonl",
        rag_trace(1, Q2, [chunk_text("tent#1")], "3.2 kg.", start_ms=0, metadata={"query_id": "q-gone"}),
        rag_trace(2, "Where is my parcel?", [chunk_text("shipping#1")], "?", start_ms=100,
                  metadata={"query_id": "q-old"}),
    )  # fmt: skip
    result = import_traces(path, make_passages_golden())
    assert [(line["query_id"], line["trace_id"]) for line in result.lines] == [("q2", trace_id(1))]
    assert result.matched_by == {"question": 1}
    assert [t.trace_id for t in result.unmatched] == [trace_id(2)]  # its id is no golden question's, nor its text


def test_a_line_holds_the_traces_facts_and_its_question(tmp_path: Path) -> None:
    line = import_traces(traffic(tmp_path), make_passages_golden()).lines[1]
    assert line == {
        "query_id": "q2",
        "retrieved": [{"id": "p0", "score": 1.0, "text": chunk_text("tent#1")},
                      {"id": "p1", "score": 0.9, "text": chunk_text("tent#2")}],
        "answer": "3.2 kg.",
        "latency_ms": 120.0,
        "usage": {"prompt_tokens": 50.0, "completion_tokens": 10.0},
        "question": f"  {Q2.upper()}  ".strip(),
        "trace_id": trace_id(3),
    }  # fmt: skip


def test_without_a_golden_set_every_trace_keeps_an_id_of_its_own(tmp_path: Path) -> None:
    result = import_traces(traffic(tmp_path))
    ids = [line["query_id"] for line in result.lines]
    # the fixture's trace ids all begin with twelve zeros: too alike to be cut, each keeps its whole id
    assert ids == [f"t-{trace_id(1)}", "q1", f"t-{trace_id(3)}", f"t-{trace_id(4)}", f"t-{trace_id(5)}"]
    assert result.matched_by == {"query_id": 1, "trace_id": 4}
    assert [line["question"] for line in result.lines][-2:] == [Q3, Q3]  # the same question twice: item 1 merges
    assert import_traces(traffic(tmp_path)).lines == result.lines  # the same file, the same run


def test_a_trace_id_is_cut_to_twelve_hex_digits_when_that_is_enough(tmp_path: Path) -> None:
    spans = rag_trace(1, "q?", ["A"], "a") + rag_trace(2, "r?", ["B"], "b")
    for one in spans:
        one["traceId"] = ("ab" if one["traceId"] == trace_id(1) else "cd") * 16
    ids = [line["query_id"] for line in import_traces(write_lines(tmp_path / "t.jsonl", spans)).lines]
    assert ids == ["t-abababababab", "t-cdcdcdcdcdcd"] == [trace_query_id("ab" * 16), trace_query_id("cd" * 16)]


def test_the_written_run_is_evaluated_with_its_passages_located(tmp_path: Path) -> None:
    golden = make_passages_golden()
    out = tmp_path / "run.jsonl"
    result = import_traces(traffic(tmp_path), golden)
    assert write_traces_run(result, out) == 3
    header = read_header(out)
    assert header is not None and header.target == "traces traces.jsonl"
    assert header.started == "2025-01-01T00:00:00+00:00" and header.ended == "2025-01-01T00:00:00+00:00"
    loaded = load_run(out, golden)
    assert sorted(loaded.lines) == ["q1", "q2", "q3"]
    assert loaded.lines["q2"].ranked == ["tent#1", "tent#2"]  # trace texts located: the golden chunks themselves
    assert loaded.counts.matched_by == {"exact": 4}
    assert loaded.trace.latencies == [120.0, 120.0, 120.0]
    assert loaded.trace.usages[0] == {"prompt_tokens": 50.0, "completion_tokens": 10.0}


def test_a_failed_trace_is_a_failed_line(tmp_path: Path) -> None:
    spans = [span(1, 1, kind="CHAIN", attrs={"input.value": Q1}, error="ValueError: no index")]
    result = import_traces(write_lines(tmp_path / "t.jsonl", spans), make_passages_golden())
    assert result.lines[0]["error"] == {"kind": "error_status", "message": "ValueError: no index"}
    assert result.failed == 1 and "1 trace(s) failed" in " ".join(result.notes())
    write_traces_run(result, tmp_path / "run.jsonl")
    assert load_run(tmp_path / "run.jsonl", make_passages_golden()).counts.failed == 1


def test_no_matching_trace_raises_and_writes_nothing(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", rag_trace(1, "Where is my parcel?", ["x"], "y"))
    with pytest.raises(NothingProduced, match="none of its 1 trace\\(s\\) matches a golden question"):
        import_traces(path, make_passages_golden())


def test_traces_without_questions_only_raise(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", [span(1, 1, kind="CHAIN")])
    with pytest.raises(NothingProduced, match="no trace gives a run line \\(1 have no question"):
        import_traces(path)


def test_every_line_of_a_large_import_is_json_and_the_docs_stay_whole(tmp_path: Path) -> None:
    """Texts with quotes, newlines and non-ASCII survive the trip to the run file unchanged."""
    text = DOCS["returns"] + '\n"quoted" — naïve café ✓'
    path = write_lines(tmp_path / "t.jsonl", rag_trace(1, Q1, [text], "ok"))
    write_traces_run(import_traces(path), tmp_path / "run.jsonl")
    rows = [json.loads(raw) for raw in (tmp_path / "run.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows[1]["retrieved"][0]["text"] == text and T0 > 0


def test_the_bench_traces_are_read_whole(tmp_path: Path) -> None:
    """bench/traffic.py's synthetic traces (5 spans, 10 documents each, batches straddling lines) import whole."""
    bench = runpy.run_path(str(Path(__file__).resolve().parents[3] / "bench" / "traffic.py"), run_name="bench")
    bench["write_traces"](tmp_path / "t.jsonl", 60, 0)  # 300 spans: the second line holds the end of trace 51
    result = import_traces(tmp_path / "t.jsonl")
    assert result.spans == 300 and len(result.lines) == 60
    assert all(len(line["retrieved"]) == 10 and "score" in line["retrieved"][0] for line in result.lines)
    assert result.lines[0]["usage"] == {"prompt_tokens": 1800.0, "completion_tokens": 60.0, "cost_usd": 0.0003}
