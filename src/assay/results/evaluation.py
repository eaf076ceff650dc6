"""The whole evaluation, :class:`EvalResult`: ``results.json`` is it dumped as JSON, ``format_version`` guards it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.results._model import _Model
from assay.results.agreement import (
    AgreementSummary,
    CorrectedMetric,
    CriterionAgreement,
    JudgeCardSummary,
    JudgeNoise,
    PanelAgreement,
)
from assay.results.comparisons import Clustering, Comparison, HistoryGain, PoolShift, PowerPlan
from assay.results.preferences import Preferences
from assay.results.runs import RunResult
from assay.results.verdict import Verdict
from assay.results.views import CriterionVerdictRecord, DiagnosisExample
from assay.types import StageUsage

__all__ = ["RESULTS_FORMAT_VERSION", "EvalResult"]

# 2: comparisons corrected within one metric's family of run pairs, with family-adjusted intervals, effect sizes
#    and Monte Carlo figures (version 1 adjusted across the metrics of a pair; its files still load, the new fields
#    at their defaults).
RESULTS_FORMAT_VERSION = 2


class EvalResult(_Model):
    """The whole evaluation: settings, each run, the comparisons between runs, corrections and what it cost."""

    format_version: int = RESULTS_FORMAT_VERSION
    assay_version: str
    golden: str
    judge: str | None  # model name, or None with --no-judge
    k_values: list[int]
    settings: dict[str, Any] = Field(default_factory=dict)
    runs: list[RunResult]
    comparisons: list[Comparison] = Field(default_factory=list)
    primary_metric: str | None = None  # the metric that leads the comparisons' verdict
    corrected: list[CorrectedMetric] = Field(default_factory=list)
    agreement: AgreementSummary | None = None  # None: nothing audited (see `assay audit GOLDEN`)
    # where the golden set's labels came from (after this evaluation's judging): human, imported, judge, mixed, none;
    # None in results written before it was recorded. Labels per provenance source beside it.
    label_origin: str | None = None
    label_sources: dict[str, int] = Field(default_factory=dict)
    usage: dict[str, StageUsage] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    diagnosis_examples: list[DiagnosisExample] = Field(default_factory=list)  # a few per run and category
    # the diagnosis metrics compared in their own Holm family (verdicts read "lower is better" where it is)
    diagnosis_comparisons: list[Comparison] = Field(default_factory=list)
    # each judged criterion's verdict per run and question, with every judge's vote (checks need none: their value is
    # the row's metric)
    criterion_verdicts: list[CriterionVerdictRecord] = Field(default_factory=list)
    # each judged criterion against people's labels of its verdicts (assay audit --criteria), with PPI-corrected means
    criterion_agreement: list[CriterionAgreement] = Field(default_factory=list)
    preferences: Preferences | None = None  # --pairwise: the runs' answers compared in pairs (None: not asked)
    judge_card: JudgeCardSummary | None = None  # the judge's card (assay eval looks it up); None without a judge
    panel_cards: list[JudgeCardSummary] = Field(default_factory=list)  # the cards of a panel's other judges
    # agreement between the judges of a panel, over the golden set's labels that carry votes; None: no such label
    judges: PanelAgreement | None = None
    clustering: Clustering | None = None  # how questions were grouped for intervals and tests (None: not recorded)
    history_gain: list[HistoryGain] = Field(default_factory=list)  # runs of rewrites vs turns of the same system
    planning: list[PowerPlan] = Field(default_factory=list)  # questions needed for differences of given sizes
    judge_noise: JudgeNoise | None = None  # the judge asked again (--judge-repeats), or its card's consistency
    # whether the runs cut their text alike (scoring/comparable.py); None with one run or in older results
    cut_alike: bool | None = None
    # per run, how labels other runs brought moved its primary metric (empty: no run's score depends on the others)
    pool_shifts: list[PoolShift] = Field(default_factory=list)
    # length in characters of the relevant golden chunks (graded at or above the threshold for some question; every
    # chunk when none is; the keys of RunResult.passage_lengths): the gates' half-a-unit rule compares a run's median
    # passage with their median; empty in older results (no run refused then)
    chunk_lengths: dict[str, float] = Field(default_factory=dict)
    verdict: Verdict | None = None  # the answer first (assay.report.verdict builds it; results.json carries it)
