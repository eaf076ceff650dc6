"""The typed result of ``assay eval``: what the evaluator produces and every report renders.

``results.json`` is :class:`EvalResult` dumped as JSON (``format_version`` guards it); ``per_query.jsonl`` holds the
:class:`QueryResult` rows of every run. Means never include unscored values: each :class:`MetricSummary` says how
many queries were scored, how many were not, and why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.metric_names import MetricName
from assay.types import StageUsage

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
    "DiagnosisExample",
    "EvalResult",
    "HistoryGain",
    "JudgeCardSummary",
    "JudgeNoise",
    "JudgePairAgreement",
    "JudgeVotes",
    "MetricSummary",
    "PanelAgreement",
    "PassageView",
    "PoolShift",
    "PowerPlan",
    "QueryResult",
    "QuestionView",
    "RepeatSummary",
    "RunCounts",
    "RunResult",
    "RunView",
    "SystemCost",
    "SystemSummary",
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

# 2: comparisons corrected within one metric's family of run pairs, with family-adjusted intervals, effect sizes
#    and Monte Carlo figures (version 1 adjusted across the metrics of a pair; its files still load, the new fields
#    at their defaults).
RESULTS_FORMAT_VERSION = 2
FILLED_SHARE = 0.8  # a budget filled below this share of its characters counts as not filled (BudgetFill.under)
HEADLINE_K = 10  # the cut-off of summaries, strata, comparisons and corrections when it was evaluated


def headline_k(k_values: Sequence[int]) -> int | None:
    """The headline cut-off: :data:`HEADLINE_K` when it was evaluated, else the largest k (None without k values)."""
    if not k_values:
        return None
    return HEADLINE_K if HEADLINE_K in k_values else max(k_values)


def headline_metrics(names: Sequence[str], k_values: Sequence[int], named: Iterable[str] = ()) -> list[str]:
    """The metrics that summaries show, strata break down and comparisons test: those without a cut-off (``map``,
    ``faithfulness``, ``map|g>=2``), those at :func:`headline_k` (``ndcg@10``, ``recall@10|g>=2``), those at a
    budget (``ndcg@1000t``) and every one ``named`` (asked for with ``-m`` or ``--fail-under``: ``P@5`` with
    k = 5, 10), in the order given; every name when that leaves none (e.g. only ``ndcg@5`` asked for with k = 5, 10)."""
    head, asked = headline_k(k_values), set(named)
    chosen = [n for n in names if n in asked or _headline_cut(MetricName.parse(n), head)]
    return chosen or list(names)


def _headline_cut(name: MetricName, head: int | None) -> bool:
    """No cut-off (``map``; ``ndcg@`` too), the headline cut-off as written (``10``, not ``010``), or a budget."""
    return name.cut in (None, "", str(head)) or name.budget is not None


# The groups of metrics the reports fold their tables by, in print order (the evaluator's own families are in
# pipelines/evaluate/scoring/names.py; these group them for a reader).
METRIC_GROUPS = ("ranking", "budget", "span", "context", "answer", "nuggets", "diagnosis")
_CONTEXT = ("context_recall", "ragas_context_precision", "coverage_recall")
_ANSWER = ("faithfulness", "answer_relevance", "attribution_rate")
_DIAGNOSIS = ("claim_", "retriever_", "context_utilization", "noise_sensitivity", "hallucination", "self_knowledge")


def metric_group(name: str) -> str:
    """The group of :data:`METRIC_GROUPS` a metric is shown in: ``ndcg@1000t`` budget, ``span_iou@10`` span,
    ``context_recall`` context, ``faithfulness`` answer, ``nugget_recall_all_strict`` nuggets, ``claim_f1``
    diagnosis, everything else (``ndcg@10``, ``map``, ``recall@5|g>=2``) ranking."""
    parsed = MetricName.parse(name)
    base = parsed.word
    if parsed.budget is not None:  # the budget measures are headline figures of their own group
        return "budget"
    groups = (("span", ("span_",)), ("context", _CONTEXT), ("answer", _ANSWER), ("nuggets", ("nugget_recall",)),
              ("diagnosis", _DIAGNOSIS))  # fmt: skip
    return next((group for group, starts in groups if base.startswith(starts)), "ranking")


def summary_metrics(headline: Sequence[str], primary: str | None) -> list[str]:
    """The few metrics a summary shows: the primary, then the first headline metric of each other group (in
    :data:`METRIC_GROUPS` order)."""
    chosen = [primary] if primary is not None and primary in headline else []
    taken = {metric_group(name) for name in chosen}
    for group in METRIC_GROUPS:
        first = next((name for name in headline if metric_group(name) == group), None)
        if first is not None and group not in taken:
            chosen.append(first)
            taken.add(group)
    return chosen


def rounded(value: float) -> float | None:
    """A figure as results store it: 6 decimals, NaN (no value) as None."""
    return None if math.isnan(value) else round(float(value), 6)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricSummary(_Model):
    """Mean of a metric over the scored queries, with a bootstrap interval and the unscored count and reasons."""

    mean: float | None  # None when no query could be scored
    low: float | None = None
    high: float | None = None
    n_scored: int = 0
    n_unscored: int = 0
    unscored_reasons: dict[str, int] = Field(default_factory=dict)


class BudgetFill(_Model):
    """How much of one context budget a run's passages filled, and how much of that text the pool of labelled spans
    grades (:mod:`assay.pipelines.evaluate.scoring.fill` has the rule). Per question in :attr:`QueryResult.budget`;
    per run in :attr:`RunResult.budget`, the medians over its questions.

    ``chars``: the budget in characters (letters and digits); ``filled``: the share of it the passages' text filled;
    ``judged``: of the characters shown within the budget, the share with a grade in the pool (any grade, 0
    included; text found in no document is unjudged), None when nothing was shown; ``k``: the passages that fill it
    (the rank that reached it, else extrapolated from the passages retrieved; per run the median, rounded up), None
    when nothing was shown; ``under``: per run, the share of its questions filled below :data:`FILLED_SHARE` (None
    per question); ``questions``: the questions measured (1 per question)."""

    chars: int
    filled: float
    judged: float | None = None
    k: int | None = None
    under: float | None = None
    questions: int = 1


class QueryResult(_Model):
    """One query of one run: its metric values (None = unscored), the fields it can be stratified by, and how full
    each budget is (``budget``: budget name, e.g. ``1000t``, to :class:`BudgetFill`)."""

    run: str
    query_id: str
    strata: dict[str, str] = Field(default_factory=dict)  # e.g. {"type": "numeric", "difficulty": "hard"}
    metrics: dict[str, float | None] = Field(default_factory=dict)
    unscored: dict[str, str] = Field(default_factory=dict)  # metric -> reason, for the None values above
    cluster: str | None = None  # the cluster the query is resampled with (its source document); None: itself
    budget: dict[str, BudgetFill] = Field(default_factory=dict)

    @property
    def unit(self) -> str:
        """What the statistics resample this query with: its cluster, else the query alone (``query:ID``)."""
        return self.cluster or f"query:{self.query_id}"


class PassageView(_Model):
    """One retrieved passage of one run for one question, as the report's explorer shows it: its rank, unit id (a
    golden chunk id, or ``p:{doc_id}:{start}-{end}`` for a passage located in a document), text, grade and how the
    grade was found (``chunk``: the golden chunk's label, ``rule``: carried over from labelled spans, ``stored``:
    judged in an earlier evaluation, ``judged``: judged now, ``unlabelled``)."""

    rank: int
    unit: str
    text: str = ""
    grade: int | None = None
    how: str = "chunk"


class ClaimView(_Model):
    """One claim of a question checked for one run: an ``answer`` claim (is it supported by the passages?) or a
    ``reference`` claim (do the passages hold it?), the judge's verdict and reason, and the ranks of the passages
    that support it."""

    kind: str
    text: str
    verdict: str
    reason: str = ""
    ranks: list[int] = Field(default_factory=list)


class RunView(_Model):
    """One run's side of one question: its passages in rank order, its answer (or why the system failed), and the
    claims the judge checked."""

    run: str
    passages: list[PassageView] = Field(default_factory=list)
    answer: str | None = None
    error: str | None = None
    claims: list[ClaimView] = Field(default_factory=list)


class QuestionView(_Model):
    """One golden question with every run's side of it: what the report's per-question explorer shows (the metric
    values are in the :class:`QueryResult` rows)."""

    query_id: str
    text: str
    type: str = ""
    difficulty: str | None = None
    reference_answer: str | None = None
    nuggets: list[tuple[str, str]] = Field(default_factory=list)  # (importance, text)
    runs: list[RunView] = Field(default_factory=list)


class RunCounts(_Model):
    """What was found in a run file: counted and reported, never silently dropped."""

    lines: int = 0
    queries_evaluated: int = 0
    unknown_query_ids: int = 0
    unknown_chunk_ids: int = 0
    duplicate_ids: int = 0
    empty_retrieved: int = 0
    missing_queries: int = 0  # golden questions the run has no line for
    with_answer: int = 0
    labels_judged_now: int = 0  # retrieved chunks without a label, judged during this evaluation
    failed: int = 0  # questions the system failed on (a line with "error"): every metric of them unscored
    unmatched_rows: int = 0  # RAGAS rows matching no golden question (by query_id or question text)
    # lines of context turns (a conversation's unjudged turns, no question: asked with --history own for the history):
    # read for the contradiction check, never scored
    context_turns: int = 0
    # how the retrieved items were matched to the golden set: id, offsets, exact, approximate, unmatched
    matched_by: dict[str, int] = Field(default_factory=dict)


class SystemSummary(_Model):
    """How the system behaved while it wrote the run (``assay run``): its header (target with secrets removed,
    version label, start and end), the questions it failed on by kind (those are unscored, never scored 0), the
    latency percentiles of the answered ones (ms; linear interpolation), and tokens and cost summed over the lines
    that report them (None when no line does)."""

    target: str | None = None
    label: str | None = None
    started: str | None = None
    ended: str | None = None
    lines: int = 0
    failed: int = 0
    failures: dict[str, int] = Field(default_factory=dict)  # kind -> questions
    latency_ms: dict[str, float] = Field(default_factory=dict)  # p50, p95, mean, max over answered questions
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None


class VarianceSplit(_Model):
    """One metric of a run asked every question several times: the variance of its per-question scores split in
    two. ``within`` = the mean over questions of the variance across repeats (ddof 1): how much the system's own
    answers vary when asked again; ``between`` = the variance of the per-question means minus within / repeats
    (floored at 0): how much the questions differ. ``within_share`` = within / (between + within). ``questions``
    counts the questions scored in every repeat (the others are left out of the split)."""

    between: float
    within: float
    within_share: float | None
    questions: int


class RepeatSummary(_Model):
    """A run whose system was asked every question ``repeats`` times (``assay run --repeats``): each repeat is
    scored, a question's value is its mean over the repeats that scored it, and the intervals and tests run on
    those means, so the within-question variance (divided by the repeats) is inside every interval. ``metrics``
    splits the headline metrics' variance; ``spread`` is the standard deviation of the run's mean over the repeats
    (each repeat alone), per headline metric."""

    repeats: int
    metrics: dict[str, VarianceSplit] = Field(default_factory=dict)
    spread: dict[str, float | None] = Field(default_factory=dict)


class RunResult(_Model):
    """Everything about one run."""

    name: str
    path: str
    counts: RunCounts = Field(default_factory=RunCounts)
    metrics: dict[str, MetricSummary] = Field(default_factory=dict)
    # metric family -> {k: mean}, e.g. {"ndcg": {"1": 0.4, "3": 0.5, ...}} (keys are str for JSON)
    curves: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    # stratum field -> value -> metric -> summary
    strata: dict[str, dict[str, dict[str, MetricSummary]]] = Field(default_factory=dict)
    judged_at_k: dict[str, float | None] = Field(default_factory=dict)  # share of top-k retrieved that has a label
    # 11-point interpolated precision (recall 0.0, 0.1, ..., 1.0), mean over queries
    pr_curve: list[float] = Field(default_factory=list)
    grade_histogram: dict[str, int] = Field(default_factory=dict)  # grade of retrieved chunks in the top k_max
    # passage length in characters (count, min, p25, median, p75, max, mean) over every retrieved passage
    passage_lengths: dict[str, float] = Field(default_factory=dict)
    # how the passages of the top k_max got their labels: chunk, rule, stored, judged, unlabelled
    passage_labels: dict[str, int] = Field(default_factory=dict)
    system: SystemSummary | None = None  # latency, failures, tokens and cost, when the run recorded them
    budget: dict[str, BudgetFill] = Field(default_factory=dict)  # budget name (1000t) -> medians over questions
    repeats: RepeatSummary | None = None  # the system asked every question several times (None: once)
    conversations: ConversationSummary | None = None  # a golden set with conversations: per-conversation measures


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


class ConversationSummary(_Model):
    """A run's conversation-level measures: its ``conversations`` and ``turns`` (judged turns, the questions it answers:
    context turns are never counted; ``dependent`` of them lean on the history); ``vital_coverage``: the mean over
    conversations of the share of a conversation's vital nuggets its turns' answers support (strict), over
    ``covered`` conversations, ``coverage_unscored`` more left out because a turn's nugget verdict is missing;
    ``rewrites``: turns whose line carries the system's own rewrite. ``contradiction_rate``: the mean over
    conversations of the share of a conversation's checked turns whose answer contradicts an earlier answer of the
    run (``contradiction``), over ``contradiction_conversations`` conversations; ``contradicting``: turns found
    contradicting, of ``contradiction_checked`` scored; ``contradiction_unscored``: turns the judge could not check
    (their conversations are left out of the rate).

    A run asked ``repeats`` N > 1 times (``assay run --repeats N``): both shares are computed per repeat, then each
    conversation's is its mean over the repeats that scored it (unscored when none did), as a question's metric is
    merged; the two rates are the mean of those over the conversations. The counts of turns (``rewrites``,
    ``contradicting``, ``contradiction_checked``, ``contradiction_unscored``) are summed over the repeats, as the
    run's counts are; ``conversations``, ``turns`` and ``dependent`` are one asking's."""

    conversations: int
    turns: int
    dependent: int
    rewrites: int = 0
    vital_coverage: float | None = None
    covered: int = 0
    coverage_unscored: int = 0
    contradiction_rate: float | None = None
    contradiction_conversations: int = 0
    contradicting: int = 0
    contradiction_checked: int = 0
    contradiction_unscored: int = 0
    repeats: int = 1


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


class JudgeNoise(_Model):
    """How much the judge changes its grades when merely asked again, and what that does to the primary metric
    (``assay eval --judge-repeats N``; :mod:`assay.pipelines.evaluate.judging.noise`).

    ``source``: ``repeats`` (measured in this evaluation) or ``card`` (the judge card's consistency figure, in
    ``card_figure``). ``labels``: pairs re-asked, of ``eligible`` judge labels in the runs' top k (``coverage`` =
    labels / eligible); ``changed``: the share of them whose grade differs in some ask; ``failed``: re-asks that
    came back unscored (the pair kept its label for that ask). ``sd``: per run, the standard deviation of its mean
    ``metric`` over the asks; ``sd_delta``: the same for each compared pair's delta (``"b - a"``). ``note``: one
    sentence when something could not be measured."""

    source: str = "repeats"
    repeats: int | None = None
    labels: int = 0
    eligible: int = 0
    coverage: float | None = None
    changed: float | None = None
    failed: int = 0
    metric: str | None = None
    sd: dict[str, float | None] = Field(default_factory=dict)
    sd_delta: dict[str, float | None] = Field(default_factory=dict)
    card_figure: str | None = None
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


class AuditTarget(_Model):
    """How many audited pairs a corrected metric needs for a target interval half-width (PPI++ sample size).

    ``n_needed`` is the total number of audited pairs (from :func:`assay.metrics.ppi.ppi_sample_size` with the
    pilot standard deviations and correlation of the audited sample); ``n_more`` = max(0, n_needed - n_audited).
    Both are None when the pilot cannot give an estimate (``note`` says why).
    """

    half_width: float
    n_needed: int | None = None
    n_more: int | None = None
    note: str = ""


class CorrectedMetric(_Model):
    """A metric corrected with human audit labels by prediction-powered inference (PPI++)."""

    run: str
    metric: str
    judge_only: float | None
    estimate: float | None
    low: float | None
    high: float | None
    classical_low: float | None = None
    classical_high: float | None = None
    lambda_: float | None = None
    n_audited: int = 0
    n_unaudited: int = 0
    # pilot figures of the audited sample (relevance 0/1): standard deviations and their correlation
    sd_human: float | None = None
    sd_judge: float | None = None
    correlation: float | None = None
    audit_targets: list[AuditTarget] = Field(default_factory=list)


class AgreementStat(_Model):
    """One agreement statistic with its bootstrap interval over items (None where it cannot be computed)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    n_unscored: int = 0
    confidence: float = 0.95


