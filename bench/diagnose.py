"""Benchmark: judge calls per sample of assay's diagnosis beside RAGChecker's, and how far each diagnosis metric moves
between assay's one-call reading of the claim x chunk matrices and the exact per-(claim, chunk) checks.

    python bench/diagnose.py            # k = 5: calls (fake server), then the movement on the demo (offline judge)
    python bench/diagnose.py --k 10
    python bench/diagnose.py --judge hosted_vllm/smollm2-135m --api-base http://127.0.0.1:PORT/v1   # a real model
                                        # (python -m assay.testing.local_model serve prints the URL)

**Calls.** Workload: the demo golden set (built with the offline judge: its reference claims are in the golden set)
and the demo's bm25 run cut to its top k, one answer per line. The judge is ``openai/bench-judge`` on the fake
OpenAI-compatible server through the real aiohttp backend and a fresh cache; the server answers every prompt with
valid output whose answer claims are the answer's sentences, so n (answer claims) is realistic.

assay per sample: ``support`` (reference claims x top-k chunks, 1 call), ``answer_assessment`` (answer claims
extracted and checked against the chunks, 1 call), ``claim_check`` (answer claims x reference and reference claims x
answer, 1 call) = 3; reference claims come from the golden set (extracted once at build time, shared by every run).
``--diagnosis exact`` adds k (ceil(n / 5) + ceil(m / 5)) ``support`` calls, one per chunk and batch of 5 claims.
Relevance labels for unlabelled chunks are counted apart: the diagnosis does not need them.

RAGChecker per sample, with n answer claims, m reference claims and k chunks: 2 extractions, then every claim
checked against each text (the reference answer or the answer, and each of the k chunks). One call per (claim, text)
pair would be 2 + (n + m)(k + 1); RAGChecker's default joint checking puts up to 5 claims of one text in a prompt:
2 + (ceil(n / 5) + ceil(m / 5))(k + 1). Both are computed from the same samples' n, m and k.

**Movement.** The three demo runs evaluated with the judge given (default the offline judge) at k chunks: the context
and answer calls, the claim_check calls, then the exact pair checks on the same samples. Each metric of
:data:`DIAGNOSIS_METRICS` is computed from the same claim verdicts with the one-call matrices and with the exact ones;
printed: its mean over the samples both score, the difference, and whether it exceeds 0.05 (the threshold above which
the exact checks should be that metric's default).
"""

from __future__ import annotations

import argparse
import html
import json
import math
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from assay.formats.golden import GoldenSet
from assay.judge import make_judge
from assay.judge.limits import RetryPolicy
from assay.pipelines.bootstrap import DEMO_SETTINGS, build_golden
from assay.pipelines.evaluate import EvalSettings, evaluate_detailed
from assay.pipelines.evaluate.judging.pair_checks import DIAGNOSIS_MODES, JOINT
from assay.pipelines.evaluate.scoring.names import DIAGNOSIS_NAMES
from assay.testing import FakeOpenAIServer
from assay.text import sentences
from diagnosis_movement import measure, print_movement

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo"
PASSAGE = re.compile(r'<passage-\w+ id="([^"]+)">')
STATEMENT = re.compile(r'<statement-\w+ id="([^"]+)">')
QUESTION = re.compile(r"<question-\w+>\n(.*?)\n</question-\w+>", re.S)
ANSWER = re.compile(r"<answer-\w+>\n(.*?)\n</answer-\w+>", re.S)
DIAGNOSIS_SCHEMAS = ("SupportAssignments", "AnswerAssessment", "ClaimCheck")


