"""The cache on disk: JSON values, keys, several processes on one directory, and a killed run resumed."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from assay.judge.cache import JudgeCache, cache_key
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.testing import FakeBackend, FakeOpenAIServer

BASE = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "params": {"temperature": 0.0},
    "prompt_name": "p",
    "prompt_version": "1",
    "prompt_hash": "abc",
    "schema": {"type": "object"},
}


def test_key_is_tagged_and_depends_on_each_field() -> None:
    key = cache_key(**BASE)  # type: ignore[arg-type]
    assert key.startswith("v1:") and key == cache_key(**dict(BASE))  # type: ignore[arg-type]
    changes = {
        "model": "m2",
        "messages": [{"role": "user", "content": "hi!"}],
        "params": {"temperature": 0.1},
        "prompt_name": "q",
        "prompt_version": "2",
        "prompt_hash": "abd",
        "schema": {"type": "array"},
    }
    for field, value in changes.items():
        assert cache_key(**{**BASE, field: value}) != key, field  # type: ignore[arg-type]
    reordered = {**BASE, "params": {"b": 1, "a": 2}}
    assert cache_key(**reordered) == cache_key(**{**BASE, "params": {"a": 2, "b": 1}})  # type: ignore[arg-type]


def test_values_are_json_text_not_pickles(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    cache.put("v1:k", json.dumps({"output": {"grade": 2}}))
    assert cache.get("v1:k") == '{"output": {"grade": 2}}' and "v1:k" in cache
    cache.close()
    with sqlite3.connect(tmp_path / "cache.db") as db:
        [(value,)] = db.execute("SELECT value FROM Cache").fetchall()
    assert isinstance(value, str) and json.loads(value) == {"output": {"grade": 2}}


def test_stats_and_clear(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c")
    for i in range(3):
        cache.put(f"k{i}", "{}")
    stats = cache.stats()
    assert stats["entries"] == 3 and stats["bytes"] > 0 and stats["path"] == str(tmp_path / "c")
    assert cache.clear() == 3 and len(cache) == 0


WRITER = textwrap.dedent(
    """
    import sys
    from assay.judge.cache import JudgeCache
    from assay.judge.client import Judge
    from assay.judge.limits import RetryPolicy
    from assay.testing import FakeBackend

    cache_dir, prompts, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
    items = [{"question": f"q{i}", "passage": f"p{i}"} for i in range(start, start + 100)]
    backend = FakeBackend()
    judge = Judge(backend, model="m", cache=JudgeCache(cache_dir), prompt_dir=prompts, retry=RetryPolicy.immediate())
    judge.judge_many("toy", items)
    print(backend.calls)
    """
)


def test_two_processes_share_one_cache(tmp_path: Path, toy_prompts: Path) -> None:
    cache_dir = tmp_path / "cache"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(cache_dir), str(toy_prompts), start], stdout=subprocess.PIPE
        )
        for start in ("0", "50")
    ]
    outputs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sum(int(o) for o in outputs) >= 150  # the overlap (50..99) may be paid by both when they race
    cache = JudgeCache(cache_dir)
    assert len(cache) == 150
    backend = FakeBackend()
    judge = Judge(backend, model="m", cache=cache, prompt_dir=toy_prompts, retry=RetryPolicy.immediate())
    results = judge.judge_many("toy", [{"question": f"q{i}", "passage": f"p{i}"} for i in range(150)])
    assert backend.calls == 0 and all(r.cached for r in results)


KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from assay.judge.backends import OpenAICompatBackend
    from assay.judge.cache import JudgeCache
    from assay.judge.client import Judge
    from assay.judge.limits import RetryPolicy

    cache_dir, prompts, url = sys.argv[1], sys.argv[2], sys.argv[3]
    items = [{"question": f"q{i}", "passage": f"p{i}"} for i in range(40)]
    judge = Judge(OpenAICompatBackend(url), model="openai/m", cache=JudgeCache(cache_dir), prompt_dir=prompts,
                  concurrency=4, retry=RetryPolicy.immediate())
    done = []

    def on_result(index, judgement):
        done.append(index)
        if len(done) == 15:
            os.kill(os.getpid(), signal.SIGKILL)  # killed midway, calls still in flight

    judge.judge_many("toy", items, on_result=on_result)
    """
)


