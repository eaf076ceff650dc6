"""How many questions an evaluation needs: the sample size of a paired comparison at a given power.

A comparison of two runs tests mean(d) = 0 over the per-question differences d = b - a (two-sided). By the normal
approximation, the test at level ``alpha`` finds a true mean difference ``effect`` with probability ``power`` when

    n = (z(1 - alpha/2) + z(power))^2 * sd^2 * deff / effect^2      (rounded up)

* ``sd``: the standard deviation of the per-question differences (ddof = 1), from a pilot evaluation. With one run
  the same formula sizes the test of its mean against a fixed value (sd of its scores): ``d`` is then the score
  minus that value.
* ``deff``: the design effect of the questions' clusters (:func:`assay.metrics.clusters.design_effect`): Var(mean)
  with clusters over Var(mean) of independent questions. n / deff questions carry the evidence of independent ones,
  so clustered questions need deff times as many. For clusters of m questions with intra-cluster correlation rho,
  deff = 1 + (m - 1) rho (:func:`design_effect_of`): it depends on the cluster size, not on how many clusters, so a
  pilot's deff holds for a larger set built with the same questions per document.
* Clusters: ceil(n / mean cluster size) when the questions come in clusters (documents).
* Families: Holm over m pairs tests its first pair (the smallest p) at alpha/m and the later ones at larger levels;
  the plan uses alpha/m for every pair (``pairs=m``), the Bonferroni level, so it is conservative: a pair planned
  so will be found at least as often by Holm. Pass ``pairs=1`` for an unadjusted test.
* A floor: the sign-flip test assay uses over K independent units (questions, or clusters) can give no p-value below
  2 / 2^K (all signs alike, either way), so it needs K >= 1 + log2(1 / level) units whatever the formula says
  (6 at level 0.05). The answer is raised to that many units (:data:`SampleSize.floored` says when).

The normal approximation ignores that sd is estimated; a simulation of assay's own test (tests/metrics/test_power.py)
finds power within a few points of the target at the planned n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assay.metrics._errors import MetricError
from assay.metrics.stats import norm_ppf

__all__ = ["SampleSize", "design_effect_of", "min_units", "questions_needed"]


@dataclass(frozen=True)
class SampleSize:
    """Questions (and clusters, None when each question is its own) for one effect; ``level`` is the per-test alpha
    used (alpha / pairs); ``floored``: raised to the sign-flip test's least number of units (module doc)."""

    questions: int
    clusters: int | None
    level: float
    floored: bool = False


def min_units(level: float) -> int:
    """The least K with 2 / 2^K <= ``level``: fewer independent units cannot reach that level by sign flips."""
    return math.ceil(1.0 + math.log2(1.0 / level) - 1e-12)


def design_effect_of(cluster_size: float, icc: float) -> float:
    """1 + (m - 1) rho: the design effect of clusters of ``cluster_size`` items with intra-cluster correlation
    ``icc`` (Kish). 1 for clusters of one item."""
    if cluster_size < 1 or not -1.0 <= icc <= 1.0:
        raise MetricError(f"design_effect_of needs cluster_size >= 1 and -1 <= icc <= 1, got {cluster_size}, {icc}")
    return 1.0 + (cluster_size - 1.0) * icc


def questions_needed(
    effect: float,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    design_effect: float = 1.0,
    pairs: int = 1,
    cluster_size: float | None = None,
) -> SampleSize:
    """The questions a two-sided paired test at level alpha / ``pairs`` needs to find a mean difference ``effect`` with
    probability ``power``, for per-question differences of ``sd`` in clusters of design effect ``design_effect`` and
    mean size ``cluster_size`` (None: independent questions); see the module doc for the formula and the floor."""
    if not (effect > 0 and sd >= 0 and design_effect > 0 and pairs >= 1 and 0 < alpha < 1 and 0 < power < 1):
        raise MetricError(
            "questions_needed needs effect > 0, sd >= 0, design_effect > 0, pairs >= 1, 0 < alpha < 1 and "
            f"0 < power < 1; got effect={effect}, sd={sd}, design_effect={design_effect}, pairs={pairs}, "
            f"alpha={alpha}, power={power}"
        )
    if cluster_size is not None and cluster_size < 1:
        raise MetricError(f"cluster_size is a mean number of questions per cluster, >= 1; got {cluster_size}")
    level = alpha / pairs
    z = norm_ppf(1.0 - level / 2.0) + norm_ppf(power)
    n = max(1, math.ceil(z**2 * sd**2 * design_effect / effect**2 - 1e-9))  # -1e-9: an exact product stays itself
    floor = min_units(level)
    if cluster_size is None:
        return SampleSize(max(n, floor), None, level, floored=n < floor)
    k = math.ceil(n / cluster_size - 1e-9)
    if k >= floor:
        return SampleSize(n, k, level)
    return SampleSize(max(n, math.ceil(floor * cluster_size - 1e-9)), floor, level, floored=True)