def answer(body: dict[str, Any]) -> str:
    """Valid scripted answers per output schema; the answer's claims are its sentences."""
    text = body["messages"][-1]["content"]
    schema = body["response_format"]["json_schema"]["name"]
    if schema == "ListwiseRelevance":
        return json.dumps({"judgements": [{"id": p, "reason": "s", "grade": 2} for p in PASSAGE.findall(text)]})
    if schema == "SupportAssignments":
        items = [{"statement_id": s, "reason": "s", "support": "support", "passage_ids": ["1"]}
                 for s in STATEMENT.findall(text)]  # fmt: skip
        return json.dumps({"assignments": items})
    if schema == "ClaimCheck":
        ids = STATEMENT.findall(text)
        entry = [{"statement_id": s, "reason": "s", "verdict": "entailed"} for s in ids]
        return json.dumps({"answer_claims": [e for e in entry if e["statement_id"].startswith("a")],
                           "reference_claims": [e for e in entry if e["statement_id"].startswith("r")]})  # fmt: skip
    found = ANSWER.search(text)
    claims = [{"claim": s, "reason": "s", "verdict": "supported", "passage_ids": ["1"]}
              for s in sentences(found.group(1) if found else "")]  # fmt: skip
    return json.dumps({"claims": claims, "relevance_reason": "s", "relevance": 3, "noncommittal": False})


def prepare(folder: Path, k: int) -> tuple[Path, Path]:
    golden = build_golden(DEMO / "corpus", judge=make_judge("offline"), settings=DEMO_SETTINGS)
    golden.save(folder / "golden")
    lines = [json.loads(line) for line in (DEMO / "runs" / "bm25.jsonl").read_text().splitlines() if line]
    kept = [{**line, "retrieved": line["retrieved"][:k]} for line in lines if line.get("retrieved")]
    run = folder / "bm25.jsonl"
    run.write_text("".join(json.dumps(line) + "\n" for line in kept))
    return folder / "golden", run


def ragchecker_calls(requests: list[dict[str, Any]], k_of: dict[str, int]) -> list[tuple[int, int]]:
    """RAGChecker's calls per sample, one per (claim, text) pair and with its default joint checking of 5 claims, from
    the claim_check requests (n and m: the claim ids each carries; k: the sample's chunks, found by its question)."""
    per_sample = []
    for body in requests:
        if body["response_format"]["json_schema"]["name"] != "ClaimCheck":
            continue
        text = body["messages"][-1]["content"]
        ids = STATEMENT.findall(text)
        n = sum(s.startswith("a") for s in ids)
        m = len(ids) - n
        found = QUESTION.search(text)
        k = k_of[html.unescape(found.group(1)) if found else ""]
        per_sample.append((2 + (n + m) * (k + 1), 2 + (math.ceil(n / JOINT) + math.ceil(m / JOINT)) * (k + 1)))
    return per_sample


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=5, help="retrieved chunks per sample (default 5)")
    parser.add_argument("--judge", default="offline", help="judge of the movement part (default: offline)")
    parser.add_argument("--api-base", default=None, help="OpenAI-compatible URL of that judge (a local server)")
    parser.add_argument("--concurrency", type=int, default=4, help="judge calls at once (default 4)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per model call (default 120)")
    parser.add_argument("--max-tokens", type=int, default=None, help="output token limit of every prompt")
    parser.add_argument("--queries", type=int, default=None, help="movement on the first N queries of each run only")
    parser.add_argument("--skip-calls", action="store_true", help="only the movement part")
    args = parser.parse_args(argv)
    code = 0 if args.skip_calls else calls(args.k, "approx")  # the target (<= half of RAGChecker's joint 5) is approx's
    for mode in DIAGNOSIS_MODES:
        if mode != "approx" and not args.skip_calls:
            calls(args.k, mode)
    with tempfile.TemporaryDirectory() as tmp:
        golden = build_golden(DEMO / "corpus", judge=make_judge("offline"), settings=DEMO_SETTINGS)
        runs = [
            (path.stem, first_lines(path, args.queries, Path(tmp))) for path in sorted((DEMO / "runs").glob("*.jsonl"))
        ]
        judge = make_judge(args.judge, api_base=args.api_base, api_key="sk-local" if args.api_base else None,
                           cache_dir=Path(tmp) / "cache", concurrency=args.concurrency, timeout=args.timeout,
                           max_tokens=args.max_tokens)  # fmt: skip
        measured = measure(golden, runs, judge, args.k)
    label = (
        f"demo, 3 runs{'' if args.queries is None else f' x {args.queries} queries'}, top {args.k}, judge {args.judge}"
    )
    moved = print_movement(measured, label)
    print(f"  moved by more than 0.05: {', '.join(moved) if moved else 'none'}")
    if measured.samples == 0:
        print("no sample was diagnosed: nothing to compare", file=sys.stderr)
        return 1
    return code


