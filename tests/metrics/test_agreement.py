"""Agreement statistics: Krippendorff's published example, the krippendorff package, hand-computed kappas."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import krippendorff
import numpy as np
import pytest

from assay.metrics import MetricError
from assay.metrics.agreement import (
    cohen_kappa,
    cohen_kappa_ci,
    confusion_matrix,
    fleiss_kappa,
    fleiss_kappa_ci,
    krippendorff_alpha,
    krippendorff_alpha_ci,
    percent_agreement,
    percent_agreement_ci,
    weighted_kappa,
    weighted_kappa_ci,
)
from assay.metrics.leniency import grade_histogram, leniency, leniency_ci
from assay.metrics.stats import bootstrap_ci

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers x 12 units, values 1..5, gaps.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


def _pairs_from_table(table: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Two raters' grades that produce the given confusion table (rows: rater a, columns: rater b)."""
    a, b = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return np.array(a, dtype=float), np.array(b, dtype=float)


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_published_example(level: str, published: float) -> None:
    got = krippendorff_alpha(KRIPPENDORFF_2011, level)  # type: ignore[arg-type]
    assert got == pytest.approx(published, abs=5e-4)
    assert got == pytest.approx(krippendorff.alpha(KRIPPENDORFF_2011, level_of_measurement=level), abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(6))
def test_krippendorff_matches_package_on_random_data(level: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    raters, units = int(rng.integers(2, 6)), int(rng.integers(5, 60))
    truth = rng.integers(0, 5, size=units)
    data = np.where(rng.random((raters, units)) < 0.6, truth, rng.integers(0, 5, size=(raters, units))).astype(float)
    data[rng.random(data.shape) < 0.25] = nan
    expected = krippendorff.alpha(data, level_of_measurement=level, value_domain=[0, 1, 2, 3, 4])
    got = krippendorff_alpha(data, level, categories=[0, 1, 2, 3, 4])  # type: ignore[arg-type]
    assert got == pytest.approx(expected, abs=1e-10)


def test_krippendorff_interval_close_to_naive_loop_bootstrap() -> None:
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 4, size=60)
    data = np.where(rng.random((3, 60)) < 0.7, truth, rng.integers(0, 4, size=(3, 60))).astype(float)
    ours = krippendorff_alpha_ci(data, "ordinal", n_resamples=4_000)
    naive = []
    for _ in range(800):  # resample units (columns) with replacement, the reference package scores each resample
        naive.append(krippendorff.alpha(data[:, rng.integers(0, 60, 60)], level_of_measurement="ordinal"))
    low, high = np.quantile(naive, [0.025, 0.975])
    assert ours.mean == pytest.approx(krippendorff.alpha(data, level_of_measurement="ordinal"))
    assert (ours.low, ours.high) == pytest.approx((low, high), abs=0.03)


def test_cohen_kappa_hand_computed_two_categories() -> None:
    # Table [[20, 5], [10, 15]], n = 50: p_o = 35/50 = 0.7; rater a marginals 25/50, 25/50; rater b 30/50, 20/50;
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    a, b = _pairs_from_table([[20, 5], [10, 15]])
    assert cohen_kappa(a, b, [0, 1]) == pytest.approx(0.4)
    assert percent_agreement(a, b, [0, 1]) == pytest.approx(0.7)
    # Categories nobody used do not change the unweighted kappa.
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappas_hand_computed_three_categories() -> None:
    # Table [[2, 1, 0], [0, 2, 1], [0, 0, 2]], n = 8; row totals (3, 3, 2), column totals (2, 3, 3).
    # Unweighted: p_o = 6/8 = 0.75; p_e = (3*2 + 3*3 + 2*3)/64 = 21/64; kappa = (0.75 - 21/64)/(1 - 21/64) = 27/43.
    # Linear w = |i-j|/2: sum w*O = 0.5 + 0.5 = 1; sum w*E = (0.5*9 + 1*9 + 0.5*6 + 0.5*9 + 1*4 + 0.5*6)/8 = 3.5;
    #   kappa_w = 1 - 1/3.5 = 5/7.
    # Quadratic w = ((i-j)/2)^2: sum w*O = 0.25 + 0.25 = 0.5; sum w*E = (0.25*9 + 9 + 0.25*6 + 0.25*9 + 4 + 0.25*6)/8
    #   = 20.5/8 = 2.5625; kappa_w = 1 - 0.5/2.5625 = 33/41.
    a, b = _pairs_from_table([[2, 1, 0], [0, 2, 1], [0, 0, 2]])
    cats = [0, 1, 2]
    assert cohen_kappa(a, b, cats) == pytest.approx(27 / 43)
    assert weighted_kappa(a, b, cats, "linear") == pytest.approx(5 / 7)
    assert weighted_kappa(a, b, cats, "quadratic") == pytest.approx(33 / 41)


