"""Judge-versus-human agreement of an audited golden set, overall and per stratum, as plain JSON-ready data.

Judge against human uses one human grade per item: the chosen annotator's, or (several annotators) the lower
median of their grades (:meth:`LabelStore.audited_pairs` with ``one_per_item``). Items the judge left unscored
are counted (``n_unscored``) and left out of every statistic, never read as a grade. Statistics, each with a
bootstrap interval over items (see :mod:`assay.metrics.agreement`): percent agreement, Cohen's kappa, linear and
quadratic weighted kappa, Krippendorff's alpha (ordinal, judge and human as two raters), leniency (mean judge minus
human grade; above 0 the judge grades higher); plus the confusion matrix (rows judge, columns human) and both grade
histograms. Between people (two or more annotators): Krippendorff's alpha over everyone's grades, and Fleiss' kappa
when more than two annotators graded the same items.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from assay.audit.records import AuditedPair
from assay.errors import AuditError
from assay.metrics import agreement as ag
from assay.metrics.stats import Interval

__all__ = ["agreement_report"]

CATEGORIES = (0, 1, 2, 3)
Stat = Callable[[np.ndarray, np.ndarray, int, int], Interval]

_STATS: dict[str, Stat] = {
    "percent_agreement": lambda j, h, b, s: ag.percent_agreement_ci(j, h, CATEGORIES, n_resamples=b, seed=s),
    "cohen_kappa": lambda j, h, b, s: ag.cohen_kappa_ci(j, h, CATEGORIES, n_resamples=b, seed=s),
    "weighted_kappa_linear": lambda j, h, b, s: ag.weighted_kappa_ci(j, h, CATEGORIES, "linear", n_resamples=b, seed=s),
    "weighted_kappa_quadratic": lambda j, h, b, s: ag.weighted_kappa_ci(
        j, h, CATEGORIES, "quadratic", n_resamples=b, seed=s
    ),
    "krippendorff_alpha": lambda j, h, b, s: ag.krippendorff_alpha_ci(
        np.vstack([j, h])[:, ~np.isnan(j)], "ordinal", CATEGORIES, n_resamples=b, seed=s
    ),
    "leniency": lambda j, h, b, s: ag.leniency_ci(j, h, CATEGORIES, n_resamples=b, seed=s),
}


def agreement_report(
    pairs: list[AuditedPair],
    *,
    human_pairs: list[AuditedPair] | None = None,
    by: str | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Agreement figures for ``pairs`` (one per item), overall and per value of the stratum field ``by``.

    ``human_pairs`` (one per item and annotator) feed the between-people figures. Raises AuditError when nothing
    was audited, or when ``by`` names a field no pair has (the message lists the fields there are).
    """
    if not pairs:
        raise AuditError("nothing audited yet")
    report: dict[str, Any] = {
        "n_items": len(pairs),
        "annotators": sorted({p.annotator for p in (human_pairs or pairs)}),
        "overall": _block(pairs, n_resamples, seed),
        "between_humans": _between_humans(human_pairs or [], n_resamples, seed),
    }
    if by is not None:
        fields = sorted({key for p in pairs for key in p.strata})
        if by not in fields:
            raise AuditError(f"no stratum field {by!r}; choose one of: {', '.join(fields)}")
        values = sorted({p.strata.get(by, "unknown") for p in pairs})
        groups = {v: [p for p in pairs if p.strata.get(by, "unknown") == v] for v in values}
        report["by"] = by
        report["strata"] = {v: _block(group, n_resamples, seed) for v, group in groups.items()}
    return report


def _block(pairs: list[AuditedPair], n_resamples: int, seed: int) -> dict[str, Any]:
    judge = np.array([math.nan if p.judge_grade is None else p.judge_grade for p in pairs], dtype=np.float64)
    human = np.array([p.human_grade for p in pairs], dtype=np.float64)
    scored = ~np.isnan(judge)
    block: dict[str, Any] = {"n": int(scored.sum()), "n_unscored": int((~scored).sum())}
    for name, stat in _STATS.items():
        block[name] = _interval(stat(judge, human, n_resamples, seed)) if scored.sum() else None
    block["confusion_matrix"] = ag.confusion_matrix(judge, human, CATEGORIES).tolist()
    block["judge_histogram"] = ag.grade_histogram(judge, CATEGORIES).tolist()
    block["human_histogram"] = ag.grade_histogram(human, CATEGORIES).tolist()
    return block


def _between_humans(pairs: list[AuditedPair], n_resamples: int, seed: int) -> dict[str, Any] | None:
    """Krippendorff's alpha over all annotators; Fleiss' kappa over the items every one of >2 annotators graded."""
    names = sorted({p.annotator for p in pairs})
    if len(names) < 2:
        return None
    items = sorted({(p.query_id, p.chunk_id) for p in pairs})
    column = {item: i for i, item in enumerate(items)}
    data = np.full((len(names), len(items)), math.nan)
    for p in pairs:
        data[names.index(p.annotator), column[(p.query_id, p.chunk_id)]] = p.human_grade
    pairable = int(((~np.isnan(data)).sum(axis=0) >= 2).sum())
    alpha = ag.krippendorff_alpha_ci(data, "ordinal", CATEGORIES, n_resamples=n_resamples, seed=seed)
    result: dict[str, Any] = {"annotators": names, "n_items": pairable, "krippendorff_alpha": _interval(alpha)}
    if len(names) > 2:
        complete = data[:, ~np.isnan(data).any(axis=0)].T
        result["fleiss_kappa"] = None  # no item graded by every annotator yet
        if complete.shape[0]:
            fleiss = ag.fleiss_kappa_ci(complete, CATEGORIES, n_resamples=n_resamples, seed=seed)
            result["fleiss_kappa"] = _interval(fleiss)
    return result


def _interval(interval: Interval) -> dict[str, Any]:
    def clean(x: float) -> float | None:
        return None if math.isnan(x) else round(float(x), 6)

    return {
        "value": clean(interval.mean),
        "low": clean(interval.low),
        "high": clean(interval.high),
        "n": interval.n,
        "n_unscored": interval.n_unscored,
        "confidence": interval.confidence,
    }
