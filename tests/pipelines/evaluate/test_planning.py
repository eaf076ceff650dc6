"""``EvalResult.planning`` from per-query rows and comparisons (the figures recomputed here with numpy), the pilot
of ``assay build --dry-run --detect`` and its bad input, and the build plan's numbers by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from assay.errors import ConfigError, InputError
from assay.metrics import clusters
from assay.pipelines.evaluate.settings import EvalSettings
from assay.pipelines.evaluate.statistics.clustering import clustering_summary
from assay.pipelines.evaluate.statistics.compare import compare_runs
from assay.pipelines.evaluate.statistics.planning import (
    assumed_basis,
    build_plan,
    pilot_basis,
    power_plans,
    read_pilot,
)
from assay.pipelines.evaluate.statistics.stats import StatSettings
from assay.results import EvalResult, PowerPlan, QueryResult

METRIC = "ndcg@10"


def rows_of(scores: dict[str, np.ndarray], size: int) -> dict[str, dict[str, QueryResult]]:
    return {
        run: {f"q{i:03d}": QueryResult(run=run, query_id=f"q{i:03d}", metrics={METRIC: float(v)},
                                       cluster=f"doc:{i // size}")
              for i, v in enumerate(values)}
        for run, values in scores.items()
    }  # fmt: skip


def by_hand(effect: float, sd: float, deff: float, alpha: float) -> int:
    z = norm.ppf(1 - alpha / 2) + norm.ppf(0.8)
    return math.ceil(z**2 * sd**2 * deff / effect**2)


def evaluated(scores: dict[str, np.ndarray], size: int = 3, **kwargs: object) -> tuple[list[PowerPlan], dict, list]:
    per_run = rows_of(scores, size)
    settings = StatSettings(n_perm=2000, **kwargs)  # type: ignore[arg-type]
    comparisons = compare_runs(per_run, [METRIC], settings)
    grouping = clustering_summary("doc", per_run, comparisons, METRIC)
    plans = power_plans(per_run, comparisons, METRIC, grouping, detect=(0.05, 0.02), settings=settings)
    return plans, per_run, comparisons


def test_a_pair_plans_from_its_differences_its_design_effect_and_the_mean_cluster_size() -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(0.2, 0.8, 60)
    b = a + np.repeat(rng.normal(0, 0.1, 20), 3) + rng.normal(0.01, 0.1, 60)
    plans, _, (comparison,) = evaluated({"bm25": a, "hybrid": b})
    sd = float(np.std(b - a, ddof=1))
    deff = clusters.design_effect(b - a, [f"doc:{i // 3}" for i in range(60)])
    assert comparison.design_effect == pytest.approx(deff, abs=1e-6) and deff is not None and deff > 1
    assert [p.effect for p in plans[:2]] == [0.02, 0.05]
    for plan in plans[:2]:
        assert plan.sd == pytest.approx(sd, abs=1e-6) and plan.design_effect == pytest.approx(deff, abs=1e-6)
        assert plan.alpha == 0.05 and plan.power == 0.8 and (plan.a, plan.b) == ("bm25", "hybrid")
        assert plan.questions == by_hand(plan.effect, sd, deff, 0.05)
        assert plan.clusters == math.ceil(plan.questions / 3)
    first = plans[0]
    assert first.sentence == (
        f"to detect 0.02 on ndcg@10 between bm25 and hybrid you need about {first.questions:,} questions from "
        f"{first.clusters:,} documents (now 60 from 20)"
    )


def test_a_pair_not_significant_also_plans_for_its_observed_difference() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(0.2, 0.8, 30)
    b = a + rng.normal(0.0, 0.2, 30)
    plans, _, (comparison,) = evaluated({"a": a, "b": b}, size=1)
    assert not comparison.significant
    observed = round(abs(comparison.delta), 3)
    assert [p.effect for p in plans] == [0.02, 0.05, observed]
    assert plans[2].sentence.startswith(f"to confirm the observed {observed:g} on ndcg@10 between a and b")
    assert all(p.clusters is None for p in plans)  # every question its own document: no cluster count
    assert plans[0].sentence.endswith("(now 30)")


def test_a_significant_pair_plans_only_for_the_targets() -> None:
    rng = np.random.default_rng(2)
    a = rng.uniform(0.2, 0.6, 40)
    plans, _, (comparison,) = evaluated({"a": a, "b": a + 0.2 + rng.normal(0, 0.05, 40)})
    assert comparison.significant and [p.effect for p in plans] == [0.02, 0.05]


def test_a_family_of_three_pairs_plans_at_alpha_over_three_unless_uncorrected() -> None:
    rng = np.random.default_rng(3)
    a = rng.uniform(0.2, 0.8, 45)
    scores = {"a": a, "b": a + rng.normal(0, 0.1, 45), "c": a + rng.normal(0, 0.15, 45)}
    plans, _, _ = evaluated(scores)
    assert {(p.a, p.b) for p in plans} == {("a", "b"), ("a", "c"), ("b", "c")}
    assert {p.alpha for p in plans} == {round(0.05 / 3, 6)}
    plan = plans[0]
    assert plan.questions == by_hand(plan.effect, plan.sd, plan.design_effect, 0.05 / 3)
    unadjusted, _, _ = evaluated(scores, correction="none")
    assert {p.alpha for p in unadjusted} == {0.05}


def test_one_run_plans_from_its_own_scores() -> None:
    rng = np.random.default_rng(4)
    scores = np.clip(np.repeat(rng.normal(0.5, 0.15, 12), 4) + rng.normal(0, 0.1, 48), 0, 1)
    plans, _, comparisons = evaluated({"bm25": scores}, size=4)
    assert comparisons == []
    sd = float(np.std(scores, ddof=1))
    deff = clusters.design_effect(scores, [f"doc:{i // 4}" for i in range(48)])
    assert deff is not None
    for plan in plans:
        assert plan.b is None and plan.sd == pytest.approx(sd, abs=1e-6)
        assert plan.design_effect == pytest.approx(deff, abs=1e-6)
        assert plan.questions == by_hand(plan.effect, sd, deff, 0.05)
    assert plans[0].sentence.startswith("to tell bm25's mean ndcg@10 from a fixed value 0.02 away you need about")
    assert plans[0].sentence.endswith("documents (now 48 from 12)")


def test_no_spread_no_plan() -> None:
    a = np.linspace(0.1, 0.9, 20)
    plans, _, _ = evaluated({"a": a, "b": a + 0.1})  # every difference the same: sd 0 says nothing
    assert plans == []
    plans, _, _ = evaluated({"a": np.full(20, 0.5)})
    assert plans == []


def test_detect_targets_are_checked() -> None:
    assert EvalSettings().detect == (0.02, 0.05)
    for bad in ((0.0,), (-0.02,), (math.nan,), (math.inf,)):
        with pytest.raises(ConfigError, match="--detect"):
            EvalSettings(detect=bad).checked()


def result_with(plans: list[PowerPlan], tmp_path: Path) -> Path:
    rng = np.random.default_rng(5)
    a = rng.uniform(0.2, 0.8, 40)
    per_run = rows_of({"x": a, "y": a + rng.normal(0, 0.1, 40), "z": a + 0.3 + rng.normal(0, 0.3, 40)}, 2)
    comparisons = compare_runs(per_run, [METRIC], StatSettings(n_perm=2000))
    grouping = clustering_summary("doc", per_run, comparisons, METRIC)
    result = EvalResult(assay_version="0", golden="g", judge=None, k_values=[10], runs=[], comparisons=comparisons,
                        clustering=grouping, planning=plans or power_plans(per_run, comparisons, METRIC, grouping,
                        detect=(0.02,), settings=StatSettings(n_perm=2000)))  # fmt: skip
    path = tmp_path / "results.json"
    path.write_text(result.model_dump_json())
    return path


def test_the_pilot_gives_its_closest_pair_and_the_correlation_its_design_effect_implies(tmp_path: Path) -> None:
    path = result_with([], tmp_path)
    pilot = read_pilot(tmp_path)  # a report folder reads its results.json
    closest = min((c for c in pilot.comparisons), key=lambda c: abs(c.delta))
    plan = next(p for p in pilot.planning if (p.a, p.b) == (closest.a, closest.b))
    basis = pilot_basis(pilot, path)
    assert basis.sd == plan.sd and basis.level == plan.alpha == round(0.05 / 3, 6)
    assert basis.icc == pytest.approx(max(plan.design_effect - 1, 0) / (2.0 - 1))
    assert f"between {closest.a} and {closest.b}, its closest pair" in basis.source and str(path) in basis.source


@pytest.mark.parametrize(
    ("content", "reason"),
    [("x\ty\n", "not JSON"), ("{}", "assay_version: Field required"), ('{"query_id": "q1"}', "Field required")],
)
def test_a_pilot_that_is_not_a_results_json_is_an_error_naming_the_file(
    tmp_path: Path, content: str, reason: str
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(content)
    with pytest.raises(InputError, match=r"not a results\.json") as caught:
        read_pilot(path)
    assert str(path) in str(caught.value) and reason in str(caught.value)
    with pytest.raises(InputError, match="No such file"):
        read_pilot(tmp_path / "missing.json")


def test_a_pilot_without_planning_figures_is_an_error(tmp_path: Path) -> None:
    result = EvalResult(assay_version="0", golden="g", judge=None, k_values=[10], runs=[])
    with pytest.raises(InputError, match="no planning figures"):
        pilot_basis(result, tmp_path / "results.json")


def test_the_build_plan_without_a_pilot_states_its_assumption_and_counts_by_hand() -> None:
    lines = build_plan(assumed_basis(), [0.05, 0.02], per_doc=2, documents=40)
    n = by_hand(0.02, 0.25, 1.1, 0.05)
    assert "assumed (no --pilot): sd of the per-question differences 0.25" in lines[1]
    assert "design effect 1 + (2 - 1) x 0.1 = 1.100 at 2 questions per document" in lines[2]
    assert lines[3] == f"  to detect 0.02: about {n:,} accepted questions from {math.ceil(n / 2):,} documents"
    assert lines[4].startswith(f"  to detect 0.05: about {by_hand(0.05, 0.25, 1.1, 0.05):,} accepted questions")
    assert "the corpus has 40 documents: at 2 per document that is at most 80 questions" in lines[5]
