"""What ``assay import traces`` tells the user (assay.pipelines.traces.imports): each note word for word, the first
three of a list named and the rest counted, the run header's first start and last end, and the error when no trace
gives a line."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluate"))
from otlp_fixture import MS, T0, rag_trace, span, trace_id, write_lines
from passages_fixture import QUESTIONS, make_passages_golden

from assay.errors import FormatError, NothingProduced
from assay.formats.golden import GoldenSet
from assay.formats.traces import Trace, read_traces
from assay.pipelines.traces.imports import TracesImport, import_traces, latest_per_question, name_traces
from assay.types import Manifest, Question

LONG = "How long do customers have to return an item they bought in the spring sale last year?"  # 86 characters


def trace(n: int, question: str = "Where is my parcel?", *, start_ns: int = T0, latency_ms: float | None = 120.0,
          error: tuple[str, str] | None = None) -> Trace:  # fmt: skip
    return Trace(trace_id(n), n * 3 - 2, question, [], None, latency_ms, None, error, None, start_ns)


def line(query_id: str, *, error: bool = False) -> dict[str, object]:
    failed = {"error": {"kind": "error_status", "message": "x"}} if error else {}
    return {"query_id": query_id, "retrieved": []} | failed


def test_nothing_to_say_says_nothing() -> None:
    assert TracesImport(Path("t.jsonl"), [line("q1")]).notes() == []


def test_every_note_word_for_word() -> None:
    result = TracesImport(
        Path("t.jsonl"),
        [line("q1"), line("q2", error=True), line("q3", error=True)],
        unmatched=[trace(1, LONG), trace(2), trace(3, "Is it waterproof?"), trace(4), trace(5)],
        ambiguous=[(trace(6, LONG + " Or later?"), ("q2", "q3", "q7", "q9")), (trace(7), ("q1", "q4"))],
        duplicate_spans=4,
        attribute_warning="2 attribute value(s) of the wrong type: retrieval.documents (2).",
        repeated=2,
        without_ai=3,
        without_question=[7, 19, 40, 52],
        other_signal_lines=5,
    )
    assert result.failed == 2
    assert result.notes() == [
        "5 trace(s) match no golden question by query id or text (left out of the run: line 1: "
        f"{LONG[:60]!r}; line 4: 'Where is my parcel?'; line 7: 'Is it waterproof?'; and 2 more).",
        "2 trace(s) are as near to two golden questions or more, so a typo cannot tell which (left out; line 16: "
        f"{LONG[:60]!r} is as near to q2 and q3 and q7).",
        "4 span(s) read again (the same trace id and span id, as a collector's retry delivers them) counted once.",
        "2 attribute value(s) of the wrong type: retrieval.documents (2).",
        "2 trace(s) asked a question another, later trace asked too (the latest kept).",
        "4 trace(s) have no question in their root or retriever spans (left out; first span at line 7, 19, 40).",
        "3 trace(s) hold no OpenInference or GenAI span (left out).",
        "5 line(s) of logs or metrics skipped.",
        "2 trace(s) failed (an ERROR status on the root span): kept as failed lines.",
    ]


def test_three_unmatched_traces_are_all_named_and_none_is_said_to_be_more() -> None:
    result = TracesImport(Path("t.jsonl"), [line("q1")], unmatched=[trace(1), trace(2), trace(3)])
    assert result.notes() == [
        "3 trace(s) match no golden question by query id or text (left out of the run: line 1: 'Where is my "
        "parcel?'; line 4: 'Where is my parcel?'; line 7: 'Where is my parcel?')."
    ]


def test_the_header_spans_the_kept_traces_first_start_to_last_end(tmp_path: Path) -> None:
    """Three traces of 120 ms starting at 0 s, 2 s and 1 s (T0 is 2025-01-01T00:00:00Z): the run starts at the first
    start and ends at the end of the one started last (2.12 s, shown to the second)."""
    q1, q2, q3 = (QUESTIONS[q][0] for q in ("q1", "q2", "q3"))
    path = write_lines(
        tmp_path / "traces.jsonl",
        rag_trace(1, q1, ["A"], "a", start_ms=2000),
        rag_trace(2, q2, ["B"], "b", start_ms=0),
        rag_trace(3, q3, ["C"], "c", start_ms=1000),
    )
    result = import_traces(path, make_passages_golden())
    assert result.header == {"target": "traces traces.jsonl", "started": "2025-01-01T00:00:00+00:00",
                             "ended": "2025-01-01T00:00:02+00:00"}  # fmt: skip


def test_the_header_is_read_from_traces_that_say_when_they_ran(tmp_path: Path) -> None:
    """A root span with no times (0) says nothing of when the run started or ended."""
    spans = [span(1, 1, kind="CHAIN", start_ms=0, end_ms=0, attrs={"input.value": "Where?"})]
    for one in spans:
        one["startTimeUnixNano"] = one["endTimeUnixNano"] = "0"
    path = write_lines(tmp_path / "t.jsonl", spans, rag_trace(2, "When?", ["B"], "b", start_ms=61_000))
    result = import_traces(path)
    assert result.header == {"target": "traces t.jsonl", "started": "2025-01-01T00:01:01+00:00",
                             "ended": "2025-01-01T00:01:01+00:00"}  # fmt: skip


def test_no_trace_matching_the_golden_set_is_an_error_that_says_how_to_fix_it(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", rag_trace(1, "Where is my parcel?", ["x"], "y"),
                       rag_trace(2, "Is it blue?", ["x"], "y"))  # fmt: skip
    with pytest.raises(NothingProduced) as raised:
        import_traces(path, make_passages_golden())
    assert str(raised.value) == (
        f"{path}: none of its 2 trace(s) matches a golden question by query id or question text. Check that the "
        "traces ask this golden set's questions, or carry the golden query id on the root span (an assay.query_id "
        "attribute, or LangChain's config={'metadata': {'query_id': ...}})."
    )


def test_traces_without_questions_beside_a_golden_set_are_said_to_have_no_question(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", [span(1, 1, kind="CHAIN"), span(2, 2, kind="CHAIN")])
    with pytest.raises(NothingProduced) as raised:
        import_traces(path, make_passages_golden())
    assert str(raised.value) == (
        f"{path}: no trace gives a run line (2 have no question in their root or retriever spans). Record the "
        "question as the root span's input.value (OpenInference instrumentors do)."
    )


def test_the_header_of_traces_that_never_say_when_they_started_is_empty(tmp_path: Path) -> None:
    """A root span starting at 0 (no time recorded) that lasted 120 ms: neither a start nor an end in 1970."""
    root = span(1, 1, kind="CHAIN", attrs={"input.value": "Where?"})
    root["startTimeUnixNano"], root["endTimeUnixNano"] = "0", str(120 * MS)
    result = import_traces(write_lines(tmp_path / "t.jsonl", [root]))
    assert result.header == {"target": "traces t.jsonl", "started": None, "ended": None}


def test_the_end_is_the_start_plus_the_latency_in_nanoseconds(tmp_path: Path) -> None:
    """A trace of 999,999,000 ns ends within the first second (a microsecond short of the next one)."""
    root = span(1, 1, kind="CHAIN", attrs={"input.value": "Where?"})
    root["endTimeUnixNano"] = str(T0 + 999_999_000)
    late = span(2, 2, kind="CHAIN", attrs={"input.value": "When?"})
    late["endTimeUnixNano"] = str(T0 + 1_500 * MS)
    result = import_traces(write_lines(tmp_path / "t.jsonl", [root]))
    assert result.header["ended"] == "2025-01-01T00:00:00+00:00"
    result = import_traces(write_lines(tmp_path / "t2.jsonl", [root, late]))
    assert result.header["ended"] == "2025-01-01T00:00:01+00:00"


def test_the_import_counts_what_it_left_out_and_passes_the_readers_warning_on(tmp_path: Path) -> None:
    """A question matched exactly and delivered twice, a typo as near to two golden questions (ambiguous), a trace of
    plain HTTP spans, a chain without a question, a retriever's documents given as a string, and a line of metrics."""
    golden = GoldenSet(Manifest(assay_version="test"), questions=[
        Question(id="q-red", text="Is the red tent waterproof?"),
        Question(id="q-blue", text="Is the blue tent waterproof?"),
    ])  # fmt: skip
    exact = rag_trace(1, "Is the red tent waterproof?", ["Yes."], "Yes.", start_ms=0)
    typo = rag_trace(2, "Is the green tent waterproof?", ["No."], "No.", start_ms=100)
    bad_docs = span(5, 51, 50, kind="RETRIEVER", attrs={"retrieval.documents": "[{'page_content': 'a'}]"})
    odd = [span(5, 50, kind="CHAIN", start_ms=300, attrs={"input.value": "Is the red tent waterproof?"}), bad_docs]
    path = write_lines(tmp_path / "t.jsonl", exact, exact[:2], typo, [span(3, 30, name="GET /")],
                       [span(4, 40, kind="CHAIN", start_ms=200)], odd)  # fmt: skip
    path.write_text(path.read_text(encoding="utf-8") + json.dumps({"resourceMetrics": []}) + "\n", encoding="utf-8")
    result = import_traces(path, golden)
    assert [(line["query_id"], line["trace_id"]) for line in result.lines] == [("q-red", trace_id(5))]
    assert (result.spans, result.traces, result.duplicate_spans, result.repeated) == (10, 3, 2, 1)
    assert [(t.trace_id, ids) for t, ids in result.ambiguous] == [(trace_id(2), ("q-blue", "q-red"))]
    assert result.unmatched == [] and result.matched_by == {"question": 1}
    assert result.without_ai == 1 and result.other_signal_lines == 1
    assert result.without_question == [5]  # the file's fifth line
    warning = read_traces(path).problems.warning()
    assert warning is not None and "retrieval.documents" in warning and result.attribute_warning == warning


