"""Statistics of ``assay eval``: intervals for every mean, strata, paired comparisons of runs, and PPI corrections.

* Every mean comes with a percentile bootstrap interval over the scored queries (:func:`stats.bootstrap_ci`);
  unscored queries are counted with their reasons, never averaged in.
* Strata: the same summaries within each value of a question field (type, difficulty, any ``--by`` field).
* Comparisons of runs, one family of pairs per metric, with intervals that agree with the verdicts:
  :mod:`assay.pipelines.evaluate.statistics.compare`.
* PPI++ (:func:`ppi.ppi_mean`): ``pair_precision@k`` = mean relevance (grade >= threshold) over the (query, chunk)
  pairs of a run's top k, which equals P@k when every list has k chunks. The judge's label is the prediction on
  every pair; the human label (audit store or human qrels) is the truth on the audited ones. Skipped, with a note,
  when fewer than ``min_audited`` audited pairs fall in the top k. PPI assumes the audited pairs are a random sample
  of the pairs; an audit queue that favours some strata biases it.
* Audit size: for each target half-width h (``StatSettings.audit_targets``, default 0.05 and 0.025), the audited
  pairs needed, n = :func:`ppi.ppi_sample_size` with the pilot sd of the human and judge relevance and their
  correlation on the audited pairs, and N = the unaudited pairs of the top k; reported as "audit ~n - n_audited
  more". Not estimated when the pilot's human labels are all equal (sd 0 says nothing about the spread).
* Agreement (:func:`agreement_of`): judge against human on every audited pair the judge labelled, overall, per
  question type and difficulty, and between annotators (:mod:`assay.pipelines.agreement`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from assay.formats.golden import GoldenSet
from assay.metrics import clusters, ppi
from assay.pipelines.agreement import GradedItem, agreement_summary
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.results import (
    AgreementSummary,
    AuditTarget,
    CorrectedMetric,
    MetricSummary,
    QueryResult,
    rounded,
)
from assay.types import Question

__all__ = [
    "PPIInputs",
    "StatSettings",
    "agreement_of",
    "audit_targets",
    "corrected_metrics",
    "pilot",
    "ppi_inputs",
    "question_strata",
    "strata_summaries",
    "summaries",
    "summarize",
]


@dataclass(frozen=True)
class StatSettings:
    """Resamples, seed, confidence, and how runs are compared (:mod:`assay.pipelines.evaluate.statistics.compare`).

    ``correction``: ``holm`` | ``tukey`` | ``none`` within each metric's family of run pairs; ``baseline``: compare
    each run with this one (None: every pair); ``primary``: the metric that leads the verdict (None: ndcg@10 when
    compared, else the first compared metric); ``n_perm``: least number of random rearrangements of a randomization
    test (raised with the family size, see :func:`assay.pipelines.evaluate.statistics.compare.resamples`).
    """

    n_boot: int = 2000
    seed: int = 0
    confidence: float = 0.95
    alpha: float = 0.05
    correction: str = "holm"
    baseline: str | None = None
    primary: str | None = None
    n_perm: int = 10_000
    audit_targets: tuple[float, ...] = (0.05, 0.025)  # interval half-widths to size the audit for


def summarize(rows: Sequence[QueryResult], name: str, settings: StatSettings) -> MetricSummary:
    """Mean, bootstrap interval, scored and unscored counts (with reasons) of ``name`` over ``rows``."""
    values = [row.metrics.get(name) for row in rows if name in row.metrics]
    reasons = Counter(row.unscored.get(name, "unscored") for row in rows if row.metrics.get(name, 0.0) is None)
    array = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    if not np.isfinite(array).any():
        return MetricSummary(mean=None, n_scored=0, n_unscored=len(values), unscored_reasons=dict(reasons))
    labels = [row.unit for row in rows if name in row.metrics]
    interval = clusters.mean_interval(
        array, labels, confidence=settings.confidence, n_resamples=settings.n_boot, seed=settings.seed
    )
    return MetricSummary(
        mean=rounded(interval.mean),
        low=rounded(interval.low),
        high=rounded(interval.high),
        n_scored=interval.n,
        n_unscored=interval.n_unscored,
        unscored_reasons=dict(reasons),
    )


def summaries(rows: Sequence[QueryResult], names: Sequence[str], settings: StatSettings) -> dict[str, MetricSummary]:
    """:func:`summarize` for every name."""
    return {name: summarize(rows, name, settings) for name in names}


def strata_summaries(
    rows: Sequence[QueryResult], names: Sequence[str], fields: Sequence[str], settings: StatSettings
) -> dict[str, dict[str, dict[str, MetricSummary]]]:
    """``{field: {value: {metric: summary}}}`` for the fields the rows carry (a row without the field is left out)."""
    out: dict[str, dict[str, dict[str, MetricSummary]]] = {}
    for name in fields:
        groups: dict[str, list[QueryResult]] = {}
        for row in rows:
            if name in row.strata:
                groups.setdefault(row.strata[name], []).append(row)
        if groups:
            out[name] = {value: summaries(group, names, settings) for value, group in sorted(groups.items())}
    return out


@dataclass(frozen=True)
class PPIInputs:
    """Labels for PPI: the judge's grade and the human grade per (query, chunk) pair, and (for agreement between
    people) every annotator's grade per pair."""

    judge: Mapping[tuple[str, str], int | None]
    human: Mapping[tuple[str, str], int]
    threshold: int = 1
    min_audited: int = 10
    annotations: Mapping[tuple[str, str], Mapping[str, int]] = field(default_factory=dict)


