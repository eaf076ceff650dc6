"""Benchmark of evaluating systems that chunk their own way (issues 20 and 28): one golden set, then systems that
differ only by chunker, retrieval fixed (BM25 top 10 over each system's own chunks, bm25s).

Corpora: the bundled demo (``datasets/demo/corpus``) and CISI (``../shared/data/cisi``), each built into a golden
set with the offline judge. Chunkers: fixed windows of 100/200/400/800 tokens (0.75 words a token), without and with
25% overlap (words joined by single spaces: the document's line breaks are lost, as in many loaders; 100 is there
because CISI's abstracts are shorter than 200 tokens); 3-sentence windows; Markdown sections (split at headings, long
sections cut at 400 words); 400-token windows from a loader that renders Markdown (syntax and link targets dropped:
approximate matches); and assay's own chunks given by text only.

It prints:
(a) assay's own chunks given by text only against the same chunks by id: the largest difference over every metric
    (target 0);
(b) each system's ndcg@10 and span_recall@10 (target: none 0 for its chunking);
(c) carried-over grades against judging every retrieved passage directly with the same judge (the offline judge):
    Cohen's kappa (0-3 and relevant >= 1) over the passages the rule labelled, and the share of retrieved passages
    that needed a judge call (targets kappa >= 0.8, share <= 20%);
(d) alignment speed on a 50,000-document corpus (CISI's abstracts recombined): passages a second aligned exactly
    and approximately (targets >= 50,000 and >= 2,000), and the index build time;
(e) the chunkers side by side on ranking metrics (in golden units), budget metrics and span metrics;
(f) the time to evaluate a by-text run against the same run by id (target at most twice);
(g) invariance: assay's own BM25 run re-cut as halves, thirds, overlapping windows and merged neighbours (the same
    text in the same order, given by offsets), each evaluated beside the original: the largest |difference| over
    the measures comparable across chunkings (target <= 0.01), and over the passage-bound ones for contrast;
(h) discrimination: in each of those chunkings, the run against itself with its top 3 chunks' text pushed to the
    end: the primary verdict and its adjusted p (target: the pushed run called worse at p < 0.05 in every chunking);
(i) A/A across chunkings: the own run against its halves on 20 random 70% samples of the questions: how many
    samples call a winner on any compared measure (target at most 1 of 20);
(l) a score that belongs to the run (issue 43, bench/chunking_score.py): a documentation folder and its near-copies,
    seven library-style systems, each run alone and all together: the largest difference alone vs together once the
    report's account of other runs' text is applied, halves vs whole, the grouping, the budget filled and the gates
    (targets 0.000 and 0.000);
(k) evaluation time on a 50,000-document corpus (200 questions, two runs of BM25 top 10 by text: assay's chunks and
    100-token windows; no judge): compare with the commit before issue 28 by running ``--only speed`` with
    ``PYTHONPATH`` set to that commit's ``src`` (target at most 1.5 times).

    python bench/chunking.py                 # demo and CISI (about 5 minutes on 2 cores)
    python bench/chunking.py --quick         # demo only, 10,000 documents for (d) and (k)
    python bench/chunking.py --only speed    # (k) alone
    python bench/chunking.py --only score    # (l) alone
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

from assay.corpus.align import Aligner
from assay.formats.golden import GoldenSet
from assay.judge import Judge, Pair, grade_pairs_detailed, make_judge
from assay.metrics.agreement import cohen_kappa
from assay.pipelines.bootstrap import BuildSettings, build_golden
from assay.pipelines.evaluate import EvalSettings, evaluate

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from agreement_data import read_cisi  # noqa: E402
from chunking_score import score_cases  # noqa: E402
from chunking_systems import CHUNKERS, CISI, K, bm25_run, synthetic_corpus  # noqa: E402
from chunking_units import aa, discrimination, invariance, own_spans, speed  # noqa: E402

DEMO = HERE.parent / "datasets" / "demo" / "corpus"


def build(corpus: Path, questions: int, out: Path) -> GoldenSet:
    judge = make_judge("offline")
    settings = BuildSettings(questions=questions, seed=0)
    return build_golden(corpus, judge=judge, settings=settings, output=out)


def cisi_corpus(folder: Path) -> Path:
    collection = read_cisi(CISI)
    for chunk in collection.chunks:
        (folder / f"{chunk.doc_id}.txt").write_text(chunk.text, encoding="utf-8")
    return folder


async def _direct(judge: Judge, pairs: list[Pair]) -> dict[tuple[str, str], int | None]:
    graded = await grade_pairs_detailed(judge, pairs, listwise=10, seed=0)
    await judge.aclose()
    return {(g.label.query_id, g.label.chunk_id): g.label.grade for g in graded}


def carried_agreement(golden: GoldenSet, runs: dict[str, list[dict]]) -> None:
    """(c): label every system's top-K passages as ``assay eval --judge offline`` does (the rule; the golden chunks
    undecided passages reach judged first; what is still undecided judged as a passage), then judge every retrieved
    passage directly with the same judge and compare the grades that came without a passage call."""
    from assay.pipelines.evaluate.judging.asking import JudgingSettings
    from assay.pipelines.evaluate.judging.passages import label_passages
    from assay.pipelines.evaluate.runs.carry import SpanIndex
    from assay.pipelines.evaluate.runs.locate import Resolver
    from assay.pipelines.evaluate.runs.read import load_runs

    resolver = Resolver(golden)
    loaded = load_runs(list(runs.items()), golden, resolver)
    judge = make_judge("offline")
    asking = JudgingSettings(depth=K, context_k=K, listwise=10, seed=0, add_labels=False)
    carried = label_passages(golden, SpanIndex(golden, resolver), folder=None, loaded=loaded, judge=judge,
                             asking=asking)  # fmt: skip
    qrels = golden.qrels_map()
    pairs, carried_by, total, needed = [], {}, 0, 0
    for run in loaded:
        for qid, line in run.lines.items():
            for unit in line.top(K):
                total += 1
                how = carried.how.get((qid, unit), "chunk")
                needed += how == "unlabelled"
                key = (qid, f"{run.name}|{unit}")
                pairs.append(Pair(qid, golden.question(qid).text, key[1], line.texts.get(unit, "")))
                grade = carried.grades.get((qid, unit)) if how != "chunk" else qrels.get(qid, {}).get(unit)
                if grade is not None:
                    carried_by[key] = (grade, how)
    direct = asyncio.run(_direct(make_judge("offline"), pairs))
    for name, hows in (("golden chunks and the rule", ("chunk", "rule")), ("the rule only", ("rule",))):
        rows = [(g, direct[key]) for key, (g, how) in carried_by.items() if how in hows and direct.get(key) is not None]
        if not rows:
            continue
        carried_g, direct_g = [a for a, _ in rows], [b for _, b in rows]
        k4 = cohen_kappa(carried_g, direct_g)
        k1 = cohen_kappa([int(a >= 1) for a in carried_g], [int(b >= 1) for b in direct_g], categories=(0, 1))
        same = sum(a == b for a, b in rows) / len(rows)
        print(f"  labelled by {name:26s} n={len(rows):5d}  kappa 0-3 {k4:.3f}  kappa >=1 {k1:.3f}  equal {same:.1%}")
    print(f"  passages that needed a judge call of their own: {needed}/{total} = {needed / max(1, total):.1%} "
          f"(target <= 20%); golden chunks judged for the pool: {carried.pooled} "
          f"({carried.pooled / max(1, total):.1%} of the passages)")  # fmt: skip


def side_by_side(golden: GoldenSet, folder: Path, runs: dict[str, list[dict]]) -> None:
    """(b), (e): every system's ranking (in golden units), budget and span metrics, no judge."""
    result, _ = evaluate(folder, runs, settings=EvalSettings(k_values=(5, K), n_boot=200, add_labels=False))
    names = ["ndcg@10", "recall@10", "ndcg@1000t", "recall@1000t", "P@1000t", "span_recall@10"]
    print(f"  {'system':12s} {'median len':>10s} " + " ".join(f"{n:>14s}" for n in names) + "  labels")
    for run in result.runs:
        values = [run.metrics[n].mean if n in run.metrics else None for n in names]
        shown = " ".join(f"{v:14.3f}" if v is not None else f"{'-':>14s}" for v in values)
        median = run.passage_lengths.get("median", 0)
        print(f"  {run.name:12s} {median:10.0f} {shown}  {run.passage_labels}")
    lead = next((c for c in result.comparisons if c.primary), None)
    if lead is not None:
        print(f"  primary metric across the chunkers: {lead.metric}")
    zeros = [r.name for r in result.runs if (r.metrics.get("ndcg@10") and r.metrics["ndcg@10"].mean == 0.0)]
    print(f"  systems scoring ndcg@10 = 0: {zeros or 'none'}")