def _direct_weighted_kappa(a: np.ndarray, b: np.ndarray, k: int, power: int) -> float:
    """Cohen (1968) written out with loops over cells: 1 - sum w O / sum w E, w = (|i-j|/(k-1))^power."""
    n = len(a)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[int(x), int(y)] += 1
    num = den = 0.0
    for i in range(k):
        for j in range(k):
            w = (abs(i - j) / (k - 1)) ** power
            num += w * observed[i, j]
            den += w * observed[i].sum() * observed[:, j].sum() / n
    return 1 - num / den


@pytest.mark.parametrize("seed", range(5))
def test_weighted_kappa_matches_direct_formula(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=80).astype(float)
    b = np.clip(a + rng.integers(-1, 2, size=80), 0, 3)
    assert weighted_kappa(a, b, weights="linear") == pytest.approx(_direct_weighted_kappa(a, b, 4, 1))
    assert weighted_kappa(a, b, weights="quadratic") == pytest.approx(_direct_weighted_kappa(a, b, 4, 2))


def test_weighted_kappa_absent_middle_category_still_counts() -> None:
    # Grades only in {0, 1, 3}: with categories [0, 1, 2, 3] the distance 1 -> 3 is two steps, not one.
    a = np.array([0, 1, 3, 3, 1, 0, 3, 1], dtype=float)
    b = np.array([0, 3, 3, 1, 1, 0, 3, 0], dtype=float)
    to_pos = {0.0: 0, 1.0: 1, 3.0: 3}
    pa, pb = np.array([to_pos[x] for x in a]), np.array([to_pos[x] for x in b])
    assert weighted_kappa(a, b, [0, 1, 2, 3], "linear") == pytest.approx(_direct_weighted_kappa(pa, pb, 4, 1))
    assert weighted_kappa(a, b, [0, 1, 2, 3], "linear") != pytest.approx(weighted_kappa(a, b, [0, 1, 3], "linear"))


def test_confusion_matrix_histogram_and_missing() -> None:
    a = [0, 1, 2, 3, 3, nan, 2]
    b = [0, 1, 3, 3, 2, 1, nan]
    expected = np.zeros((4, 4), dtype=int)
    for x, y in [(0, 0), (1, 1), (2, 3), (3, 3), (3, 2)]:
        expected[x, y] += 1
    np.testing.assert_array_equal(confusion_matrix(a, b), expected)
    np.testing.assert_array_equal(grade_histogram(a), [1, 1, 2, 2])
    interval = percent_agreement_ci(a, b, n_resamples=500)
    assert (interval.mean, interval.n, interval.n_unscored) == (pytest.approx(3 / 5), 5, 2)


# Worked Fleiss example (10 subjects, 14 raters, 5 categories; counts n_ij per subject), as reproduced in most texts:
# P_i = (sum_j n_ij^2 - 14) / (14 * 13), e.g. subject 1: (196 - 14)/182 = 1.0; subject 2: (4+36+16+4 - 14)/182 = 0.253.
# Pbar = 0.3780; p_j = (0.143, 0.200, 0.279, 0.150, 0.229); P_e = sum p_j^2 = 0.2128;
# kappa = (0.3780 - 0.2128) / (1 - 0.2128) = 0.2099.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip


def _ratings_from_counts(counts: list[list[int]]) -> np.ndarray:
    return np.array([[j for j, c in enumerate(row) for _ in range(c)] for row in counts], dtype=float)


def test_fleiss_worked_example() -> None:
    ratings = _ratings_from_counts(FLEISS_COUNTS)
    assert fleiss_kappa(ratings, [0, 1, 2, 3, 4]) == pytest.approx(0.2099, abs=1e-4)


