"""The runner's bookkeeping pinned by hand: the figures a progress bar reads before and after each question, the
marks a line carries (never a stale ``repeat`` or turn from the cache), own-history chains in turn order whatever
the order of the asks, the latency in milliseconds, the run's throughput and percentiles, and one try meaning one."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from assay.targets import runner
from assay.targets.callers import Ask, Caller
from assay.targets.journal import Journal, question_key
from assay.targets.outputs import TargetFailure
from assay.targets.runner import RunStats, TargetSettings, ask_all


async def _no_sleep(_: float) -> None:
    return None


FAST = TargetSettings(concurrency=1, timeout=5.0, attempts=3, sleep=_no_sleep)


class Script(Caller):
    """Answers ``A <query id>`` (a failure for the ids in ``fail``, transient or not); records every ask it gets."""

    def __init__(self, fail: dict[str, bool] | None = None) -> None:
        self.asked: list[Ask] = []
        self.fail = fail or {}

    async def __call__(self, ask: Ask) -> Any:
        self.asked.append(ask)
        if ask.query_id in self.fail:
            raise TargetFailure("exception", f"no answer to {ask.query_id}", transient=self.fail[ask.query_id])
        return {"answer": f"A {ask.query_id}"}


def _run(asks: list[Ask], caller: Caller, **options: Any) -> tuple[list[dict[str, Any]], RunStats]:
    settings = options.pop("settings", FAST)
    return asyncio.run(ask_all(asks, caller, settings=settings, **options))


def _plain(n: int) -> list[Ask]:
    return [Ask(f"q{i}", f"question {i}") for i in range(1, n + 1)]


def test_progress_sees_the_cached_answers_before_any_question_is_asked(tmp_path: Path) -> None:
    asks = _plain(3)
    journal = Journal(tmp_path, {"target": "t"}, None)
    for ask in asks[:2]:
        journal.append(question_key(ask), {"query_id": ask.query_id, "answer": f"kept {ask.query_id}"})
    seen: list[tuple[int, int]] = []
    caller = Script()
    lines, stats = _run(asks, caller, journal=journal, progress=lambda s: seen.append((s.done, s.cached)))
    journal.close()
    # first the two cached answers (nothing asked yet), then q3 once answered
    assert seen == [(2, 2), (3, 2)]
    assert [ask.query_id for ask in caller.asked] == ["q3"]
    assert [line.get("answer") for line in lines] == ["kept q1", "kept q2", "A q3"]
    assert (stats.done, stats.cached, stats.asked) == (3, 2, 1)


def test_the_cache_is_read_unless_refresh_is_asked_for(tmp_path: Path) -> None:
    asks = _plain(2)
    journal = Journal(tmp_path, {"target": "t"}, None)
    journal.append(question_key(asks[0]), {"query_id": "q1", "answer": "kept"})
    caller = Script()
    lines, stats = _run(asks, caller, journal=journal)  # refresh left to its default
    journal.close()
    assert [ask.query_id for ask in caller.asked] == ["q2"] and lines[0]["answer"] == "kept" and stats.cached == 1


def test_a_cached_record_never_carries_a_stale_repeat_conversation_or_turn(tmp_path: Path) -> None:
    plain, turn = Ask("q1", "question 1"), Ask("q2", "question 2", conversation_id="c9", turn=4)
    journal = Journal(tmp_path, {"target": "t"}, None)
    stale = {"repeat": 2, "conversation_id": "c1", "turn": 0, "rewrite": "old rewrite"}
    journal.append(question_key(plain), {"query_id": "q1", "answer": "kept 1", **stale})
    journal.append(question_key(turn), {"query_id": "q2", "answer": "kept 2", **stale})
    lines, _ = _run([plain, turn], Script(), journal=journal)
    journal.close()
    # a plain question's line has no marks at all; a turn's has its own, and keeps the system's rewrite
    assert lines[0] == {"query_id": "q1", "answer": "kept 1"}
    assert lines[1] == {"query_id": "q2", "answer": "kept 2", "conversation_id": "c9", "turn": 4,
                        "rewrite": "old rewrite"}  # fmt: skip


def test_turns_are_asked_without_history_unless_own_history_is_asked_for() -> None:
    asks = [Ask("q1", "first", conversation_id="c1", turn=0), Ask("q2", "second", conversation_id="c1", turn=1)]
    caller = Script()
    _run(asks, caller)
    assert [ask.messages for ask in caller.asked] == [None, None]


def test_own_history_chains_follow_the_turn_numbers_not_the_order_of_the_asks() -> None:
    # the asks list turn 1 before turn 0: turn 0 is asked first, and turn 1 gets its answer as history
    asks = [Ask("q2", "second", conversation_id="c1", turn=1), Ask("q1", "first", conversation_id="c1", turn=0)]
    caller = Script()
    lines, _ = _run(asks, caller, own_history=True)
    assert [ask.query_id for ask in caller.asked] == ["q1", "q2"]
    assert caller.asked[1].messages == (
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "A q1"},
        {"role": "user", "content": "second"},
    )
    assert [line["query_id"] for line in lines] == ["q2", "q1"]  # the lines keep the order of the asks


def test_own_history_from_the_cache_counts_each_turn_once_and_gives_the_same_lines(tmp_path: Path) -> None:
    asks = [Ask(f"q{i}", f"turn {i}", conversation_id="c1", turn=i) for i in range(3)]
    first_journal = Journal(tmp_path, {"target": "t"}, None)
    first, _ = _run(asks, Script(), journal=first_journal, own_history=True)
    first_journal.close()
    journal = Journal(tmp_path, {"target": "t"}, None)
    caller = Script()
    again, stats = _run(asks, caller, journal=journal, own_history=True)
    journal.close()
    assert caller.asked == [] and again == first
    assert (stats.done, stats.cached, stats.asked) == (3, 3, 0)


def test_a_broken_chain_counts_every_turn_done() -> None:
    asks = [Ask(f"q{i}", f"turn {i}", conversation_id="c1", turn=i) for i in range(3)]
    lines, stats = _run(asks, Script(fail={"q1": False}), own_history=True)
    assert [line.get("error", {}).get("kind") for line in lines] == [None, "exception", "history_failed"]
    assert (stats.done, stats.asked) == (3, 3)
    assert dict(stats.failed) == {"exception": 1, "history_failed": 1}


def test_failed_questions_count_as_done() -> None:
    lines, stats = _run(_plain(3), Script(fail={"q1": False, "q3": False}))
    assert [("error" in line) for line in lines] == [True, False, True]
    assert stats.done == 3 and stats.failed == {"exception": 2}


def test_one_attempt_is_one_call_even_for_a_transient_failure() -> None:
    caller = Script(fail={"q1": True})
    _, stats = _run(_plain(1), caller, settings=TargetSettings(attempts=1, sleep=_no_sleep))
    assert len(caller.asked) == 1 and stats.retries == 0
    caller = Script(fail={"q1": True})
    _, stats = _run(_plain(1), caller, settings=TargetSettings(attempts=0, sleep=_no_sleep))
    assert len(caller.asked) == 1  # fewer than one try still asks once


def test_latency_is_the_attempts_time_in_milliseconds_to_three_places(monkeypatch: pytest.MonkeyPatch) -> None:
    # the attempt starts at 1.0 s and answers 0.0123456 s later: 12.3456 ms, written as 12.346
    ticks = iter([1.0, 1.0123456])
    monkeypatch.setattr(runner.time, "perf_counter", lambda: next(ticks))
    lines, stats = _run(_plain(1), Script())
    assert lines[0]["latency_ms"] == 12.346
    assert stats.latencies_ms == [pytest.approx(12.3456, abs=1e-9)]


def test_percentiles_interpolate_the_latencies_and_are_none_before_any() -> None:
    assert RunStats(total=3).percentile(50) is None
    stats = RunStats(total=3, latencies_ms=[10.0, 20.0, 40.0])
    assert stats.percentile(50) == 20.0
    assert stats.percentile(75) == 30.0  # halfway between 20 and 40


def test_throughput_is_questions_asked_per_second() -> None:
    # 4 asked (5 done, 1 from the cache) in a quarter of a second: 16 a second (a little less as time passes)
    stats = RunStats(total=5, done=5, cached=1, started=time.monotonic() - 0.25)
    assert 8.0 < stats.throughput() <= 16.0
