"""Benchmark: family-wise false positives and power of run comparisons, for Holm, randomized Tukey HSD and none.

    python bench/stats.py                  # 250 A/A and 125 A/B simulations (about two minutes on a loaded machine)
    python bench/stats.py --sims 100       # quicker, noisier

Simulated per-query scores with real correlation between runs and between metrics: each query has a difficulty
shared by every run (runs correlate across queries), each (run, query) has a system-specific term shared by its three
metrics (metrics correlate), and each metric adds its own noise; scores are squashed to [0, 1] and, like P@10, the
second metric is coarse (tenths). Four runs, 50 queries, three metrics; the primary metric is ``ndcg@10``.

* A/A: the four runs are draws of the same system. The family-wise error rate (FWER) of the primary metric's family
  is the share of simulations where any of its 6 pairs is called significant at alpha 0.05 (target <= 0.05 for Holm
  and Tukey HSD; ``none`` shows what no correction does). Also shown: the rate over all three metrics' families
  together, which one family per metric does not control (the primary metric leads the verdict for that reason).
* A/B: runs ``b`` and ``c`` improve on ``a`` by known shifts on the latent scale (0.3 and 0.5, about d_z 0.3 and 0.5
  on the primary metric; the mean deltas and d_z are printed). Power = share of simulations where the pair is found
  significant (in the right direction), all pairs compared, and also against the baseline ``a`` only.

Every comparison goes through assay's own comparison stage
(``assay.pipelines.evaluate.statistics.compare.compare_runs``) with its default resample counts; the correlations of the
simulated scores are printed so the setting can be judged.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from assay.pipelines.evaluate.statistics.compare import compare_runs
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.results import Comparison, QueryResult

RUNS = ("a", "a2", "b", "c")
METRICS = ("ndcg@10", "P@10", "mrr")
N_QUERIES = 50
CORRECTIONS = ("holm", "tukey", "none")


def simulate(rng: np.random.Generator, shifts: dict[str, float]) -> np.ndarray:
    """Scores (runs x queries x metrics) in [0, 1]: difficulty + run-query term + shift + metric noise, squashed."""
    difficulty = rng.normal(0.0, 1.0, size=N_QUERIES)
    system = rng.normal(0.0, 0.6, size=(len(RUNS), N_QUERIES))
    shift = np.array([shifts.get(run, 0.0) for run in RUNS])[:, None]
    latent = difficulty[None, :] + system + shift
    noise = rng.normal(0.0, 0.3, size=(len(RUNS), N_QUERIES, len(METRICS)))
    scores: np.ndarray = 1.0 / (1.0 + np.exp(-(latent[:, :, None] + noise)))
    scores[:, :, 1] = np.round(scores[:, :, 1] * 10) / 10  # P@10 takes tenths
    return scores


def rows_of(scores: np.ndarray) -> dict[str, dict[str, QueryResult]]:
    return {
        run: {
            f"q{q}": QueryResult(
                run=run, query_id=f"q{q}", metrics={m: float(scores[r, q, j]) for j, m in enumerate(METRICS)}
            )
            for q in range(N_QUERIES)
        }
        for r, run in enumerate(RUNS)
    }


def compare(
    scores: np.ndarray, correction: str, seed: int, baseline: str | None = None, metrics: tuple[str, ...] = METRICS
) -> list[Comparison]:
    settings = StatSettings(correction=correction, seed=seed, baseline=baseline)
    return compare_runs(rows_of(scores), list(metrics), settings)


def correlations(rng: np.random.Generator) -> tuple[float, float]:
    """Mean correlation across queries between runs (primary metric) and between metrics (within a run)."""
    scores = simulate(rng, {})
    runs = np.corrcoef(scores[:, :, 0])
    metrics = np.mean([np.corrcoef(scores[r].T) for r in range(len(RUNS))], axis=0)
    off = ~np.eye(len(RUNS), dtype=bool)
    return float(runs[off].mean()), float(metrics[~np.eye(len(METRICS), dtype=bool)].mean())


def aa(sims: int, rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    """FWER of the primary family and of all three families together, per correction."""
    hits = {c: [0, 0] for c in CORRECTIONS}
    for i in range(sims):
        scores = simulate(rng, {})
        for correction in CORRECTIONS:
            comps = compare(scores, correction, seed=i)
            hits[correction][0] += any(c.significant for c in comps if c.primary)
            hits[correction][1] += any(c.significant for c in comps)
    return {c: (h[0] / sims, h[1] / sims) for c, h in hits.items()}


def ab(sims: int, rng: np.random.Generator) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Power to find b > a and c > a on the primary metric, all pairs and against baseline a; true mean deltas."""
    shifts = {"b": 0.3, "c": 0.5}
    found: dict[str, dict[str, int]] = {}
    deltas = {f"{run}{kind}": 0.0 for run in shifts for kind in ("", " d_z")}
    for i in range(sims):
        scores = simulate(rng, shifts)
        for run in shifts:
            diff = scores[RUNS.index(run), :, 0] - scores[0, :, 0]
            deltas[run] += float(np.mean(diff)) / sims
            deltas[f"{run} d_z"] += float(np.mean(diff) / np.std(diff, ddof=1)) / sims
        for correction in CORRECTIONS:
            for baseline in (None, "a"):
                key = f"{correction}{' vs a' if baseline else ''}"
                counts = found.setdefault(key, {run: 0 for run in shifts})
                for c in compare(scores, correction, seed=i, baseline=baseline, metrics=METRICS[:1]):
                    if c.primary and c.a == "a" and c.b in shifts and c.significant and c.delta > 0:
                        counts[c.b] += 1
    return {key: {run: n / sims for run, n in counts.items()} for key, counts in found.items()}, deltas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=250, help="A/A simulations (A/B: half as many)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.process_time()
    between_runs, between_metrics = correlations(rng)
    print(f"simulated: {len(RUNS)} runs x {N_QUERIES} queries x {len(METRICS)} metrics; mean correlation across "
          f"queries between runs {between_runs:.2f}, between metrics {between_metrics:.2f}")  # fmt: skip
    rates = aa(args.sims, rng)
    se = math.sqrt(0.05 * 0.95 / args.sims)
    print(f"\nA/A, {args.sims} simulations, alpha 0.05 (Monte Carlo se of a rate near 0.05: {se:.3f})")
    print(f"{'correction':<12}{'FWER primary family (6 pairs)':>32}{'any of the 3 metric families':>32}")
    for correction, (primary, anywhere) in rates.items():
        print(f"{correction:<12}{primary:>32.3f}{anywhere:>32.3f}")
    power, deltas = ab(max(args.sims // 2, 1), rng)
    print(f"\nA/B, {max(args.sims // 2, 1)} simulations: power to find b > a and c > a on ndcg@10")
    print(f"mean deltas: b - a = {deltas['b']:+.3f} (d_z {deltas['b d_z']:.2f}), "
          f"c - a = {deltas['c']:+.3f} (d_z {deltas['c d_z']:.2f})")  # fmt: skip
    print(f"{'correction (family)':<28}{'b > a':>10}{'c > a':>10}")
    for key, values in power.items():
        family = "3 pairs vs baseline a" if key.endswith("vs a") else "all 6 pairs"
        print(f"{key.split()[0] + ', ' + family:<28}{values['b']:>10.3f}{values['c']:>10.3f}")
    print(f"\nCPU time {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
