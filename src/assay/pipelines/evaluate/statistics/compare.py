"""Comparisons of runs in ``assay eval``: one family of run pairs per metric, verdicts and intervals that agree.

* The family of a test is the set of run pairs compared on ONE metric: every pair (a = the earlier run, b = the
  later), or each run against ``baseline`` (a = the baseline). Metrics are not pooled into one family (ndcg@1..10,
  P@k, recall@k are strongly correlated and answer one question); the ``primary`` metric leads the verdict and the
  others are shown as secondary, each corrected within its own family.
* Test: the two-sided paired randomization test of mean(b - a) = 0 over the queries both runs scored
  (:func:`randomization.sign_flip_null`), exact with at most 16 queries, else B random sign vectors with
  B = :func:`resamples` (so the smallest reachable p, 1/(B+1), is at most a hundredth of the smallest adjusted
  threshold alpha/m); each comparison stores B and the Monte Carlo standard error of its adjusted p.
* Corrections within the family of m pairs, and the interval shown beside the verdict:

  - ``holm``: Holm's step-down on the pairs' p-values. The interval inverts the pair's own sign-flip test
    (:func:`randomization.sign_flip_interval`: the shifts x whose test of mean(d - x) = 0 is not rejected, with the
    same sign vectors) at level alpha/(m - r + 1) when Holm rejects the pair at step r, else at alpha/m
    (Bonferroni, simultaneous over the family). A pair not rejected has p > alpha/m (Holm rejects whatever
    Bonferroni rejects), so its interval contains 0; a rejected one has p <= alpha/(m - r + 1), so its interval
    excludes 0. (Holm-compatible simultaneous intervals for rejected pairs are uninformative beyond the sign,
    Strassburger & Bretz 2008; the step level is the usual compromise.)
  - ``tukey``: randomized Tukey HSD (Sakai): the null distribution of max over the family's pairs of |mean_j -
    mean_i|, each query's scores permuted across the runs (queries scored by every run of the family); adjusted
    p = P(max >= |delta|); the interval delta +- c(alpha) of that max distribution
    (:meth:`randomization.NullDistribution.critical`) is simultaneous over the family (conservative for large
    effects, since the permuted rows keep the runs' differences).
  - ``none``: each pair at level alpha (the inverted sign-flip test), labelled unadjusted.

  In every case significant <=> adjusted p <= alpha <=> the interval excludes 0: the same draws decide both, and
  the interval takes the test's decision at 0 as given, so float rounding cannot put them on different sides.
* Effect sizes beside p: mean delta, paired Cohen's d_z = mean / sd of the differences, wins / ties / losses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from assay.errors import ConfigError
from assay.metrics import clusters, stats
from assay.metrics import randomization as rz
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.results import Comparison, QueryResult, rounded

__all__ = [
    "CORRECTIONS", "compare_runs", "family_pairs", "primary_metric", "resamples", "shared_questions", "verdict",
    "with_primary",
]  # fmt: skip

CORRECTIONS = ("holm", "tukey", "none")
Rows = Mapping[str, QueryResult]


def family_pairs(runs: Sequence[str], baseline: str | None) -> list[tuple[str, str]]:
    """The run pairs (a, b) of every family: all pairs in the order given, or (baseline, run) for each other run."""
    if baseline is None:
        return [(a, b) for i, a in enumerate(runs) for b in runs[i + 1 :]]
    if baseline not in runs:
        raise ConfigError(f"--baseline {baseline}: no run of that name; runs: {', '.join(runs)}")
    return [(baseline, run) for run in runs if run != baseline]


def primary_metric(names: Sequence[str], primary: str | None) -> str | None:
    """``primary`` when given (it must be compared), else ndcg@10 when compared, else the first name."""
    if primary is not None:
        if primary not in names:
            raise ConfigError(
                f"--primary {primary} (or the first --fail-under metric): not a compared metric of this evaluation; "
                f"metrics: {', '.join(names)}"
            )
        return primary
    return "ndcg@10" if "ndcg@10" in names else (names[0] if names else None)


def resamples(family_size: int, settings: StatSettings) -> int:
    """Random rearrangements per test: max(n_perm, ceil(100 m / alpha)), so 1/(B+1) <= alpha / (100 m)."""
    return max(settings.n_perm, math.ceil(100 * max(family_size, 1) / settings.alpha))


def with_primary(per_run: Mapping[str, Rows], names: Sequence[str], primary: str | None) -> list[str]:
    """``names``, with ``primary`` first when it is not among them but the rows have it (a diagnosis measure, which
    is compared in its own family, can still lead)."""
    present = {m for rows in per_run.values() for row in rows.values() for m in row.metrics}
    if primary is not None and primary not in names and primary in present:
        return [primary, *names]
    return list(names)


def compare_runs(per_run: Mapping[str, Rows], names: Sequence[str], settings: StatSettings) -> list[Comparison]:
    """Every family (one per metric, the primary first) over the pairs of :func:`family_pairs`.

    ``names`` are the metrics to compare; a ``settings.primary`` outside them is added when the rows have it.
    Pairs with fewer than two shared scored queries are left out of the family.
    """
    if settings.correction not in CORRECTIONS:
        raise ConfigError(f"--correction {settings.correction}: use one of {', '.join(CORRECTIONS)}")
    pairs = family_pairs(list(per_run), settings.baseline)
    wanted = with_primary(per_run, names, settings.primary)
    primary = primary_metric(wanted, settings.primary) if pairs else None
    ordered = ([primary] if primary else []) + [m for m in wanted if m != primary]
    out: list[Comparison] = []
    for name in ordered:
        out += _family(per_run, pairs, name, settings, primary=name == primary)
    return out


@dataclass
class _Test:
    """One pair of one family: its paired scores, their clusters, null distribution, and the figures of its
    decision."""

    a: str
    b: str
    xs: np.ndarray
    ys: np.ndarray
    labels: list[str]
    null: rz.NullDistribution
    p: float = math.nan
    p_adj: float = math.nan
    level: float = math.nan
    significant: bool = False
    critical: float = math.inf
    mc_error: float = 0.0
    decider: rz.NullDistribution | None = None  # the draws that decided: the pair's own, or the family's maximum
    own: tuple[int, int] = (0, 0)  # the questions a and b each scored on the metric (the pair shares xs.size of them)

    @property
    def observed(self) -> float:
        return abs(float(np.mean(self.ys - self.xs)))

    @property
    def grouped(self) -> clusters.Grouped:
        """The differences summed within clusters: the units the sign flips move."""
        return clusters.group(self.ys - self.xs, self.labels)


def _paired(a: Rows, b: Rows, name: str, queries: set[str] | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    xs: list[float] = []
    ys: list[float] = []
    labels: list[str] = []
    for qid in sorted(set(a) & set(b) if queries is None else queries):
        x, y = a[qid].metrics.get(name), b[qid].metrics.get(name)
        if x is not None and y is not None:
            xs.append(x)
            ys.append(y)
            labels.append(a[qid].unit)
    return np.array(xs, dtype=np.float64), np.array(ys, dtype=np.float64), labels


def _family(
    per_run: Mapping[str, Rows], pairs: list[tuple[str, str]], name: str, settings: StatSettings, *, primary: bool
) -> list[Comparison]:
    """The comparisons of one metric's family; Tukey HSD uses only the queries every run of the family scored."""
    scored = [{q for q, row in per_run[r].items() if row.metrics.get(name) is not None} for pair in pairs for r in pair]
    common = sorted(set.intersection(*scored)) if scored else []
    shared = set(common) if settings.correction == "tukey" else None
    tests = _tests(per_run, pairs, name, settings=settings, shared=shared)
    counts = {r: sum(row.metrics.get(name) is not None for row in per_run[r].values()) for pair in pairs for r in pair}
    for t in tests:
        t.own = (counts[t.a], counts[t.b])
    if settings.correction == "holm":
        _holm(tests, settings.alpha)
    elif settings.correction == "tukey" and tests:
        _tukey(tests, per_run, name, queries=common, settings=settings)
    for t in tests if settings.correction == "none" else ():
        _decide(t, t.null, settings.alpha, p_adj=t.p)
    return [_record(t, name, settings, m=len(tests), primary=primary) for t in tests]