def test_the_size_limit_of_a_line_is_passed_to_the_reader(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "t.jsonl", rag_trace(1, "Where is my parcel?", ["x"], "y"))
    assert len(import_traces(path).lines) == 1
    with pytest.raises(FormatError, match="a line over the limit of 100 bytes"):
        import_traces(path, max_line=100)


def test_the_latest_started_trace_of_a_question_is_kept_in_whatever_order_they_come() -> None:
    """Traces 1 and 3 ask q1 (3 started later), traces 2 and 4 ask q2 at the same moment (4 has the larger id)."""
    t1, t3 = trace(1, start_ns=T0 + 50), trace(3, start_ns=T0 + 90)
    t2, t4 = trace(2, start_ns=T0), trace(4, start_ns=T0)
    named = [("q1", t3, "question"), ("q2", t4, "question"), ("q1", t1, "question"), ("q2", t2, "question")]
    kept, dropped = latest_per_question(named)
    assert [(qid, t.trace_id) for qid, t, _ in kept] == [("q2", trace_id(4)), ("q1", trace_id(3))]
    assert dropped == 2


def test_without_a_golden_set_the_kinds_count_own_query_ids_and_trace_ids() -> None:
    own = Trace(trace_id(9), 1, "Where?", [], None, None, None, None, "q-own", T0)
    matching = name_traces([trace(1), own, trace(2)], None)
    assert matching.kinds == Counter({"trace_id": 2, "query_id": 1})
    assert [(qid, kind) for qid, _, kind in matching.named] == [
        (f"t-{trace_id(1)}", "trace_id"), ("q-own", "query_id"), (f"t-{trace_id(2)}", "trace_id")
    ]  # fmt: skip
