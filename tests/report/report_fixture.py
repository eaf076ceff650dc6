"""Builds the report fixture: a realistic EvalResult for three runs, independent of assay's evaluator and reports.

Each run is simulated as ranked lists of graded chunks (0-3) per query; the builder computes the ranking metrics by
their textbook formulas (linear-gain nDCG with IDCG from all judged grades, AP and recall over all relevant chunks),
draws the judge metrics with some unscored values, summarises with a percentile bootstrap, and compares each run with
the first on each metric by a sign-flip randomization test, Holm's correction over the two pairs of that metric, and
the interval delta +- the critical value of the sign-flip draws at the level Holm used. Run
``python tests/report/report_fixture.py`` to rewrite
``tests/fixtures/report/``; a test checks that the files there equal what this builder makes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np

from assay.results import (
    AgreementBlock,
    AgreementStat,
    AgreementSummary,
    AnnotatorAgreement,
    AuditTarget,
    Comparison,
    CorrectedMetric,
    EvalResult,
    MetricSummary,
    QueryResult,
    RunCounts,
    RunResult,
)
from assay.types import StageUsage

FIXTURE_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "report"
XSS_QUERY = "<script>alert(1)</script>"
K_VALUES = (1, 3, 5, 10)
RUNS = {"bm25": 0.35, "dense": 0.5, "hybrid & rerank": 0.62}  # run name -> strength
TYPES = ("factoid", "numeric", "multi-hop", "explanatory")
JUDGED = ("context_recall", "faithfulness", "nugget_recall")
HEADLINE = ("ndcg@10", "map", "recall@10", "P@10", "recip_rank", "context_precision", *JUDGED)
REASONS = ("invalid_output", "backend_error")
XSS_STRATUM = "<img src=x onerror=alert(1)>"


def _queries() -> list[tuple[str, dict[str, str]]]:
    ids = [f"q{i:03d}" for i in range(1, 24)] + [XSS_QUERY]
    return [
        (qid, {"type": TYPES[i % len(TYPES)], "difficulty": "hard" if i % 3 == 0 else "easy"})
        for i, qid in enumerate(ids)
    ]


def _grades(rng: np.random.Generator, strength: float, hard: bool) -> tuple[list[int], list[int]]:
    """Ten retrieved grades, and the grades of relevant chunks the run did not retrieve."""
    p_rel = np.clip(strength - 0.15 * hard - 0.04 * np.arange(10), 0.03, 0.95)
    relevant = rng.random(10) < p_rel
    retrieved = [int(rng.integers(1, 4)) if r else 0 for r in relevant]
    missed = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(0, 3)))]
    return retrieved, missed


def _ranking(retrieved: list[int], missed: list[int]) -> dict[str, float]:
    rel = [g >= 1 for g in retrieved]
    total_rel = sum(rel) + len(missed)
    ideal = sorted([g for g in retrieved if g > 0] + missed, reverse=True)
    out: dict[str, float] = {}
    for k in K_VALUES:
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(retrieved[:k]))
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))
        out[f"ndcg@{k}"] = dcg / idcg if idcg else 0.0
        out[f"P@{k}"] = sum(rel[:k]) / k
        out[f"recall@{k}"] = sum(rel[:k]) / total_rel if total_rel else 0.0
    hits = [i for i, r in enumerate(rel) if r]
    out["map"] = sum((n + 1) / (i + 1) for n, i in enumerate(hits)) / total_rel if total_rel else 0.0
    out["recip_rank"] = 1 / (hits[0] + 1) if hits else 0.0
    top5 = [i for i in hits if i < 5]
    out["context_precision"] = sum((n + 1) / (i + 1) for n, i in enumerate(top5)) / len(top5) if top5 else 0.0
    return out


def _pr_points(retrieved: list[int], missed: list[int]) -> list[float]:
    """11-point interpolated precision: at recall r, the best precision at any rank whose recall is >= r."""
    total_rel = sum(g >= 1 for g in retrieved) + len(missed)
    points: list[tuple[float, float]] = []
    found = 0
    for i, g in enumerate(retrieved):
        found += g >= 1
        points.append((found / total_rel if total_rel else 0.0, found / (i + 1)))
    return [max((p for r, p in points if r >= level / 10 - 1e-12), default=0.0) for level in range(11)]


def _summary(values: list[float | None], reasons: list[str], rng: np.random.Generator) -> MetricSummary:
    scored = np.array([v for v in values if v is not None])
    counts = {r: reasons.count(r) for r in sorted(set(reasons))}
    if scored.size == 0:
        return MetricSummary(mean=None, n_unscored=len(values), unscored_reasons=counts)
    means = scored[rng.integers(0, scored.size, (1000, scored.size))].mean(axis=1)
    return MetricSummary(
        mean=round(float(scored.mean()), 6),
        low=round(float(np.quantile(means, 0.025)), 6),
        high=round(float(np.quantile(means, 0.975)), 6),
        n_scored=int(scored.size),
        n_unscored=len(values) - int(scored.size),
        unscored_reasons=counts,
    )


def _query_rows(name: str, strength: float, rng: np.random.Generator) -> tuple[list[QueryResult], dict[str, list[Any]]]:
    rows: list[QueryResult] = []
    extra: dict[str, list[Any]] = {"pr": [], "grades": []}
    for qid, strata in _queries():
        retrieved, missed = _grades(rng, strength, strata["difficulty"] == "hard")
        metrics: dict[str, float | None] = {m: round(v, 6) for m, v in _ranking(retrieved, missed).items()}
        unscored: dict[str, str] = {}
        for metric in JUDGED:
            if rng.random() < 0.08:
                metrics[metric], unscored[metric] = None, REASONS[int(rng.integers(0, 2))]
            else:
                metrics[metric] = round(float(np.clip(rng.beta(2 + 6 * strength, 3), 0, 1)), 6)
        rows.append(QueryResult(run=name, query_id=qid, strata=strata, metrics=metrics, unscored=unscored))
        extra["pr"].append(_pr_points(retrieved, missed))
        extra["grades"].extend(retrieved)
    return rows, extra


def _summaries(rows: list[QueryResult], rng: np.random.Generator) -> dict[str, MetricSummary]:
    names = list(rows[0].metrics)
    return {
        m: _summary([r.metrics[m] for r in rows], [r.unscored[m] for r in rows if m in r.unscored], rng) for m in names
    }


def _strata(rows: list[QueryResult], rng: np.random.Generator) -> dict[str, dict[str, dict[str, MetricSummary]]]:
    out: dict[str, dict[str, dict[str, MetricSummary]]] = {}
    for field in ("type", "difficulty"):
        out[field] = {}
        for value in sorted({r.strata[field] for r in rows}):
            group = [r for r in rows if r.strata[field] == value]
            out[field][value] = {
                m: _summary([r.metrics[m] for r in group], [r.unscored[m] for r in group if m in r.unscored], rng)
                for m in HEADLINE
            }
    return out


def _counts(name: str) -> RunCounts:
    base = {"lines": 24, "queries_evaluated": 24, "with_answer": 24, "labels_judged_now": 0}
    if name == "bm25":
        base.update(lines=25, unknown_query_ids=1, missing_queries=1, labels_judged_now=0)
    elif name == "dense":
        base.update(labels_judged_now=37)
    else:
        base.update(unknown_chunk_ids=3, duplicate_ids=2, empty_retrieved=1, labels_judged_now=52)
    return RunCounts(**base)


def _run(name: str, strength: float, rng: np.random.Generator) -> tuple[RunResult, list[QueryResult]]:
    rows, extra = _query_rows(name, strength, rng)
    summaries = _summaries(rows, rng)
    curves = {family: {str(k): summaries[f"{family}@{k}"].mean for k in K_VALUES} for family in ("ndcg", "P", "recall")}
    grades = extra["grades"]
    histogram = {str(g): grades.count(g) for g in range(4)}
    histogram["unscored"] = 2 if name != "bm25" else 0
    run = RunResult(
        name=name,
        path=f"runs/{name.replace(' & ', '_')}.jsonl",
        counts=_counts(name),
        metrics=summaries,
        curves=curves,
        strata=_strata(rows, rng),
        judged_at_k={"1": 1.0, "3": 1.0, "5": 0.992, "10": 0.975 if name == "bm25" else 0.99},
        pr_curve=[round(float(v), 6) for v in np.mean(extra["pr"], axis=0)],
        grade_histogram=histogram,
    )
    return run, rows


def _paired(a: list[QueryResult], b: list[QueryResult], metric: str, rng: np.random.Generator) -> dict[str, Any]:
    pairs = [(x.metrics[metric], y.metrics[metric]) for x, y in zip(a, b, strict=True)]
    diffs = np.array([y - x for x, y in pairs if x is not None and y is not None])
    signs = rng.choice([-1.0, 1.0], (2000, diffs.size))
    draws = np.sort(np.abs((signs * diffs).mean(axis=1)))[::-1]
    extreme = int((draws >= abs(diffs.mean()) - 1e-12).sum())
    return {"n": diffs.size, "diffs": diffs, "draws": draws, "p": (extreme + 1) / 2001}


def _half_width(draws: np.ndarray, level: float) -> float:
    """p(t) = (#{draws >= t} + 1) / 2001 <= level exactly when t exceeds the (h+1)-th largest draw, h = the most
    draws p allows."""
    allowed = math.floor(level * 2001) - 1
    return float(draws[allowed]) + 1e-12


def _comparison(a: str, b: str, metric: str, got: dict[str, Any], p_adj: float, level: float) -> Comparison:
    diffs = got["diffs"]
    delta, half = float(diffs.mean()), _half_width(got["draws"], level)
    significant = p_adj <= 0.05
    word = "beats" if significant else "does not differ reliably from"
    return Comparison(
        a=a, b=b, metric=metric, n=int(got["n"]), delta=round(delta, 6), low=round(delta - half, 6),
        high=round(delta + half, 6), p_value=round(got["p"], 6), p_adjusted=round(p_adj, 6), significant=significant,
        verdict=f"{b} {word} {a} on {metric} (Holm over 2 pairs, adjusted p = {p_adj:.3f}).", correction="holm",
        family_size=2, primary=metric == "ndcg@10", interval_confidence=round(1 - level, 6),
        d_z=round(float(delta / np.std(diffs, ddof=1)), 6), wins=int((diffs > 0).sum()), ties=int((diffs == 0).sum()),
        losses=int((diffs < 0).sum()), resamples=2000, p_mc_error=round(math.sqrt(got["p"] * (1 - got["p"]) / 2000), 6),
    )  # fmt: skip


def _comparisons(per_run: dict[str, list[QueryResult]], rng: np.random.Generator) -> list[Comparison]:
    """One family per metric: the later runs against the first; Holm by hand over its two pairs."""
    out: list[Comparison] = []
    names = list(per_run)
    for metric in HEADLINE:
        got = {b: _paired(per_run[names[0]], per_run[b], metric, rng) for b in names[1:]}
        order = sorted(got, key=lambda b: got[b]["p"])
        running, passing = 0.0, True
        for step, b in enumerate(order):
            running = max(running, min(1.0, (2 - step) * got[b]["p"]))
            passing = passing and running <= 0.05
            level = 0.05 / (2 - step) if passing else 0.05 / 2
            out.append(_comparison(names[0], b, metric, got[b], running, level))
    return out


def _kappa(j: np.ndarray, h: np.ndarray, weights: np.ndarray) -> float:
    """Weighted kappa 1 - sum w O / sum w E (Cohen's kappa with w = [i != j]), from the 4 x 4 confusion counts."""
    observed = np.zeros((4, 4))
    np.add.at(observed, (j, h), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    return float(1.0 - (weights * observed).sum() / (weights * expected).sum())


def _agreement_stats(j: np.ndarray, h: np.ndarray) -> dict[str, float]:
    grid = np.abs(np.subtract.outer(np.arange(4), np.arange(4))) / 3.0
    return {
        "percent_agreement": float(np.mean(j == h)),
        "cohen_kappa": _kappa(j, h, (grid > 0).astype(float)),
        "weighted_kappa_linear": _kappa(j, h, grid),
        "weighted_kappa_quadratic": _kappa(j, h, grid**2),
        "krippendorff_alpha": float(
            krippendorff.alpha(reliability_data=[j, h], level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
        ),
        "leniency": float(np.mean(j - h)),
    }


def _block(j: np.ndarray, h: np.ndarray, unscored: int, rng: np.random.Generator) -> AgreementBlock:
    """Textbook figures with a 300-resample percentile bootstrap over items."""
    point = _agreement_stats(j, h)
    draws = [_agreement_stats(j[idx], h[idx]) for idx in rng.integers(0, j.size, size=(300, j.size))]
    stats = {}
    for key, value in point.items():
        values = np.array([d[key] for d in draws])
        low, high = np.nanpercentile(values, [2.5, 97.5])
        stats[key] = AgreementStat(value=round(value, 6), low=round(float(low), 6), high=round(float(high), 6),
                                   n=int(j.size), n_unscored=unscored)  # fmt: skip
    confusion = np.zeros((4, 4), dtype=int)
    np.add.at(confusion, (j, h), 1)
    return AgreementBlock(
        n=int(j.size), n_unscored=unscored, **stats, confusion_matrix=confusion.tolist(),
        judge_histogram=np.bincount(j, minlength=4).tolist(), human_histogram=np.bincount(h, minlength=4).tolist(),
    )  # fmt: skip


def _agreement(rng: np.random.Generator) -> AgreementSummary:
    """60 audited items: a judge one grade off now and then, a little lenient; three annotators on 20 items."""
    human = rng.integers(0, 4, size=60)
    judge = np.clip(human + rng.choice([-1, 0, 0, 0, 1, 1], size=60), 0, 3)
    kinds = np.array([*TYPES, XSS_STRATUM])[rng.integers(0, 5, size=60)]
    strata = {str(v): _block(judge[kinds == v], human[kinds == v], 0, rng) for v in sorted(set(kinds.tolist()))}
    people = np.vstack([human[:20], np.clip(human[:20] + rng.choice([-1, 0, 0, 1], size=20), 0, 3), human[:20]])
    people[2, :5] = np.clip(people[2, :5] - 1, 0, 3)
    alpha = krippendorff.alpha(reliability_data=people, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    counts = np.stack([(people == c).sum(axis=0) for c in range(4)], axis=1)  # items x categories
    p_i = ((counts**2).sum(axis=1) - 3) / 6
    shares = counts.sum(axis=0) / counts.sum()
    fleiss = (p_i.mean() - (shares**2).sum()) / (1 - (shares**2).sum())
    return AgreementSummary(
        n_items=62,
        annotators=["alice", "bob", "chen"],
        overall=_block(judge, human, 2, rng),
        between_humans=AnnotatorAgreement(
            annotators=["alice", "bob", "chen"], n_items=20,
            krippendorff_alpha=AgreementStat(value=round(float(alpha), 6), low=0.61, high=0.93, n=20),
            fleiss_kappa=AgreementStat(value=round(float(fleiss), 6), low=0.25, high=0.62, n=20),
        ),
        strata={"type": strata},
    )  # fmt: skip


def build() -> tuple[EvalResult, list[QueryResult]]:
    """The fixture: an EvalResult with three runs, and every per-query row."""
    rng = np.random.default_rng(20240611)
    runs: list[RunResult] = []
    per_run: dict[str, list[QueryResult]] = {}
    for name, strength in RUNS.items():
        run, rows = _run(name, strength, rng)
        runs.append(run)
        per_run[name] = rows
    corrected = [
        CorrectedMetric(run="dense", metric="faithfulness", judge_only=0.742, estimate=0.701, low=0.652, high=0.748,
                        classical_low=0.61, classical_high=0.79, lambda_=0.83, n_audited=40, n_unaudited=160,
                        sd_human=0.46, sd_judge=0.44, correlation=0.71,
                        audit_targets=[AuditTarget(half_width=0.05, n_needed=165, n_more=125),
                                       AuditTarget(half_width=0.025, n_needed=1240, n_more=1200)]),
        CorrectedMetric(run="hybrid & rerank", metric="context_recall", judge_only=0.811, estimate=0.795,
                        low=0.751, high=0.838, classical_low=0.72, classical_high=0.86, lambda_=0.77, n_audited=40,
                        n_unaudited=160, sd_human=0.0, sd_judge=0.3, correlation=0.0,
                        audit_targets=[AuditTarget(half_width=0.05, note="audited labels all equal: no spread to "
                                                   "size from")]),
    ]  # fmt: skip
    usage = {
        "relevance": StageUsage(calls=89, cached=412, unscored=4, prompt_tokens=95210, completion_tokens=8810,
                                cost_usd=0.0196),
        "claims": StageUsage(calls=72, cached=0, unscored=3, prompt_tokens=30112, completion_tokens=9120,
                             cost_usd=0.0100),
        "support": StageUsage(calls=144, cached=0, unscored=5, prompt_tokens=120400, completion_tokens=10100,
                              cost_usd=None),
    }  # fmt: skip
    result = EvalResult(
        assay_version="0.1.0",
        golden="golden/demo",
        judge="openai/gpt-4o-mini",
        k_values=list(K_VALUES),
        settings={"confidence": 0.95, "n_resamples": 1000, "seed": 0},
        runs=runs,
        comparisons=_comparisons(per_run, rng),
        primary_metric="ndcg@10",
        corrected=corrected,
        agreement=_agreement(rng),
        label_origin="judge",
        label_sources={"judge": 501, "generator": 72},
        usage=usage,
        warnings=[
            "3 retrieved chunk ids in run 'hybrid & rerank' are not in the golden set; they count as not relevant"
        ],
    )
    return result, [row for rows in per_run.values() for row in rows]


def fixture_texts() -> dict[str, str]:
    """The fixture files' contents: ``eval_result.json`` and ``per_query.json`` (a JSON list of rows)."""
    result, rows = build()
    return {
        "eval_result.json": result.model_dump_json(indent=2) + "\n",
        "per_query.json": json.dumps([r.model_dump(mode="json") for r in rows], indent=1) + "\n",
    }


def load() -> tuple[EvalResult, list[QueryResult]]:
    """The committed fixture, read back."""
    result = EvalResult.model_validate_json((FIXTURE_DIR / "eval_result.json").read_text(encoding="utf-8"))
    rows = json.loads((FIXTURE_DIR / "per_query.json").read_text(encoding="utf-8"))
    return result, [QueryResult.model_validate(r) for r in rows]


if __name__ == "__main__":
    FIXTURE_DIR.mkdir(parents=True, exist_ok=True)
    for file_name, text in fixture_texts().items():
        (FIXTURE_DIR / file_name).write_text(text, encoding="utf-8")
        print(FIXTURE_DIR / file_name)
