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

from typing import Any

from assay.audit.records import AuditedPair
from assay.errors import AuditError
from assay.pipelines.agreement import GradedItem, agreement_block, annotator_agreement, stratum_blocks

__all__ = ["agreement_report"]


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
    was audited, or when ``by`` names a field no pair has (the message lists the fields there are). The figures
    come from :mod:`assay.pipelines.agreement`, the same computation as the agreement in `assay eval`.
    """
    if not pairs:
        raise AuditError("nothing audited yet")
    judge = [p.judge_grade for p in pairs]
    report: dict[str, Any] = {
        "n_items": len(pairs),
        "annotators": sorted({p.annotator for p in (human_pairs or pairs)}),
        "overall": agreement_block(
            judge, [p.human_grade for p in pairs], n_resamples=n_resamples, seed=seed
        ).model_dump(),
        "between_humans": _between_humans(human_pairs or [], n_resamples, seed),
    }
    if by is not None:
        fields = sorted({key for p in pairs for key in p.strata})
        if by not in fields:
            raise AuditError(f"no stratum field {by!r}; choose one of: {', '.join(fields)}")
        items = [GradedItem(p.query_id, p.chunk_id, p.judge_grade, p.human_grade, p.strata) for p in pairs]
        blocks = stratum_blocks(items, by, missing="unknown", n_resamples=n_resamples, seed=seed)
        report["by"] = by
        report["strata"] = {value: block.model_dump() for value, block in blocks.items()}
    return report


def _between_humans(pairs: list[AuditedPair], n_resamples: int, seed: int) -> dict[str, Any] | None:
    """Krippendorff's alpha over all annotators; Fleiss' kappa (key present only with >2 annotators)."""
    grades: dict[tuple[str, str], dict[str, int]] = {}
    for p in pairs:
        grades.setdefault((p.query_id, p.chunk_id), {})[p.annotator] = p.human_grade
    result = annotator_agreement(grades, n_resamples=n_resamples, seed=seed)
    if result is None:
        return None
    out = result.model_dump()
    if len(result.annotators) <= 2:
        del out["fleiss_kappa"]
    return out
