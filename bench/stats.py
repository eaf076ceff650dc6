"""Benchmark: false alarms, power and interval coverage of run comparisons, with questions that share documents.

    python bench/stats.py                  # both parts (several minutes)
    python bench/stats.py --part family    # 250 A/A and 125 A/B simulations of the corrections (about two minutes)
    python bench/stats.py --part clusters --sims 400   # the clustered statistics only

Part ``clusters`` (issue 29) simulates golden sets of 200 questions built 1, 2, 4 or 8 per document, and two runs
whose quality varies by document: each document has a difficulty both runs share, and a document-level system
effect of standard deviation tau (0, 0.5, 1 on the latent scale) that differs between the runs (one system handles
that document's topic better, for all of its questions at once); each question adds its own difficulty and its own
per-run noise; scores are squashed to [0, 1]. The truth is known: the expected score of a run is an integral over
the latent normal (Gauss-Hermite), so the true delta is 0 in A/A and known in A/B (run b shifted by 0.3). For each
setting, through assay's own ``compare_runs`` and ``summarize``, with questions clustered by document (``doc``, the
default) and as independent (``none``, the analysis before clustering):

* A/A false alarms: the share of simulations where the two runs were called significantly different (target <= 6%);
* coverage: the share of 95% intervals of the delta (A/B) and of run a's mean that hold the true value
  (target 93% to 97%);
* power: the share of A/B simulations where b was found better (at 1 question per document the two analyses are the
  same test: clustering costs nothing when questions are independent).

A last table compares, for 6 to 50 clusters of 8 questions, the coverage of a run's mean by the cluster bootstrap
and by the inverted cluster sign-flip test: the measurement behind ``assay.metrics.clusters.BOOTSTRAP_CLUSTERS``.

Part ``family``: simulated per-query scores with real correlation between runs and between metrics: each query
has a difficulty shared by every run (runs correlate across queries), each (run, query) has a system-specific term
shared by its three metrics (metrics correlate), and each metric adds its own noise; scores are squashed to [0, 1]
and, like P@10, the second metric is coarse (tenths). Four runs, 50 queries, three metrics; the primary metric is
``ndcg@10``.

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

from assay.metrics import clusters as cl
from assay.metrics import stats as st
from assay.pipelines.evaluate.statistics.compare import compare_runs
from assay.pipelines.evaluate.statistics.stats import StatSettings, summarize
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


# -- part clusters: questions that share documents ---------------------------------------------------------------

QUESTIONS = 200
PER_DOC = (1, 2, 4, 8)
TAUS = (0.0, 0.5, 1.0)
SHIFT = 0.3
SD = {"doc": 1.0, "question": 0.5, "noise": 0.6}  # latent standard deviations besides tau
NODES, WEIGHTS = np.polynomial.hermite.hermgauss(80)


def expected(shift: float, tau: float) -> float:
    """E[sigmoid(shift + Z)], Z ~ N(0, doc^2 + question^2 + tau^2 + noise^2), by Gauss-Hermite quadrature."""
    sd = math.sqrt(SD["doc"] ** 2 + SD["question"] ** 2 + tau**2 + SD["noise"] ** 2)
    values = 1.0 / (1.0 + np.exp(-(shift + math.sqrt(2.0) * sd * NODES)))
    return float(np.sum(WEIGHTS * values) / math.sqrt(math.pi))


def clustered_scores(rng: np.random.Generator, docs: int, per_doc: int, tau: float, shift: float) -> np.ndarray:
    """Scores (2 runs x docs * per_doc questions): shared document and question difficulty, a per-run document
    effect of sd tau, per-run question noise, run b shifted by ``shift``; squashed to [0, 1]."""
    doc = np.repeat(np.arange(docs), per_doc)
    shared = rng.normal(0.0, SD["doc"], docs)[doc] + rng.normal(0.0, SD["question"], doc.size)
    system = rng.normal(0.0, tau, (2, docs))[:, doc] + rng.normal(0.0, SD["noise"], (2, doc.size))
    latent = shared[None, :] + system + np.array([0.0, shift])[:, None]
    scores: np.ndarray = 1.0 / (1.0 + np.exp(-latent))
    return scores


def clustered_rows(scores: np.ndarray, per_doc: int, by: str) -> dict[str, dict[str, QueryResult]]:
    return {
        run: {
            f"q{q:04d}": QueryResult(
                run=run,
                query_id=f"q{q:04d}",
                metrics={"ndcg@10": float(scores[r, q])},
                cluster=f"doc:{q // per_doc:04d}" if by == "doc" else None,
            )
            for q in range(scores.shape[1])
        }
        for r, run in enumerate(("a", "b"))
    }


def one_setting(
    rng: np.random.Generator, sims: int, docs: int, per_doc: int, tau: float, settings: StatSettings
) -> dict[str, dict[str, float]]:
    """Per analysis (doc, none): A/A false alarms, A/B power, coverage of the delta and of run a's mean."""
    truth_a, truth_delta = expected(0.0, tau), expected(SHIFT, tau) - expected(0.0, tau)
    tally = {
        by: dict.fromkeys(("false alarms", "power", "delta covered", "mean covered"), 0.0) for by in ("doc", "none")
    }
    for i in range(sims):
        null = clustered_scores(rng, docs, per_doc, tau, 0.0)
        shifted = clustered_scores(rng, docs, per_doc, tau, SHIFT)
        for by, counts in tally.items():
            seeded = StatSettings(n_boot=settings.n_boot, n_perm=settings.n_perm, seed=i)
            (aa,) = compare_runs(clustered_rows(null, per_doc, by), ["ndcg@10"], seeded)
            rows = clustered_rows(shifted, per_doc, by)
            (ab,) = compare_runs(rows, ["ndcg@10"], seeded)
            mean = summarize(list(rows["a"].values()), "ndcg@10", seeded)
            counts["false alarms"] += aa.significant / sims
            counts["power"] += (ab.significant and ab.delta > 0) / sims
            counts["delta covered"] += (ab.low <= truth_delta <= ab.high) / sims
            assert mean.low is not None and mean.high is not None
            counts["mean covered"] += (mean.low <= truth_a <= mean.high) / sims
    return tally


