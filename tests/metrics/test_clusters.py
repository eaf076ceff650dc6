"""Clustered statistics against independent computations written here.

* The cluster bootstrap of a mean: resample clusters with numpy (the same seed and draw layout: one (B x K) matrix of
  cluster indices), the ratio of the drawn sums to the drawn sizes, percentile bounds.
* The cluster sign-flip test and its inverted interval: every sign vector over the clusters enumerated; for a shift x
  the p-value is #{s : |sum s_c (S_c - x n_c)| >= |sum (S_c - x n_c)|} / 2^K, which changes only where those two
  meet, at x = (sum S -+ s.S) / (sum n -+ s.n).
* The design effect from its definition (cluster-robust variance of the mean over s^2 / n), by hand on small data.
* ``compare_runs`` on clustered rows: the p-value and interval by enumeration over clusters, and the same rows with
  the clusters' questions shuffled give the same figures.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from assay.metrics import clusters
from assay.metrics._errors import MetricError
from assay.metrics.randomization import family_null, sign_flip_interval, sign_flip_null
from assay.metrics.stats import bootstrap_ci
from assay.pipelines.evaluate.statistics.compare import compare_runs
from assay.pipelines.evaluate.statistics.stats import StatSettings, summarize
from assay.results import QueryResult


def all_signs(k: int) -> np.ndarray:
    return np.array(list(itertools.product((1.0, -1.0), repeat=k)))


def exact_p(sums: np.ndarray, sizes: np.ndarray, x: float) -> float:
    e = sums - x * sizes
    return float(np.mean(np.abs(all_signs(sums.size) @ e) >= abs(e.sum()) - 1e-9))


def exact_interval(sums: np.ndarray, sizes: np.ndarray, level: float) -> tuple[float, float]:
    signs = all_signs(sums.size)
    total, n = sums.sum(), sizes.sum()
    points = []
    for s in signs:
        for sign in (1.0, -1.0):
            denominator = n - sign * (s @ sizes)
            if abs(denominator) > 1e-12:
                points.append((total - sign * (s @ sums)) / denominator)
    breaks = np.unique(np.round(points, 12))
    mean = total / n
    grid = np.sort(np.concatenate([breaks, (breaks[1:] + breaks[:-1]) / 2, [mean]]))
    accepted = np.array([exact_p(sums, sizes, x) > level for x in grid])
    centre = int(np.searchsorted(grid, mean))
    low = high = centre
    while low - 1 >= 0 and accepted[low - 1]:
        low -= 1
    while high + 1 < grid.size and accepted[high + 1]:
        high += 1
    return float(grid[low]), float(grid[high])


def data(seed: int, k: int) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=k)
    labels = [f"doc{c}" for c in range(k) for _ in range(sizes[c])]
    effect = rng.normal(0.0, 0.3, size=k)
    values = np.array([effect[int(label[3:])] for label in labels]) + rng.normal(0.1, 0.2, size=len(labels))
    order = rng.permutation(len(labels))  # items arrive in any order
    return values[order], [labels[i] for i in order]


def test_group_sums_sizes_and_nan_counted() -> None:
    grouped = clusters.group([1.0, 2.0, np.nan, 4.0, 5.0], ["b", "a", "a", "b", "c"])
    assert grouped.keys == ("a", "b", "c")
    assert grouped.sums.tolist() == [2.0, 5.0, 5.0]
    assert grouped.sizes.tolist() == [1.0, 2.0, 1.0]
    assert grouped.n_unscored == 1 and grouped.n == 4 and grouped.mean == 3.0


def test_design_effect_by_hand() -> None:
    # clusters {1, 3} and {5, 7}: mean 4, s^2 = (9 + 1 + 1 + 9) / 3 = 20/3, independent Var = (20/3) / 4 = 5/3;
    # residual sums S_c - n_c mean = 4 - 8 = -4 and 12 - 8 = 4, clustered Var = 2/1 * 32 / 16 = 4; deff = 4 / (5/3)
    assert clusters.design_effect([1.0, 3.0, 5.0, 7.0], ["x", "x", "y", "y"]) == pytest.approx(2.4)
    # one item per cluster: K/(K-1) sum (x - mean)^2 / n^2 = s^2 / n exactly
    assert clusters.design_effect([1.0, 3.0, 5.0, 7.0], ["a", "b", "c", "d"]) == pytest.approx(1.0)
    assert clusters.design_effect([1.0, 1.0], ["a", "a"]) is None


@pytest.mark.parametrize("seed", range(4))
def test_cluster_bootstrap_interval_equals_a_numpy_cluster_bootstrap(seed: int) -> None:
    values, labels = data(seed, 60)
    got = clusters.mean_interval(values, labels, n_resamples=2000, seed=seed)
    keys = sorted(set(labels))
    sums = np.array([sum(v for v, c in zip(values, labels, strict=True) if c == key) for key in keys])
    sizes = np.array([labels.count(key) for key in keys], dtype=float)
    picks = np.random.default_rng(seed).integers(0, len(keys), size=(2000, len(keys)))
    means = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    low, high = np.quantile(means, (0.025, 0.975))
    assert got.mean == pytest.approx(values.mean(), abs=1e-12)
    assert (got.low, got.high) == pytest.approx((low, high), abs=1e-12)
    assert got.n == len(labels)


@pytest.mark.parametrize("seed", range(4))
def test_few_clusters_invert_the_cluster_sign_flip_test_exactly(seed: int) -> None:
    values, labels = data(seed, 9)  # under BOOTSTRAP_CLUSTERS; 2^9 sign vectors, every one enumerated
    got = clusters.mean_interval(values, labels)
    grouped = clusters.group(values, labels)
    assert (got.low, got.high) == pytest.approx(exact_interval(grouped.sums, grouped.sizes, 0.05), abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_cluster_sign_flip_p_and_interval_by_enumeration(seed: int) -> None:
    values, labels = data(100 + seed, 8)
    grouped = clusters.group(values - 0.1, labels)
    null = sign_flip_null(grouped.sums, weights=grouped.sizes)
    assert null.exact
    assert null.p_value(abs(grouped.mean)) == pytest.approx(exact_p(grouped.sums, grouped.sizes, 0.0))
    significant = exact_p(grouped.sums, grouped.sizes, 0.0) <= 0.05
    interval = sign_flip_interval(grouped.sums, 0.05, significant=significant, weights=grouped.sizes)
    assert interval == pytest.approx(exact_interval(grouped.sums, grouped.sizes, 0.05), abs=1e-9)


def test_unit_weights_are_the_question_level_test() -> None:
    d = np.random.default_rng(3).normal(0.1, 1.0, size=40)
    plain, weighted = sign_flip_null(d, seed=4), sign_flip_null(d, weights=np.ones(40), seed=4)
    assert np.array_equal(plain.values, weighted.values)


def test_family_null_over_cluster_sums_by_enumeration() -> None:
    # 3 runs, 3 clusters of sizes 1, 2, 3: one permutation of the runs per cluster, (3!)^3 = 216 of them
    rng = np.random.default_rng(5)
    sizes = [1, 2, 3]
    scores = rng.random((6, 3))
    owner = [0, 1, 1, 2, 2, 2]
    sums = np.array([scores[[i for i, o in enumerate(owner) if o == c]].sum(axis=0) for c in range(3)])
    pairs = [(0, 1), (0, 2), (1, 2)]
    draws = []
    for perms in itertools.product(list(itertools.permutations(range(3))), repeat=3):
        permuted = np.vstack([scores[i, list(perms[owner[i]])] for i in range(6)])
        means = permuted.mean(axis=0)
        draws.append(max(abs(means[j] - means[i]) for i, j in pairs))
    null = family_null(sums, pairs, n_items=sum(sizes))
    assert null.exact and null.size == 216
    assert np.allclose(null.values, np.sort(draws)[::-1])


def rows(values_a: np.ndarray, values_b: np.ndarray, labels: list[str]) -> dict[str, dict[str, QueryResult]]:
    return {
        run: {
            f"q{i:03d}": QueryResult(run=run, query_id=f"q{i:03d}", metrics={"m": float(v)}, cluster=labels[i])
            for i, v in enumerate(values)
        }
        for run, values in (("a", values_a), ("b", values_b))
    }


def test_compare_runs_tests_and_intervals_by_cluster() -> None:
    rng = np.random.default_rng(11)
    a, labels = data(7, 10)
    b = a + rng.normal(0.05, 0.1, size=a.size)
    (got,) = compare_runs(rows(a, b, labels), ["m"], StatSettings(correction="none"))
    grouped = clusters.group(b - a, labels)
    p = exact_p(grouped.sums, grouped.sizes, 0.0)
    assert got.exact and got.resamples == 2**10
    assert got.p_value == pytest.approx(p, abs=1e-6)
    assert (got.low, got.high) == pytest.approx(exact_interval(grouped.sums, grouped.sizes, 0.05), abs=2e-6)
    assert got.clusters == 10 and got.n == a.size
    assert got.design_effect == pytest.approx(clusters.design_effect(b - a, labels), abs=1e-6)
    # the same questions in another order, under other ids: the same figures
    order = rng.permutation(a.size)
    again = compare_runs(rows(a[order], b[order], [labels[i] for i in order]), ["m"], StatSettings(correction="none"))
    assert (again[0].p_value, again[0].low, again[0].high) == (got.p_value, got.low, got.high)


def test_summarize_resamples_clusters_and_keeps_the_plain_bootstrap_without_them() -> None:
    values, labels = data(2, 40)
    settings = StatSettings(n_boot=2000, seed=3)
    per = rows(values, values, labels)["a"]
    clustered = summarize(list(per.values()), "m", settings)
    expected = clusters.mean_interval(values, labels, n_resamples=2000, seed=3)
    assert (clustered.low, clustered.high) == (round(expected.low, 6), round(expected.high, 6))
    assert clustered.n_scored == values.size
    alone = [row.model_copy(update={"cluster": None}) for row in per.values()]
    plain = summarize(alone, "m", settings)
    reference = bootstrap_ci(values, n_resamples=2000, seed=3)
    assert (plain.low, plain.high) == (round(reference.low, 6), round(reference.high, 6))
    # questions of one document move together here: the clustered interval is the wider one
    assert (clustered.high or 0) - (clustered.low or 0) > (plain.high or 0) - (plain.low or 0)


def test_few_clusters_all_above_zero_give_an_interval_above_zero() -> None:
    # 6 clusters of 2 questions, every cluster's sum positive: of the 2^6 sign vectors only all-plus and all-minus
    # reach the observed |mean|, p = 2/64 < 0.05, so the interval excludes 0. The null must divide by the 12
    # questions, as the mean does: divided by the 6 clusters, |sum s_c S_c| / 6 >= sum S / 12 for 14 of the 64
    # vectors (at most one sign against the rest), p = 14/64, and 0 would sit inside the interval.
    values = [0.4, 0.6, 0.5, 0.5, 0.3, 0.7, 0.6, 0.4, 0.2, 0.8, 0.5, 0.5]
    labels = [f"doc{i // 2}" for i in range(12)]
    got = clusters.mean_interval(values, labels)
    assert got.mean == pytest.approx(0.5)
    assert 0.0 < got.low < 0.5 < got.high
    grouped = clusters.group(values, labels)
    assert exact_p(grouped.sums, grouped.sizes, 0.0) == pytest.approx(2 / 64)
    assert (got.low, got.high) == pytest.approx(exact_interval(grouped.sums, grouped.sizes, 0.05), abs=1e-9)


def test_compare_runs_reports_no_design_effect_when_every_query_is_its_own_cluster() -> None:
    rng = np.random.default_rng(12)
    a = rng.random(10)
    b = a + rng.normal(0.05, 0.1, size=10)
    per_run = {run: {f"q{i}": QueryResult(run=run, query_id=f"q{i}", metrics={"m": float(v)}) for i, v in
                     enumerate(values)} for run, values in (("a", a), ("b", b))}  # fmt: skip
    (got,) = compare_runs(per_run, ["m"], StatSettings(correction="none"))
    assert got.clusters is None and got.design_effect is None  # not 1.0: no clusters, nothing measured
    labels = [f"doc{i // 2}" for i in range(10)]
    (paired,) = compare_runs(rows(a, b, labels), ["m"], StatSettings(correction="none"))
    assert paired.clusters == 5 and paired.design_effect is not None


def test_group_reads_none_as_unscored_and_refuses_mismatched_shapes() -> None:
    grouped = clusters.group([1.0, None, 3.0], ["a", "a", "b"])  # a metric's None (unscored) is a NaN here
    assert grouped.keys == ("a", "b") and grouped.sums.tolist() == [1.0, 3.0] and grouped.n_unscored == 1
    nothing = clusters.group([np.nan, np.nan], ["a", "b"])
    assert nothing.keys == () and nothing.n == 0 and nothing.n_unscored == 2 and np.isnan(nothing.mean)
    with pytest.raises(MetricError, match="1-d and of equal length"):
        clusters.group([[1.0, 2.0], [3.0, 4.0]], ["a", "b", "c", "d"])  # as many values as labels, but 2-d
    with pytest.raises(MetricError, match="1-d and of equal length"):
        clusters.group([1.0, 2.0], ["a"])


def test_design_effect_edges() -> None:
    assert clusters.design_effect([1.0, 2.0, 3.0], ["a", "a", "a"]) is None  # one cluster: no between-cluster spread
    assert clusters.design_effect([1.0, None, 3.0, 5.0, 7.0], ["x", "x", "x", "y", "y"]) == pytest.approx(2.4)
    assert clusters.design_effect([1.0, 3.0], ["a", "b"]) == pytest.approx(1.0)  # two items, two clusters
    assert clusters.design_effect([1.0, np.nan], ["a", "b"]) is None  # one scored item
    # a spread at the noise floor, s^2 / n = (2e-12)^2 / 2 / 2 = 1e-24 exactly: read as no spread
    assert clusters.design_effect([0.0, 2e-12], ["a", "b"]) is None


def numpy_cluster_bootstrap(values: np.ndarray, labels: list[str], *, b: int, seed: int, confidence: float) -> tuple:
    keys = sorted(set(labels))
    sums = np.array([sum(v for v, c in zip(values, labels, strict=True) if c == key) for key in keys])
    sizes = np.array([labels.count(key) for key in keys], dtype=float)
    picks = np.random.default_rng(seed).integers(0, len(keys), size=(b, len(keys)))
    means = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    alpha = 1.0 - confidence
    return tuple(np.quantile(means, (alpha / 2, 1 - alpha / 2)))


def test_the_cluster_bootstrap_from_fifty_clusters_with_its_defaults_confidence_and_unscored_count() -> None:
    values, labels = data(21, 50)  # exactly BOOTSTRAP_CLUSTERS clusters: the bootstrap, not the sign flips
    values[3] = np.nan
    kept = ~np.isnan(values)
    scored, scored_labels = values[kept], [label for label, keep in zip(labels, kept, strict=True) if keep]
    got = clusters.mean_interval(values, labels)  # defaults: 10,000 resamples, seed 0, 95%
    assert (got.low, got.high) == pytest.approx(
        numpy_cluster_bootstrap(scored, scored_labels, b=10_000, seed=0, confidence=0.95), abs=1e-12
    )
    assert (got.n, got.n_unscored, got.confidence) == (values.size - 1, 1, 0.95)
    narrow = clusters.mean_interval(values, labels, confidence=0.8, n_resamples=500, seed=2)
    assert (narrow.low, narrow.high) == pytest.approx(
        numpy_cluster_bootstrap(scored, scored_labels, b=500, seed=2, confidence=0.8), abs=1e-12
    )
    assert (narrow.n_unscored, narrow.confidence) == (1, 0.8)


def test_one_question_per_cluster_is_the_plain_bootstrap_at_the_confidence_asked() -> None:
    values = np.random.default_rng(8).random(30)
    labels = [f"q{i}" for i in range(30)]
    got = clusters.mean_interval(values, labels, confidence=0.8)
    assert got == bootstrap_ci(values, confidence=0.8, n_resamples=10_000, seed=0)
    assert got.confidence == 0.8


def test_two_clusters_invert_the_sign_flip_test() -> None:
    """2 clusters of means 1 and 5: 4 sign vectors, p >= 1/2 everywhere, no shift is rejected: the interval reaches
    just past the cluster means and, the test at 0 not significant, holds 0 (the low side mirrored below it). A
    cluster bootstrap would give [1, 5] (its resamples' means are 1, 3 and 5)."""
    values, labels = [0.0, 2.0, 4.0, 6.0], ["a", "a", "b", "b"]
    got = clusters.mean_interval(values, labels, confidence=0.9)
    assert got.low == pytest.approx(-1.0, abs=1e-5) and got.high == pytest.approx(5.0, abs=1e-5)
    assert got.low < 0.0 < 5.0 < got.high
    assert (got.mean, got.n, got.n_unscored, got.confidence) == (3.0, 4, 0, 0.9)


def test_many_clusters_decide_and_invert_with_the_sign_vectors_of_the_seed_given() -> None:
    """20 clusters: random sign vectors. With 7 of them (seed 240) none reaches the observed |mean|: p = 1/8, which
    is the level at 87.5% confidence (both exact in binary), so the test is significant there and the interval
    excludes 0, though with many draws p is about 0.56."""
    values = np.round(np.random.default_rng(11).normal(0.0, 0.5, size=40), 2)
    labels = [f"doc{i // 2:02d}" for i in range(40)]
    grouped = clusters.group(values, labels)
    assert grouped.mean == pytest.approx(-0.042)
    null = sign_flip_null(grouped.sums, weights=grouped.sizes, n_resamples=7, seed=240)
    assert not null.exact and null.p_value(abs(grouped.mean)) == 1 / 8
    got = clusters.mean_interval(values, labels, confidence=0.875, n_resamples=7, seed=240)
    assert got.high < 0.0
    same = sign_flip_interval(grouped.sums, 1 / 8, significant=True, weights=grouped.sizes, n_resamples=7, seed=240)
    assert (got.low, got.high) == same
    assert (got.n, got.confidence) == (40, 0.875)
