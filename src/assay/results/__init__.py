"""The typed result of ``assay eval``: what the evaluator produces and every report renders.

``results.json`` is :class:`EvalResult` dumped as JSON (``format_version`` guards it); ``per_query.jsonl`` holds the
:class:`QueryResult` rows of every run. Means never include unscored values: each :class:`MetricSummary` says how
many queries were scored, how many were not, and why.

The records, by family (every public name is imported here, so ``from assay.results import X`` is the way in):

* :mod:`~assay.results.headline`: which metrics a summary shows (headline cut-off and metrics, report groups).
* :mod:`~assay.results.runs`: one run: metric summaries, per-question rows, file counts, system, repeats, conversations.
* :mod:`~assay.results.views`: the per-question explorer: passages, answers and claims of each run; diagnosis examples;
  criterion verdicts.
* :mod:`~assay.results.preferences`: pairwise preferences: both orders of each pair, outcomes, Bradley-Terry strengths.
* :mod:`~assay.results.comparisons`: runs compared, history gain, clustering, power planning, pool shifts.
* :mod:`~assay.results.agreement`: the judge's trust: agreement with people and within a panel, noise, card, PPI++.
* :mod:`~assay.results.verdict`: the answer first, as the reports render it.
* :mod:`~assay.results.evaluation`: :class:`EvalResult`, the whole evaluation.
* :mod:`~assay.results._model`: the records' base (unknown fields refused) and :func:`rounded`.
"""

from __future__ import annotations

from assay.results._model import rounded
from assay.results.agreement import (
    AgreementBlock,
    AgreementStat,
    AgreementSummary,
    AnnotatorAgreement,
    AuditTarget,
    CorrectedMetric,
    CriterionAgreement,
    CriterionPPI,
    JudgeCardSummary,
    JudgeNoise,
    JudgePairAgreement,
    JudgeVotes,
    PanelAgreement,
)
from assay.results.comparisons import Clustering, Comparison, HistoryGain, PoolShift, PowerPlan
from assay.results.evaluation import RESULTS_FORMAT_VERSION, EvalResult
from assay.results.headline import (
    HEADLINE_K,
    METRIC_GROUPS,
    headline_k,
    headline_metrics,
    metric_group,
    summary_metrics,
)
from assay.results.preferences import OrderVerdict, PairJudgement, PairOutcome, Preferences, Strength
from assay.results.runs import (
    FILLED_SHARE,
    BudgetFill,
    ConversationSummary,
    MetricSummary,
    QueryResult,
    RepeatSummary,
    RunCounts,
    RunResult,
    SystemSummary,
    TrajectorySummary,
    VarianceSplit,
)
from assay.results.verdict import OFFLINE_WARNING, SystemCost, Verdict, VerdictLead, VerdictPlace
from assay.results.views import (
    ClaimView,
    CriterionVerdictRecord,
    CriterionVote,
    DiagnosisExample,
    PassageView,
    QuestionView,
    RunView,
    StepView,
    TreeStepAnswer,
)

__all__ = [
    "FILLED_SHARE",
    "HEADLINE_K",
    "METRIC_GROUPS",
    "OFFLINE_WARNING",
    "RESULTS_FORMAT_VERSION",
    "AgreementBlock",
    "AgreementStat",
    "AgreementSummary",
    "AnnotatorAgreement",
    "AuditTarget",
    "BudgetFill",
    "ClaimView",
    "Clustering",
    "Comparison",
    "ConversationSummary",
    "CorrectedMetric",
    "CriterionAgreement",
    "CriterionPPI",
    "CriterionVerdictRecord",
    "CriterionVote",
    "DiagnosisExample",
    "EvalResult",
    "HistoryGain",
    "JudgeCardSummary",
    "JudgeNoise",
    "JudgePairAgreement",
    "JudgeVotes",
    "MetricSummary",
    "OrderVerdict",
    "PairJudgement",
    "PairOutcome",
    "PanelAgreement",
    "PassageView",
    "PoolShift",
    "PowerPlan",
    "Preferences",
    "QueryResult",
    "QuestionView",
    "RepeatSummary",
    "RunCounts",
    "RunResult",
    "RunView",
    "StepView",
    "Strength",
    "SystemCost",
    "SystemSummary",
    "TrajectorySummary",
    "TreeStepAnswer",
    "VarianceSplit",
    "Verdict",
    "VerdictLead",
    "VerdictPlace",
    "headline_k",
    "headline_metrics",
    "metric_group",
    "rounded",
    "summary_metrics",
]