class AgreementBlock(_Model):
    """Judge against human on one set of items (all of them, or one stratum).

    ``n`` items with both grades; ``n_unscored`` items the judge left unscored (left out of every figure). The
    confusion matrix has rows = judge grade 0..3, columns = human grade 0..3; leniency = mean(judge - human).
    """

    n: int
    n_unscored: int = 0
    percent_agreement: AgreementStat | None = None
    cohen_kappa: AgreementStat | None = None
    weighted_kappa_linear: AgreementStat | None = None
    weighted_kappa_quadratic: AgreementStat | None = None
    krippendorff_alpha: AgreementStat | None = None
    leniency: AgreementStat | None = None
    confusion_matrix: list[list[int]] = Field(default_factory=list)
    judge_histogram: list[int] = Field(default_factory=list)
    human_histogram: list[int] = Field(default_factory=list)


class AnnotatorAgreement(_Model):
    """Between people: Krippendorff's alpha (ordinal) over every annotator, Fleiss' kappa with more than two.

    ``n_items`` = items graded by at least two people; ``fleiss_kappa`` is None with two annotators, or when no item
    was graded by every one of them.
    """

    annotators: list[str]
    n_items: int
    krippendorff_alpha: AgreementStat
    fleiss_kappa: AgreementStat | None = None


