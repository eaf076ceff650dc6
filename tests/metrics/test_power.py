"""The planning formula by hand (z values from scipy), its floor and bad input, and a simulation of assay's own
paired test (``compare_runs``) at the planned number of questions: the power comes out near the target, with
independent questions and with questions clustered by document."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from assay.metrics import MetricError
from assay.metrics.power import SampleSize, design_effect_of, min_units, questions_needed
from assay.pipelines.evaluate.statistics.compare import compare_runs
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.results import QueryResult


def by_hand(effect: float, sd: float, *, alpha: float = 0.05, power: float = 0.8, deff: float = 1.0) -> int:
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return math.ceil(z**2 * sd**2 * deff / effect**2)


def test_the_worked_example_sd_02_effect_005() -> None:
    z = norm.ppf(0.975) + norm.ppf(0.8)
    assert z**2 == pytest.approx(7.849, abs=1e-3)
    plan = questions_needed(0.05, 0.2)
    assert plan.questions == math.ceil(7.8489 * 16) == 126 == by_hand(0.05, 0.2)
    assert plan.clusters is None and plan.level == 0.05 and not plan.floored


@pytest.mark.parametrize(
    ("effect", "sd", "alpha", "power", "deff"),
    [
        (0.02, 0.25, 0.05, 0.8, 1.0),
        (0.05, 0.2, 0.05, 0.9, 1.6),
        (0.03, 0.15, 0.01, 0.8, 2.3),
        (0.1, 0.3, 0.1, 0.5, 1.2),
    ],
)
def test_questions_match_the_formula(effect: float, sd: float, alpha: float, power: float, deff: float) -> None:
    plan = questions_needed(effect, sd, alpha=alpha, power=power, design_effect=deff)
    assert plan.questions == by_hand(effect, sd, alpha=alpha, power=power, deff=deff)


def test_a_family_of_m_pairs_is_planned_at_alpha_over_m() -> None:
    plan = questions_needed(0.05, 0.2, pairs=3)
    assert plan.level == pytest.approx(0.05 / 3)
    assert plan.questions == by_hand(0.05, 0.2, alpha=0.05 / 3) == 168


def test_clusters_are_the_questions_over_the_mean_cluster_size() -> None:
    plan = questions_needed(0.05, 0.2, design_effect=1.5, cluster_size=2.5)
    assert plan.questions == by_hand(0.05, 0.2, deff=1.5) == 189
    assert plan.clusters == math.ceil(189 / 2.5) == 76


def test_too_few_units_for_the_sign_flip_test_are_raised_to_the_floor() -> None:
    assert min_units(0.05) == 6 and 2 / 2**6 <= 0.05 < 2 / 2**5
    assert min_units(0.05 / 3) == 7 and 2 / 2**7 <= 0.05 / 3 < 2 / 2**6
    plan = questions_needed(0.5, 0.2)  # the formula says 2
    assert by_hand(0.5, 0.2) == 2 and plan.questions == 6 and plan.floored
    clustered = questions_needed(0.5, 0.2, cluster_size=3)
    assert clustered.clusters == 6 and clustered.questions == 18 and clustered.floored


def test_design_effect_of_clusters() -> None:
    assert design_effect_of(1, 0.4) == 1.0
    assert design_effect_of(3, 0.1) == pytest.approx(1.2)
    with pytest.raises(MetricError):
        design_effect_of(0.5, 0.1)


@pytest.mark.parametrize(
    "kwargs",
    [{"effect": 0.0}, {"effect": -0.1}, {"sd": -1.0}, {"alpha": 1.0}, {"power": 0.0}, {"pairs": 0},
     {"design_effect": 0.0}, {"cluster_size": 0.5}],
)  # fmt: skip
def test_bad_input_is_a_metric_error(kwargs: dict[str, float]) -> None:
    args = {"effect": 0.05, "sd": 0.2, **kwargs}
    with pytest.raises(MetricError):
        questions_needed(args.pop("effect"), args.pop("sd"), **args)  # type: ignore[arg-type]


def simulated_power(
    effect: float, sd: float, *, n_clusters: int, size: int, icc: float, seed: int, sims: int = 200
) -> float:
    """Share of ``sims`` comparisons (compare_runs, Holm over one pair) that call b's mean above a's, for
    differences d = effect + u_cluster + e with Var(u) = icc sd^2 and Var(e) = (1 - icc) sd^2."""
    rng = np.random.default_rng(seed)
    settings = StatSettings(n_perm=2000, seed=0)
    found = 0
    for _ in range(sims):
        u = np.repeat(rng.normal(0, sd * math.sqrt(icc), n_clusters), size)
        d = effect + u + rng.normal(0, sd * math.sqrt(1 - icc), n_clusters * size)
        a_scores = rng.uniform(0.2, 0.8, d.size)
        rows = {
            run: {f"q{i}": QueryResult(run=run, query_id=f"q{i}", metrics={"m": float(v)},
                                       cluster=f"doc:{i // size}" if size > 1 else None)
                  for i, v in enumerate(values)}
            for run, values in (("a", a_scores), ("b", a_scores + d))
        }  # fmt: skip
        (comparison,) = compare_runs(rows, ["m"], settings)
        found += comparison.significant and comparison.delta > 0
    return found / sims


def test_independent_questions_reach_the_planned_power() -> None:
    plan = questions_needed(0.05, 0.2)
    assert plan.questions == 126
    assert simulated_power(0.05, 0.2, n_clusters=126, size=1, icc=0.0, seed=1) == pytest.approx(0.8, abs=0.08)


def test_clustered_questions_reach_the_planned_power() -> None:
    size, icc = 3, 0.3
    plan = questions_needed(0.05, 0.2, design_effect=design_effect_of(size, icc), cluster_size=size)
    assert (plan.questions, plan.clusters) == (201, 67)
    observed = simulated_power(0.05, 0.2, n_clusters=plan.clusters or 0, size=size, icc=icc, seed=2)
    assert observed == pytest.approx(0.8, abs=0.08)
    unplanned = simulated_power(0.05, 0.2, n_clusters=42, size=size, icc=icc, seed=3)  # 126 questions: too few
    assert unplanned < 0.7


def test_bounds_of_the_inputs_are_inclusive_where_the_docs_say() -> None:
    assert design_effect_of(2, -1.0) == 0.0 and design_effect_of(2, 1.0) == 2.0
    for icc in (-1.5, 1.5):
        with pytest.raises(MetricError, match=rf"cluster_size >= 1 and -1 <= icc <= 1, got 2, {icc}"):
            design_effect_of(2, icc)
    # sd = 0 is allowed (the formula says one question; the sign-flip floor makes it 6)
    assert questions_needed(0.05, 0.0) == SampleSize(6, None, 0.05, floored=True)
    for bad in ({"alpha": 0.0}, {"power": 0.0}, {"power": 1.0}, {"power": 1.5}, {"alpha": 1.0}):
        with pytest.raises(MetricError, match=r"^questions_needed needs effect > 0, sd >= 0"):
            questions_needed(0.05, 0.2, **bad)  # type: ignore[arg-type]
    one = questions_needed(0.05, 0.2, cluster_size=1)  # clusters of one question: as many clusters as questions
    assert one.clusters == one.questions == questions_needed(0.05, 0.2).questions
    with pytest.raises(MetricError, match=r"cluster_size is a mean number of questions per cluster, >= 1; got 0.5"):
        questions_needed(0.05, 0.2, cluster_size=0.5)


def test_exact_boundaries_round_as_stated() -> None:
    # Exactly 2 / 2^6 reaches level 1/32 with 6 units.
    assert min_units(2 / 2**6) == 6
    z = norm.ppf(0.975) + norm.ppf(0.8)
    # sd chosen so the formula gives 100 up to rounding: 100 questions, not 101.
    assert questions_needed(0.05, 0.05 * 10 / z).questions == 100
    # The formula giving exactly the floor (5.5 -> 6 at level 0.05) is not raised to it.
    assert questions_needed(1.0, math.sqrt(5.5) / z) == SampleSize(6, None, 0.05, floored=False)
    # 6 clusters of one question reach the floor of 6 clusters: not raised either.
    assert questions_needed(1.0, math.sqrt(5.5) / z, cluster_size=1) == SampleSize(6, 6, 0.05, floored=False)
    # the level is reported in both cluster branches
    assert questions_needed(0.05, 0.2, cluster_size=2).level == 0.05
    assert questions_needed(0.5, 0.2, cluster_size=3, pairs=2).level == 0.025
