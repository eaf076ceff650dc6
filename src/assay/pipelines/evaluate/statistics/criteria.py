"""Judged criteria measured against people: per criterion, the judge's labels beside people's labels of the same
audit items (``assay audit --criteria``), and each run's mean corrected with them.

* The pairs are this evaluation's verdicts whose audit item (:attr:`~assay.results.CriterionVerdictRecord.item`) has
  a person's label; one pair per item (an item judged in two runs is one answer, labelled once). An audited item the
  judge left unscored is counted, never compared.
* Labels become their positions in the scale ordered by declared score. Two labels: Cohen's kappa. More: the
  quadratic weighted kappa over those positions (a near miss costs less than a far one). Both with a percentile
  bootstrap interval over items, beside exact agreement and the confusion matrix (rows the judge, columns people).
* ``validated`` once ``min_audited`` items are compared; until then the verdict says "not validated: audit N items".
* PPI++ (:func:`assay.metrics.ppi.ppi_mean`) per run with at least ``min_audited`` audited items: the truth is the
  declared score of the person's label, the prediction the judge's; the run's other verdicts are the unlabelled part.
  The interval is cut to the scale's range (a mean of declared scores lies between the lowest and the highest).
  The audit queue orders items at random (seeded) within criterion, so the audited items are a sample of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from assay.judge.criteria import Criterion
from assay.metrics import agreement, ppi
from assay.metrics.stats import Interval
from assay.results import AgreementStat, CriterionAgreement, CriterionPPI, CriterionVerdictRecord, rounded

__all__ = ["LabelAgreement", "criteria_agreement", "criterion_agreement", "label_agreement"]


def criteria_agreement(
    criteria: Sequence[Criterion],
    verdicts: Sequence[CriterionVerdictRecord],
    people: Mapping[str, str],
    *,
    min_audited: int,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> list[CriterionAgreement]:
    """One :class:`CriterionAgreement` per judged criterion that people labelled (``people``: audit item -> label)."""
    out = []
    for criterion in criteria:
        mine = [v for v in verdicts if v.ref == criterion.ref]
        if any(v.item in people for v in mine):
            out.append(criterion_agreement(criterion, mine, people, min_audited=min_audited, confidence=confidence,
                                           n_resamples=n_resamples, seed=seed))  # fmt: skip
    return out


def criterion_agreement(
    criterion: Criterion,
    verdicts: Sequence[CriterionVerdictRecord],
    people: Mapping[str, str],
    *,
    min_audited: int,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> CriterionAgreement:
    """``criterion``'s verdicts (of this evaluation) against ``people``'s labels of their items (module doc)."""
    ordered = sorted(criterion.labels, key=lambda label: label.score)
    names = [label.name for label in ordered]
    score = {label.name: label.score for label in ordered}
    pairs: dict[str, tuple[str | None, str]] = {}
    for v in verdicts:
        if v.item is not None and people.get(v.item) in score and v.item not in pairs:
            pairs[v.item] = (v.label, people[v.item])
    found = label_agreement(names, list(pairs.values()), confidence=confidence, n_resamples=n_resamples, seed=seed)
    runs = list(dict.fromkeys(v.run for v in verdicts))
    corrected = [
        done
        for run in runs
        if (
            done := _ppi(
                run,
                [v for v in verdicts if v.run == run],
                people,
                score,
                min_audited=min_audited,
                confidence=confidence,
            )
        )
    ]
    return CriterionAgreement(
        criterion=criterion.name, ref=criterion.ref, labels=names, n=found.n, judge_unscored=found.judge_unscored,
        statistic=found.statistic, kappa=_stat(found.kappa, found.judge_unscored, confidence),
        percent=_stat(found.percent, found.judge_unscored, confidence), confusion=found.confusion,
        needed=min_audited, validated=found.n >= min_audited, ppi=corrected,
    )  # fmt: skip


@dataclass(frozen=True)
class LabelAgreement:
    """Judge against people over one scale's labels (module doc): the statistic's name, its interval, exact
    agreement, the confusion matrix (rows the judge), the items compared and the audited items the judge left
    unscored."""

    statistic: str
    kappa: Interval | None  # None: nothing compared
    percent: Interval | None
    confusion: list[list[int]]
    n: int
    judge_unscored: int


def label_agreement(
    labels: Sequence[str],
    pairs: Sequence[tuple[str | None, str]],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> LabelAgreement:
    """``pairs`` of (judge's label, None when unscored; a person's label) over ``labels`` (lowest score first):
    Cohen's kappa for two labels, else the quadratic weighted kappa over label positions (module doc)."""
    position = {name: float(i) for i, name in enumerate(labels)}
    # sorted: the items' order (the store's, an evaluation's) cannot move the bootstrap interval
    compared = sorted((position[j], position[h]) for j, h in pairs if j in position and h in position)
    a = np.array([j for j, _ in compared])
    b = np.array([h for _, h in compared])
    categories = list(range(len(labels)))
    kappa: Interval | None = None
    percent: Interval | None = None
    if compared:
        # the quadratic weighted kappa (the metric's default weights); over two labels it is Cohen's kappa
        kappa = agreement.weighted_kappa_ci(a, b, categories, confidence=confidence, n_resamples=n_resamples,
                                            seed=seed)  # fmt: skip
        percent = agreement.percent_agreement_ci(a, b, categories, confidence=confidence, n_resamples=n_resamples,
                                                 seed=seed)  # fmt: skip
        confusion = agreement.confusion_matrix(a, b, categories).tolist()
    else:
        confusion = [[0] * len(labels) for _ in labels]
    return LabelAgreement("weighted_kappa" if len(labels) > 2 else "kappa", kappa, percent, confusion, len(compared),
                          sum(j is None for j, _ in pairs))  # fmt: skip


def _ppi(
    run: str,
    verdicts: Sequence[CriterionVerdictRecord],
    people: Mapping[str, str],
    score: Mapping[str, float],
    *,
    min_audited: int,
    confidence: float,
) -> CriterionPPI | None:
    """The run's criterion mean corrected with people's labels; None under ``min_audited`` audited items."""
    judged = [(v.item, float(v.score)) for v in verdicts if v.score is not None]
    audited = [(item, value) for item, value in judged if item is not None and people.get(item) in score]
    if len(audited) < max(min_audited, 2):
        return None
    rest = [value for item, value in judged if item is None or people.get(item) not in score]
    y = [score[people[item]] for item, _ in audited if item is not None]
    found = ppi.ppi_mean(y, [value for _, value in audited], rest, confidence=confidence)
    floor, top = min(score.values()), max(score.values())  # a mean of declared scores lies between them
    return CriterionPPI(
        run=run, judge_only=rounded(float(np.mean([value for _, value in judged]))),
        estimate=_figure(found.estimate), low=_figure(max(found.low, floor)), high=_figure(min(found.high, top)),
        n_audited=found.n_labeled, n_unaudited=found.n_unlabeled,
    )  # fmt: skip


def _figure(value: float) -> float:
    return round(float(value), 6)


def _stat(interval: Interval | None, unscored: int, confidence: float) -> AgreementStat:
    """The figure with its interval; ``n_unscored``: the audited items the judge left unscored (not compared)."""
    if interval is None:
        return AgreementStat(value=None, n_unscored=unscored, confidence=confidence)
    return AgreementStat(value=rounded(interval.mean), low=rounded(interval.low), high=rounded(interval.high),
                         n=interval.n, n_unscored=unscored, confidence=interval.confidence)  # fmt: skip