class AgreementSummary(_Model):
    """Judge-versus-human agreement on the audited items, overall and per value of each stratum field."""

    n_items: int  # audited items (one human grade each)
    annotators: list[str] = Field(default_factory=list)
    grades: list[int] = Field(default_factory=lambda: [0, 1, 2, 3])
    overall: AgreementBlock
    between_humans: AnnotatorAgreement | None = None
    strata: dict[str, dict[str, AgreementBlock]] = Field(default_factory=dict)  # field -> value -> block


class JudgePairAgreement(_Model):
    """Two judges of a panel on the pairs both scored: percent agreement, Cohen's kappa over the four grades, linear
    weighted kappa, the kappas of relevant at >= 1 and at >= 2 (each judge's grades cut the same way), and leniency
    mean(first - second) in grade points (> 0: the first judge grades higher)."""

    judges: list[str]  # [first, second]
    n: int  # pairs both scored
    percent_agreement: AgreementStat | None = None
    cohen_kappa: AgreementStat | None = None
    weighted_kappa_linear: AgreementStat | None = None
    kappa_relevant_1: AgreementStat | None = None
    kappa_relevant_2: AgreementStat | None = None
    leniency: AgreementStat | None = None


class JudgeVotes(_Model):
    """One panel judge's votes: how many it scored and left unscored (by kind), and its grade histogram 0..3."""

    model: str
    n_scored: int
    n_unscored: int = 0
    unscored_kinds: dict[str, int] = Field(default_factory=dict)
    histogram: list[int] = Field(default_factory=list)


