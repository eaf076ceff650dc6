"""The runner over Python targets: lines, failures recorded by kind, retries by policy, timeouts, concurrency, cache."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from targets_fixture import make_golden

from assay.errors import ConfigError, NothingProduced
from assay.formats.jsonl import iter_json_lines, read_header
from assay.formats.runs import read_jsonl_run
from assay.formats.trec import run_table
from assay.targets import TargetSettings, run_target
from assay.targets.callers import function_name


async def _no_sleep(_: float) -> None:
    return None


FAST = TargetSettings(concurrency=4, timeout=5.0, attempts=3, sleep=_no_sleep)


def test_function_gets_question_id_and_metadata_and_lines_keep_golden_order(tmp_path: Path) -> None:
    seen: list[tuple[str, str, dict[str, Any]]] = []

    def app(question: str, query_id: str, metadata: dict[str, Any]) -> dict[str, Any]:
        seen.append((question, query_id, metadata))
        return {"contexts": [f"text of {query_id}", "second"], "answer": f"A {query_id}", "citations": ["x"]}

    done = run_target(make_golden(3), app, tmp_path / "run.jsonl", label="v1", settings=FAST)
    assert sorted(seen) == [(f"what is fact {i}?", f"q{i}", {"topic": "odd" if i % 2 else "even"}) for i in (1, 2, 3)]
    lines = [obj for _, obj in iter_json_lines(tmp_path / "run.jsonl", kind="runs")]
    assert [line["query_id"] for line in lines] == ["q1", "q2", "q3"]
    assert lines[1]["retrieved"] == [{"text": "text of q2"}, {"text": "second"}]
    assert (lines[1]["answer"], lines[1]["citations"]) == ("A q2", ["x"])
    assert all(line["latency_ms"] >= 0 and "usage" not in line and "error" not in line for line in lines)
    assert done.failed == 0 and done.stats.asked == 3


def test_header_records_target_label_and_times(tmp_path: Path) -> None:
    def app(question: str) -> str:
        return "an answer"

    run_target(make_golden(2), app, tmp_path / "run.jsonl", label="v7", settings=FAST)
    head = read_header(tmp_path / "run.jsonl")
    assert head is not None and head.assay == "runs" and head.version == 1
    assert (head.target, head.label) == (function_name(app), "v7")
    assert head.target.endswith(":test_header_records_target_label_and_times.<locals>.app")
    assert head.started is not None and head.ended is not None and head.started <= head.ended
    assert head.started.endswith("+00:00")


def test_ids_with_scores_are_kept_and_todays_reader_reads_them(tmp_path: Path) -> None:
    def app(question: str, query_id: str) -> dict[str, Any]:
        return {"retrieved": [{"id": "c" + query_id[1:], "score": 2.0}, {"id": "c9", "score": 1.0}], "answer": "a"}

    run_target(make_golden(2), app, tmp_path / "run.jsonl", settings=FAST)
    run = read_jsonl_run(tmp_path / "run.jsonl")
    assert run_table(run) == {"q1": {"c1": 2.0, "c9": 1.0}, "q2": {"c2": 2.0, "c9": 1.0}}
    first = next(obj for _, obj in iter_json_lines(tmp_path / "run.jsonl", kind="runs"))
    assert first["retrieved"] == [{"id": "c1", "score": 2.0}, {"id": "c9", "score": 1.0}]


@dataclass
class Reply:
    contexts: list[str]
    answer: str
    usage: dict[str, Any]


def test_object_reply_with_usage(tmp_path: Path) -> None:
    def app(question: str) -> Reply:
        return Reply(["ctx"], "ans", {"prompt_tokens": 12, "completion_tokens": 3, "cost_usd": 0.5, "other": 1})

    done = run_target(make_golden(1), app, settings=FAST)
    assert done.lines[0]["usage"] == {"prompt_tokens": 12, "completion_tokens": 3, "cost_usd": 0.5}
    assert done.path is None


def test_failures_are_recorded_by_kind_and_only_transient_ones_retried(tmp_path: Path) -> None:
    calls: dict[str, int] = {}

    def app(question: str, query_id: str) -> Any:
        calls[query_id] = calls.get(query_id, 0) + 1
        if query_id == "q1":
            raise ValueError("bad question")
        if query_id == "q2":
            raise ConnectionError("reset by peer")
        if query_id == "q3":
            return 42
        if query_id == "q4" and calls[query_id] == 1:
            raise TimeoutError("upstream slow")
        return {"answer": "fine"}

    done = run_target(make_golden(5), app, tmp_path / "run.jsonl", settings=FAST)
    lines = {line["query_id"]: line for line in done.lines}
    assert lines["q1"] == {"query_id": "q1", "error": {"kind": "exception", "message": "ValueError: bad question"}}
    assert lines["q2"]["error"]["kind"] == "exception" and set(lines["q2"]) == {"query_id", "error"}
    assert lines["q3"]["error"]["kind"] == "invalid_output"
    assert lines["q4"]["answer"] == "fine" and lines["q5"]["answer"] == "fine"
    assert calls == {"q1": 1, "q2": 3, "q3": 1, "q4": 2, "q5": 1}  # 3 attempts for the transient one, 1 otherwise
    assert done.failed == 3 and done.stats.retries == 2 + 1
    assert dict(done.stats.failed) == {"exception": 2, "invalid_output": 1}


def test_timeout_is_retried_then_recorded(tmp_path: Path) -> None:
    calls: list[str] = []

    async def app(question: str, query_id: str) -> dict[str, str]:
        calls.append(query_id)
        if query_id == "q1":
            await asyncio.Event().wait()  # never answers
        return {"answer": "ok"}

    settings = TargetSettings(concurrency=2, timeout=0.05, attempts=2, sleep=_no_sleep)
    done = run_target(make_golden(2), app, settings=settings)
    assert done.lines[0] == {"query_id": "q1", "error": {"kind": "timeout", "message": "no answer within 0.05 s"}}
    assert calls.count("q1") == 2 and calls.count("q2") == 1


def test_backoff_waits_grow_exponentially() -> None:
    settings = TargetSettings(backoff=0.5, max_wait=3.0)
    for attempt, base in ((1, 0.5), (2, 1.0), (3, 2.0)):
        assert base <= settings.delay(attempt, None) <= base + 0.5
    assert settings.delay(6, None) == 3.0


def test_async_target_runs_at_most_concurrency_calls_at_once() -> None:
    running, peak = 0, 0

    async def app(question: str) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        running -= 1
        return "ok"

    run_target(make_golden(12), app, settings=TargetSettings(concurrency=3, sleep=_no_sleep))
    assert peak == 3


def test_nothing_answered_is_a_failure_naming_why(tmp_path: Path) -> None:
    def app(question: str) -> str:
        raise RuntimeError("model not loaded")

    done = run_target(make_golden(2), app, tmp_path / "run.jsonl", settings=FAST)
    with pytest.raises(NothingProduced, match=r"none of 2 questions .*2 exception.*RuntimeError: model not loaded"):
        done.check()
    assert (tmp_path / "run.jsonl").is_file()  # the failures are written, for reading


def test_cache_reuses_answers_of_the_same_target_and_label(tmp_path: Path) -> None:
    calls: list[str] = []

    def app(question: str, query_id: str) -> dict[str, str]:
        calls.append(query_id)
        if query_id == "q3" and calls.count("q3") == 1:
            raise ValueError("first time fails")
        return {"answer": f"answer {len(calls)}"}

    cache = tmp_path / "cache"
    first = run_target(make_golden(3), app, label="v1", settings=FAST, cache_dir=cache)
    assert first.failed == 1 and len(calls) == 3
    again = run_target(make_golden(3), app, label="v1", settings=FAST, cache_dir=cache)
    assert calls == ["q1", "q2", "q3", "q3"]  # only the failed question is asked again
    assert [line["answer"] for line in again.lines] == ["answer 1", "answer 2", "answer 4"]
    assert again.stats.cached == 2 and again.lines[0]["latency_ms"] == first.lines[0]["latency_ms"]
    run_target(make_golden(3), app, label="v2", settings=FAST, cache_dir=cache)
    assert len(calls) == 7  # another label asks everything
    run_target(make_golden(3), app, label="v1", settings=FAST, cache_dir=cache, refresh=True)
    assert len(calls) == 10


def test_a_plain_rerun_after_refresh_returns_the_refreshed_answers(tmp_path: Path) -> None:
    version = ["v1"]
    calls: list[str] = []

    def app(question: str, query_id: str) -> dict[str, str]:
        calls.append(query_id)
        return {"answer": f"{version[0]} answer to {query_id}"}

    cache = tmp_path / "cache"
    run_target(make_golden(3), app, label="prod", settings=FAST, cache_dir=cache)
    version[0] = "v2"  # the app changed; the same target and label
    refreshed = run_target(make_golden(3), app, label="prod", settings=FAST, cache_dir=cache, refresh=True)
    assert [line["answer"] for line in refreshed.lines] == [f"v2 answer to q{i}" for i in (1, 2, 3)]
    asked = len(calls)
    again = run_target(make_golden(3), app, label="prod", settings=FAST, cache_dir=cache)
    assert len(calls) == asked and again.stats.cached == 3  # the rerun asks nothing
    assert [line["answer"] for line in again.lines] == [f"v2 answer to q{i}" for i in (1, 2, 3)]  # not the stale v1


def test_cache_survives_a_cut_last_line(tmp_path: Path) -> None:
    def app(question: str) -> str:
        return "ok"

    cache = tmp_path / "cache"
    run_target(make_golden(2), app, label="v1", settings=FAST, cache_dir=cache)
    [journal] = list(cache.iterdir())
    with journal.open("a", encoding="utf-8") as handle:
        handle.write('{"key": "abc", "record": {"answ')  # a kill in the middle of a write
    done = run_target(make_golden(2), app, label="v1", settings=FAST, cache_dir=cache)
    assert done.stats.cached == 2
    assert all(json.loads(line)["record"]["answer"] == "ok" for line in journal.read_text().splitlines()[:2])


def test_rate_limit_spaces_calls_over_the_minute() -> None:
    now = [0.0]
    starts: list[float] = []

    async def sleep(seconds: float) -> None:
        now[0] += seconds

    def app(question: str) -> str:
        starts.append(now[0])
        return "ok"

    settings = TargetSettings(concurrency=1, rpm=2, sleep=sleep, clock=lambda: now[0])
    run_target(make_golden(5), app, settings=settings)
    # two calls in each 60-second window: at 0, 0, then 60, 60, then 120
    assert starts == [0.0, 0.0, 60.0, 60.0, 120.0]


def test_repeats_ask_every_question_n_times_each_cached_apart(tmp_path: Path) -> None:
    calls: list[tuple[str, int | None]] = []

    def app(question: str, query_id: str, repeat: int | None) -> dict[str, str]:
        calls.append((query_id, repeat))
        return {"answer": f"{query_id} asked {repeat}"}

    cache = tmp_path / "cache"
    plain = run_target(make_golden(2), app, label="v1", settings=FAST, cache_dir=cache)
    assert [line.get("repeat") for line in plain.lines] == [None, None] and calls == [("q1", None), ("q2", None)]
    done = run_target(make_golden(2), app, tmp_path / "run.jsonl", label="v1", settings=FAST, cache_dir=cache,
                      repeats=3)  # fmt: skip
    # the first asking is the plain run's (from the cache); the others are asked, each once
    assert sorted(calls[2:]) == [("q1", 1), ("q1", 2), ("q2", 1), ("q2", 2)]
    lines = [obj for _, obj in iter_json_lines(tmp_path / "run.jsonl", kind="runs")]
    assert [(line["query_id"], line["repeat"]) for line in lines] == [
        ("q1", 0), ("q2", 0), ("q1", 1), ("q2", 1), ("q1", 2), ("q2", 2)
    ]  # fmt: skip
    assert lines[0]["answer"] == "q1 asked None" and lines[3]["answer"] == "q2 asked 1"
    head = read_header(tmp_path / "run.jsonl")
    assert head is not None and head.repeats == 3
    assert done.stats.cached == 2
    again = run_target(make_golden(2), app, label="v1", settings=FAST, cache_dir=cache, repeats=3)
    assert again.stats.cached == 6 and len(calls) == 6  # a rerun pays nothing


def test_repeats_must_be_at_least_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--repeats must be at least 1"):
        run_target(make_golden(2), lambda question: "x", tmp_path / "run.jsonl", repeats=0)
    assert not (tmp_path / "run.jsonl").exists()
