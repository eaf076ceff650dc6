"""Judge-versus-human agreement as typed records: the one computation behind `assay agreement` and `assay eval`.

It lives here, below both users: :mod:`assay.audit.agreement` (the `assay agreement` command, above pipelines in
the layers) and :mod:`assay.pipelines.evaluate.stats` (the evaluator, which may not import ``assay.audit``) call it.
Every figure comes from :mod:`assay.metrics.agreement`; nothing is computed twice.

Judge against human uses one human grade per item. Items the judge left unscored (grade None) are counted
(``n_unscored``) and left out of every statistic, never read as a grade. Each statistic carries a bootstrap
interval over items: percent agreement p_o, Cohen's kappa (p_o - p_e) / (1 - p_e), linear and quadratic weighted
kappa 1 - sum w O / sum w E, Krippendorff's alpha (ordinal; judge and human as two raters) and leniency
mean(judge - human) (> 0: the judge grades higher); plus the confusion matrix (rows judge, columns human) and both
grade histograms. Between people (two or more annotators): Krippendorff's alpha over everyone's grades (missing
allowed), and Fleiss' kappa over the items every one of more than two annotators graded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from assay.metrics import agreement as ag
from assay.metrics import leniency as lenient
from assay.metrics.stats import Interval
from assay.pipelines.evaluate.results import (
    AgreementBlock,
    AgreementStat,
    AgreementSummary,
    AnnotatorAgreement,
    rounded,
)

__all__ = ["CATEGORIES", "GradedItem", "agreement_block", "agreement_summary", "annotator_agreement", "stratum_blocks"]

CATEGORIES = (0, 1, 2, 3)
Item = tuple[str, str]
_Stat = Callable[[np.ndarray, np.ndarray, int, int], Interval]

_STATS: dict[str, _Stat] = {
    "percent_agreement": lambda j, h, b, s: ag.percent_agreement_ci(j, h, CATEGORIES, n_resamples=b, seed=s),
    "cohen_kappa": lambda j, h, b, s: ag.cohen_kappa_ci(j, h, CATEGORIES, n_resamples=b, seed=s),
    "weighted_kappa_linear": lambda j, h, b, s: ag.weighted_kappa_ci(j, h, CATEGORIES, "linear", n_resamples=b, seed=s),
    "weighted_kappa_quadratic": lambda j, h, b, s: ag.weighted_kappa_ci(
        j, h, CATEGORIES, "quadratic", n_resamples=b, seed=s
    ),
    "krippendorff_alpha": lambda j, h, b, s: ag.krippendorff_alpha_ci(
        np.vstack([j, h])[:, ~np.isnan(j)], "ordinal", CATEGORIES, n_resamples=b, seed=s
    ),
    "leniency": lambda j, h, b, s: lenient.leniency_ci(j, h, CATEGORIES, n_resamples=b, seed=s),
}


@dataclass(frozen=True)
class GradedItem:
    """One audited item: the judge's grade (None = the judge left it unscored), one human grade, its strata."""

    query_id: str
    chunk_id: str
    judge_grade: int | None
    human_grade: int
    strata: Mapping[str, str] = field(default_factory=dict)


def _stat(interval: Interval) -> AgreementStat:
    return AgreementStat(
        value=rounded(interval.mean),
        low=rounded(interval.low),
        high=rounded(interval.high),
        n=interval.n,
        n_unscored=interval.n_unscored,
        confidence=interval.confidence,
    )


