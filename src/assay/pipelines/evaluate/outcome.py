"""Step 4 of an evaluation: statistics, and the result made complete in one place.

The repeated runs' askings are joined (:mod:`~.statistics.repeats`); each run gets its summaries, curves and strata
(:mod:`~.statistics.stats`); the runs are compared, one family per metric (:mod:`~.statistics.compare`), over the
metrics comparable across their chunkings (:mod:`~.scoring.comparable`); PPI++ corrections where people audited;
the judge asked again when ``judge_repeats`` says so (:mod:`~.judging.noise`); what other runs' labels did to each
run (:mod:`~.judging.pool_growth`); what this evaluation spent; the agreement between a panel's judges. Every part is
computed first, then the :class:`~assay.results.EvalResult` is built once, with all of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from assay._version import __version__
from assay.formats.golden import GoldenSet
from assay.judge import Judge
from assay.judge.panel import Grader, judges_of, spent_since
from assay.metric_names import TRAJECTORY_FAMILY
from assay.pipelines.agreement import panel_agreement
from assay.pipelines.evaluate.evaluated import Evaluated
from assay.pipelines.evaluate.explore import Paths, question_views
from assay.pipelines.evaluate.judged import Judged
from assay.pipelines.evaluate.judging.calls import vital_counts
from assay.pipelines.evaluate.judging.diagnosis import directed
from assay.pipelines.evaluate.judging.noise import cutoff, judge_noise
from assay.pipelines.evaluate.judging.pairwise import BUILTIN, run_pairs
from assay.pipelines.evaluate.judging.passages import passage_grade
from assay.pipelines.evaluate.judging.pool_growth import pool_shifts, quotes_note
from assay.pipelines.evaluate.per_query import Scores
from assay.pipelines.evaluate.prepared import Prepared
from assay.pipelines.evaluate.runs.loaded import length_summary
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.budget import clamped_notes
from assay.pipelines.evaluate.scoring.comparable import Comparable, comparable
from assay.pipelines.evaluate.scoring.conversations import repeated_summary
from assay.pipelines.evaluate.scoring.fill import fill_summary
from assay.pipelines.evaluate.scoring.names import AT_K, DIAGNOSIS_NAMES, TURN_STRATA
from assay.pipelines.evaluate.scoring.scored import ScoredRun
from assay.pipelines.evaluate.scoring.system import system_summary
from assay.pipelines.evaluate.scoring.trajectory import path_of, trajectory_summary
from assay.pipelines.evaluate.settings import EvalSettings, answer_notes, answer_primary
from assay.pipelines.evaluate.statistics.clustering import clustering_summary
from assay.pipelines.evaluate.statistics.compare import compare_runs, primary_metric, with_primary
from assay.pipelines.evaluate.statistics.criteria import criteria_agreement
from assay.pipelines.evaluate.statistics.gates import relevant_chunk_lengths
from assay.pipelines.evaluate.statistics.history import history_gains
from assay.pipelines.evaluate.statistics.planning import power_plans
from assay.pipelines.evaluate.statistics.preferences import preferences_summary
from assay.pipelines.evaluate.statistics.repeats import Merged
from assay.pipelines.evaluate.statistics.stats import (
    PPIInputs,
    agreement_of,
    corrected_metrics,
    ppi_inputs,
    strata_summaries,
)
from assay.pipelines.evaluate.statistics.stats import summaries as summarize_all
from assay.results import (
    OFFLINE_WARNING,
    AgreementSummary,
    Clustering,
    Comparison,
    CorrectedMetric,
    EvalResult,
    HistoryGain,
    JudgeNoise,
    MetricSummary,
    PoolShift,
    PowerPlan,
    Preferences,
    QueryResult,
    RunResult,
    headline_metrics,
)

__all__ = ["evaluated"]


def evaluated(
    setup: Prepared,
    judged: Judged,
    scores: Scores,
    *,
    judge: Grader | None,
    human_labels: Mapping[tuple[str, str], int] | None,
    annotations: Mapping[tuple[str, str], Mapping[str, int]] | None,
    criterion_labels: Mapping[str, str] | None = None,
) -> Evaluated:
    """The result (module doc), the per-query rows (a repeated run's merged per question), the support-matrix and
    passage rows, and the explorer's per-question views. ``human_labels``, ``annotations`` and ``criterion_labels``:
    as :func:`~assay.pipelines.evaluate.pipeline.evaluate` takes them."""
    config = setup.config
    humans = ppi_inputs(setup.gold, human_labels, threshold=config.threshold, min_audited=config.min_audited,
                        annotations=annotations)  # fmt: skip
    outcome = _Outcome(setup, judged, scores, judge=judge, humans=humans, people=criterion_labels or {})
    result = outcome.result()
    rows = [row for one in outcome.merged.runs for row in one.rows.values()]
    support = judged.support_rows
    passages = [row for one in scores.runs for row in one.passages]
    views = question_views(setup.gold, [one.run for one in scores.runs], passages, support,
                           _paths(setup, judged, scores))  # fmt: skip
    return Evaluated(result, rows, support, passages, views, dict(judged.criteria.shown))


def _paths(setup: Prepared, judged: Judged, scores: Scores) -> Paths | None:
    """The trajectories of the lines with steps, and each passage's grade from the labels and the pool (as the
    passage rows have it); None when no line has steps."""
    gold, threshold = setup.gold, setup.config.threshold
    paths = {
        (one.run.name, qid): path_of(line, gold.question(qid), scores.pool, threshold)
        for one in scores.runs
        for qid, line in one.run.lines.items()
        if line.steps and line.error is None
    }
    if not paths:
        return None
    carried, labels = judged.carried, scores.labels

    def grade(qid: str, unit: str) -> tuple[int | None, str]:
        how = "chunk" if gold.has_chunk(unit) else carried.how.get((qid, unit), "unlabelled")
        return passage_grade(labels, carried, qid, unit), how

    return Paths(paths, grade)


def _headline(names: Sequence[str], config: EvalSettings) -> list[str]:
    """Metrics compared and stratified (:func:`~assay.results.headline_metrics`), the named ones among them."""
    return headline_metrics(names, config.k_values, (*config.metrics, *config.also))


def _pairwise_record(config: EvalSettings) -> str | None:
    """What results.json keeps of ``--pairwise``: the criterion's ``name@version`` (``builtin``), or None."""
    if config.pairwise is None:
        return None
    return config.pairwise_criterion.ref if config.pairwise_criterion is not None else BUILTIN


