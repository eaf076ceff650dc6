"""Pins of the agreement statistics found by the mutation habit: messages, edge cases and the settings each interval
passes to the bootstrap, each on a hand-made case or against the ``krippendorff`` package."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

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
    percent_agreement_ci,
    weighted_kappa,
    weighted_kappa_ci,
)
from assay.metrics.stats import Interval, bootstrap_ci


def graded(seed: int, n: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """Two raters on the 0..3 scale who agree often; many items, so the bootstrap's quantiles vary with its draws."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, size=n).astype(float)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, 4, size=n)).astype(float)
    return a, b


def three_raters(seed: int, n: int = 60) -> np.ndarray:
    a, b = graded(seed, n)
    c = np.where(np.random.default_rng(seed + 1).random(n) < 0.5, a, b)
    return np.column_stack([a, b, c])


Interval_of = Callable[..., Interval]


def check_settings(interval_of: Interval_of, defaults: dict[str, object]) -> None:
    """The interval uses the settings given: defaults as documented, the seed, the resamples, confidence, method."""
    assert interval_of() == interval_of(confidence=0.95, n_resamples=10_000, seed=0, method="percentile", **defaults)
    small = {"n_resamples": 400}
    assert interval_of(seed=3, **small) == interval_of(seed=3, **small)
    assert interval_of(seed=3, **small) != interval_of(seed=4, **small)
    one = interval_of(n_resamples=1)
    assert one.low == one.high
    assert interval_of(confidence=0.5, **small).confidence == 0.5
    assert interval_of(method="bca", **small) != interval_of(**small)


def test_kappa_intervals_pass_their_settings_and_count_dropped_items() -> None:
    a, b = graded(1)
    b[[3, 7]] = np.nan
    many_a, many_b = graded(9, n=500)  # agreement means take 501 values: fine enough for bca to move the bounds
    check_settings(lambda **kw: percent_agreement_ci(many_a, many_b, **kw), {})
    reference = bootstrap_ci(many_a == many_b, confidence=0.8, n_resamples=300, seed=5, method="bca")
    assert percent_agreement_ci(many_a, many_b, confidence=0.8, n_resamples=300, seed=5, method="bca") == reference
    check_settings(lambda **kw: cohen_kappa_ci(a, b, **kw), {})
    check_settings(lambda **kw: weighted_kappa_ci(a, b, **kw), {"weights": "quadratic"})
    for interval in (percent_agreement_ci(a, b), cohen_kappa_ci(a, b), weighted_kappa_ci(a, b)):
        assert (interval.n, interval.n_unscored) == (78, 2)
    assert weighted_kappa_ci(a, b).mean == pytest.approx(weighted_kappa(a, b, weights="quadratic"))


def test_fleiss_and_alpha_intervals_pass_their_settings() -> None:
    ratings = three_raters(2)
    check_settings(lambda **kw: fleiss_kappa_ci(ratings, **kw), {})
    check_settings(lambda **kw: krippendorff_alpha_ci(ratings.T, **kw), {"level": "ordinal"})
    assert fleiss_kappa_ci(ratings).n_unscored == 0 and krippendorff_alpha_ci(ratings.T).n_unscored == 0
    assert fleiss_kappa_ci(ratings).mean == pytest.approx(fleiss_kappa(ratings))


@pytest.mark.parametrize("level", ["nominal", "interval", "ratio", "ordinal"])
def test_alpha_interval_at_every_level_matches_the_package_estimate(level: str) -> None:
    data = three_raters(5).T
    data[0, 4] = np.nan
    got = krippendorff_alpha_ci(data, level, n_resamples=200)  # type: ignore[arg-type]
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert got.mean == pytest.approx(expected, abs=1e-12)
    assert got.low <= got.mean <= got.high


def test_ratio_alpha_with_zero_grades_matches_the_package() -> None:
    data = np.array([[0.0, 0.0, 1.0, 2.0, 3.0, 0.0], [0.0, 1.0, 1.0, 2.0, 2.0, 0.0], [0.0, 0.0, 2.0, 3.0, 3.0, 1.0]])
    got = krippendorff_alpha(data, "ratio")
    assert got == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="ratio"), abs=1e-12)


