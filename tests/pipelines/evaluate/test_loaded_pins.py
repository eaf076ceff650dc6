"""Pins of a loaded run (runs/loaded.py): where a line's passage was found and its text, the passages a line's
searches add to what the labels must grade, what each line tells of the system (SystemTrace), and the passage
length summary of the report (expected values computed by hand)."""

from __future__ import annotations

from pathlib import Path

from evaluate_fixture import answer_id, answer_text, make_golden

from assay.pipelines.evaluate.runs.loaded import LoadedRun, RunLine, Search, SystemTrace, length_summary
from assay.pipelines.evaluate.runs.locate import Located
from assay.pipelines.evaluate.runs.sources import RawLine
from assay.results import RunCounts
from assay.types import LlmStep, RetrievalStep, RunError, ToolStep

TOOL = ToolStep(kind="tool", name="calculator", arguments={"expression": "1 + 1"}, output="2")
LLM = LlmStep(kind="llm", model="m")


def _line(**fields: object) -> RunLine:
    return RunLine(query_id="q00", ranked=["a", "b", "c"], scores={}, **fields)  # type: ignore[arg-type]


def _at(unit: str, text: str | None) -> Located:
    return Located(unit=unit, match="exact", span=None, text=text)


# ------------------------------------------------------------------------------------------------- RunLine


def test_found_prefers_the_context_then_the_searches_then_nothing() -> None:
    context, searched = _at("a", "from the context"), _at("a", "from a search")
    line = _line(located={"a": context}, step_found={"a": searched, "s": _at("s", "only searched")})
    assert line.found("a") is context
    assert line.found("s") == _at("s", "only searched")
    assert line.found("zzz") is None


def test_searched_is_the_context_top_then_each_search_top_without_repeats() -> None:
    steps = [
        Search(query="first", units=("b", "x", "y")),
        TOOL,
        Search(query="second", units=("y", "z", "a", "w"), rerank=True),
        LLM,
    ]
    line = _line(steps=steps)
    # depth 2: context a, b; first search b (named), x; second search y, z
    assert line.searched(2) == ["a", "b", "x", "y", "z"]
    assert line.searched(1) == ["a", "b", "y"]
    assert line.searched(3) == ["a", "b", "c", "x", "y", "z"]
    assert _line().searched(5) == ["a", "b", "c"]


def test_top_is_the_first_k() -> None:
    assert _line().top(2) == ["a", "b"]
    assert _line().top(0) == []


def test_text_is_the_golden_chunk_s_then_the_run_s_then_a_search_s() -> None:
    gold = make_golden(n=1)
    line = _line(
        texts={answer_id(0): "the run's copy", "p": "the run's p"},
        step_found={"p": _at("p", "searched p"), "s": _at("s", "searched s"), "t": _at("t", None)},
    )
    assert line.text(answer_id(0), gold) == answer_text(0)
    assert line.text("p", gold) == "the run's p"
    assert line.text("s", gold) == "searched s"
    assert line.text("t", gold) is None
    assert line.text("nowhere", gold) is None


# --------------------------------------------------------------------------------------------- SystemTrace


def _raw(**fields: object) -> RawLine:
    return RawLine(query_id="q00", items=[], answer=None, citations=[], line=2, **fields)  # type: ignore[arg-type]


def test_a_trace_counts_failures_keeps_latency_of_answered_lines_usage_and_steps() -> None:
    trace = SystemTrace()
    trace.add(_raw(latency_ms=120.0, usage={"prompt_tokens": 3.0}))
    trace.add(_raw(error=RunError(kind="timeout"), latency_ms=999.0, usage={"cost_usd": 0.5}))
    trace.add(_raw(error=RunError(kind="timeout")))
    trace.add(_raw(error=RunError(kind="http_status")))
    trace.add(_raw())  # nothing to say
    search = RetrievalStep(kind="retrieval", query="q")
    trace.add(_raw(latency_ms=80.0, steps=[search, TOOL, search, LLM]))
    assert trace.latencies == [120.0, 80.0]  # a failed line's latency is not the system answering
    assert dict(trace.failures) == {"timeout": 2, "http_status": 1}
    assert trace.usages == [{"prompt_tokens": 3.0}, {"cost_usd": 0.5}]
    assert [dict(c) for c in trace.steps] == [{"retrieval": 2, "tool": 1, "llm": 1}]


