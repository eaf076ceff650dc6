"""Benchmark: assay's ranking metrics against pytrec_eval on the issue's workload.

    python bench/metrics.py            # 10,000 queries x 1,000 retrieved docs, 50 graded judgments per query
    python bench/metrics.py --quick    # 1,000 queries x 1,000 docs

Each measurement runs in its own subprocess and reports wall time of the timed step and the process's peak resident
memory (``ru_maxrss``; tracemalloc would miss pytrec_eval's C++ allocations):

  (a) in memory: both sides get the same dicts ``{qid: {docid: score}}`` (built untimed by plain-Python parsing),
      timed from the dicts to per-query values of map, ndcg_cut_10, P_10, recall_100, recip_rank;
  (b) from files: pytrec_eval's side parses the files with plain Python into dicts, assay's side uses its readers;
  (c) assay from files with its full default measure set.

Values of (a) and (b) are compared per query between the two tools. The workload is seeded: scores are drawn from
a few thousand levels so that ties (broken by docid) occur; grades are 0..3 with a few -1.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

FIVE = {
    "map": "map",
    "ndcg_cut_10": "ndcg_cut.10",
    "P_10": "P.10",
    "recall_100": "recall.100",
    "recip_rank": "recip_rank",
}


def generate(folder: Path, n_queries: int, n_docs: int, n_judged: int, seed: int = 7) -> None:
    """Write qrels.txt and run.txt: n_docs retrieved per query, n_judged judged (80% of them retrieved)."""
    rng = np.random.default_rng(seed)
    pool = 50 * n_docs
    qids = np.char.add("q", np.arange(n_queries).astype(str))
    with (folder / "run.txt").open("w") as run, (folder / "qrels.txt").open("w") as qrels:
        for q in qids:
            docs = np.char.add("d", rng.choice(pool, size=n_docs + n_judged, replace=False).astype(str))
            scores = rng.integers(0, 5000, size=n_docs) / 100.0
            run.write("".join(f"{q} Q0 {d} 0 {s} bench\n" for d, s in zip(docs[:n_docs], scores, strict=True)))
            judged = np.concatenate(
                [docs[: int(n_judged * 0.8)], docs[n_docs : n_docs + n_judged - int(n_judged * 0.8)]]
            )
            grades = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=n_judged)
            qrels.write("".join(f"{q} 0 {d} {g}\n" for d, g in zip(judged, grades, strict=True)))


def parse_plain(folder: Path) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """The plain-Python parsing a pytrec_eval user writes."""
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels.txt").open() as handle:
        for line in handle:
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    with (folder / "run.txt").open() as handle:
        for line in handle:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    return qrels, run


def worker(mode: str, folder: Path) -> dict[str, object]:
    """One measurement; returns seconds, peak RSS (MiB) and where the per-query values were saved."""
    out = folder / f"{mode}.npz"
    if mode.endswith("-mem"):
        qrels, run = parse_plain(folder)
    if mode.startswith("pytrec"):  # each side imports only its own tool, outside the timed step
        import pytrec_eval
    else:
        from assay.formats.trec import read_qrels, read_run
        from assay.metrics import DEFAULT_MEASURES, evaluate
    start = time.perf_counter()
    if mode.startswith("pytrec"):
        if mode == "pytrec-files":
            qrels, run = parse_plain(folder)
        result = pytrec_eval.RelevanceEvaluator(qrels, set(FIVE.values())).evaluate(run)
        ids = sorted(result)
        values = {m: np.array([result[q][m] for q in ids]) for m in FIVE}
    else:
        names = list(DEFAULT_MEASURES) + list(FIVE) if mode == "assay-default" else list(FIVE)
        if mode == "assay-mem":
            ev = evaluate(qrels, run, names)
        else:
            ev = evaluate(read_qrels(folder / "qrels.txt"), read_run(folder / "run.txt"), names)
        ids, values = ev.query_ids, {m: ev.per_query[m] for m in FIVE}
    seconds = time.perf_counter() - start
    np.savez(out, ids=np.array(ids), **values)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"mode": mode, "seconds": seconds, "peak_mib": peak, "values": str(out)}


def run_worker(mode: str, folder: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", mode, "--dir", str(folder)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"worker {mode} failed:\n{proc.stderr}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def max_difference(a: str, b: str) -> float:
    x, y = np.load(a), np.load(b)
    if x["ids"].tolist() != y["ids"].tolist():
        return float("inf")
    return max(float(np.max(np.abs(x[m] - y[m]), initial=0.0)) for m in FIVE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1,000 queries instead of 10,000")
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, Path(args.dir))))
        return
    n_queries = args.queries or (1_000 if args.quick else 10_000)
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        generate(folder, n_queries, 1_000, 50)
        print(f"workload: {n_queries:,} queries x 1,000 docs, 50 judgments each ({time.perf_counter() - t0:.1f}s)")
        rows = {m: run_worker(m, folder) for m in ("pytrec-mem", "assay-mem", "pytrec-files", "assay-files")}
        rows["assay-default"] = run_worker("assay-default", folder)
        print(f"{'measurement':<16}{'seconds':>10}{'peak MiB':>10}")
        for mode, row in rows.items():
            print(f"{mode:<16}{row['seconds']:>10.2f}{row['peak_mib']:>10.0f}")
        for kind in ("mem", "files"):
            p, a = rows[f"pytrec-{kind}"], rows[f"assay-{kind}"]
            speed = float(p["seconds"]) / float(a["seconds"])  # type: ignore[arg-type]
            diff = max_difference(str(p["values"]), str(a["values"]))
            print(f"{kind:<6} speed-up {speed:5.1f}x   max |assay - pytrec_eval| = {diff:.1e}")


if __name__ == "__main__":
    main()