def same_by_text(golden: GoldenSet, folder: Path) -> None:
    """(a), (f): assay's own chunks by id and by text: every metric equal, and the evaluation time of each."""
    ids = [c.id for c in golden.chunks]
    texts = [c.text for c in golden.chunks]
    by_id, by_text = bm25_run(golden, texts, ids), bm25_run(golden, texts)
    settings = EvalSettings(k_values=(1, 3, 5, K), n_boot=200, add_labels=False)
    times = {}
    results = {}
    for name, run in (("id", by_id), ("text", by_text)):
        start = time.perf_counter()
        results[name], _ = evaluate(folder, {name: run}, settings=settings)
        times[name] = time.perf_counter() - start
    a, b = results["id"].runs[0].metrics, results["text"].runs[0].metrics
    diffs = [abs((a[m].mean or 0) - (b[m].mean or 0)) for m in a]
    print(f"  metrics compared: {len(diffs)}, largest |by id - by text|: {max(diffs):.2e} (target 0)")
    print(f"  evaluation time: by id {times['id']:.2f} s, by text {times['text']:.2f} s, "
          f"ratio {times['text'] / times['id']:.2f} (target <= 2)")  # fmt: skip


def alignment_speed(n_docs: int, seed: int = 0) -> None:
    """(d): an index over ``n_docs`` synthetic documents (:func:`synthetic_corpus`), then exact passages (400-character
    windows cut inside words, upper-cased) and approximate ones (a title prepended, Markdown emphasis added, about
    one word in eight dropped)."""
    rng = random.Random(seed)
    docs = synthetic_corpus(n_docs, rng)
    start = time.perf_counter()
    aligner = Aligner(docs)
    built = time.perf_counter() - start
    exact, approx = [], []
    for _ in range(50_000):
        doc = docs[rng.randrange(n_docs)].text
        a = rng.randrange(max(1, len(doc) - 400))
        exact.append(doc[a : a + 400].upper())
    for _ in range(5_000):
        words = docs[rng.randrange(n_docs)].text.split()
        kept = [f"**{w}**" if rng.random() < 0.05 else w for w in words[:70] if rng.random() > 0.125]
        approx.append("Section title\n\n" + " ".join(kept))
    for name, passages in (("exact", exact), ("approximate", approx)):
        start = time.perf_counter()
        found = [aligner.locate(p) for p in passages]
        took = time.perf_counter() - start
        hits = sum(s is not None and s.match == name for s in found)
        print(f"  {name:12s} {len(passages) / took:10,.0f} passages/s  ({hits}/{len(passages)} matched {name})")
    print(f"  index over {n_docs:,} documents built in {built:.1f} s")