def test_killed_run_rerun_pays_no_completed_call_twice(tmp_path: Path, toy_prompts: Path) -> None:
    cache_dir = tmp_path / "cache"
    with FakeOpenAIServer() as server:
        args = [sys.executable, "-c", KILLED, str(cache_dir), str(toy_prompts), server.url]
        proc = subprocess.run(args, check=False, timeout=120)
        assert proc.returncode == -9
        first_calls = server.calls
        cached = len(JudgeCache(cache_dir))
        assert cached >= 15
        judge = Judge(
            FakeBackend(),
            model="openai/m",
            cache=JudgeCache(cache_dir),
            prompt_dir=toy_prompts,
            retry=RetryPolicy.immediate(),
        )
        rerun = judge.judge_many("toy", [{"question": f"q{i}", "passage": f"p{i}"} for i in range(40)])
    calls_again = judge.backend.calls  # type: ignore[attr-defined]
    assert calls_again == 40 - cached and sum(r.cached for r in rerun) == cached
    assert first_calls - cached <= 4  # only calls in flight at the kill (at most the concurrency) were lost
    assert all(r.output is not None for r in rerun)


def test_assembled_key_equals_the_digest_of_the_canonical_json() -> None:
    from assay.judge.cache import _digest
    from assay.judge.prompts import load_prompt

    prompt = load_prompt("relevance")
    messages = prompt.render({"question": 'Où est "x"?\n', "passage": "a < b & c"})
    for msgs in (messages, messages[1:], [], [*messages, {"role": "assistant", "content": "x", "name": "n"}]):
        for schema in (prompt.schema, None):
            fields = {**BASE, "messages": msgs, "schema": schema}
            expected = _digest(
                {
                    "model": fields["model"],
                    "messages": msgs,
                    "params": fields["params"],
                    "prompt": {"name": "p", "version": "1", "hash": "abc"},
                    "schema": schema,
                }
            )
            assert cache_key(**fields) == expected  # type: ignore[arg-type]


def test_put_many_stores_what_diskcache_set_stores(tmp_path: Path) -> None:
    import diskcache

    big = "x" * (2**15 + 10)  # kept in a file by diskcache
    first = [("a", '{"v": 1}'), ("b", '{"v": 2}'), ("big", '"small first"')]
    second = [("c", "3"), ("a", "replaced"), ("d", "4"), ("d", "4 again"), ("big", big), ("e", "é")]
    ours = JudgeCache(tmp_path / "ours")
    ours.put_many(first)
    ours.put_many(second)
    reference = diskcache.Cache(str(tmp_path / "reference"))
    for key, value in [*first, *second]:
        reference.set(key, value)
    expected = {key: reference.get(key) for key in reference}
    assert {key: ours.get(key) for key in expected} == expected
    assert expected["a"] == "replaced" and expected["d"] == "4 again" and expected["big"] == big
    assert len(ours) == len(reference) == 6

    def counters(folder: str) -> tuple[object, ...]:  # kept by diskcache's triggers, and the rows they count
        db = sqlite3.connect(tmp_path / folder / "cache.db")
        settings = dict(db.execute("SELECT key, value FROM Settings WHERE key IN ('count', 'size')").fetchall())
        return settings["count"], settings["size"], *db.execute("SELECT COUNT(*), SUM(size) FROM Cache").fetchone()

    assert counters("ours") == counters("reference") == (6, len(big), 6, len(big))
    assert ours.get_many(["a", "c", "e", "zzz"]) == {"a": "replaced", "c": "3", "e": "é"}
    ours.put("c", "overwritten")  # a row written by put_many is replaced by diskcache's set
    assert ours.get("c") == "overwritten" and len(ours) == 6


def test_writer_checkpoints_off_the_loop_thread_and_restores_autocheckpoint(tmp_path: Path) -> None:
    import asyncio
    import threading

    from assay.judge.cache import CacheWriter

    threads: list[int] = []

    class Recording(JudgeCache):
        def checkpoint(self) -> None:
            threads.append(threading.get_ident())
            super().checkpoint()

    cache = Recording(tmp_path)

    def autocheckpoint() -> int:
        return int(cache._store._sql("PRAGMA wal_autocheckpoint").fetchone()[0])

    errors: list[Exception] = []

    async def run() -> int:
        writer = CacheWriter(cache, errors.append, checkpoint_every=2)
        during = autocheckpoint()
        for i in range(6):  # one commit per put: each waits for the last
            await writer.put(f"k{i}", f"v{i}")
        writer.close()
        return during

    assert asyncio.run(run()) == 0 and autocheckpoint() == 1000 and not errors
    assert len(threads) >= 1 and threading.get_ident() not in threads
    assert {key: cache.get(key) for key in (f"k{i}" for i in range(6))} == {f"k{i}": f"v{i}" for i in range(6)}