def agreement_block(
    judge: Sequence[int | None], human: Sequence[int], *, n_resamples: int = 2000, seed: int = 0
) -> AgreementBlock:
    """Every judge-versus-human figure over paired grades (``judge[i]`` and ``human[i]`` grade the same item).

    Statistics are None when the judge scored none of the items; the histograms count every grade given (the
    human histogram includes the items the judge left unscored).
    """
    j = np.array([math.nan if g is None else g for g in judge], dtype=np.float64)
    h = np.array(human, dtype=np.float64)
    scored = int((~np.isnan(j)).sum())
    stats = {name: _stat(stat(j, h, n_resamples, seed)) if scored else None for name, stat in _STATS.items()}
    return AgreementBlock(
        n=scored,
        n_unscored=int(j.size - scored),
        **stats,
        confusion_matrix=ag.confusion_matrix(j, h, CATEGORIES).tolist(),
        judge_histogram=lenient.grade_histogram(j, CATEGORIES).tolist(),
        human_histogram=lenient.grade_histogram(h, CATEGORIES).tolist(),
    )


def _block_of(items: Sequence[GradedItem], n_resamples: int, seed: int) -> AgreementBlock:
    judge = [item.judge_grade for item in items]
    human = [item.human_grade for item in items]
    return agreement_block(judge, human, n_resamples=n_resamples, seed=seed)


def stratum_blocks(
    items: Sequence[GradedItem], name: str, *, missing: str | None = None, n_resamples: int = 2000, seed: int = 0
) -> dict[str, AgreementBlock]:
    """One block per value of the stratum field ``name``, values sorted; items without the field go under
    ``missing`` (None: left out)."""
    groups: dict[str, list[GradedItem]] = {}
    for item in items:
        value = item.strata.get(name, missing)
        if value is not None:
            groups.setdefault(value, []).append(item)
    return {value: _block_of(groups[value], n_resamples, seed) for value in sorted(groups)}


def annotator_agreement(
    grades: Mapping[Item, Mapping[str, int]], *, n_resamples: int = 2000, seed: int = 0
) -> AnnotatorAgreement | None:
    """Agreement between people from ``{item: {annotator: grade}}``; None with fewer than two annotators.

    Krippendorff's alpha (ordinal) over the annotators x items matrix (NaN where someone did not grade an item);
    ``n_items`` counts the items at least two people graded. With more than two annotators, Fleiss' kappa over the
    items every annotator graded (None when there is no such item).
    """
    names = sorted({name for by_person in grades.values() for name in by_person})
    if len(names) < 2:
        return None
    items = sorted(grades)
    data = np.full((len(names), len(items)), math.nan)
    for column, item in enumerate(items):
        for name, grade in grades[item].items():
            data[names.index(name), column] = grade
    pairable = int(((~np.isnan(data)).sum(axis=0) >= 2).sum())
    alpha = ag.krippendorff_alpha_ci(data, "ordinal", CATEGORIES, n_resamples=n_resamples, seed=seed)
    fleiss = None
    complete = data[:, ~np.isnan(data).any(axis=0)].T
    if len(names) > 2 and complete.shape[0]:
        fleiss = _stat(ag.fleiss_kappa_ci(complete, CATEGORIES, n_resamples=n_resamples, seed=seed))
    return AnnotatorAgreement(annotators=names, n_items=pairable, krippendorff_alpha=_stat(alpha), fleiss_kappa=fleiss)


def agreement_summary(
    items: Sequence[GradedItem],
    *,
    annotations: Mapping[Item, Mapping[str, int]] | None = None,
    fields: Sequence[str] = ("type", "difficulty"),
    n_resamples: int = 2000,
    seed: int = 0,
) -> AgreementSummary | None:
    """Judge against human on ``items`` (one per item), overall and per value of each of ``fields`` (items without
    the field are left out of that field's table), and between people from ``annotations``. None when ``items`` is
    empty (nothing audited)."""
    if not items:
        return None
    people = sorted({name for by_person in (annotations or {}).values() for name in by_person})
    strata = {name: stratum_blocks(items, name, n_resamples=n_resamples, seed=seed) for name in fields}
    return AgreementSummary(
        n_items=len(items),
        annotators=people,
        grades=list(CATEGORIES),
        overall=_block_of(items, n_resamples, seed),
        between_humans=annotator_agreement(annotations or {}, n_resamples=n_resamples, seed=seed),
        strata={name: blocks for name, blocks in strata.items() if blocks},
    )
