"""Runs compared: the paired comparison of two runs on one metric, what the history is worth to a conversational
system, how questions were clustered, how many questions a difference needs, and how other runs' labels moved a run's
score."""

from __future__ import annotations

from pydantic import Field

from assay.results._model import _Model

__all__ = ["Clustering", "Comparison", "HistoryGain", "PoolShift", "PowerPlan"]


class Comparison(_Model):
    """Run ``b`` against run ``a`` on one metric, paired over the queries both scored.

    The family of the test is every compared pair of runs on this one ``metric`` (``family_size`` pairs), corrected
    by ``correction`` (``holm``, ``tukey`` = randomized Tukey HSD, ``none``). ``low``/``high`` is the interval of
    the delta adjusted in the same family, at ``interval_confidence``: it excludes 0 exactly when ``significant``.
    ``p_value`` is the pair's own randomization p (unadjusted); ``p_adjusted`` the family-adjusted one.
    ``resamples`` = rearrangements drawn (all of them when ``exact``); ``p_mc_error`` = Monte Carlo standard error
    of ``p_adjusted`` (0 when exact). Effect sizes: ``delta`` = mean(b - a), ``d_z`` = mean / sd of the per-query
    differences (None when they do not vary), ``wins``/``ties``/``losses`` = queries where b is above/equal/below a.
    """

    a: str
    b: str
    metric: str
    n: int
    delta: float  # mean(b - a)
    low: float
    high: float
    p_value: float
    p_adjusted: float
    significant: bool
    verdict: str
    correction: str = "holm"
    family_size: int = 0  # 0: not recorded (results format 1)
    primary: bool = False
    interval_confidence: float | None = None
    d_z: float | None = None
    wins: int = 0
    ties: int = 0
    losses: int = 0
    resamples: int = 0
    exact: bool = False
    p_mc_error: float | None = None
    # the clusters the paired queries were resampled in (None: each query its own) and the design effect of the
    # differences: Var(mean) with those clusters over Var(mean) of independent queries (1: no loss)
    clusters: int | None = None
    design_effect: float | None = None
    # the means of a and b over the n paired questions (``delta`` = mean_b - mean_a up to rounding), and the questions
    # each run scored on the metric: when n is smaller than either, each run's own mean is over other questions and
    # may order the runs the other way (None, 0: results written before these)
    mean_a: float | None = None
    mean_b: float | None = None
    n_a: int = 0
    n_b: int = 0


class HistoryGain(_Model):
    """The same system asked each turn's standalone rewrite alone (run ``rewrites``) and the raw turns with their
    history (run ``turns``, asked with the ``history`` reference or its own): on ``metric``, per turn, turns minus
    rewrites, compared as two runs are (clustered paired test, ``delta`` = mean(turns - rewrites)), over every turn
    (``all``), the turns that depend on the history (``dependent``) and the standalone ones (``standalone``); None
    where fewer than two turns are scored in both. A negative delta on the dependent turns is what the system loses
    to coreference and ellipsis."""

    rewrites: str
    turns: str
    metric: str
    history: str | None = None
    all: Comparison | None = None
    dependent: Comparison | None = None
    standalone: Comparison | None = None


class Clustering(_Model):
    """How the questions were grouped for the statistics (``--cluster-by``): ``by`` is ``doc`` (questions sharing a
    source document, linked through any document they share), ``none``, or a question field. ``design_effect`` is
    the primary metric's: the largest over its compared pairs' differences, else over the runs' scores; the
    effective number of independent questions is questions / design_effect. ``method`` names how intervals and tests
    resample; ``note`` says in one sentence when the clusters are too few or too uneven to trust them fully."""

    by: str
    questions: int
    clusters: int
    mean_size: float
    max_size: int
    design_effect: float | None = None
    method: str = ""
    note: str | None = None


class PowerPlan(_Model):
    """Questions (and clusters) to find a difference of ``effect`` on ``metric`` at ``power`` with a two-sided test at
    ``alpha``: n = (z(1 - alpha/2) + z(power))^2 sd^2 deff / effect^2 for the sd of the paired differences per
    question (of ``a`` and ``b``) and the design effect of their clusters; clusters = n / mean cluster size."""

    metric: str
    a: str | None = None
    b: str | None = None
    effect: float
    sd: float
    design_effect: float = 1.0
    alpha: float = 0.05
    power: float = 0.8
    questions: int
    clusters: int | None = None
    sentence: str = ""


class PoolShift(_Model):
    """How much labels brought by other runs' passages moved a run's score (the one way a run's score evaluated with
    others can differ from its score alone; :mod:`assay.pipelines.evaluate.scoring.pool_growth`): the questions where
    other runs made the judge read text this run never retrieved and found it relevant, the run's value there as
    evaluated minus its value without those labels, and its mean on ``metric`` without them."""

    run: str
    metric: str
    questions: list[str]
    deltas: dict[str, float] = Field(default_factory=dict)
    alone_mean: float | None = None
    alone_means: dict[str, float] = Field(default_factory=dict)  # every ranking and budget measure, alone

    def sentence(self) -> str:
        """One sentence for the report."""
        moved = {q: d for q, d in self.deltas.items() if d}
        shown = ", ".join(f"{q} {d:+.3f}" for q, d in sorted(moved.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:4])
        more = f" and {len(moved) - 4} more" if len(moved) > 4 else ""
        alone = "" if self.alone_mean is None else f"; without them its mean would be {self.alone_mean:.3f}"
        if not moved:
            return (f"{self.run}: other runs brought relevant text it never retrieved on {len(self.questions)} "
                    f"question(s), which moved none of its {self.metric} values.")  # fmt: skip
        return (f"{self.run}: other runs made the judge read text it never retrieved and found it relevant on "
                f"{len(self.questions)} question(s); its {self.metric} moved on {len(moved)}: {shown}{more}"
                f"{alone}.")  # fmt: skip
