"""Judge-versus-human agreement as typed records: the one computation behind `assay agreement` and `assay eval`.

It lives here, below both users: :mod:`assay.audit.agreement` (the `assay agreement` command, above pipelines in
the layers) and :mod:`assay.pipelines.evaluate.statistics.stats` (the evaluator, which may not import ``assay.audit``)
call it. Every figure comes from :mod:`assay.metrics.agreement`; nothing is computed twice.

Judge against human uses one human grade per item. Items the judge left unscored (grade None) are counted
(``n_unscored``) and left out of every statistic, never read as a grade. Each statistic carries a bootstrap
interval over items: percent agreement p_o, Cohen's kappa (p_o - p_e) / (1 - p_e), linear and quadratic weighted
kappa 1 - sum w O / sum w E, Krippendorff's alpha (ordinal; judge and human as two raters) and leniency
mean(judge - human) (> 0: the judge grades higher); plus the confusion matrix (rows judge, columns human) and both
grade histograms. Between people (two or more annotators): Krippendorff's alpha over everyone's grades (missing
allowed), and Fleiss' kappa over the items every one of more than two annotators graded. Between the judges of a
panel (:func:`panel_agreement`, from the votes its labels keep): the same alpha and Fleiss' kappa over the judges,
and each pair of judges as two raters.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from assay.judge.panel import rule_of
from assay.metrics import agreement as ag
from assay.metrics import leniency as lenient
from assay.metrics.stats import Interval
from assay.results import (
    AgreementBlock,
    AgreementStat,
    AgreementSummary,
    AnnotatorAgreement,
    JudgePairAgreement,
    JudgeVotes,
    PanelAgreement,
    rounded,
)
from assay.types import RelevanceLabel

__all__ = [
    "CATEGORIES",
    "GradedItem",
    "agreement_block",
    "agreement_summary",
    "annotator_agreement",
    "panel_agreement",
    "stratum_blocks",
]

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


def _at_least(grades: np.ndarray, cut: int) -> np.ndarray:
    """1.0 where a grade is >= ``cut``, 0.0 below, NaN where missing."""
    return np.where(np.isnan(grades), math.nan, (grades >= cut).astype(np.float64))


def _judge_pair(
    names: tuple[str, str], a: np.ndarray, b: np.ndarray, *, n_resamples: int, seed: int
) -> JudgePairAgreement:
    first, second = names
    both = ~(np.isnan(a) | np.isnan(b))
    n = int(both.sum())
    if not n:
        return JudgePairAgreement(judges=[first, second], n=0)
    a, b = a[both], b[both]
    binary = (0, 1)
    return JudgePairAgreement(
        judges=[first, second],
        n=n,
        percent_agreement=_stat(ag.percent_agreement_ci(a, b, CATEGORIES, n_resamples=n_resamples, seed=seed)),
        cohen_kappa=_stat(ag.cohen_kappa_ci(a, b, CATEGORIES, n_resamples=n_resamples, seed=seed)),
        weighted_kappa_linear=_stat(
            ag.weighted_kappa_ci(a, b, CATEGORIES, "linear", n_resamples=n_resamples, seed=seed)
        ),
        kappa_relevant_1=_stat(
            ag.cohen_kappa_ci(_at_least(a, 1), _at_least(b, 1), binary, n_resamples=n_resamples, seed=seed)
        ),
        kappa_relevant_2=_stat(
            ag.cohen_kappa_ci(_at_least(a, 2), _at_least(b, 2), binary, n_resamples=n_resamples, seed=seed)
        ),
        leniency=_stat(lenient.leniency_ci(a, b, CATEGORIES, n_resamples=n_resamples, seed=seed)),
    )


def panel_agreement(
    labels: Iterable[RelevanceLabel],
    *,
    human: Mapping[Item, int] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> PanelAgreement | None:
    """Agreement between the judges whose votes ``labels`` keep (labels without votes are skipped); None when no
    label has votes. Judges are listed in the order they first vote; a judge missing from a label counts as not
    having scored it. ``human`` ``{(query_id, chunk_id): grade}`` (the audited pairs) adds each judge against
    people on the pairs it voted on (``with_people``; the junk grade -1 counts as 0)."""
    voted = [label for label in labels if label.votes]
    if not voted:
        return None
    judges = list(dict.fromkeys(vote.model for label in voted for vote in label.votes or ()))
    grades = np.full((len(judges), len(voted)), math.nan)
    unscored: list[Counter[str]] = [Counter() for _ in judges]
    for column, label in enumerate(voted):
        for vote in label.votes or ():
            row = judges.index(vote.model)
            if vote.grade is not None:
                grades[row, column] = vote.grade
            else:
                unscored[row][vote.unscored.kind if vote.unscored else "missing"] += 1
    scored = ~np.isnan(grades)
    spread = [set(grades[scored[:, c], c].tolist()) for c in range(len(voted))]
    everyone = scored.all(axis=0)
    items = {
        (label.query_id, label.chunk_id): {judges[r]: int(grades[r, c]) for r in range(len(judges)) if scored[r, c]}
        for c, label in enumerate(voted)
    }
    between = annotator_agreement(items, n_resamples=n_resamples, seed=seed)
    return PanelAgreement(
        judges=judges,
        combine=sorted({rule for label in voted if (rule := rule_of(label.provenance.model or ""))}),
        n_pairs=len(voted),
        n_unanimous=sum(1 for c in range(len(voted)) if everyone[c] and len(spread[c]) == 1),
        n_disagree=sum(1 for values in spread if len(values) > 1),
        n_no_quorum=sum(1 for label in voted if label.grade is None),
        krippendorff_alpha=between.krippendorff_alpha if between is not None else None,
        fleiss_kappa=between.fleiss_kappa if between is not None else None,
        per_judge=[
            JudgeVotes(
                model=name,
                n_scored=int(scored[r].sum()),
                n_unscored=int(len(voted) - scored[r].sum()),
                unscored_kinds=dict(sorted(unscored[r].items())),
                histogram=lenient.grade_histogram(grades[r], CATEGORIES).tolist(),
            )
            for r, name in enumerate(judges)
        ],
        pairs=[
            _judge_pair((judges[i], judges[j]), grades[i], grades[j], n_resamples=n_resamples, seed=seed)
            for i, j in combinations(range(len(judges)), 2)
        ],
        with_people=_with_people(voted, judges, grades, human or {}, n_resamples=n_resamples, seed=seed),
    )


def _with_people(
    voted: Sequence[RelevanceLabel],
    judges: Sequence[str],
    grades: np.ndarray,
    human: Mapping[Item, int],
    *,
    n_resamples: int,
    seed: int,
) -> dict[str, AgreementBlock]:
    audited = [c for c, label in enumerate(voted) if (label.query_id, label.chunk_id) in human]
    if not audited:
        return {}
    people = [max(human[(voted[c].query_id, voted[c].chunk_id)], 0) for c in audited]
    out = {}
    for row, name in enumerate(judges):
        votes = [None if math.isnan(g) else max(int(g), 0) for g in grades[row, audited]]
        out[name] = agreement_block(votes, people, n_resamples=n_resamples, seed=seed)
    return out