def test_a_line_with_an_empty_steps_list_adds_no_steps_entry() -> None:
    trace = SystemTrace()
    trace.add(_raw(steps=[]))
    assert trace.steps == [] and trace.latencies == [] and trace.usages == [] and not trace.failures


# ---------------------------------------------------------------------------------------------- LoadedRun


def _run(lines: dict[str, RunLine], counts: RunCounts) -> LoadedRun:
    return LoadedRun(name="r", path=Path("r.jsonl"), kind="jsonl", lines=lines, counts=counts)


def test_answers_given_and_passage_free_are_the_counts() -> None:
    answer_only = RunCounts(queries_evaluated=2, with_answer=2, empty_retrieved=2)
    assert _run({}, answer_only).answers_given and _run({}, answer_only).passage_free
    retrieval_only = RunCounts(queries_evaluated=2)
    assert not _run({}, retrieval_only).answers_given and not _run({}, retrieval_only).passage_free


def test_a_run_s_length_summary_is_over_every_line_s_passage_texts() -> None:
    one = _line(texts={"a": "x" * 10, "b": "x" * 20})
    two = RunLine(query_id="q01", ranked=["c"], scores={}, texts={"c": "x" * 41})
    run = _run({"q00": one, "q01": two}, RunCounts())
    # 10, 20, 41: inclusive quartiles at positions 0.5, 1, 1.5 -> 15, 20, 30.5; mean 71 / 3
    assert run.length_summary() == {"count": 3, "min": 10, "p25": 15.0, "median": 20.0, "p75": 30.5, "max": 41,
                                    "mean": 23.7}  # fmt: skip
    assert _run({"q00": _line()}, RunCounts()).length_summary() == {}


# ------------------------------------------------------------------------------------------ length_summary


def test_length_summary_of_nothing_is_empty() -> None:
    assert length_summary([]) == {}


def test_length_summary_of_one_size_is_that_size_everywhere() -> None:
    assert length_summary([7]) == {"count": 1, "min": 7, "p25": 7.0, "median": 7.0, "p75": 7.0, "max": 7, "mean": 7.0}


def test_length_summary_rounds_quartiles_and_mean_to_one_decimal() -> None:
    # sorted 10, 17, 30, 45: positions 0.75, 1.5, 2.25 -> 10 + 0.75 * 7 = 15.25, 23.5, 30 + 0.25 * 15 = 33.75,
    # to one decimal (ties to even) 15.2 and 33.8; mean 102 / 4 = 25.5; the order given does not matter
    assert length_summary([45, 10, 30, 17]) == {"count": 4, "min": 10, "p25": 15.2, "median": 23.5, "p75": 33.8,
                                                "max": 45, "mean": 25.5}  # fmt: skip
    odd = length_summary([1, 2, 2])  # mean 5 / 3: one decimal
    assert odd["mean"] == 1.7 and odd["p25"] == 1.5 and odd["p75"] == 2.0


def test_length_summary_of_two_sizes_has_quartiles_between_them() -> None:
    # 10, 20: positions 0.25, 0.5, 0.75 -> 12.5, 15, 17.5
    assert length_summary([20, 10]) == {"count": 2, "min": 10, "p25": 12.5, "median": 15.0, "p75": 17.5, "max": 20,
                                        "mean": 15.0}  # fmt: skip


def test_the_given_answer_is_none_for_a_failure_an_empty_answer_or_none() -> None:
    assert _line(answer="14 days.").given_answer == "14 days."
    assert _line(answer=" \n ").given_answer is None
    assert _line(answer=None).given_answer is None
    assert _line(answer="14 days.", error=RunError(kind="timeout")).given_answer is None  # a failure answers nothing