def first_lines(path: Path, n: int | None, folder: Path) -> Path:
    """``path``, or a copy of its first ``n`` lines in ``folder``."""
    if n is None:
        return path
    out = folder / path.name
    out.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:n]))
    return out


def calls(k: int, mode: str) -> int:
    """The call counts of one ``--diagnosis`` mode against RAGChecker's (the first part of the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(answer) as server:
        golden, run = prepare(Path(tmp), k)
        judge = make_judge("openai/bench-judge", api_base=server.url, api_key="sk-bench",
                           cache_dir=Path(tmp) / "cache", retry=RetryPolicy.immediate())  # fmt: skip
        metrics = (*DIAGNOSIS_NAMES, "context_recall", "faithfulness")
        settings = EvalSettings(k_values=(k,), metrics=metrics, context_k=k, n_boot=200, diagnosis=mode)
        done = evaluate_detailed(golden, [("bm25", run)], judge=judge, settings=settings)
        by_schema: dict[str, int] = {}
        for body in server.requests:
            schema = body["response_format"]["json_schema"]["name"]
            by_schema[schema] = by_schema.get(schema, 0) + 1
        print(f"\n--diagnosis {mode}")
        return report(GoldenSet.load(golden), run, k, by_schema, server.requests, done.result.runs[0].metrics)


def _chunks_per_question(gold: GoldenSet, run: Path, k: int) -> dict[str, int]:
    lines = map(json.loads, run.read_text(encoding="utf-8").splitlines())
    return {gold.question(line["query_id"]).text: min(k, len(line["retrieved"])) for line in lines}


def report(gold: GoldenSet, run: Path, k: int, by_schema: dict[str, int], requests: list[dict[str, Any]],
           metrics: dict[str, Any]) -> int:  # fmt: skip
    samples = by_schema.get("ClaimCheck", 0)
    if not samples:
        print("no claim_check call was made", file=sys.stderr)
        return 1
    both = ragchecker_calls(requests, _chunks_per_question(gold, run, k))
    rag, joint = [p for p, _ in both], [j for _, j in both]
    diag = sum(by_schema.get(s, 0) for s in DIAGNOSIS_SCHEMAS)
    print(f"{samples} diagnosed samples (bm25 top {k}, demo golden set; lines without reference claims are not")
    print("diagnosed, their support/answer calls still count below); calls per diagnosed sample:")
    for schema, count in sorted(by_schema.items()):
        note = "" if schema in DIAGNOSIS_SCHEMAS else "   (relevance labels: not needed by the diagnosis)"
        print(f"  {schema:<20}{count / samples:>8.2f}{note}")
    print(f"  {'assay diagnosis':<20}{diag / samples:>8.2f}   (the diagnosis prompts' calls / diagnosed samples)")
    span = f"min {min(rag)}, max {max(rag)}"
    print(f"  {'RAGChecker per pair':<20}{sum(rag) / len(rag):>8.2f}   2 + (n + m)(k + 1) on the same samples, {span}")
    span = f"min {min(joint)}, max {max(joint)}"
    formula = "2 + (ceil(n/5) + ceil(m/5))(k + 1), its default"
    print(f"  {'RAGChecker joint 5':<20}{sum(joint) / len(joint):>8.2f}   {formula}, {span}")
    ratio = diag / sum(joint)
    target = " (target for approx: <= 0.5 of joint 5)"
    print(f"  assay / RAGChecker (joint 5): {ratio:.3f}; per pair: {diag / sum(rag):.3f}{target}")
    print(f"claim_f1 scored on {metrics['claim_f1'].n_scored} samples")
    return 0 if ratio <= 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