@pytest.mark.parametrize("seed", range(4))
def test_fleiss_equals_alpha_identity_with_package(seed: int) -> None:
    # On complete data with m raters, N items, n = N m values: alpha = 1 - (1 - kappa)(n - 1)/n (nominal), so
    # kappa = 1 - (1 - alpha) n / (n - 1). Check Fleiss against the krippendorff package through it.
    rng = np.random.default_rng(seed)
    items, raters = 40, int(rng.integers(2, 6))
    truth = rng.integers(0, 4, size=items)
    ratings = np.where(rng.random((items, raters)) < 0.6, truth[:, None], rng.integers(0, 4, (items, raters)))
    alpha = krippendorff.alpha(ratings.T.astype(float), level_of_measurement="nominal", value_domain=[0, 1, 2, 3])
    n = items * raters
    assert fleiss_kappa(ratings.astype(float)) == pytest.approx(1 - (1 - alpha) * n / (n - 1), abs=1e-10)


def test_fleiss_with_two_raters_is_scotts_pi() -> None:
    # Table [[20, 5], [10, 15]]: pooled shares (25+30)/100 = 0.55 and 0.45; P_e = 0.55^2 + 0.45^2 = 0.505;
    # p_o = 0.7; pi = (0.7 - 0.505)/(1 - 0.505) = 0.195/0.495 = 0.393939...
    a, b = _pairs_from_table([[20, 5], [10, 15]])
    assert fleiss_kappa(np.column_stack([a, b]), [0, 1]) == pytest.approx(0.195 / 0.495)


def test_fleiss_allows_different_raters_but_needs_equal_counts() -> None:
    ratings = np.array([[0, 0, nan], [1, nan, 1], [nan, 2, 1]])
    # Two grades per item: P = (1, 1, 0); Pbar = 2/3; shares 2/6, 3/6, 1/6; P_e = (4 + 9 + 1)/36 = 14/36.
    assert fleiss_kappa(ratings, [0, 1, 2]) == pytest.approx((2 / 3 - 14 / 36) / (1 - 14 / 36))
    with pytest.raises(MetricError, match="krippendorff_alpha"):
        fleiss_kappa(np.array([[0, 0, 1], [1, nan, 1]]))


def test_degenerate_single_category_is_one_and_empty_is_nan() -> None:
    same = np.full(6, 3.0)
    assert cohen_kappa(same, same) == 1.0
    assert weighted_kappa(same, same) == 1.0
    assert fleiss_kappa(np.column_stack([same, same, same])) == 1.0
    assert krippendorff_alpha(np.vstack([same, same])) == 1.0
    # Perfect agreement with variation is 1 by the formula itself.
    grades = np.array([0.0, 1, 2, 3, 3, 1])
    assert cohen_kappa(grades, grades) == pytest.approx(1.0)
    assert krippendorff_alpha(np.vstack([grades, grades]), "interval") == pytest.approx(1.0)
    empty = [nan, nan]
    assert math.isnan(cohen_kappa(empty, [1.0, 2.0]))
    assert math.isnan(percent_agreement(empty, empty))
    assert math.isnan(krippendorff_alpha([[1.0, nan], [nan, 2.0]]))


def test_bad_grades_raise_with_position_and_fix() -> None:
    with pytest.raises(MetricError, match=r"grade 7\.0 at position \(2,\).*NaN"):
        cohen_kappa([0, 1, 7], [0, 1, 2])
    with pytest.raises(MetricError, match="grade -1"):
        leniency([0, -1], [0, 1])
    with pytest.raises(MetricError, match="weights"):
        weighted_kappa([0], [0], weights="cubic")  # type: ignore[arg-type]
    with pytest.raises(MetricError, match="level"):
        krippendorff_alpha(KRIPPENDORFF_2011, "fuzzy")  # type: ignore[arg-type]


def test_leniency_hand_computed() -> None:
    judge = [3, 2, 2, nan, 1]
    human = [2, 2, 0, 1, 1]
    # Jointly graded: differences 1, 0, 2, 0 -> mean 0.75 (the judge grades higher).
    assert leniency(judge, human) == pytest.approx(0.75)
    interval = leniency_ci(judge, human, n_resamples=2_000)
    assert interval.n == 4 and interval.n_unscored == 1
    assert 0.0 <= interval.low <= 0.75 <= interval.high <= 2.0