def few_clusters(rng: np.random.Generator, sims: int, settings: StatSettings) -> dict[int, tuple[float, float]]:
    """Coverage of run a's mean by the cluster bootstrap and by the inverted cluster sign-flip test, 8 per cluster."""
    out = {}
    for docs in (6, 10, 15, 20, 30, 50):
        truth = expected(0.0, 0.5)
        boot = flip = 0
        for i in range(sims):
            scores = clustered_scores(rng, docs, 8, 0.5, 0.0)[0]
            labels = [f"d{q // 8}" for q in range(scores.size)]
            grouped = cl.group(scores, labels)
            rows = np.column_stack([grouped.sums, grouped.sizes])
            b = st.bootstrap_statistic(rows, lambda t: t[:, 0] / t[:, 1], n_resamples=settings.n_boot, seed=i)
            boot += b.low <= truth <= b.high
            f = (
                cl.mean_interval(scores, labels, n_resamples=settings.n_perm, seed=i)
                if docs < cl.FEW_CLUSTERS
                else None
            )
            if f is None:  # at or above the threshold mean_interval bootstraps: invert the sign flips here
                from assay.metrics.randomization import sign_flip_interval

                low, high = sign_flip_interval(grouped.sums, 0.05, significant=True, weights=grouped.sizes,
                                               n_resamples=settings.n_perm, seed=i)  # fmt: skip
            else:
                low, high = f.low, f.high
            flip += low <= truth <= high
        out[docs] = (boot / sims, flip / sims)
    return out


def clusters_part(sims: int, rng: np.random.Generator) -> None:
    settings = StatSettings(n_boot=1000, n_perm=2000)
    se = math.sqrt(0.05 * 0.95 / sims)
    print(f"\nclustered questions: {QUESTIONS} questions, {sims} A/A and {sims} A/B simulations per setting "
          f"(Monte Carlo se of a rate near 5%: {se:.3f}); latent shift of b in A/B: {SHIFT}")  # fmt: skip
    header = f"{'per doc':>7}{'tau':>5}{'analysis':>10}{'A/A alarms':>12}{'power':>8}{'delta cov':>11}{'mean cov':>10}"
    print(header)
    for per_doc in PER_DOC:
        for tau in TAUS:
            tally = one_setting(rng, sims, QUESTIONS // per_doc, per_doc, tau, settings)
            for by in ("none", "doc"):
                t = tally[by]
                print(f"{per_doc:>7}{tau:>5.1f}{by:>10}{t['false alarms']:>12.3f}{t['power']:>8.3f}"
                      f"{t['delta covered']:>11.3f}{t['mean covered']:>10.3f}")  # fmt: skip
    print("\nfew clusters (8 questions each, tau 0.5): coverage of a run's mean by the 95% interval")
    print(f"{'clusters':>9}{'cluster bootstrap':>19}{'sign-flip inversion':>21}")
    for docs, (boot, flip) in few_clusters(rng, sims, settings).items():
        print(f"{docs:>9}{boot:>19.3f}{flip:>21.3f}")


def family_part(sims: int, rng: np.random.Generator) -> None:
    between_runs, between_metrics = correlations(rng)
    print(f"simulated: {len(RUNS)} runs x {N_QUERIES} queries x {len(METRICS)} metrics; mean correlation across "
          f"queries between runs {between_runs:.2f}, between metrics {between_metrics:.2f}")  # fmt: skip
    rates = aa(sims, rng)
    se = math.sqrt(0.05 * 0.95 / sims)
    print(f"\nA/A, {sims} simulations, alpha 0.05 (Monte Carlo se of a rate near 0.05: {se:.3f})")
    print(f"{'correction':<12}{'FWER primary family (6 pairs)':>32}{'any of the 3 metric families':>32}")
    for correction, (primary, anywhere) in rates.items():
        print(f"{correction:<12}{primary:>32.3f}{anywhere:>32.3f}")
    power, deltas = ab(max(sims // 2, 1), rng)
    print(f"\nA/B, {max(sims // 2, 1)} simulations: power to find b > a and c > a on ndcg@10")
    print(f"mean deltas: b - a = {deltas['b']:+.3f} (d_z {deltas['b d_z']:.2f}), "
          f"c - a = {deltas['c']:+.3f} (d_z {deltas['c d_z']:.2f})")  # fmt: skip
    print(f"{'correction (family)':<28}{'b > a':>10}{'c > a':>10}")
    for key, values in power.items():
        family = "3 pairs vs baseline a" if key.endswith("vs a") else "all 6 pairs"
        print(f"{key.split()[0] + ', ' + family:<28}{values['b']:>10.3f}{values['c']:>10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("all", "family", "clusters"), default="all")
    parser.add_argument("--sims", type=int, default=250, help="simulations per setting (family A/B: half as many)")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.process_time()
    if args.part in ("all", "family"):
        family_part(args.sims, rng)
    if args.part in ("all", "clusters"):
        clusters_part(args.sims, rng)
    print(f"\nCPU time {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
