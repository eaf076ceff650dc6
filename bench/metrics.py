"""Benchmark: assay's ranking metrics against pytrec_eval on the issue's workload.

    python bench/metrics.py                 # 10,000 queries x 1,000 retrieved docs, 50 graded judgments per query
    python bench/metrics.py --quick         # 1,000 queries x 1,000 docs
    python bench/metrics.py --repeat 3      # best of 3 runs per measurement (a loaded machine makes times noisy)
    python bench/metrics.py --dir /tmp/w    # keep the generated files there and reuse them on the next run

Each measurement runs in its own fresh subprocess, one after another, and reports the timed step's wall time and
CPU time (``time.process_time``: less sensitive than wall time to other work on the machine) and the process's
peak resident memory (``VmHWM``, which counts pytrec_eval's C++ allocations that tracemalloc would miss), with the
resident memory just before the timed step for reference:

  (a) in memory: both sides get the same dicts ``qrels {qid: {docid: grade}}``, ``run {qid: {docid: score}}``
      (built untimed by plain-Python parsing), timed from the dicts to per-query values of map, ndcg_cut_10, P_10,
      recall_100, recip_rank (pytrec_eval: ``RelevanceEvaluator(qrels, measures).evaluate(run)``);
  (b) from files: pytrec_eval's side parses the files with plain Python into dicts, assay's side uses its readers;
  (c) assay from files with its full default measure set (plus the five).

The per-query values of (a) and (b) are compared between the two tools, query by query (identical query ids, and
the largest absolute difference over the five measures). The workload is seeded: scores are drawn from 5,000
levels so that ties (broken by docid) are frequent; grades are 0..3 with a few -1.
"""

from __future__ import annotations

import argparse
import json
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
MODES = ("pytrec-mem", "assay-mem", "pytrec-files", "assay-files")
TARGETS = {"mem": 4.0, "files": 2.0}
Inputs = tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]


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


def parse_plain(folder: Path) -> Inputs:
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


def memory_mib(field: str) -> float:
    """``VmHWM`` (peak) or ``VmRSS`` (now) of this process, in MiB."""
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no {field} in /proc/self/status (Linux only)")


def timed_step(mode: str, folder: Path, inputs: Inputs | None) -> tuple[list[str], dict[str, object]]:
    """The measured work of one mode; returns query ids and per-query values of the five measures."""
    if mode.startswith("pytrec"):
        import pytrec_eval

        qrels, run = inputs if inputs is not None else parse_plain(folder)
        result = pytrec_eval.RelevanceEvaluator(qrels, set(FIVE.values())).evaluate(run)
        ids = sorted(result)
        return ids, {m: np.array([result[q][m] for q in ids]) for m in FIVE}
    from assay.formats.trec import read_qrels, read_run
    from assay.metrics import DEFAULT_MEASURES, evaluate

    names = list(DEFAULT_MEASURES) + list(FIVE) if mode == "assay-default" else list(FIVE)
    if inputs is not None:
        ev = evaluate(inputs[0], inputs[1], names)
    else:
        ev = evaluate(read_qrels(folder / "qrels.txt"), read_run(folder / "run.txt"), names)
    return ev.query_ids, {m: ev.per_query[m] for m in FIVE}


def worker(mode: str, folder: Path) -> dict[str, object]:
    """One measurement in this (fresh) process: seconds, CPU seconds, peak and pre-step memory."""
    inputs = parse_plain(folder) if mode.endswith("-mem") else None
    if mode.startswith("pytrec"):  # each side imports its own tool before the timed step
        import pytrec_eval  # noqa: F401
    else:
        import assay.formats.trec  # noqa: F401
    before = memory_mib("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    ids, values = timed_step(mode, folder, inputs)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out = folder / f"{mode}.npz"
    np.savez(out, ids=np.array(ids), **values)  # type: ignore[arg-type]
    return {"mode": mode, "wall": wall, "cpu": cpu, "peak": memory_mib("VmHWM"), "before": before, "values": str(out)}


def run_worker(mode: str, folder: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", mode, "--dir", str(folder)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"worker {mode} failed:\n{proc.stderr}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def compare(a: str, b: str) -> str:
    """Identical query ids and the largest absolute difference of the five measures' per-query values."""
    x, y = np.load(a), np.load(b)
    if x["ids"].tolist() != y["ids"].tolist():
        return "DIFFERENT query ids"
    diff = max(float(np.max(np.abs(x[m] - y[m]), initial=0.0)) for m in FIVE)
    same = all(np.array_equal(x[m], y[m]) for m in FIVE)
    return f"{len(x['ids']):,} queries, max |diff| {diff:.1e}" + (" (bit-identical)" if same else "")


def best(rows: list[dict[str, object]], key: str) -> float:
    return min(float(r[key]) for r in rows)  # type: ignore[arg-type]


def report(results: dict[str, list[dict[str, object]]], repeat: int) -> None:
    print(f"\n{'measurement':<16}{'wall s':>9}{'cpu s':>9}{'peak MiB':>10}{'before':>9}   (best of {repeat})")
    for mode, rows in results.items():
        print(f"{mode:<16}{best(rows, 'wall'):>9.2f}{best(rows, 'cpu'):>9.2f}{best(rows, 'peak'):>10.0f}"
              f"{best(rows, 'before'):>9.0f}")  # fmt: skip
    print()
    for kind, target in TARGETS.items():
        p, a = results[f"pytrec-{kind}"], results[f"assay-{kind}"]
        wall, cpu = best(p, "wall") / best(a, "wall"), best(p, "cpu") / best(a, "cpu")
        memory = best(a, "peak") < best(p, "peak")
        verdict = "meets" if min(wall, cpu) >= target and memory else "MISSES"
        print(f"{kind:<6} speed-up wall {wall:4.1f}x cpu {cpu:4.1f}x (target {target:.0f}x), "
              f"peak memory {'below' if memory else 'NOT below'} pytrec_eval's: {verdict} the target")  # fmt: skip
        print(f"       values: {compare(str(p[0]['values']), str(a[0]['values']))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1,000 queries instead of 10,000")
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement; the best is reported")
    parser.add_argument("--dir", default=None, help="keep (and reuse) the generated workload in this folder")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, Path(args.dir))))
        return
    n_queries = args.queries or (1_000 if args.quick else 10_000)
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        folder = Path(args.dir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = folder / "workload.json"
        if not stamp.exists() or json.loads(stamp.read_text()) != {"queries": n_queries}:
            t0 = time.perf_counter()
            generate(folder, n_queries, 1_000, 50)
            stamp.write_text(json.dumps({"queries": n_queries}))
            print(f"generated in {time.perf_counter() - t0:.1f}s")
        print(f"workload: {n_queries:,} queries x 1,000 retrieved docs, 50 graded judgments each, in {folder}")
        modes = (*MODES, "assay-default")
        results: dict[str, list[dict[str, object]]] = {m: [] for m in modes}
        for _ in range(args.repeat):  # interleaved, so that a burst of load hits both sides alike
            for mode in modes:
                results[mode].append(run_worker(mode, folder))
        report(results, args.repeat)


if __name__ == "__main__":
    main()
