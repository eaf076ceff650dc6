"""Benchmark: judge calls per sample of assay's diagnosis metrics, beside RAGChecker's design on the same samples.

    python bench/diagnose.py            # k = 5
    python bench/diagnose.py --k 10

Workload: the demo golden set (built with the offline judge: its reference claims are in the golden set) and the
demo's bm25 run cut to its top k, one answer per line. The judge is ``openai/bench-judge`` on the fake
OpenAI-compatible server through the real aiohttp backend and a fresh cache; the server answers every prompt with
valid output whose answer claims are the answer's sentences, so n (answer claims) is realistic. Metrics: the
diagnosis set (overall, retriever, generator) with context recall and faithfulness.

assay per sample: ``support`` (reference claims x top-k chunks, 1 call), ``answer_assessment`` (answer claims
extracted and checked against the chunks, 1 call), ``claim_check`` (answer claims x reference and reference claims x
answer, 1 call) = 3; reference claims come from the golden set (extracted once at build time, shared by every run).
Relevance labels for unlabelled chunks are counted apart: the diagnosis does not need them.

RAGChecker's design per sample (claims extracted from the answer and from the reference, then each claim checked
against each text on its own: the reference answer, the answer, each of the k chunks), with n answer claims and m
reference claims: 2 + n (answer claims x reference) + m (reference claims x answer) + n k + m k = 2 + (n + m)(k + 1).
Computed here from the same samples' n, m and k. The target is assay <= half of it.
"""

from __future__ import annotations

import argparse
import html
import json
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
from assay.pipelines.evaluate.diagnosis import DIAGNOSIS_NAMES
from assay.testing import FakeOpenAIServer
from assay.text import sentences

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo"
PASSAGE = re.compile(r'<passage id="([^"]+)">')
STATEMENT = re.compile(r'<statement id="([^"]+)">')
QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.S)
ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)
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


def ragchecker_calls(requests: list[dict[str, Any]], k_of: dict[str, int]) -> list[int]:
    """RAGChecker's calls per sample, from the claim_check requests (n and m: the claim ids each carries; k: the
    sample's chunks, found by its question text)."""
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
        per_sample.append(2 + (n + m) * (k + 1))
    return per_sample


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--k", type=int, default=5, help="retrieved chunks per sample (default 5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(answer) as server:
        golden, run = prepare(Path(tmp), args.k)
        judge = make_judge("openai/bench-judge", api_base=server.url, api_key="sk-bench",
                           cache_dir=Path(tmp) / "cache", retry=RetryPolicy.immediate())  # fmt: skip
        metrics = (*DIAGNOSIS_NAMES, "context_recall", "faithfulness")
        settings = EvalSettings(k_values=(args.k,), metrics=metrics, context_k=args.k, n_boot=200)
        done = evaluate_detailed(golden, [("bm25", run)], judge=judge, settings=settings)
        by_schema: dict[str, int] = {}
        for body in server.requests:
            schema = body["response_format"]["json_schema"]["name"]
            by_schema[schema] = by_schema.get(schema, 0) + 1
        return report(GoldenSet.load(golden), run, args.k, by_schema, server.requests, done.result.runs[0].metrics)


def _chunks_per_question(gold: GoldenSet, run: Path, k: int) -> dict[str, int]:
    lines = map(json.loads, run.read_text().splitlines())
    return {gold.question(line["query_id"]).text: min(k, len(line["retrieved"])) for line in lines}


def report(gold: GoldenSet, run: Path, k: int, by_schema: dict[str, int], requests: list[dict[str, Any]],
           metrics: dict[str, Any]) -> int:  # fmt: skip
    samples = by_schema.get("ClaimCheck", 0)
    if not samples:
        print("no claim_check call was made", file=sys.stderr)
        return 1
    rag = ragchecker_calls(requests, _chunks_per_question(gold, run, k))
    diag = sum(by_schema.get(s, 0) for s in DIAGNOSIS_SCHEMAS)
    print(f"{samples} diagnosed samples (bm25 top {k}, demo golden set; lines without reference claims are not")
    print("diagnosed, their support/answer calls still count below); calls per diagnosed sample:")
    for schema, count in sorted(by_schema.items()):
        note = "" if schema in DIAGNOSIS_SCHEMAS else "   (relevance labels: not needed by the diagnosis)"
        print(f"  {schema:<20}{count / samples:>8.2f}{note}")
    print(f"  {'assay diagnosis':<20}{diag / samples:>8.2f}   (the three prompts' calls / diagnosed samples)")
    span = f"min {min(rag)}, max {max(rag)}"
    print(f"  {'RAGChecker design':<20}{sum(rag) / len(rag):>8.2f}   2 + (n + m)(k + 1) on the same samples, {span}")
    ratio = diag / sum(rag)
    print(f"  assay / RAGChecker: {ratio:.3f} (target <= 0.5)")
    print(f"claim_f1 scored on {metrics['claim_f1'].n_scored} samples")
    return 0 if ratio <= 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