def _tests(
    per_run: Mapping[str, Rows], pairs: list[tuple[str, str]], name: str, *, settings: StatSettings,
    shared: set[str] | None,
) -> list[_Test]:  # fmt: skip
    """The pairs with at least two shared scored queries, each with its sign-flip null and unadjusted p."""
    paired = [(a, b, *_paired(per_run[a], per_run[b], name, shared)) for a, b in pairs]
    kept = [(a, b, xs, ys, labels) for a, b, xs, ys, labels in paired if xs.size >= 2]
    count = resamples(len(kept), settings)
    tests = []
    for a, b, xs, ys, labels in kept:
        grouped = clusters.group(ys - xs, labels)
        null = rz.sign_flip_null(grouped.sums, weights=grouped.sizes, n_resamples=count, seed=settings.seed)
        tests.append(_Test(a, b, xs, ys, labels, null, p=null.p_value(abs(float(np.mean(ys - xs))))))
    return tests


def _decide(t: _Test, null: rz.NullDistribution, level: float, *, p_adj: float, scale: float = 1.0) -> None:
    """Significance and critical value of ``t`` from ``null`` at ``level`` (same draws, so they agree)."""
    t.level, t.p_adj, t.decider = level, p_adj, null
    t.significant = null.hits(t.observed) <= null.max_hits(level)
    t.critical = null.critical(level)
    t.mc_error = min(1.0, scale * null.mc_error(null.p_value(t.observed)))