def _criteria_record(config: EvalSettings) -> list[dict[str, str]]:
    """What results.json keeps of each criterion: its name, version, kind, file and the hash of the file's bytes."""
    return [{"name": c.name, "version": c.version, "kind": c.check.kind if c.check is not None else "judged",
             "path": str(c.path), "content_hash": c.content_hash} for c in config.loaded_criteria]  # fmt: skip


def _metric_names(rows: Mapping[str, QueryResult]) -> list[str]:
    return list(dict.fromkeys(name for row in rows.values() for name in row.metrics))


@dataclass(frozen=True)
class _Compared:
    """The comparisons of the runs (``primary``: the metric leading the verdict, None when none was compared), and
    what is read off them and the rows: clustering, the diagnosis family, agreement with people, history gains and
    the questions needed for given differences."""

    comparisons: list[Comparison]
    primary: str | None
    clustering: Clustering | None
    diagnosis: list[Comparison]
    agreement: AgreementSummary | None
    history: list[HistoryGain]
    planning: list[PowerPlan]


class _Outcome:
    """The parts of the result, each from what the earlier steps produced."""

    def __init__(
        self,
        setup: Prepared,
        judged: Judged,
        scores: Scores,
        *,
        judge: Grader | None,
        humans: PPIInputs,
        people: Mapping[str, str],
    ) -> None:
        self.setup, self.config, self.gold, self.people = setup, setup.config, setup.gold, people
        self.judged, self.scores, self.labels, self.judge, self.humans = judged, scores, scores.labels, judge, humans
        self.merged = merged = Merged.of(scores.runs)  # a repeated run's askings joined into one run
        self.per_run = merged.per_run
        self.vital = vital_counts(judged.assessed)
        # the first run's headline metrics: compared, stratified and split over a repeated run's askings
        self.headline = _headline(_metric_names(merged.runs[0].rows), self.config) if merged.runs else []
        # the primary when none is named and a run has no passages: an answer measure (settings.answer_primary)
        runs = [one.run for one in merged.runs]
        self.answer_lead = None if self.config.primary else answer_primary(runs, self.per_run)

    def result(self) -> EvalResult:
        """Every part, then the result built once."""
        config, gold = self.config, self.gold
        runs = [self._run_result(one) for one in self.merged.runs]
        fair = self._comparable(runs)
        corrected, notes = self._corrected()
        compared = self._compared(fair)
        noise = self._noise(compared)  # asks the judge again: before what was spent is summed
        shifts = self._shifts(compared.primary)
        return EvalResult(
            assay_version=__version__,
            golden=str(self.setup.folder) if self.setup.folder is not None else "(in memory)",
            judge=self.judge.model if self.judge is not None else None,
            k_values=list(config.k_values),
            settings={
                **asdict(replace(config, criteria=(), pairwise=None)),
                "pairwise": _pairwise_record(config),
                "context_k": config.ctx_k,
                "relevance": f"grade >= {config.threshold}",
                "criteria": _criteria_record(config),
            },
            runs=runs,
            comparisons=compared.comparisons,
            primary_metric=compared.primary or self.answer_lead,
            clustering=compared.clustering,
            diagnosis_comparisons=compared.diagnosis,
            corrected=corrected,
            agreement=compared.agreement,
            warnings=[*self._first_warnings(fair), *notes, *self._last_warnings(shifts)],
            label_origin=gold.label_origin(),
            label_sources=gold.label_sources(),
            cut_alike=fair.alike if len(runs) > 1 else None,
            chunk_lengths=length_summary(relevant_chunk_lengths(gold, config.threshold)),
            history_gain=compared.history,
            planning=compared.planning,
            judge_noise=noise,
            pool_shifts=shifts,
            usage=spent_since(self.judge, self.judged.usage_before),
            judges=panel_agreement(gold.qrels, human=self.humans.human, n_resamples=config.n_boot, seed=config.seed),
            diagnosis_examples=self.judged.diagnosed,
            criterion_verdicts=self.judged.criteria.records,
            criterion_agreement=criteria_agreement(
                [c for c in config.loaded_criteria if c.judged],
                self.judged.criteria.records,
                self.people,
                min_audited=config.min_audited,
                confidence=config.confidence,
                n_resamples=config.n_boot,
                seed=config.seed,
            ),
            preferences=self._preferences(),
        )

    def _preferences(self) -> Preferences | None:
        """The runs' pairwise preferences (``--pairwise``), summarised over the same clusters as the comparisons."""
        config = self.config
        if config.pairwise is None or not self.judged.pairwise:
            return None
        pairs = run_pairs([one.run.name for one in self.setup.runs], config.pairs, config.baseline)
        criterion = config.pairwise_criterion
        return preferences_summary(self.judged.pairwise, pairs, self.setup.clusters,
                                   criterion=criterion.name if criterion is not None else BUILTIN,
                                   ref=criterion.ref if criterion is not None else BUILTIN,
                                   confidence=config.confidence, n_resamples=config.n_boot,
                                   seed=config.seed)  # fmt: skip

    def _compared(self, fair: Comparable) -> _Compared:
        """The runs compared on the comparable metrics (the primary leading), and what follows from it."""
        config, gold, per_run, stat = self.config, self.gold, self.per_run, self.config.stat()
        comparisons = compare_runs(per_run, fair.compared, replace(stat, primary=fair.primary))
        primary = next((c.metric for c in comparisons if c.primary), None)
        lead = primary or primary_metric(with_primary(per_run, fair.compared, fair.primary), fair.primary)
        clustering = clustering_summary(config.cluster_by, per_run, comparisons, lead)
        diagnosis = directed(compare_runs(per_run, self._diagnosed(fair), replace(stat, primary=None)))
        agreement = agreement_of(gold, self.humans, fields=("type", "difficulty", *config.strata), settings=stat)
        history = history_gains(gold, [one.run for one in self.merged.runs], per_run, lead, stat)
        planning = power_plans(per_run, comparisons, lead, clustering, detect=config.detect, settings=stat)
        return _Compared(comparisons, primary, clustering, diagnosis, agreement, history, planning)

    def _shifts(self, primary: str | None) -> list[PoolShift]:
        """What other runs' labels did to each run's scores (:mod:`~.judging.pool_growth`), each run as asked (a
        repeated run's askings apart)."""
        config, chosen = self.config, self.setup.chosen
        return pool_shifts(
            self.gold, self.setup.resolver, self.judged.before, self.scores.runs, metric=primary or config.primary,
            measures=[*chosen.ranking, *chosen.budgets], threshold=config.threshold, depth=config.depth,
            strict=self.judge is not None,
        )  # fmt: skip

    def _last_warnings(self, shifts: Sequence[PoolShift]) -> list[str]:
        """Budgets above the corpus's text, how this evaluation grew the pool of labels, the scores other runs' labels
        moved, dropped quotes."""
        before, gold = self.judged.before, self.gold
        moved = [shift.sentence() for shift in shifts if any(shift.deltas.values())]
        every_free = all(one.run.passage_free for one in self.merged.runs)  # no budget filled by any run
        clamped = [] if every_free else clamped_notes(self.setup.chosen.budgets, self.scores.pool)
        return [*clamped, *before.growth_note(gold, self.setup.projected, self.judged.carried), *moved,
                *quotes_note(before.new_labels(gold))]  # fmt: skip

    def _run_result(self, one: ScoredRun) -> RunResult:
        """A run's summaries; curves, judged@k, the precision-recall curve and the grade histogram on its
        projection; how its passages were labelled; a repeated run's spread over its askings."""
        config, run, rows = self.config, one.run, one.rows
        names = _metric_names(rows)
        stat = config.stat()
        summaries = summarize_all(list(rows.values()), names, stat)
        curves = er.rank_curves(one.projected, self.labels, config.threshold, config.depth)
        for fam in AT_K:  # at the k values; ranking curves are dense
            curves[fam] = {str(k): summaries[f"{fam}@{k}"].mean for k in config.k_values if f"{fam}@{k}" in summaries}
        shown = {family: curve for family, curve in curves.items() if curve and not run.passage_free}
        shown.update(self.merged.mean_curves(one.name, self.labels, threshold=config.threshold, depth=config.depth))
        fields = ["type", "difficulty", *TURN_STRATA, *config.strata]
        askings = self.merged.askings(one.name)  # a repeated run: per asking, then merged
        return RunResult(
            name=run.name,
            path=str(run.path),
            counts=run.counts,
            metrics=summaries,
            curves=shown,
            strata=self._informative(strata_summaries(list(rows.values()), _headline(names, config), fields, stat)),
            judged_at_k=er.judged_at_k(one.projected, self.labels, config.k_values),
            pr_curve=er.pr_curve(one.projected, self.labels, config.threshold),
            grade_histogram=er.grade_histogram(one.projected, self.labels, config.depth),
            system=system_summary(run),
            budget=fill_summary([row.budget for row in rows.values() if row.budget]),
            passage_lengths=run.length_summary(),
            passage_labels=dict(Counter(row.labelled_by for row in one.passages)),
            repeats=self.merged.repeats(one.name, [name for name in self.headline if name in summaries]),
            conversations=repeated_summary(self.gold, [(r, self.vital.get(r.name, {}), rs) for r, rs in askings]),
            trajectories=trajectory_summary(run, list(rows.values())),
        )

    def _informative(self, strata: dict[str, dict[str, dict[str, MetricSummary]]]) -> dict[str, Any]:
        """The strata worth a table: a field with one value only (every imported query of type ``unknown``)
        repeats the overall figures, so it is left out unless ``--by`` asked for it."""
        return {name: values for name, values in strata.items() if len(values) > 1 or name in self.config.strata}

    def _comparable(self, runs: Sequence[RunResult]) -> Comparable:
        """Which metrics can be compared across the runs' chunkings (:mod:`~.scoring.comparable`)."""
        lengths = {r.name: r.passage_lengths["median"] for r in runs if r.passage_lengths}
        names = [name for name in self.headline if name not in DIAGNOSIS_NAMES and name not in TRAJECTORY_FAMILY]
        return comparable([one.run for one in self.merged.runs], names, depth=self.config.depth,
                          budgets=self.config.budgets, primary=self.config.primary or self.answer_lead,
                          lengths=lengths)  # fmt: skip

    def _diagnosed(self, fair: Comparable) -> list[str]:
        """The diagnosis metrics, compared as their own family (none when the runs cut their text differently:
        measured over the context's passages, see :mod:`~.scoring.comparable`), then the measures of a trajectory
        (in characters of relevant text: compared whatever the cut)."""
        diagnosis = [name for name in self.headline if name in DIAGNOSIS_NAMES] if fair.alike else []
        return diagnosis + [name for name in self.headline if name in TRAJECTORY_FAMILY]

    def _first_warnings(self, fair: Comparable) -> list[str]:
        """The offline judge's warning first, then what cannot be compared, the runs' own notes, drafted answers."""
        offline = [OFFLINE_WARNING] if any(one.model == "offline" for one in judges_of(self.judge)) else []
        notes = (note for one in self.merged.runs for note in one.run.notes)
        runs = [one.run for one in self.merged.runs]
        answers = answer_notes(runs, self.per_run, self.answer_lead)
        return [*offline, *fair.notes, *notes, *answers, *_drafted_note(self.gold, self.per_run)]

    def _corrected(self) -> tuple[list[CorrectedMetric], list[str]]:
        """PPI++ corrections of judge labels with human ones, once people audited some of the runs' labels (else one
        line in the report says to audit)."""
        corrected: list[CorrectedMetric] = []
        notes: list[str] = []
        if not any(pair in self.humans.judge for pair in self.humans.human):
            return corrected, notes
        ks = sorted({self.config.ctx_k, self.config.k_head})
        for one in self.merged.runs:
            found, said = corrected_metrics(one.projected, ks, self.humans, self.config.stat())
            corrected += found
            notes += said
        return corrected, notes

    def _noise(self, compared: _Compared) -> JudgeNoise | None:
        """The judge asked again on a sample of its labels (``judge_repeats``; one judge only), else None."""
        config, judge, primary = self.config, self.judge, compared.primary
        if not config.judge_repeats or not isinstance(judge, Judge):
            return None
        return judge_noise(
            judge, self.gold, self.merged.projections(), self.labels, repeats=config.judge_repeats, primary=primary,
            ranking=self.setup.chosen.ranking, comparisons=compared.comparisons, threshold=config.threshold,
            depth=config.depth, k=cutoff(primary, config.k_head), listwise=config.listwise, seed=config.seed,
            limit=config.judge_repeats_max,
        )  # fmt: skip


def _drafted_note(gold: GoldenSet, per_run: Mapping[str, Mapping[str, QueryResult]]) -> list[str]:
    """One sentence when evaluated questions carry references drafted from their graded chunks (``assay build
    --queries``) that no person has confirmed yet: the answer metrics measured against them are provisional."""
    evaluated = {qid for rows in per_run.values() for qid in rows}
    drafted = sorted(q.id for q in gold.questions if q.id in evaluated and q.flags.get("drafted"))
    if not drafted:
        return []
    return [
        f"{len(drafted)} of {len(evaluated)} evaluated questions have reference answers drafted from their graded "
        f"chunks (flags drafted, e.g. {drafted[0]}) that no person has confirmed: the answer metrics measured "
        "against them are provisional until they are checked in assay audit."
    ]