def ppi_inputs(
    gold: GoldenSet,
    given: Mapping[tuple[str, str], int] | None,
    *,
    threshold: int,
    min_audited: int,
    annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
) -> PPIInputs:
    """The judge's grade per pair (judge, else generator labels; None when unscored), chunks and judged passages
    (spans) alike, and the human grade per pair (human qrels, overridden by ``given``, e.g. the audit store's, whose
    span items are keyed by passage id); ``annotations`` are kept for agreement."""
    human = {(q, c): g for q, chunks in gold.qrels_map(source="human").items() for c, g in chunks.items()}
    human.update(given or {})
    judge: dict[tuple[str, str], int | None] = {}
    span_labels = [label for passage in gold.passages for label in passage.labels]  # keyed by the passage id
    for source in ("generator", "judge"):
        for label in [*gold.qrels, *span_labels]:
            if label.provenance.source == source:
                judge[(label.query_id, label.chunk_id)] = label.grade
    return PPIInputs(judge, human, threshold, min_audited, dict(annotations or {}))


def agreement_of(
    gold: GoldenSet, inputs: PPIInputs, *, fields: Sequence[str], settings: StatSettings
) -> AgreementSummary | None:
    """Judge against human on the audited pairs the judge (or generator) labelled, per question ``fields`` too.

    A pair with a human grade but no judge label at all is not an agreement item (there is nothing to compare);
    one the judge left unscored is counted as unscored. The junk grade -1 counts as 0 (the 0-3 scale's floor, as
    trec_eval reads negative grades: not relevant). None when no audited pair has a judge label.
    """
    questions = {q.id: q for q in gold.questions}
    items = []
    for (qid, cid), human in sorted(inputs.human.items()):
        if (qid, cid) in inputs.judge:
            judge = inputs.judge[(qid, cid)]
            found = questions.get(qid)
            strata = {} if found is None else {k: v for k, v in question_strata(found, fields).items() if k in fields}
            items.append(GradedItem(qid, cid, None if judge is None else max(judge, 0), max(human, 0), strata))
    annotations = {
        item: {name: max(grade, 0) for name, grade in grades.items()}
        for item, grades in inputs.annotations.items()
        if item in inputs.judge
    }
    return agreement_summary(
        items, annotations=annotations, fields=fields, n_resamples=settings.n_boot, seed=settings.seed
    )


def question_strata(question: Question, fields: Sequence[str]) -> dict[str, str]:
    """A question's strata, the same for the per-query table and the agreement: its type, its difficulty when set,
    and each other asked field (metadata, else attribute) as a string; absent or empty values are left out."""
    out = {"type": question.type}
    if question.difficulty:
        out["difficulty"] = question.difficulty
    for name in fields:
        value = None if name in ("type", "difficulty") else question.metadata.get(name, getattr(question, name, None))
        if isinstance(value, str | int | float | bool) and value != "":
            out[name] = str(value)
    return out


