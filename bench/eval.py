"""Benchmark: judge calls and prompt tokens of ``assay eval`` per evaluated sample, beside RAGAS's call shape.

    python bench/eval.py                   # k = 5, RAGAS prompt overhead assumed 500 tokens per prompt
    python bench/eval.py --overhead 300

Workload: the demo golden set (built with the offline judge) with every relevance label removed, so that every
retrieved chunk must be judged as RAGAS would; the demo's bm25 and hybrid runs cut to their top k, each line with one
answer. The judge is ``openai/bench-judge`` on the fake OpenAI-compatible server (scripted valid answers), through the
real aiohttp backend and a fresh judge cache. The four metrics are RAGAS's: context precision
(``ragas_context_precision@k``), context recall, faithfulness, answer relevance; nugget recall is switched off.

Per sample, assay makes: one ``relevance_listwise`` call for the question's unlabelled top-k chunks (k = 5 <= N),
one ``support`` call (context recall) and one ``answer_assessment`` call (faithfulness, attribution and answer
relevance together). RAGAS's shape for the same four (its documented prompts, one sample with k chunks): context
precision one call per chunk (k), context recall 1, faithfulness 2 (statements, then verdicts), answer relevance 1 call
with 3 generations counted as 3 (older RAGAS made 3 calls) = k + 6 = 11. RAGAS prompt tokens are computed from the
same texts with ``assay.text.count_tokens`` plus ``--overhead`` tokens of instructions and few-shot examples per
prompt (an assumption, stated in the output):

    precision   k x (O + question + reference + chunk_i)
    recall      O + question + all k chunks + reference
    faithful.   (O + question + answer) + (O + all k chunks + answer)      statements ~ the answer's own tokens
    relevance   3 x (O + answer)                                            embeddings not counted

assay's prompt tokens are counted the same way (``count_tokens``) over the messages the server received.
Then the second system (hybrid) is evaluated on the same golden set after the first: its relevance call carries
only chunks never judged, which the benchmark checks pair by pair.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.judge import make_judge
from assay.judge.limits import RetryPolicy
from assay.pipelines.bootstrap import DEMO_SETTINGS, build_golden
from assay.pipelines.evaluate import EvalSettings, evaluate_detailed
from assay.testing import FakeOpenAIServer
from assay.text import count_tokens

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo"
PASSAGE = re.compile(r'<passage-\w+ id="([^"]+)">')
STATEMENT = re.compile(r'<statement-\w+ id="([^"]+)">')


def answer(body: dict[str, Any]) -> str:
    """Valid scripted answers per output schema (grades and verdicts do not matter for counting)."""
    text = body["messages"][-1]["content"]
    schema = body["response_format"]["json_schema"]["name"]
    if schema == "ListwiseRelevance":
        items = [{"id": pid, "reason": "scripted", "grade": 2} for pid in PASSAGE.findall(text)]
        return json.dumps({"judgements": items})
    if schema == "SupportAssignments":
        items = [
            {"statement_id": sid, "reason": "scripted", "support": "support", "passage_ids": ["1"]}
            for sid in STATEMENT.findall(text)
        ]
        return json.dumps({"assignments": items})
    claim = {"claim": "scripted", "reason": "scripted", "verdict": "supported", "passage_ids": ["1"]}
    return json.dumps({"claims": [claim], "relevance_reason": "scripted", "relevance": 3, "noncommittal": False})


def prepare(folder: Path, k: int) -> tuple[Path, dict[str, Path]]:
    """The unlabelled demo golden set and the two runs cut to their top k (lines with an empty list dropped)."""
    golden = build_golden(DEMO / "corpus", judge=make_judge("offline"), settings=DEMO_SETTINGS)
    golden.qrels = []
    golden.save(folder / "golden")
    runs = {}
    for name in ("bm25", "hybrid"):
        lines = [json.loads(line) for line in (DEMO / "runs" / f"{name}.jsonl").read_text().splitlines() if line]
        kept = [{**line, "retrieved": line["retrieved"][:k]} for line in lines if line.get("retrieved")]
        runs[name] = folder / f"{name}.jsonl"
        runs[name].write_text("".join(json.dumps(line) + "\n" for line in kept))
    return folder / "golden", runs


def _tokens(body: dict[str, Any]) -> int:
    return sum(count_tokens(m["content"]) for m in body["messages"])


def ragas_shape(golden: Path, run: Path, k: int, overhead: int) -> tuple[int, int, int]:
    """(samples, calls, prompt tokens) of RAGAS's four metrics over the run's lines, from the same texts."""
    from assay.formats.golden import GoldenSet

    gold = GoldenSet.load(golden)
    samples = calls = tokens = 0
    for line in map(json.loads, run.read_text(encoding="utf-8").splitlines()):
        q = gold.question(line["query_id"])
        chunks = [count_tokens(gold.chunk(item["id"]).text) for item in line["retrieved"][:k]]
        question, reference, ans = (count_tokens(x or "") for x in (q.text, q.reference_answer, line.get("answer")))
        context = sum(chunks)
        tokens += sum(overhead + question + reference + c for c in chunks)
        tokens += overhead + question + context + reference
        tokens += (overhead + question + ans) + (overhead + context + ans)
        tokens += 3 * (overhead + ans)
        calls += len(chunks) + 1 + 2 + 3
        samples += 1
    return samples, calls, tokens


def judged_pairs(requests: list[dict[str, Any]]) -> int:
    listwise = [b for b in requests if b["response_format"]["json_schema"]["name"] == "ListwiseRelevance"]
    return sum(len(PASSAGE.findall(b["messages"][-1]["content"])) for b in listwise)


def measure(golden: Path, run: Path, name: str, server: FakeOpenAIServer, cache: Path, k: int) -> dict[str, Any]:
    server.requests.clear()
    judge = make_judge(
        "openai/bench-judge", api_base=server.url, api_key="sk-bench", cache_dir=cache, retry=RetryPolicy.immediate()
    )
    metrics = (f"ragas_context_precision@{k}", "context_recall", "faithfulness", "answer_relevance")
    settings = EvalSettings(k_values=(k,), metrics=metrics, listwise=k, context_k=k, n_boot=200)
    started = time.perf_counter()
    done = evaluate_detailed(golden, [(name, run)], judge=judge, settings=settings)
    seconds = time.perf_counter() - started
    by_schema: dict[str, list[int]] = {}
    for body in server.requests:
        by_schema.setdefault(body["response_format"]["json_schema"]["name"], []).append(_tokens(body))
    samples = done.result.runs[0].counts.queries_evaluated
    return {"samples": samples, "by_schema": by_schema, "pairs": judged_pairs(server.requests), "seconds": seconds}


def report(label: str, m: dict[str, Any], ragas: tuple[int, int, int], floor: tuple[int, int, int]) -> None:
    n = m["samples"]
    calls = sum(len(v) for v in m["by_schema"].values())
    tokens = sum(sum(v) for v in m["by_schema"].values())
    print(f"\n{label}: {n} samples, wall {m['seconds']:.2f} s")
    print(f"  {'prompt':<22}{'calls/sample':>14}{'prompt tokens/sample':>24}")
    for schema, values in sorted(m["by_schema"].items()):
        print(f"  {schema:<22}{len(values) / n:>14.2f}{sum(values) / n:>24.0f}")
    print(f"  {'assay total':<22}{calls / n:>14.2f}{tokens / n:>24.0f}")
    r_n, r_calls, r_tokens = ragas
    print(f"  {'RAGAS shape':<22}{r_calls / r_n:>14.2f}{r_tokens / r_n:>24.0f}")
    print(
        f"  {'RAGAS, texts only':<22}{floor[1] / floor[0]:>14.2f}{floor[2] / floor[0]:>24.0f}   (overhead 0: a floor)"
    )
    share = f"prompt tokens {tokens / r_tokens:.2f} ({tokens / floor[2]:.2f} of the floor)"
    print(f"  assay / RAGAS: calls {calls / r_calls:.2f}, {share}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=5, help="retrieved chunks per sample (default 5)")
    parser.add_argument("--overhead", type=int, default=500, help="assumed RAGAS instructions+examples per prompt")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(answer) as server:
        folder = Path(tmp)
        golden, runs = prepare(folder, args.k)
        print(f"RAGAS prompt overhead assumed: {args.overhead} tokens per prompt (instructions + few-shot examples)")
        first = measure(golden, runs["bm25"], "bm25", server, folder / "cache", args.k)
        shapes = {
            name: (ragas_shape(golden, path, args.k, args.overhead), ragas_shape(golden, path, args.k, 0))
            for name, path in runs.items()
        }
        report("first system (bm25), every chunk unlabelled", first, *shapes["bm25"])
        second = measure(golden, runs["hybrid"], "hybrid", server, folder / "cache", args.k)
        report("second system (hybrid), same golden set after bm25", second, *shapes["hybrid"])
        pairs = {name: _pairs(path, args.k) for name, path in runs.items()}
        new = len(pairs["hybrid"] - pairs["bm25"])
        print(f"\nsecond system relevance: {second['pairs']} pairs judged; {new} of its "
              f"{len(pairs['hybrid'])} top-{args.k} pairs were never judged before; "
              f"{len(pairs['hybrid'] & pairs['bm25'])} reused from the first system")  # fmt: skip
        if second["pairs"] != new:
            print("MISMATCH: the second system paid for chunks judged before", file=sys.stderr)
            return 1
    return 0


def _pairs(run: Path, k: int) -> set[tuple[str, str]]:
    lines = map(json.loads, run.read_text(encoding="utf-8").splitlines())
    return {(line["query_id"], item["id"]) for line in lines for item in line["retrieved"][:k]}


if __name__ == "__main__":
    sys.exit(main())
