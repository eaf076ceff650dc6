"""Pairwise preferences between runs (``assay eval --pairwise``): every judged pair of answers in both orders, the
outcome per pair of runs, and the Bradley-Terry strengths with their intervals."""

from __future__ import annotations

from pydantic import Field

from assay.results._model import _Model

__all__ = ["OrderVerdict", "PairJudgement", "PairOutcome", "Preferences", "Strength"]


class OrderVerdict(_Model):
    """The judge's answer for one order of a pair: which run was shown as answer A, the position it preferred
    (``A``, ``B``, ``tie``; None when the call failed, ``unscored`` saying why), the run that is, and its reason."""

    shown_first: str
    preferred: str | None = None
    winner: str | None = None  # a run's name, "tie", or None (unscored)
    reason: str = ""
    unscored: str | None = None


class PairJudgement(_Model):
    """One question, one pair of runs: the outcome (``winner``: a run, ``tie`` when the orders disagree or both tie,
    None when unscored) and both orders' verdicts, first the order with ``run_a`` shown first."""

    query_id: str
    run_a: str
    run_b: str
    winner: str | None = None
    unscored: str | None = None
    orders: list[OrderVerdict] = Field(default_factory=list)


class PairOutcome(_Model):
    """Two runs over the questions: wins, ties and losses of ``run_a``, questions left unscored; how often the judge
    gave the same outcome in both orders (``consistency``) and how often a decisive answer chose the first position
    (``first_position``; 0.5 for an unbiased judge); the model's P(run_a preferred to run_b) with its interval
    (adjusted for the number of pairs), and ``better``: the run the interval puts ahead, None when it cannot."""

    run_a: str
    run_b: str
    wins: int
    ties: int
    losses: int
    unscored: int = 0
    consistency: float | None = None
    first_position: float | None = None
    prob: float
    low: float
    high: float
    better: str | None = None


class Strength(_Model):
    """One run's Bradley-Terry strength (log scale, mean 0 over the runs) with its interval."""

    run: str
    strength: float
    low: float
    high: float


class Preferences(_Model):
    """What ``--pairwise`` found (module doc). ``ties`` names how ties enter the model; ``confidence`` is the
    strengths' level, ``pair_confidence`` the pairs' (Bonferroni over the pairs); ``clusters``: the resampled units."""

    criterion: str
    ref: str
    ties: str
    confidence: float
    pair_confidence: float
    questions: int
    clusters: int
    strengths: list[Strength] = Field(default_factory=list)
    pairs: list[PairOutcome] = Field(default_factory=list)
    judgements: list[PairJudgement] = Field(default_factory=list)
    sentence: str = ""