def test_kappa_intervals_bracket_estimate_and_match_naive_bootstrap() -> None:
    rng = np.random.default_rng(21)
    a = rng.integers(0, 4, size=120).astype(float)
    b = np.where(rng.random(120) < 0.7, a, rng.integers(0, 4, size=120)).astype(float)
    ours = cohen_kappa_ci(a, b, n_resamples=4_000)
    naive = [cohen_kappa(a[idx], b[idx]) for idx in rng.integers(0, 120, size=(1_000, 120))]
    assert ours.mean == pytest.approx(cohen_kappa(a, b))
    assert (ours.low, ours.high) == pytest.approx(tuple(np.quantile(naive, [0.025, 0.975])), abs=0.03)
    quad = weighted_kappa_ci(a, b, weights="quadratic", n_resamples=2_000, method="bca")
    assert quad.mean == pytest.approx(weighted_kappa(a, b))
    assert quad.low <= quad.mean <= quad.high
    ratings = np.column_stack([a, b, np.where(rng.random(120) < 0.7, a, 0.0)])
    fleiss = fleiss_kappa_ci(ratings, n_resamples=2_000)
    assert fleiss.low <= fleiss.mean <= fleiss.high and fleiss.n == 120


def test_leniency_with_nothing_jointly_graded_and_other_categories() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN decided, not numpy's mean of nothing
        assert math.isnan(leniency([1, nan], [nan, 2]))
    # Categories are grade values: on a 1..5 scale, judge 5 and 1 against human 2 and 1 differ by 3 and 0.
    assert leniency([5, 1], [2, 1], categories=[1, 2, 3, 4, 5]) == pytest.approx(1.5)
    assert leniency_ci([5, 1, 3], [2, 1, 3], categories=[1, 2, 3, 4, 5], n_resamples=200).mean == pytest.approx(1.0)
    with pytest.raises(MetricError, match="categories"):
        leniency([4], [1])  # 4 is not one of the default grades 0..3


def test_leniency_interval_defaults_and_bounds() -> None:
    judge, human = [3, 2, 2, 1, 0, 3], [2, 2, 0, 1, 1, 3]  # differences 1, 0, 2, 0, -1, 0
    default = leniency_ci(judge, human)
    explicit = leniency_ci(judge, human, confidence=0.95, n_resamples=10_000, seed=0, method="percentile")
    assert default == explicit and default.confidence == 0.95
    assert default.mean == pytest.approx(1 / 3)
    # A mean of resampled differences lies within the smallest and largest difference.
    assert -1.0 <= default.low <= 1 / 3 <= default.high <= 2.0
    narrow = leniency_ci(judge, human, confidence=0.5)
    # Every setting reaches the bootstrap: the interval is bootstrap_ci's over the hand-computed differences.
    differences = [1.0, 0.0, 2.0, 0.0, -1.0, 0.0]
    for settings in ({"n_resamples": 300, "seed": 3, "method": "bca"}, {"n_resamples": 50, "seed": 4}):
        expected = bootstrap_ci(differences, **settings)  # type: ignore[arg-type]
        assert leniency_ci([*judge, nan], [*human, 1], **settings) == replace(expected, n_unscored=1)  # type: ignore[arg-type]
    assert default.low <= narrow.low <= narrow.high <= default.high


def test_grade_histogram_counts_every_category_even_unused() -> None:
    counts = grade_histogram([0, 0, nan])
    assert counts.tolist() == [2, 0, 0, 0] and counts.dtype == np.int64
    np.testing.assert_array_equal(grade_histogram([5, 1], categories=[1, 3, 5]), [1, 0, 1])
    assert grade_histogram([]).tolist() == [0, 0, 0, 0]
    with pytest.raises(MetricError, match=r"values holds grade 7\.0 at position \(1,\)"):
        grade_histogram([0, 7])


def test_leniency_interval_defaults_on_a_fine_grade_scale() -> None:
    # Twelve uneven grade values: resampled means are nearly continuous, so any other draw moves the bounds.
    rng = np.random.default_rng(40)
    categories = sorted(rng.uniform(0, 10, size=12).tolist())
    judge, human = rng.choice(categories, size=40), rng.choice(categories, size=40)
    default = leniency_ci(judge, human, categories)
    assert default == leniency_ci(judge, human, categories, n_resamples=10_000, seed=0, method="percentile")
    for other in ({"seed": 1}, {"n_resamples": 10_001}, {"method": "bca"}):
        assert leniency_ci(judge, human, categories, **other) != default  # type: ignore[arg-type]
