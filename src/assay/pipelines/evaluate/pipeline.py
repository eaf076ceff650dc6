"""``assay eval`` as a function: score RAG runs against a golden set, judge what it has not seen, compare runs.

Steps (each in its own module):

1. read and check the runs (:mod:`~assay.pipelines.evaluate.runs.read`): unknown ids, duplicates, empty lists are
   counted; project each onto the golden chunks (:mod:`~assay.pipelines.evaluate.runs.units`), the one unit of
   account of the label-based measures;
2. with a judge, grade the golden chunks in each projection's top k_max that have no label, and the passages the
   pool's rule cannot grade (:mod:`~assay.pipelines.evaluate.runs.carry`) (listwise, cached per pair) and add
   the new labels to the golden set, and make the LLM-metric calls (:mod:`~assay.pipelines.evaluate.judging.drive`
   drives them in one event loop; :mod:`~assay.pipelines.evaluate.judging.calls` holds the steps);
3. metrics per query, against the same labels for every run: on the projection
   (:mod:`~assay.pipelines.evaluate.scoring.ranking`) trec_eval ranking measures, RAGAS context precision, coverage
   recall, judged@k, grade histogram, precision-recall curve; on the passages' text the budget measures
   (:mod:`~assay.pipelines.evaluate.scoring.budget`) and span measures;
4. statistics (:mod:`~assay.pipelines.evaluate.statistics.stats`): bootstrap intervals, strata, PPI++; comparisons
   of runs, one family per metric (:mod:`~assay.pipelines.evaluate.statistics.compare`), over the metrics
   comparable across the runs' chunkings (:mod:`~assay.pipelines.evaluate.scoring.comparable`).

With a panel (``judge`` a :class:`~assay.judge.panel.Panel`), every relevance pair is judged by each of its judges
and combined by its rule, the other calls go to its first judge, and ``results.json`` gets the agreement between the
judges (``judges``) over every golden label that keeps votes.

Without a judge (``judge=None``) the evaluation keeps trec_eval's convention: unjudged = not relevant, no LLM
metric, and judged@k in the result shows how complete the labels are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from assay._version import __version__
from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge import Estimate, Judge
from assay.judge.panel import Grader, judges_of, merged_usage
from assay.pipelines.agreement import panel_agreement
from assay.pipelines.evaluate.evaluated import Evaluated
from assay.pipelines.evaluate.explore import question_views
from assay.pipelines.evaluate.judging.calls import Assessed, vital_counts
from assay.pipelines.evaluate.judging.diagnosis import directed
from assay.pipelines.evaluate.judging.drive import Progress, estimate_judging, judge_runs
from assay.pipelines.evaluate.judging.noise import check_repeatable, cutoff, judge_noise
from assay.pipelines.evaluate.judging.passages import label_passages, passage_rows
from assay.pipelines.evaluate.judging.pool_growth import Before, pool_shifts, quotes_note
from assay.pipelines.evaluate.runs.carry import SpanIndex, carry_labels
from assay.pipelines.evaluate.runs.loaded import LoadedRun, length_summary
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.runs.read import FAILED, Runs, load_runs, specs_of
from assay.pipelines.evaluate.runs.units import Units, project_run
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.budget import SpanPool, budget_values, clamped_notes
from assay.pipelines.evaluate.scoring.comparable import comparable
from assay.pipelines.evaluate.scoring.conversations import TurnParts, repeated_summary
from assay.pipelines.evaluate.scoring.fill import budget_fill, fill_summary
from assay.pipelines.evaluate.scoring.names import AT_K, DIAGNOSIS_NAMES, NEEDS_JUDGE, TURN_STRATA, family
from assay.pipelines.evaluate.scoring.spans import span_values
from assay.pipelines.evaluate.scoring.system import system_summary
from assay.pipelines.evaluate.settings import EvalSettings, Selected, split_metrics
from assay.pipelines.evaluate.statistics.clustering import clustering_summary, question_clusters
from assay.pipelines.evaluate.statistics.compare import compare_runs, primary_metric
from assay.pipelines.evaluate.statistics.gates import relevant_chunk_lengths
from assay.pipelines.evaluate.statistics.history import history_gains
from assay.pipelines.evaluate.statistics.planning import power_plans
from assay.pipelines.evaluate.statistics.repeats import Merged
from assay.pipelines.evaluate.statistics.stats import (
    PPIInputs,
    agreement_of,
    corrected_metrics,
    ppi_inputs,
    question_strata,
    strata_summaries,
)
from assay.pipelines.evaluate.statistics.stats import summaries as summarize_all
from assay.results import (
    OFFLINE_WARNING,
    DiagnosisExample,
    EvalResult,
    MetricSummary,
    QueryResult,
    RunResult,
    headline_metrics,
)
from assay.types import StageUsage

__all__ = ["Evaluated", "Progress", "Runs", "estimate_evaluation", "evaluate", "evaluate_detailed"]


def _needs_judge(settings: EvalSettings, judge: Grader | None) -> None:
    """An LLM-judged metric named without a judge cannot be computed: say so rather than leave it out."""
    named = [m for m in (*settings.metrics, *settings.also) if family(m) in NEEDS_JUDGE]
    if judge is None and named:
        raise ConfigError(f"{', '.join(named)}: LLM-judged, needs a judge (--judge MODEL, or judge= in the API)")


def _load(golden: GoldenSet | Path | str) -> tuple[GoldenSet, Path | None]:
    if isinstance(golden, GoldenSet):
        return golden, None
    return GoldenSet.load(golden), Path(golden)


def evaluate(
    golden: GoldenSet | Path | str,
    runs: Runs,
    *,
    judge: Grader | None = None,
    settings: EvalSettings | None = None,
    progress: Progress | None = None,
    human_labels: Mapping[tuple[str, str], int] | None = None,
    annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
) -> tuple[EvalResult, list[QueryResult]]:
    """Evaluate ``runs`` against ``golden`` (a folder or a loaded set). A run is a file (JSONL, TREC or RAGAS
    evaluation data) or a list of dicts in the JSONL run format; give runs as paths, ``(name, run)`` pairs or a
    mapping ``{name: run}``.

    ``judge`` None: no judging (trec_eval convention); a :class:`~assay.judge.panel.Panel`: relevance by each of its
    judges, combined. ``human_labels`` ``{(query_id, chunk_id): grade}`` (e.g. the
    audit store's) enable the PPI corrections and the judge-vs-human agreement; human labels in the qrels count too.
    ``annotations`` ``{(query_id, chunk_id): {annotator: grade}}`` add agreement between people. See
    :func:`evaluate_detailed`.
    """
    done = evaluate_detailed(
        golden, runs, judge=judge, settings=settings, progress=progress, human_labels=human_labels,
        annotations=annotations,
    )  # fmt: skip
    return done.result, done.per_query


def evaluate_detailed(
    golden: GoldenSet | Path | str,
    runs: Runs,
    *,
    judge: Grader | None = None,
    settings: EvalSettings | None = None,
    progress: Progress | None = None,
    human_labels: Mapping[tuple[str, str], int] | None = None,
    annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
) -> Evaluated:
    """:func:`evaluate`, also returning the claim x chunk support rows (for ``support_matrix.jsonl``)."""
    config = (settings or EvalSettings()).checked()
    _needs_judge(config, judge)
    check_repeatable(judge, config.judge_repeats)
    gold, folder = _load(golden)
    grouping = question_clusters(gold, config.cluster_by, folder)  # a field that questions lack fails before any work
    resolver = Resolver(gold, folder)
    loaded = load_runs(specs_of(runs), gold, resolver)
    index = SpanIndex(gold, resolver)
    units = Units(gold, resolver)
    projected = [project_run(run, units) for run in loaded]
    chosen = split_metrics(config, gold, loaded, index)
    judges = judges_of(judge)
    before = [{stage: usage.model_copy() for stage, usage in one.usage.items()} for one in judges]
    labels_before = Before(gold)
    carried = label_passages(gold, index, folder=folder, loaded=loaded, judge=judge, progress=progress,
                             **_passage_settings(config))  # fmt: skip
    assessed: dict[str, dict[str, Assessed]] = {}
    diagnosed: list[DiagnosisExample] = []
    if judge is not None:
        assessed, diagnosed = judge_runs(gold, folder, loaded, judge, families=chosen.families, progress=progress,
                                         add_labels=config.add_labels, carried=carried, units=projected,
                                         **_judging_settings(config))  # fmt: skip
    index.relabelled()
    labels = er.Labels.of(gold, strict_unscored=judge is not None)  # the same pool for every run
    pool = SpanPool(index)
    turns = TurnParts.of(gold, loaded, labels, config.threshold)
    per_run = {
        run.name: _rows(
            gold,
            run,
            unit_run,
            labels=labels,
            chosen=chosen,
            assessed=assessed,
            config=config,
            index=index,
            pool=pool,
            clusters=grouping,
            turns=turns,
        )
        for run, unit_run in zip(loaded, projected, strict=True)
    }
    humans = ppi_inputs(gold, human_labels, threshold=config.threshold, min_audited=config.min_audited,
                        annotations=annotations)  # fmt: skip
    passages = passage_rows(loaded, labels, carried, config.depth)
    merged = Merged.of(loaded, projected, per_run, passages)
    result = _result(gold, folder, runs=merged.runs, projected=merged.projected, per_run=merged.per_run,
                     labels=labels, judge=judge, config=config, humans=humans, passages=passages,
                     vital=vital_counts(assessed), repeated=merged.repeated())  # fmt: skip
    headline = _headline(_metric_names(next(iter(merged.per_run.values()), {})), config)
    merged.describe(result, labels, headline, threshold=config.threshold, depth=config.depth)
    if config.judge_repeats and isinstance(judge, Judge):
        members = {run.name: [unit for _, unit in merged.members.get(run.name, [])] or [unit]
                   for run, unit in zip(merged.runs, merged.projected, strict=True)}  # fmt: skip
        result.judge_noise = judge_noise(
            judge, gold, members, labels, repeats=config.judge_repeats, primary=result.primary_metric,
            ranking=chosen.ranking, comparisons=result.comparisons, threshold=config.threshold, depth=config.depth,
            k=cutoff(result.primary_metric, config.k_head), listwise=config.listwise, seed=config.seed,
            limit=config.judge_repeats_max,
        )  # fmt: skip
    result.warnings += clamped_notes(chosen.budgets, pool)
    result.warnings += labels_before.growth_note(gold, projected, carried)
    result.pool_shifts = pool_shifts(
        gold, resolver, labels_before, list(zip(loaded, projected, strict=True)), per_run,
        metric=result.primary_metric or config.primary, measures=[*chosen.ranking, *chosen.budgets],
        threshold=config.threshold, depth=config.depth, strict=judge is not None,
    )  # fmt: skip
    result.warnings += [shift.sentence() for shift in result.pool_shifts if any(shift.deltas.values())]
    result.warnings += quotes_note(labels_before.new_labels(gold))
    result.usage = _spent(judges, before)
    result.judges = panel_agreement(gold.qrels, human=humans.human, n_resamples=config.n_boot, seed=config.seed)
    result.diagnosis_examples = diagnosed
    resolver.save_cache()
    rows = [row for rows in merged.per_run.values() for row in rows.values()]  # a repeated run: per question
    support = [r for per in assessed.values() for a in per.values() for r in a.rows]
    return Evaluated(result, rows, support, passages, question_views(gold, loaded, passages, support))


def _spent(judges: Sequence[Judge], before: Sequence[Mapping[str, StageUsage]]) -> dict[str, StageUsage]:
    """What this evaluation spent per stage: each judge's usage now minus its usage before (a judge may be reused),
    summed over the judges of a panel (cost None where a judge has no price)."""
    spent = merged_usage(_since(judge.usage, was) for judge, was in zip(judges, before, strict=True))
    return {stage: usage for stage, usage in spent.items() if usage.calls or usage.cached or usage.unscored}


def _since(now: Mapping[str, StageUsage], before: Mapping[str, StageUsage]) -> dict[str, StageUsage]:
    out = {}
    for stage, usage in now.items():
        old = before.get(stage, StageUsage())
        out[stage] = StageUsage(
            calls=usage.calls - old.calls,
            cached=usage.cached - old.cached,
            unscored=usage.unscored - old.unscored,
            prompt_tokens=usage.prompt_tokens - old.prompt_tokens,
            completion_tokens=usage.completion_tokens - old.completion_tokens,
            cost_usd=None if usage.cost_usd is None else usage.cost_usd - (old.cost_usd or 0.0),
        )
    return out


def estimate_evaluation(
    golden: GoldenSet | Path | str,
    runs: Runs,
    judge: Grader,
    settings: EvalSettings | None = None,
) -> dict[str, Estimate]:
    """Calls, cached items, prompt tokens and a cost bound per stage, without calling the model (``--dry-run``)."""
    config = (settings or EvalSettings()).checked()
    gold, folder = _load(golden)
    question_clusters(gold, config.cluster_by, folder)  # a --cluster-by field that questions lack fails here too
    resolver = Resolver(gold, folder)
    loaded = load_runs(specs_of(runs), gold, resolver)
    index = SpanIndex(gold, resolver)
    units = Units(gold, resolver)
    projected = [project_run(run, units) for run in loaded]
    families = split_metrics(config, gold, loaded, index).families
    carried = carry_labels(gold, loaded, index, config.depth)
    return estimate_judging(gold, loaded, judge, families=families, carried=carried, units=projected,
                            **_judging_settings(config))  # fmt: skip


def _passage_settings(config: EvalSettings) -> dict[str, Any]:
    return {"depth": config.depth, "listwise": config.listwise, "seed": config.seed, "add_labels": config.add_labels}


def _judging_settings(config: EvalSettings) -> dict[str, Any]:
    return {"depth": config.depth, "ctx_k": config.ctx_k, "listwise": config.listwise, "seed": config.seed,
            "diagnosis": config.diagnosis}  # fmt: skip


# -- per-query rows ----------------------------------------------------------------------------------------------


def _rows(
    gold: GoldenSet,
    run: LoadedRun,
    unit_run: LoadedRun,
    *,
    labels: er.Labels,
    chosen: Selected,
    assessed: Mapping[str, Mapping[str, Assessed]],
    config: EvalSettings,
    index: SpanIndex,
    pool: SpanPool,
    clusters: Mapping[str, str | None],
    turns: TurnParts | None = None,
) -> dict[str, QueryResult]:
    """Per-query values: label-based measures on the run's projection onto the golden chunks (``unit_run``), span
    and budget measures on its passages (with how full each budget is, :mod:`~.scoring.fill`), the LLM metrics as
    assessed."""
    parts: list[Mapping[str, er.QueryValues]] = []
    if chosen.ranking:
        parts.append(er.rank_run(unit_run, labels, chosen.ranking, threshold=config.threshold, depth=config.depth))
    if labels.strict_unscored and "ragas_context_precision" in chosen.families:  # evaluated with a judge
        parts.append(er.context_precision(unit_run, labels, config.k_values, config.cp_threshold))
    if "coverage_recall" in chosen.families:
        parts.append(er.coverage(unit_run, gold, config.k_values))
    if chosen.spans:
        parts.append(span_values(run, index, chosen.spans))
    if chosen.budgets:
        parts.append(budget_values(run, pool, chosen.budgets, config.threshold))
    parts.append(assessed.get(run.name, {}))
    parts.append(turns.rewrites.get(run.name, {}) if turns is not None else {})
    fills = budget_fill(run, pool, chosen.budgets)
    rows: dict[str, QueryResult] = {}
    for qid in run.lines:
        strata = question_strata(gold.question(qid), config.strata)
        strata.update(turns.strata.get(qid, {}) if turns is not None else {})
        row = rows[qid] = QueryResult(run=run.name, query_id=qid, strata=strata, cluster=clusters.get(qid),
                                      budget=fills.get(qid, {}))  # fmt: skip
        for part in parts:
            values = part.get(qid)
            if values is not None:
                row.metrics.update(values.metrics)
                row.unscored.update(values.unscored)
    _fail(run, rows)
    return rows


def _fail(run: LoadedRun, rows: Mapping[str, QueryResult]) -> None:
    """Every metric of a question the system failed on is unscored (``system_failed``), never scored as empty."""
    names = list(dict.fromkeys(name for row in rows.values() for name in row.metrics))
    for qid, line in run.lines.items():
        if line.error is not None:
            row = rows[qid]
            row.metrics = dict.fromkeys(names)
            row.unscored = dict.fromkeys(names, FAILED)


# -- the result --------------------------------------------------------------------------------------------------


def _headline(names: Sequence[str], config: EvalSettings) -> list[str]:
    """Metrics compared and stratified (:func:`~assay.results.headline_metrics`), the named ones among them."""
    return headline_metrics(names, config.k_values, (*config.metrics, *config.also))


def _metric_names(rows: Mapping[str, QueryResult]) -> list[str]:
    return list(dict.fromkeys(name for row in rows.values() for name in row.metrics))


def _run_result(
    run: LoadedRun, unit_run: LoadedRun, rows: Mapping[str, QueryResult], labels: er.Labels, config: EvalSettings
) -> RunResult:
    """A run's summaries; curves, judged@k, the precision-recall curve and the grade histogram on its projection."""
    names = _metric_names(rows)
    stat = config.stat()
    summaries = summarize_all(list(rows.values()), names, stat)
    curves = er.rank_curves(unit_run, labels, config.threshold, config.depth)
    for fam in AT_K:  # at the k values; ranking curves are dense
        curves[fam] = {str(k): summaries[f"{fam}@{k}"].mean for k in config.k_values if f"{fam}@{k}" in summaries}
    fields = ["type", "difficulty", *TURN_STRATA, *config.strata]
    return RunResult(
        name=run.name,
        path=str(run.path),
        counts=run.counts,
        metrics=summaries,
        curves={family: curve for family, curve in curves.items() if curve},
        strata=_informative(strata_summaries(list(rows.values()), _headline(names, config), fields, stat), config),
        judged_at_k=er.judged_at_k(unit_run, labels, config.k_values),
        pr_curve=er.pr_curve(unit_run, labels, config.threshold),
        grade_histogram=er.grade_histogram(unit_run, labels, config.depth),
        system=system_summary(run),
        budget=fill_summary([row.budget for row in rows.values() if row.budget]),
    )


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


def _informative(strata: dict[str, dict[str, dict[str, MetricSummary]]], config: EvalSettings) -> dict[str, Any]:
    """The strata worth a table: a field with one value only (every imported query of type ``unknown``) repeats
    the overall figures, so it is left out unless ``--by`` asked for it."""
    return {name: values for name, values in strata.items() if len(values) > 1 or name in config.strata}


def _result(
    gold: GoldenSet,
    folder: Path | None,
    *,
    runs: list[LoadedRun],
    projected: list[LoadedRun],
    per_run: Mapping[str, Mapping[str, QueryResult]],
    labels: er.Labels,
    judge: Grader | None,
    config: EvalSettings,
    humans: PPIInputs,
    passages: Sequence[Mapping[str, Any]],
    vital: Mapping[str, Mapping[str, tuple[int, int] | None]],
    repeated: Mapping[str, Sequence[tuple[LoadedRun, Mapping[str, QueryResult]]]],
) -> EvalResult:
    results = [_run_result(run, unit_run, per_run[run.name], labels, config)
               for run, unit_run in zip(runs, projected, strict=True)]  # fmt: skip
    for run, result in zip(runs, results, strict=True):
        result.passage_lengths = run.length_summary()
        result.passage_labels = dict(Counter(row["labelled_by"] for row in passages if row["run"] == run.name))
        askings = repeated.get(run.name) or [(run, per_run[run.name])]  # a repeated run: per repeat, then merged
        result.conversations = repeated_summary(gold, [(one, vital.get(one.name, {}), rows) for one, rows in askings])
    names = _headline(_metric_names(per_run[runs[0].name]), config) if runs else []
    diagnosed = [name for name in names if name in DIAGNOSIS_NAMES]  # compared as their own family
    lengths = {r.name: r.passage_lengths["median"] for r in results if r.passage_lengths}
    fair = comparable(runs, [n for n in names if n not in DIAGNOSIS_NAMES], depth=config.depth,
                      budgets=config.budgets, primary=config.primary, lengths=lengths)  # fmt: skip
    if not fair.alike:
        diagnosed = []  # measured over the context's passages: see scoring.comparable
    warnings = [*fair.notes, *(note for run in runs for note in run.notes), *_drafted_note(gold, per_run)]
    if any(one.model == "offline" for one in judges_of(judge)):
        warnings.insert(0, OFFLINE_WARNING)
    corrected = []
    audited = any(pair in humans.judge for pair in humans.human)  # else one line in the report says to audit
    for run in projected if audited else []:  # PPI corrects judge labels with human ones
        found, notes = corrected_metrics(run, sorted({config.ctx_k, config.k_head}), humans, config.stat())
        corrected += found
        warnings += notes
    settings = {**asdict(config), "context_k": config.ctx_k, "relevance": f"grade >= {config.threshold}"}
    evaluation = EvalResult(
        assay_version=__version__,
        golden=str(folder) if folder is not None else "(in memory)",
        judge=judge.model if judge is not None else None,
        k_values=list(config.k_values),
        settings=settings,
        runs=results,
        comparisons=(comparisons := compare_runs(per_run, fair.compared, replace(config.stat(), primary=fair.primary))),
        primary_metric=(primary := next((c.metric for c in comparisons if c.primary), None)),
        clustering=clustering_summary(
            config.cluster_by, per_run, comparisons, primary or primary_metric(fair.compared, fair.primary)
        ),
        diagnosis_comparisons=directed(compare_runs(per_run, diagnosed, replace(config.stat(), primary=None))),
        corrected=corrected,
        agreement=agreement_of(gold, humans, fields=("type", "difficulty", *config.strata), settings=config.stat()),
        warnings=warnings,
        label_origin=gold.label_origin(),
        label_sources=gold.label_sources(),
        cut_alike=fair.alike if len(runs) > 1 else None,
        chunk_lengths=length_summary(relevant_chunk_lengths(gold, config.threshold)),
    )
    lead = evaluation.primary_metric or primary_metric(fair.compared, fair.primary)
    evaluation.history_gain = history_gains(gold, runs, per_run, lead, config.stat())
    evaluation.planning = power_plans(per_run, evaluation.comparisons, lead, evaluation.clustering,
                                      detect=config.detect, settings=config.stat())  # fmt: skip
    return evaluation