class PanelAgreement(_Model):
    """Agreement between the judges of a panel over the labels they combined (the golden set's labels that carry
    votes). ``n_pairs`` labels; ``n_disagree`` of them where the scored votes differ (``n_unanimous``: every judge
    scored and all gave the same grade); ``n_no_quorum`` left unscored because no more than half the judges scored
    them. Krippendorff's alpha (ordinal) over every judge (missing votes allowed), Fleiss' kappa with more than two
    judges over the pairs all scored, and each pair of judges on its own."""

    judges: list[str]
    combine: list[str] = Field(default_factory=list)  # the rules the labels were combined by
    n_pairs: int
    n_unanimous: int = 0
    n_disagree: int = 0
    n_no_quorum: int = 0
    krippendorff_alpha: AgreementStat | None = None
    fleiss_kappa: AgreementStat | None = None
    per_judge: list[JudgeVotes] = Field(default_factory=list)
    pairs: list[JudgePairAgreement] = Field(default_factory=list)
    # each judge against people on the audited pairs it voted on (empty when nothing is audited)
    with_people: dict[str, AgreementBlock] = Field(default_factory=dict)


class DiagnosisExample(_Model):
    """One claim that shows a failure the diagnosis metrics count, with the evidence, for the report to show.

    ``category``: hallucination, relevant_noise, irrelevant_noise, self_knowledge (answer claims), missed_by_retriever
    or ignored_by_generator (reference claims). ``chunk_id``/``chunk_text``: the chunk that entails the claim (for
    noise and ignored claims), else None. ``verdict`` says in words what the judge found; ``reason`` is its reason.
    """

    run: str
    query_id: str
    question: str
    category: str
    claim: str
    verdict: str
    reason: str = ""
    chunk_id: str | None = None
    chunk_text: str | None = None