def test_one_item_and_two_pairable_values_agree_perfectly() -> None:
    # One item both raters graded 1: observed and chance agreement are both 1, so 1.0 (the module's rule).
    assert cohen_kappa([1.0], [1.0]) == 1.0
    assert cohen_kappa([1.0, np.nan], [1.0, 2.0]) == 1.0
    # One unit graded 1 by two raters: two pairable values, one value only: alpha 1.0.
    assert krippendorff_alpha([[1.0], [1.0]]) == 1.0
    assert krippendorff_alpha([[1.0, np.nan], [1.0, 2.0]]) == 1.0


def test_confusion_matrix_is_integer_counts_over_every_category() -> None:
    matrix = confusion_matrix([0.0], [0.0])
    assert matrix.dtype == np.int64 and matrix.shape == (4, 4) and matrix.sum() == 1 and matrix[0, 0] == 1


def test_category_checks() -> None:
    for bad in ([], [0.0, np.nan], [[0, 1]], [1, 1]):
        with pytest.raises(
            MetricError, match=re.escape(f"categories must be distinct numbers such as [0, 1, 2, 3], got {bad}")
        ):
            cohen_kappa([0.0], [0.0], categories=bad)  # type: ignore[arg-type]


def test_messages_name_the_argument_that_holds_the_bad_grade() -> None:
    with pytest.raises(MetricError, match=r"^a holds grade 7\.0 at position \(1,\)"):
        cohen_kappa([0.0, 7.0], [0.0, 1.0])
    with pytest.raises(MetricError, match=r"^b holds grade 7\.0 at position \(0,\).*mark a missing grade with NaN"):
        cohen_kappa([0.0, 1.0], [7.0, 1.0])
    with pytest.raises(MetricError, match=r"^ratings holds grade 9\.0"):
        fleiss_kappa([[0.0, 9.0]])
    with pytest.raises(MetricError, match=r"^reliability_data holds grade 5\.0"):
        krippendorff_alpha([[0.0, 5.0], [0.0, 1.0]], categories=[0, 1, 2, 3])
    with pytest.raises(MetricError, match=r"^reliability_data holds grade 5\.0"):
        krippendorff_alpha_ci([[0.0, 5.0], [0.0, 1.0]], categories=[0, 1, 2, 3], n_resamples=10)
    with pytest.raises(
        MetricError, match=r"a and b must be 1-d arrays of the same length, got shapes \(1, 2\), \(1, 2\)"
    ):
        cohen_kappa([[0.0, 1.0]], [[0.0, 1.0]])
    with pytest.raises(MetricError, match=r"ratings must be an items x raters matrix, got shape \(2,\)"):
        fleiss_kappa([0.0, 1.0])
    with pytest.raises(MetricError, match=r"reliability_data must be a raters x items matrix, got shape \(2,\)"):
        krippendorff_alpha([0.0, 1.0])


FLEISS = "Fleiss' kappa needs the same number (>= 2) of grades on every item; item {} has {}, item 0 has {}. "
FIX = "Use krippendorff_alpha, which allows missing grades, or keep only items graded by every rater"


@pytest.mark.parametrize(
    ("ratings", "item", "has", "first"),
    [
        ([[0.0, 1.0, np.nan], [0.0, 1.0, 2.0]], 1, 3, 2),  # uneven: the first uneven item is named
        ([[0.0], [1.0]], 0, 1, 1),  # one rater everywhere
        (np.empty((0, 3)), 0, 0, 0),  # no item at all
    ],
)
def test_fleiss_refusals_name_the_item(ratings: object, item: int, has: int, first: int) -> None:
    with pytest.raises(MetricError, match=re.escape(FLEISS.format(item, has, first) + FIX) + "$"):
        fleiss_kappa(ratings)  # type: ignore[arg-type]


def test_alpha_reads_null_as_missing() -> None:
    with_null = krippendorff_alpha([[1, None, 2, 0], [1, 2, 2, 1]])
    assert with_null == krippendorff_alpha([[1, np.nan, 2, 0], [1, 2, 2, 1]])
    assert not math.isnan(with_null)


def test_alpha_interval_takes_up_to_64_distinct_values() -> None:
    values = np.arange(64, dtype=float)
    ok = krippendorff_alpha_ci(np.vstack([values, values]), "interval", n_resamples=20)
    assert ok.mean == 1.0
    more = np.arange(65, dtype=float)
    with pytest.raises(
        MetricError, match="the alpha interval supports at most 64 distinct values, got 65; bin the grades"
    ):
        krippendorff_alpha_ci(np.vstack([more, more]), "interval", n_resamples=20)
