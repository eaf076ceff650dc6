"""How far the judge is trusted: its agreement with people and between the judges of a panel, its noise when
asked again, its card, and the metrics corrected with human audit labels (PPI++)."""

from __future__ import annotations

from pydantic import Field

from assay.results._model import _Model

__all__ = [
    "AgreementBlock",
    "AgreementStat",
    "AgreementSummary",
    "AnnotatorAgreement",
    "AuditTarget",
    "CorrectedMetric",
    "CriterionAgreement",
    "CriterionPPI",
    "JudgeCardSummary",
    "JudgeNoise",
    "JudgePairAgreement",
    "JudgeVotes",
    "PanelAgreement",
]


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


class CriterionPPI(_Model):
    """One run's judged criterion, its mean corrected with people's labels (PPI++): the judge-only mean, the
    corrected mean with its interval, and the items of the run audited and not."""

    run: str
    judge_only: float | None
    estimate: float
    low: float
    high: float
    n_audited: int
    n_unaudited: int


class CriterionAgreement(_Model):
    """A judged criterion against people, over this evaluation's verdicts that people labelled (``assay audit
    --criteria``): ``labels`` in score order; ``n`` items with both labels, ``judge_unscored`` audited items the judge
    left unscored; ``statistic`` is ``kappa`` (Cohen's, two labels) or ``weighted_kappa`` (quadratic, over the label
    positions of an ordered scale) with its bootstrap interval; ``percent``: exact agreement; ``confusion``: rows the
    judge's label, columns the people's. ``validated`` once ``n`` reaches ``needed`` (the evaluation's
    ``min_audited``); ``ppi``: each run's corrected mean, for the runs with at least ``needed`` audited items."""

    criterion: str
    ref: str
    labels: list[str]
    n: int
    judge_unscored: int = 0
    statistic: str
    kappa: AgreementStat
    percent: AgreementStat
    confusion: list[list[int]] = Field(default_factory=list)
    needed: int
    validated: bool
    ppi: list[CriterionPPI] = Field(default_factory=list)