class JudgeCardSummary(_Model):
    """The judge card found for the judge in use (``assay judge-check``), or where it was looked for.

    ``figures`` maps each headline figure's label to its value, interval and item count as the card prints them;
    ``note`` says what a reader must know (no card there and how to make one, or a card made with other prompts)."""

    found: bool
    where: str
    model: str | None = None
    created: str | None = None
    figures: dict[str, str] = Field(default_factory=dict)
    note: str | None = None


class VerdictLead(_Model):
    """The leader on the primary metric against the runner-up (or, when those two were not compared, against the
    run it was compared with): the paired comparison's delta (leader − other), family-adjusted interval and p, the
    questions both scored, and whether the evidence supports the lead (the comparison is significant)."""

    leader: str
    other: str
    delta: float
    low: float
    high: float
    p_adjusted: float
    n: int
    supported: bool
    d_z: float | None = None


class VerdictPlace(_Model):
    """One run's place on the primary metric: its mean and interval, its letters, its place and its ties.

    ``groups`` are the run's letters in a compact letter display over every comparison (``"ab"``): two runs that
    share a letter are not reliably different, two that share none are (a pair not compared counts as not
    distinguished); "" for a run with no mean. ``place``: walking down by mean, a run keeps the current place
    unless a run already at it differs significantly from it, so two significantly different runs never share a
    place; a run with no mean comes after all others. ``ties``: the runs it was compared with and found not reliably
    different from."""

    run: str
    mean: float | None
    low: float | None = None
    high: float | None = None
    place: int
    groups: str = ""  # "" in results written before the letters
    ties: list[str] = Field(default_factory=list)