def corpus_bench(label: str, corpus: Path, questions: int, workdir: Path) -> None:
    print(f"\n== {label}: golden set of {questions} questions (offline judge)")
    folder = workdir / label
    golden = build(corpus, questions, folder)
    print(f"  {len(golden.documents)} documents, {len(golden.chunks)} chunks, {len(golden.questions)} questions")
    print("(a, f) assay's own chunks by text against by id")
    same_by_text(golden, folder)
    runs = {"assay": bm25_run(golden, [c.text for c in golden.chunks])}
    for name, chunker in CHUNKERS.items():
        runs[name] = bm25_run(golden, [p for doc in golden.documents for p in chunker(doc)])
    print("(b, e) systems side by side (no judge: unlabelled passages count as not relevant)")
    side_by_side(golden, folder, runs)
    print("(c) carried-over grades against direct judging (offline judge)")
    carried_agreement(golden, runs)
    spans = own_spans(golden)
    print("(g) invariance: the own run re-cut, the same text in the same order (no judge)")
    invariance(folder, spans)
    print("(h) discrimination: the top 3 chunks' text pushed to the end, in each chunking")
    discrimination(folder, spans)
    print("(i) A/A across chunkings: own against its halves on 20 samples of 70% of the questions")
    aa(folder, spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the demo only; 10,000 documents for the speed tests")
    parser.add_argument(
        "--only", choices=["speed", "score"], help="(k) alone (e.g. under another commit's src), or (l)"
    )
    args = parser.parse_args()
    n_docs = 10_000 if args.quick else 50_000
    if args.only == "score":
        score_cases(demo=args.quick)
        return
    if args.only == "speed":
        print("(k) evaluation time")
        speed(n_docs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        corpus_bench("demo", DEMO, 40, work)
        if not args.quick:
            cisi = cisi_corpus(Path(tempfile.mkdtemp(dir=tmp)))
            corpus_bench("cisi", cisi, 60, work)
    print("\n(d) alignment speed")
    alignment_speed(n_docs)
    print("\n(k) evaluation time")
    speed(n_docs)
    print("\n(l) a score that belongs to the run")
    score_cases(demo=args.quick)


if __name__ == "__main__":
    main()
