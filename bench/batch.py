"""Benchmark of batch judging (``--batch``): 10,000 relevance labels through the fake batch API, then the same with
the process killed after submission and restarted, then what batches save on a 10,000-question build.

1. The fake batch API runs in a process of its own (``python -m assay.testing.fake_batches``, each batch taking
   ``--turnaround`` seconds), so its CPU is not counted as assay's. 10,000 (question, passage) pairs (500 questions
   x 20 passages of synthetic product sheets) are graded pointwise through batches into a new cache. The wall time
   is split into the time spent in the provider's API calls (upload, create, status checks, downloads), the waits
   between status checks, and the rest: the time outside the provider (rendering and keying the prompts, cache
   reads, writing the input file, parsing and validating the output, cache writes, the ledger), printed per 1,000
   requests.
2. The same pairs with a new cache, graded by a child process that is killed (SIGKILL) as soon as the ledger names
   its created batch, then run again: it must pick the batch up (nothing submitted again), and every label must be
   scored. Paid twice is counted from the provider's side: a request (custom_id = cache key) found in the input
   files of two batches.
3. A build of ``--docs`` seed documents (one question each, default settings) through batches on an in-process fake,
   priced as gpt-4o-mini at litellm's direct and batch prices, scaled to 10,000 accepted questions. The fake's
   answers are short, so completion tokens are below a real model's; OpenAI's batch price is half the direct price
   on input and output alike, so the saving is half the bill whatever the mix.

    python bench/batch.py              # 10,000 labels; a build of 200 documents
    python bench/batch.py --pairs 2000 --docs 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.judge import make_judge
from assay.judge.batches import BatchAPI, Ledger, use_batches
from assay.judge.batches.status import batches
from assay.judge.relevance import POINTWISE_PROMPT
from assay.pipelines.bootstrap import BuildSettings, build_golden
from assay.testing.fake_batches import FakeBatchServer
from build import answer, document, write_corpus

MODEL = "openai/gpt-4o-mini"


class TimedAPI(BatchAPI):
    """The batch API with the seconds spent in its calls added up."""

    spent = 0.0

    async def _request(self, method: str, path: str, **kwargs: Any) -> bytes:
        start = time.perf_counter()
        try:
            return await super()._request(method, path, **kwargs)
        finally:
            TimedAPI.spent += time.perf_counter() - start


def pairs(n: int, seed: int) -> list[dict[str, str]]:
    """``n`` (question, passage) pairs: a question per 20 passages of synthetic product sheets."""
    rng = random.Random(seed)
    sheets = [document(i, rng) for i in range(max(1, n // 20))]
    paragraphs = [p for sheet in sheets for p in sheet.split("\n") if len(p) > 200]
    out = []
    for i in range(n):
        question = f"What does sheet {i // 20} say about returns and refunds of item {i // 20}?"
        out.append({"question": question, "passage": paragraphs[(i * 7919) % len(paragraphs)]})
    return out


def grade_all(url: str, cache: Path, items: list[dict[str, str]]) -> dict[str, Any]:
    """Grade ``items`` through batches; wall, API and wait seconds, and what happened."""
    judge = make_judge(MODEL, api_base=url, api_key="k", cache_dir=cache)
    runner = use_batches(judge)
    runner.api = TimedAPI(url, api_key="k")
    waited = 0.0

    async def sleep(seconds: float) -> None:
        nonlocal waited
        waited += seconds
        await asyncio.sleep(seconds)

    runner.sleep = sleep
    TimedAPI.spent = 0.0
    start = time.perf_counter()
    results = judge.judge_many(POINTWISE_PROMPT, items, stage="relevance")
    wall = time.perf_counter() - start
    t = runner.totals
    return {
        "wall": wall,
        "api": TimedAPI.spent,
        "waited": waited,
        "scored": sum(r.ok for r in results),
        "submitted": t.submitted,
        "resumed": t.resumed,
        "batches": t.batches,
    }


def paid_twice(url: str, before: set[str]) -> tuple[int, int, set[str]]:
    """(requests in the input files of two or more batches, requests in all, batch ids) as the provider lists them,
    over the batches not in ``before``."""

    async def read() -> tuple[int, int, set[str]]:
        api = BatchAPI(url, api_key="k")
        try:
            seen: dict[str, int] = {}
            batches = [b for b in await api.list() if b["id"] not in before]
            for batch in batches:
                for line in (await api.content(batch["input_file_id"])).splitlines():
                    key = json.loads(line)["custom_id"]
                    seen[key] = seen.get(key, 0) + 1
            return sum(1 for n in seen.values() if n > 1), len(seen), {b["id"] for b in batches}
        finally:
            await api.aclose()

    return asyncio.run(read())


def killed_and_restarted(url: str, cache: Path, n: int, seed: int) -> dict[str, Any]:
    """Run the child until its batch is created, kill it, run it again to the end; the second run's report."""
    child = [sys.executable, __file__, "--child", url, str(cache), "--pairs", str(n), "--seed", str(seed)]
    process = subprocess.Popen(child, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    ledger = Ledger.beside(cache)
    while not (ledger.path.is_file() and all(r.id for r in ledger.load()) and ledger.load()):
        if process.poll() is not None:
            raise SystemExit("the child ended before it was killed: raise --turnaround")
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    done = subprocess.run(child, capture_output=True, text=True, check=True)
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


def build_price(docs: int, seed: int) -> dict[str, Any]:
    """A build through batches on an in-process fake, with its cost at the batch and the direct price."""
    with tempfile.TemporaryDirectory() as tmp, FakeBatchServer(answer, record=False) as server:
        write_corpus(Path(tmp) / "corpus", docs, seed)
        judge = make_judge(MODEL, api_base=server.url, api_key="k", cache_dir=Path(tmp) / "cache")
        runner = use_batches(judge)
        golden = build_golden(Path(tmp) / "corpus", judge=judge, settings=BuildSettings(per_doc=1, seed=seed))
    t = runner.totals
    return {"accepted": len(golden.questions), "calls": t.answered, "batch": t.cost_usd, "direct": t.direct_cost_usd}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--turnaround", type=float, default=3.0, help="seconds each fake batch takes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=2, metavar=("URL", "CACHE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    items = pairs(args.pairs, args.seed)
    if args.child:
        print(json.dumps(grade_all(args.child[0], Path(args.child[1]), items)))
        return
    serve = [sys.executable, "-m", "assay.testing.fake_batches", "--turnaround", str(args.turnaround)]
    server = subprocess.Popen(serve, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip() if server.stdout else ""
        with tempfile.TemporaryDirectory() as tmp:
            first = grade_all(url, Path(tmp) / "a", items)
            _, _, first_batches = paid_twice(url, set())
            second = killed_and_restarted(url, Path(tmp) / "b", args.pairs, args.seed)
            twice, requests, _ = paid_twice(url, first_batches)
    finally:
        server.terminate()
        server.wait()
    outside = first["wall"] - first["api"] - first["waited"]
    through = f"{batches(first['batches'])} (fake provider, {args.turnaround:g} s each)"
    print(f"{args.pairs:,} relevance labels through {through}")
    print(
        f"  run: wall {first['wall']:.2f} s = provider API calls {first['api']:.2f} s + waits between checks "
        f"{first['waited']:.2f} s + outside the provider {outside:.2f} s -> {1000 * outside / args.pairs:.3f} s "
        f"per 1,000 requests; {first['scored']:,} scored"
    )
    lost = args.pairs - second["scored"]
    print(
        f"  killed after submission, restarted: {second['resumed']:,} requests picked up, {second['submitted']:,} "
        f"submitted again, {second['scored']:,} scored, {lost} lost, {twice} paid twice "
        f"({requests:,} distinct requests in the batches of the killed run and its restart)"
    )
    price = build_price(args.docs, args.seed)
    scale = 10_000 / max(price["accepted"], 1)
    print(
        f"build of {args.docs} documents through batches: {price['accepted']} questions, {price['calls']} calls "
        f"({price['calls'] / max(price['accepted'], 1):.2f} per question); as {MODEL} scaled to 10,000 questions: "
        f"direct ${price['direct'] * scale:.2f}, batch ${price['batch'] * scale:.2f}, "
        f"saving ${(price['direct'] - price['batch']) * scale:.2f}"
    )
    if lost or twice:
        raise SystemExit("batch judging lost requests or paid for one twice")


if __name__ == "__main__":
    main()