class SystemCost(_Model):
    """What answering cost a system when its run recorded it (``assay run``): money and latency percentiles (ms)."""

    run: str
    cost_usd: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None


class Verdict(_Model):
    """The answer first: what the evaluation says, for a reader deciding between systems.

    Built in one place from an :class:`EvalResult` (:func:`assay.report.verdict.build_verdict`); the terminal,
    Markdown and HTML reports only render it. The structured fields carry the figures; ``lines`` words them, one
    sentence each, in the order the reports print them: the lead (or the one run's figure), the ranking with letters,
    what the history is worth (``history``, with a rewrites run and a turns run of a conversational golden set), the
    judge's trust, cost and latency when known, then the ``caveats`` (every one that applies, most severe first)."""

    metric: str | None  # the primary metric
    runs: int
    lead: VerdictLead | None = None
    places: list[VerdictPlace] = Field(default_factory=list)
    judge_measured: bool = False  # a judge card or audited labels measured the judge against people
    systems: list[SystemCost] = Field(default_factory=list)
    headline: str
    ranking: str | None = None
    judge: str
    cost: str | None = None
    caveats: list[str] = Field(default_factory=list)
    history: list[str] = Field(default_factory=list)  # a conversational evaluation: each history gain, a sentence

    @property
    def lines(self) -> list[str]:
        """The sentences in print order (caveats excluded: they are listed under them)."""
        return [line for line in (self.headline, self.ranking, *self.history, self.judge, self.cost) if line]


OFFLINE_WARNING = "offline judge: a lexical baseline, not an LLM; use --judge MODEL for real judgements."


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