def _holm(tests: list[_Test], alpha: float) -> None:
    """Holm's step-down: sorted by p, the r-th (from 1) is tested at alpha / (m - r + 1) while all before passed."""
    m = len(tests)
    adjusted = stats.holm([t.p for t in tests])
    order = sorted(range(m), key=lambda i: tests[i].p)
    going = True
    for step, i in enumerate(order):
        t = tests[i]
        going = going and t.null.hits(t.observed) <= t.null.max_hits(alpha / (m - step))
        level = alpha / (m - step) if going else alpha / m
        _decide(t, t.null, level, p_adj=float(adjusted[i]), scale=m - step)


def _tukey(
    tests: list[_Test], per_run: Mapping[str, Rows], name: str, *, queries: list[str], settings: StatSettings
) -> None:
    """Randomized Tukey HSD over the family's pairs, on the queries every run of the family scored."""
    runs = list(dict.fromkeys(r for t in tests for r in (t.a, t.b)))
    scores = np.array([[per_run[r][q].metrics[name] for r in runs] for q in queries], dtype=np.float64)
    labels = [per_run[runs[0]][q].unit for q in queries]
    keys = sorted(set(labels))  # one permutation per cluster: the family's scores summed within clusters
    sums = np.zeros((len(keys), len(runs)))
    position = {key: i for i, key in enumerate(keys)}
    np.add.at(sums, [position[label] for label in labels], scores)
    index = [(runs.index(t.a), runs.index(t.b)) for t in tests]
    null = rz.family_null(sums, index, n_items=len(queries), n_resamples=resamples(len(tests), settings),
                          seed=settings.seed)  # fmt: skip
    for t in tests:
        _decide(t, null, settings.alpha, p_adj=null.p_value(t.observed))


def _record(t: _Test, name: str, settings: StatSettings, *, m: int, primary: bool) -> Comparison:
    effect = rz.paired_effect(t.xs, t.ys)
    decider = t.decider or t.null
    delta = effect.delta
    grouped = t.grouped
    if settings.correction == "tukey":
        low, high = _shifted(delta, t.critical, significant=t.significant, spread=float(np.max(np.abs(t.ys - t.xs))))
    else:
        low, high = rz.sign_flip_interval(grouped.sums, t.level, significant=t.significant, weights=grouped.sizes,
                                          n_resamples=t.null.size, seed=settings.seed)  # fmt: skip
    low, high = _bounds(delta, low, high, significant=t.significant)
    text = verdict(t.a, t.b, name, delta=delta, interval=(low, high), p_adj=t.p_adj, sig=t.significant,
                   label=correction_label(settings.correction, m),
                   shared=shared_questions(int(t.xs.size), t.own))  # fmt: skip
    return Comparison(
        a=t.a, b=t.b, metric=name, n=int(t.xs.size), delta=round(delta, 6), low=low, high=high,
        mean_a=round(float(np.mean(t.xs)), 6), mean_b=round(float(np.mean(t.ys)), 6), n_a=t.own[0], n_b=t.own[1],
        p_value=round(t.p, 6), p_adjusted=round(min(t.p_adj, 1.0), 6), significant=t.significant, verdict=text,
        correction=settings.correction, family_size=m, primary=primary, interval_confidence=round(1.0 - t.level, 6),
        d_z=None if effect.d_z is None else round(effect.d_z, 6), wins=effect.wins, ties=effect.ties,
        losses=effect.losses, resamples=decider.size, exact=decider.exact, p_mc_error=round(t.mc_error, 6),
        clusters=None if grouped.k == grouped.n else grouped.k, design_effect=_deff(t, grouped),
    )  # fmt: skip


