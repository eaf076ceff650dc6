"""Benchmark of the judge client: relevance judgments against the fake server, per backend, and a cached rerun.

The fake OpenAI-compatible server runs in a separate process (``python -m assay.testing.fake_server``) so its CPU is not
counted as client CPU. For each backend it prints the wall time against the ideal (calls x latency / concurrency),
the throughput as a fraction of the ideal, the client CPU per call (``time.process_time`` of this process), and then
a fully cached rerun in labels per second (zero calls).

Targets (issue 3): the aiohttp backend at >= 90% of the ideal with <= 1 ms CPU per call; >= 20,000 cached labels/s.

    python bench/judge.py                       # 2,000 calls, 100 ms latency, concurrency 64, both backends
    python bench/judge.py --calls 500 --backends aiohttp
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp

from assay.judge.backends import LiteLLMBackend, OpenAICompatBackend
from assay.judge.base import Backend
from assay.judge.cache import JudgeCache
from assay.judge.client import Judge
from assay.judge.limits import RetryPolicy
from assay.judge.relevance import Pair, grade_pairs
from assay.testing import FakeBackend

MODEL = "openai/bench-judge"


def make_pairs(n: int, tag: str) -> list[Pair]:
    return [
        Pair(f"q{i // 10}", f"What does passage {i // 10} say about ranking ({tag})?", f"c{i}", f"Passage {i}: text.")
        for i in range(n)
    ]


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay.testing.fake_server", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    if proc.stdout is None:
        raise RuntimeError("no stdout from the fake server")
    return proc, proc.stdout.readline().strip()


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backend_for(name: str, url: str, concurrency: int) -> Backend:
    if name == "aiohttp":
        return OpenAICompatBackend(url, api_key="bench", connections=concurrency)
    return LiteLLMBackend(MODEL, api_base=url, api_key="bench", timeout=60.0)


async def run_pairs(judge: Judge, pairs: list[Pair]) -> int:
    try:
        labels = await grade_pairs(judge, pairs)
    finally:
        await judge.aclose()
    return sum(label.grade is not None for label in labels)


def measure(name: str, url: str, args: argparse.Namespace, cache_dir: Path, server_pid: int) -> None:
    policy = RetryPolicy(attempts=3)
    warm = Judge(backend_for(name, url, args.concurrency), model=MODEL, concurrency=args.concurrency, retry=policy)
    asyncio.run(run_pairs(warm, make_pairs(args.concurrency, f"warm-{name}")))  # imports, connections, first calls
    pairs = make_pairs(args.calls, name)
    judge = Judge(
        backend_for(name, url, args.concurrency),
        model=MODEL,
        cache=JudgeCache(cache_dir),
        concurrency=args.concurrency,
        retry=policy,
    )
    wall0, cpu0, server0 = time.perf_counter(), time.process_time(), process_cpu(server_pid)
    scored = asyncio.run(run_pairs(judge, pairs))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    server_cpu = process_cpu(server_pid) - server0
    ideal = args.calls * args.latency / args.concurrency
    print(
        f"{name:8s} {args.calls} calls: wall {wall:6.2f} s, ideal {ideal:5.2f} s, {ideal / wall:5.1%} of ideal, "
        f"client CPU {1000 * cpu / args.calls:5.2f} ms/call (server {1000 * server_cpu / args.calls:4.2f}), "
        f"scored {scored}, calls {judge.stats.calls}, retries {judge.stats.retries}"
    )
    cached_rerun(name, pairs, cache_dir, args.concurrency)


def cached_rerun(name: str, pairs: list[Pair], cache_dir: Path, concurrency: int, repeats: int = 3) -> None:
    best = float("inf")
    for _ in range(repeats):  # best of a few: the machine is shared, and the minimum is the least disturbed run
        backend = FakeBackend(lambda request: RuntimeError("a cached rerun must not call the model"))
        judge = Judge(backend, model=MODEL, cache=JudgeCache(cache_dir), concurrency=concurrency)
        start = time.perf_counter()
        scored = asyncio.run(run_pairs(judge, pairs))
        best = min(best, time.perf_counter() - start)
        if backend.calls or scored != len(pairs):
            raise RuntimeError(f"cached rerun made {backend.calls} calls and scored {scored} of {len(pairs)}")
    print(f"{name:8s} cached rerun: {len(pairs) / best:9,.0f} labels/s (best of {repeats}), 0 calls")


async def bare_aiohttp(url: str, calls: int, concurrency: int) -> tuple[float, float]:
    """Reference: the same number of POSTs with bare aiohttp and no judge logic (wall s, CPU s)."""
    body = {"model": "bench", "messages": [{"role": "user", "content": "How relevant is this passage? " * 40}]}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def worker(queue: Iterator[int]) -> None:
            for _ in queue:
                async with session.post(f"{url}/chat/completions", json=body) as response:
                    json.loads(await response.read())

        warm = iter(range(concurrency))
        await asyncio.gather(*(worker(warm) for _ in range(concurrency)))
        queue = iter(range(calls))
        wall0, cpu0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker(queue) for _ in range(concurrency)))
        return time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--backends", nargs="+", default=["aiohttp", "litellm"], choices=["aiohttp", "litellm"])
    args = parser.parse_args()
    proc, url = start_server(args.latency)
    print(f"fake server {url} (separate process), latency {args.latency * 1000:g} ms, concurrency {args.concurrency}")
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} before the run")
    try:
        wall, cpu = asyncio.run(bare_aiohttp(url, args.calls, args.concurrency))
        ideal = args.calls * args.latency / args.concurrency
        print(
            f"{'bare':8s} {args.calls} POSTs, no judge (the ceiling on this machine): wall {wall:6.2f} s, "
            f"{ideal / wall:5.1%} of ideal, client CPU {1000 * cpu / args.calls:5.2f} ms/call"
        )
        with tempfile.TemporaryDirectory() as tmp:
            for name in args.backends:
                measure(name, url, args, Path(tmp) / name, proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
