"""Benchmark of ``assay run`` against a fake RAG endpoint on 127.0.0.1 (:class:`assay.testing.fake_target.FakeTarget`).

1. Throughput: N questions, a target (in a process of its own) answering in ``--latency`` seconds,
   ``--concurrency`` calls at once; the wall time against the ideal ``N x latency / concurrency``, and the client's
   CPU per question. Target (issue 21): >= 90% of the ideal at 200 ms, concurrency 32, 1,000 questions.
2. Failures: the same run with 10% of the questions failing on their first try (500, a hang past the timeout,
   malformed JSON, a connection reset, in equal shares) and 1% failing on every try (500). Every injected failure
   is counted (server side) and retried by policy (client side); the always-failing ones end as failed lines
   (``error``, no ``retrieved``/``answer``: unscored, never scored 0); nothing else fails.
3. ``kill -9``: ``assay run`` in a subprocess killed once it has kept ``--kill-after`` answers; the rerun must keep
   every answer the killed run finished and ask the server only for the rest.

    python bench/targets.py                         # 1,000 questions, 200 ms, concurrency 32
    python bench/targets.py --questions 300 --latency 0.05
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.formats.golden import GoldenSet
from assay.targets import TargetSettings, TargetSpec, run_target
from assay.testing.fake_target import FakeTarget
from assay.types import Chunk, Document, Manifest, Question

KINDS = ("500", "hang", "malformed", "reset")


def make_golden(n: int) -> GoldenSet:
    docs = [Document(id=f"d{i}", source=f"d{i}.txt", text=f"Fact {i}.", content_hash="h") for i in range(n)]
    chunks = [Chunk(id=f"c{i}", doc_id=f"d{i}", ordinal=0, text=f"Fact {i}.") for i in range(n)]
    questions = [Question(id=f"q{i}", text=f"What is fact {i}?") for i in range(n)]
    return GoldenSet(Manifest(assay_version="bench"), docs, chunks, questions)


def _bucket(query_id: str) -> int:
    return int(hashlib.blake2b(query_id.encode(), digest_size=4).hexdigest(), 16) % 100


def fault(body: dict[str, Any], attempt: int) -> str | None:
    """10% of the questions fail on their first try (a kind each, in turn); 1% (bucket 99) fail on every try."""
    bucket = _bucket(str(body.get("query_id")))
    if bucket == 99:
        return "500"
    return KINDS[bucket % 4] if bucket < 10 and attempt == 1 else None


def throughput(n: int, latency: float, concurrency: int) -> None:
    golden = make_golden(n)
    settings = TargetSettings(concurrency=concurrency, timeout=30)
    server = subprocess.Popen([sys.executable, "-m", "assay.testing.fake_target", "--latency", str(latency)],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        url = server.stdout.readline().strip() if server.stdout else ""
        start, cpu = time.perf_counter(), time.process_time()
        done = run_target(golden, TargetSpec(url), settings=settings)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        server.kill()
        server.wait()
    ideal = n * latency / concurrency
    s = done.stats
    print(f"1. throughput: {n:,} questions, {latency * 1000:.0f} ms target, concurrency {concurrency}")
    print(
        f"   wall {wall:.2f} s, ideal {ideal:.2f} s: {ideal / wall:.1%} of the ideal throughput "
        f"({n / wall:.1f} q/s); p50 {s.percentile(50):.0f} ms, p95 {s.percentile(95):.0f} ms; failed {done.failed}; "
        f"client CPU {cpu / n * 1000:.2f} ms per question"
    )
    print(f"   target >= 90%: {'met' if ideal / wall >= 0.9 else 'NOT met'}")


def failures(n: int, latency: float, concurrency: int) -> None:
    golden = make_golden(n)
    settings = TargetSettings(concurrency=concurrency, timeout=1.0, attempts=4, backoff=0.2)
    with FakeTarget(latency=latency, fault=fault) as server:
        start = time.perf_counter()
        done = run_target(golden, TargetSpec(server.url), settings=settings)
        wall = time.perf_counter() - start
        asked = sum(server.counts.values())
    buckets = [_bucket(q.id) for q in golden.questions]
    first_try = {kind: sum(1 for b in buckets if b < 10 and KINDS[b % 4] == kind) for kind in KINDS}
    always = sum(1 for b in buckets if b == 99)
    injected = sum(first_try.values()) + always * settings.attempts
    failed = [line for line in done.lines if "error" in line]
    scored_as_zero = sum(1 for line in failed if "retrieved" in line or "answer" in line)
    print(f"2. failures: {n:,} questions; injected on the first try {first_try}, {always} always failing (500)")
    print(
        f"   server saw {asked:,} requests = {n:,} + {asked - n:,} retries; injected failures {injected:,}; "
        f"client retries {done.stats.retries:,}; wall {wall:.2f} s"
    )
    kinds = dict(done.stats.failed)
    print(
        f"   failed lines {len(failed)} (by kind {kinds}), expected {always}; failed lines with retrieved or "
        f"answer (would be scored): {scored_as_zero}"
    )
    ok = done.stats.retries == injected - always and len(failed) == always and scored_as_zero == 0
    print(f"   every failure counted and retried by policy, none scored: {'yes' if ok else 'NO'}")


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0


def kill_and_resume(n: int, latency: float, concurrency: int, kill_after: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeTarget(latency=latency) as server:
        root = Path(tmp)
        make_golden(n).save(root / "golden")
        cmd = [str(Path(sys.executable).parent / "assay"), "run", str(root / "golden"), "--target", server.url,
               "-o", str(root / "run.jsonl"), "--cache-dir", str(root / "cache"), "--label", "bench",
               "--concurrency", str(concurrency)]  # fmt: skip
        process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = None
        while process.poll() is None:
            files = list((root / "cache").glob("*.jsonl")) if (root / "cache").exists() else []
            journal = files[0] if files else None
            if journal is not None and _lines(journal) >= kill_after:
                os.kill(process.pid, signal.SIGKILL)
                break
            time.sleep(0.01)
        process.wait()
        if journal is None:
            raise SystemExit("the run ended before it could be killed: raise --questions or lower --kill-after")
        kept = {json.loads(line)["record"]["query_id"]: json.loads(line)["record"]
                for line in journal.read_text(encoding="utf-8").splitlines() if line.endswith("}")}  # fmt: skip
        asked_before = sum(server.counts.values())
        server.counts.clear()
        rerun = subprocess.run(cmd, capture_output=True, text=True, check=False)
        asked_again = set(server.counts)
        final = {
            json.loads(line)["query_id"]: json.loads(line) for line in (root / "run.jsonl").read_text().splitlines()[1:]
        }
    lost = sum(1 for qid, record in kept.items() if final.get(qid, {}).get("retrieved") != record.get("retrieved"))
    overlap = len(asked_again & set(kept))
    print(f"3. kill -9: killed after {len(kept):,} answers kept ({asked_before:,} requests made, the rest in flight)")
    print(
        f"   rerun exit {rerun.returncode}: asked {len(asked_again):,} questions (= {n:,} - {len(kept):,} kept: "
        f"{'yes' if len(asked_again) == n - len(kept) else 'NO'}), of them already kept: {overlap}; "
        f"finished answers lost: {lost}; final run lines {len(final):,}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--kill-after", type=int, default=None, help="answers kept before kill -9 (default: 40%%)")
    args = parser.parse_args()
    throughput(args.questions, args.latency, args.concurrency)
    failures(args.questions, args.latency, args.concurrency)
    kill_and_resume(args.questions, args.latency, args.concurrency, args.kill_after or int(args.questions * 0.4))


if __name__ == "__main__":
    main()