def corrected_metrics(
    run: LoadedRun, ks: Sequence[int], inputs: PPIInputs, settings: StatSettings
) -> tuple[list[CorrectedMetric], list[str]]:
    """PPI++-corrected ``pair_precision@k`` of one run for each k, and notes for the ones skipped; none for a k
    whose top k holds no judge label (nothing to correct: every label there is a person's)."""
    out: list[CorrectedMetric] = []
    notes: list[str] = []
    for k in ks:
        pairs = [(qid, cid) for qid, line in run.lines.items() for cid in line.top(k)]
        if not any(p in inputs.judge for p in pairs):
            continue
        audited = [p for p in pairs if p in inputs.human and inputs.judge.get(p) is not None]
        name = f"pair_precision@{k}"
        if len(audited) < inputs.min_audited:
            notes.append(
                f"PPI skipped for {run.name} {name}: {len(audited)} audited pair(s) in its top {k}, need "
                f"{inputs.min_audited} (audit more with `assay audit GOLDEN`)."
            )
            continue
        out.append(_ppi(run.name, name, pairs=pairs, audited=set(audited), inputs=inputs, settings=settings))
    return out, notes


def _ppi(
    run: str,
    name: str,
    *,
    pairs: list[tuple[str, str]],
    audited: set[tuple[str, str]],
    inputs: PPIInputs,
    settings: StatSettings,
) -> CorrectedMetric:
    def rel(grade: int | None) -> float:
        return math.nan if grade is None else float(grade >= inputs.threshold)

    judged = [rel(inputs.judge.get(p, 0)) for p in pairs]
    y = [rel(inputs.human[p]) for p in pairs if p in audited]
    yhat = [rel(inputs.judge.get(p, 0)) for p in pairs if p in audited]
    rest = [rel(inputs.judge.get(p, 0)) for p in pairs if p not in audited]
    result = ppi.ppi_mean(y, yhat, rest, confidence=settings.confidence)
    finite = [v for v in judged if not math.isnan(v)]
    sd_human, sd_judge, correlation = pilot(y, yhat)
    targets = audit_targets(
        (sd_human, sd_judge, correlation), n_audited=result.n_labeled, n_unaudited=result.n_unlabeled, settings=settings
    )
    return CorrectedMetric(
        run=run,
        metric=name,
        judge_only=rounded(float(np.mean(finite))) if finite else None,
        estimate=rounded(result.estimate),
        low=rounded(result.low),
        high=rounded(result.high),
        classical_low=rounded(result.classical_low),
        classical_high=rounded(result.classical_high),
        lambda_=rounded(result.lambda_),
        n_audited=result.n_labeled,
        n_unaudited=result.n_unlabeled,
        sd_human=rounded(sd_human),
        sd_judge=rounded(sd_judge),
        correlation=rounded(correlation),
        audit_targets=targets,
    )


def pilot(y: Sequence[float], yhat: Sequence[float]) -> tuple[float, float, float]:
    """Pilot figures of the audited pairs (NaN pairs dropped): sd of human labels, sd of judge labels (ddof 1),
    and their Pearson correlation, 0 when either side is constant (it then carries no information)."""
    pairs = np.array([(a, b) for a, b in zip(y, yhat, strict=True) if not (math.isnan(a) or math.isnan(b))])
    if pairs.shape[0] < 2:
        return math.nan, math.nan, math.nan
    sd_human, sd_judge = (float(np.std(pairs[:, i], ddof=1)) for i in (0, 1))
    if sd_human == 0 or sd_judge == 0:
        return sd_human, sd_judge, 0.0
    return sd_human, sd_judge, float(np.clip(np.corrcoef(pairs[:, 0], pairs[:, 1])[0, 1], -1.0, 1.0))


def audit_targets(
    pilot_figures: tuple[float, float, float], *, n_audited: int, n_unaudited: int, settings: StatSettings
) -> list[AuditTarget]:
    """Audited pairs needed for each target half-width of ``settings.audit_targets`` (PPI++ at the tuned lambda).

    n_needed = least n with z sqrt(V(n)) <= h, V(n) from :func:`ppi.ppi_sample_size` with the pilot
    (sd_human, sd_judge, correlation) and N = ``n_unaudited`` judge-only pairs; n_more = max(0, n_needed -
    n_audited). No estimate when the pilot has fewer than two pairs or the human labels are all equal.
    """
    sd_human, sd_judge, correlation = pilot_figures
    out = []
    for half in settings.audit_targets:
        if math.isnan(sd_human) or sd_human == 0:
            note = "pilot too small" if math.isnan(sd_human) else "audited labels all equal: no spread to size from"
            out.append(AuditTarget(half_width=half, note=note))
            continue
        needed = ppi.ppi_sample_size(
            half,
            sd_human=sd_human,
            sd_judge=sd_judge,
            correlation=correlation,
            n_unlabeled=n_unaudited,
            confidence=settings.confidence,
        )
        out.append(AuditTarget(half_width=half, n_needed=needed, n_more=max(0, needed - n_audited)))
    return out
