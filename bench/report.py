"""Benchmark of ``report.html``: its size and the time it takes to open in headless Chromium, small and large.

Two reports:

- **demo**: a real evaluation, as ``assay demo`` runs it: the bundled corpus built into a golden set with the offline
  judge, then four runs evaluated (the demo's bm25, hybrid and weak, and bm25 cut to its top 5 as a fourth);
- **synthetic** (``--runs`` x ``--questions``, default 200 x 1,000): an :class:`EvalResult` with the demo's metric
  names, one comparison per run against the first on the summary metrics, every per-query row, and an explorer view
  of every question (10 passages per run drawn from a pool of texts, an answer and three claims). It is built
  directly, without the evaluator, to measure the report alone.

For each: the file size, the time to render it in Python, and in headless Chromium (1280 x 900) the time from
navigation to the ``load`` event, to the verdict drawn, and to the explorer's first question shown (the lazy data
decompressed on first use). Chromium is Debian's, launched with the test suite's offline flags.

    python bench/report.py                     # demo and 200 runs x 1,000 questions
    python bench/report.py --runs 20 --questions 200
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.results import (
    ClaimView,
    Comparison,
    EvalResult,
    MetricSummary,
    PassageView,
    QueryResult,
    QuestionView,
    RunResult,
    RunView,
)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]  # fmt: skip
METRICS = ["ndcg@10", "P@10", "recall@10", "map", "mrr", "ndcg@1000t", "recall@1000t", "span_recall@10",
           "ragas_context_precision@10", "context_recall", "faithfulness", "answer_relevance",
           "nugget_recall_all_strict", "claim_precision", "claim_recall", "hallucination"]  # fmt: skip
WORDS = "tent stove return refund warranty member order boot jacket store policy repair days card gift".split()


def demo_report(folder: Path) -> tuple[Path, float]:
    """The demo golden set, four runs evaluated, the report written; (report.html, seconds to write it)."""
    from assay.cli.demo import demo_root
    from assay.judge import make_judge
    from assay.pipelines.bootstrap import DEMO_SETTINGS, build_golden
    from assay.pipelines.evaluate import EvalSettings, evaluate_detailed
    from assay.report import write_report

    root = demo_root()
    judge = make_judge("offline")
    build_golden(root / "corpus", judge=judge, settings=DEMO_SETTINGS, output=folder / "golden")
    lines = [json.loads(t) for t in (root / "runs" / "bm25.jsonl").read_text().splitlines() if t.strip()]
    top5 = [{**line, "retrieved": line["retrieved"][:5]} for line in lines if "query_id" in line]
    specs: list[Any] = [root / "runs" / f"{name}.jsonl" for name in ("bm25", "hybrid", "weak")] + [("top5", top5)]
    done = evaluate_detailed(folder / "golden", specs, judge=judge, settings=EvalSettings(n_boot=500))
    started = time.perf_counter()
    paths = write_report(done.result, folder / "report", done.per_query, done.questions)
    return paths["report.html"], time.perf_counter() - started


def _summary(rng: random.Random, base: float) -> MetricSummary:
    mean = min(1.0, max(0.0, base + rng.uniform(-0.1, 0.1)))
    return MetricSummary(mean=mean, low=max(0.0, mean - 0.05), high=min(1.0, mean + 0.05), n_scored=900,
                         n_unscored=100, unscored_reasons={"no_relevant_chunks": 100})  # fmt: skip


def _comparison(rng: random.Random, a: str, b: str, metric: str, runs: int) -> Comparison:
    delta = rng.uniform(-0.08, 0.08)
    significant = abs(delta) > 0.03
    return Comparison(a=a, b=b, metric=metric, n=900, delta=delta, low=delta - 0.03, high=delta + 0.03,
                      p_value=0.001 if significant else 0.4, p_adjusted=0.01 if significant else 0.9,
                      significant=significant, verdict=f"{b} against {a} on {metric}: {delta:+.3f}.",
                      family_size=runs - 1, primary=metric == "ndcg@10", d_z=delta * 5, resamples=10000)  # fmt: skip


def synthetic(n_runs: int, n_questions: int, seed: int = 0) -> tuple[EvalResult, list[QueryResult], list[QuestionView]]:
    """A result of ``n_runs`` runs over ``n_questions`` questions, with per-query rows and explorer views."""
    rng = random.Random(seed)
    names = [f"run{i:03d}" for i in range(n_runs)]
    pool = [" ".join(rng.choice(WORDS) for _ in range(110)) for _ in range(4 * n_questions)]
    qids = [f"q{i:05d}" for i in range(n_questions)]
    runs = [RunResult(name=name, path=f"runs/{name}.jsonl", metrics={m: _summary(rng, 0.6) for m in METRICS},
                      curves={"ndcg": {str(k): rng.random() for k in (1, 3, 5, 10)}}) for name in names]  # fmt: skip
    comparisons = [_comparison(rng, names[0], b, m, n_runs) for m in METRICS[:8] for b in names[1:]]
    rows = [QueryResult(run=name, query_id=q, strata={"type": rng.choice(("factoid", "numeric", "procedural"))},
                        metrics={m: rng.random() for m in METRICS}) for name in names for q in qids]  # fmt: skip
    questions = []
    for i, q in enumerate(qids):
        local = pool[4 * i : 4 * i + 4] + rng.sample(pool, 16)
        sides = []
        for name in names:
            picked = rng.sample(range(len(local)), 10)
            hows = [rng.choice(("chunk", "rule", "judged")) for _ in picked]
            passages = [PassageView(rank=r, unit=f"doc{p}.md#{p}", text=local[p], grade=rng.randint(0, 3), how=how)
                        for r, (p, how) in enumerate(zip(picked, hows, strict=True), 1)]  # fmt: skip
            claims = [ClaimView(kind="answer", text=local[0][:60], verdict="supported", ranks=[1]) for _ in range(3)]
            sides.append(RunView(run=name, passages=passages, answer=local[1][:300], claims=claims))
        questions.append(QuestionView(query_id=q, text=f"What about {local[0][:40]}?", reference_answer=local[2][:200],
                                      nuggets=[("vital", local[3][:80])], runs=sides))  # fmt: skip
    result = EvalResult(assay_version="bench", golden="golden/", judge="offline", k_values=[1, 3, 5, 10],
                        settings={"baseline": names[0]}, runs=runs, comparisons=comparisons, primary_metric="ndcg@10",
                        cut_alike=True)  # fmt: skip
    return result, rows, questions


def open_times(path: Path) -> dict[str, float]:
    """Seconds from navigation to the load event, to the verdict drawn, and to the explorer's first question."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        started = time.perf_counter()
        page.goto(path.as_uri(), timeout=600_000)
        loaded = time.perf_counter() - started
        page.wait_for_selector("#verdict li", timeout=600_000)
        verdict = time.perf_counter() - started
        clicked = time.perf_counter()
        page.click("nav a[href='#explorer']")
        page.wait_for_selector("#x-view[data-ready='1'] .x-run", timeout=600_000)
        explorer = time.perf_counter() - clicked
        browser.close()
    return {"load": loaded, "verdict": verdict, "explorer": explorer}


def _print(name: str, path: Path, render: float) -> None:
    times = open_times(path)
    print(f"{name:<28} {path.stat().st_size / 1e6:8.2f} MB  render {render:6.1f} s  load {times['load']:6.2f} s  "
          f"verdict {times['verdict']:6.2f} s  explorer {times['explorer']:6.2f} s", flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.skip_demo:
            path, render = demo_report(folder / "demo")
            _print("demo, 4 runs x 59 questions", path, render)
        from assay.report import write_html

        result, rows, questions = synthetic(args.runs, args.questions)
        started = time.perf_counter()
        write_html(result, folder / "synthetic.html", rows, questions)
        render = time.perf_counter() - started
        _print(f"{args.runs} runs x {args.questions:,} questions", folder / "synthetic.html", render)


if __name__ == "__main__":
    sys.exit(main())