def _deff(t: _Test, grouped: clusters.Grouped) -> float | None:
    """The design effect of the pair's differences; None when every query is its own cluster."""
    value = None if grouped.k == grouped.n else clusters.design_effect(t.ys - t.xs, t.labels)
    return None if value is None else rounded(value)


def _shifted(delta: float, half: float, *, significant: bool, spread: float) -> tuple[float, float]:
    """delta -+ the critical value of the family's maximum (Tukey HSD), kept on the side of the decision."""
    if math.isinf(half):  # no rearrangement count reaches the level (not with resamples()): an interval with 0 in it
        half = abs(delta) + spread
    if significant and not abs(delta) > half:  # float guard
        half = float(np.nextafter(abs(delta), 0.0))
    if not significant and abs(delta) > half:
        half = abs(delta)
    return delta - half, delta + half


def _bounds(delta: float, low: float, high: float, *, significant: bool) -> tuple[float, float]:
    """The bounds rounded to 6 decimals as results store them, without crossing 0 against the decision."""
    low, high = round(min(low, delta), 6), round(max(high, delta), 6)
    if significant and low <= 0 <= high:  # rounding reached 0: keep the smallest stored step on the delta's side
        low, high = (max(low, 1e-6), high) if delta > 0 else (low, min(high, -1e-6))
    return low, high


def correction_label(correction: str, m: int) -> str:
    """``Holm over 3 pairs``, ``Tukey HSD over 3 pairs``, ``unadjusted``."""
    if correction == "none":
        return "unadjusted"
    pairs = f"{m} pair{'s' if m != 1 else ''}"
    return f"{'Holm' if correction == 'holm' else 'Tukey HSD'} over {pairs}"


def _num(value: float) -> str:
    """3 decimals; a non-zero value that would show as 0.000 keeps two significant digits."""
    return f"{value:.3f}" if value == 0 or abs(value) >= 0.0005 else f"{value:.1e}"


def _p(value: float) -> str:
    return "p<0.001" if value < 0.001 else f"p={value:.3f}"


def shared_questions(n: int, own: tuple[int, int]) -> str:
    """`` on the 10 questions both scored`` when the pair shares fewer questions than either run scored (the
    comparison is over those alone, not over each run's own); "" when both scored the same ``n``."""
    return f" on the {n} questions both scored" if n < max(own) else ""


def verdict(
    a: str, b: str, metric: str, *, delta: float, interval: tuple[float, float], p_adj: float, sig: bool, label: str,
    shared: str = "",
) -> str:  # fmt: skip
    """The plain sentence of one comparison (b against a) with the family-adjusted interval and p; ``shared``
    (:func:`shared_questions`) says on how many questions when the runs scored different ones."""
    low, high = interval
    adjusted = f"{_p(p_adj)} {'unadjusted' if label == 'unadjusted' else 'adjusted, ' + label}"
    if not sig:
        return (
            f"no significant difference between {b} and {a} on {metric}{shared}: {b} − {a} = {delta:+.3f} "
            f"[{_num(low)}, {_num(high)}], {adjusted}."
        )
    if delta > 0:
        return f"{b} beats {a} on {metric}{shared} by {delta:.3f} [{_num(low)}, {_num(high)}], {adjusted}."
    return f"{a} beats {b} on {metric}{shared} by {-delta:.3f} [{_num(-high)}, {_num(-low)}], {adjusted}."
