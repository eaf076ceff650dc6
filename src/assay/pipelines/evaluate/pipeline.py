"""``assay eval`` as a function: score RAG runs against a golden set, judge what it has not seen, compare runs.

Steps (each in its own module):

1. read and check the runs (:mod:`~assay.pipelines.evaluate.runs.read`): unknown ids, duplicates, empty lists are
   counted;
2. with a judge, grade the retrieved chunks of the top k_max that have no label (listwise, cached per pair) and add
   the new labels to the golden set, and make the LLM-metric calls (:mod:`~assay.pipelines.evaluate.judging.drive`
   drives them in one event loop; :mod:`~assay.pipelines.evaluate.judging.calls` holds the steps);
3. label-based metrics per query (:mod:`~assay.pipelines.evaluate.scoring.ranking`): trec_eval ranking measures,
   RAGAS context precision, coverage recall, judged@k, grade histogram, precision-recall curve;
4. statistics (:mod:`~assay.pipelines.evaluate.statistics.stats`): bootstrap intervals, strata, PPI++; comparisons
   of runs, one family per metric (:mod:`~assay.pipelines.evaluate.statistics.compare`).

With a panel (``judge`` a :class:`~assay.judge.panel.Panel`), every relevance pair is judged by each of its judges
and combined by its rule, the other calls go to its first judge, and ``results.json`` gets the agreement between the
judges (``judges``) over every golden label that keeps votes.

Without a judge (``judge=None``) the evaluation keeps trec_eval's convention: unjudged = not relevant, no LLM
metric, and judged@k in the result shows how complete the labels are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.formats.golden import GoldenSet
from assay.judge import Estimate, Judge
from assay.judge.panel import Grader, judges_of, merged_usage
from assay.pipelines.agreement import panel_agreement
from assay.pipelines.evaluate.evaluated import Evaluated
from assay.pipelines.evaluate.judging.calls import Assessed
from assay.pipelines.evaluate.judging.diagnosis import directed
from assay.pipelines.evaluate.judging.drive import Progress, estimate_judging, judge_runs
from assay.pipelines.evaluate.judging.pair_checks import DEFAULT_MODE, DIAGNOSIS_MODES
from assay.pipelines.evaluate.judging.passages import (
    label_passages,
    labels_with_passages,
    length_note,
    passage_rows,
)
from assay.pipelines.evaluate.runs.carry import SpanIndex, carry_labels
from assay.pipelines.evaluate.runs.locate import Resolver
from assay.pipelines.evaluate.runs.read import FAILED, LoadedRun, Runs, load_runs, specs_of
from assay.pipelines.evaluate.scoring import ranking as er
from assay.pipelines.evaluate.scoring.names import (
    ANSWER_METRICS,
    AT_K,
    DIAGNOSIS_NAMES,
    LLM_FAMILIES,
    NEEDS_JUDGE,
    check_names,
    default_measures,
    family,
    joined_k,
    kind_of,
)
from assay.pipelines.evaluate.scoring.spans import default_span_names, span_values
from assay.pipelines.evaluate.scoring.system import system_summary
from assay.pipelines.evaluate.statistics.compare import CORRECTIONS, compare_runs
from assay.pipelines.evaluate.statistics.stats import (
    PPIInputs,
    StatSettings,
    agreement_of,
    corrected_metrics,
    ppi_inputs,
    question_strata,
    strata_summaries,
)
from assay.pipelines.evaluate.statistics.stats import summaries as summarize_all
from assay.results import (
    DiagnosisExample,
    EvalResult,
    MetricSummary,
    QueryResult,
    RunResult,
    headline_k,
    headline_metrics,
)
from assay.types import StageUsage

__all__ = ["EvalSettings", "Evaluated", "Progress", "Runs", "estimate_evaluation", "evaluate", "evaluate_detailed"]


@dataclass(frozen=True)
class EvalSettings:
    """What to evaluate and how.

    ``threshold``: relevant = grade >= it for ranking measures (trec_eval: 1). ``cp_threshold``: relevant for
    ``ragas_context_precision@k`` (2: the chunk at least partly answers). ``context_k``: the chunks treated as the
    answer's context for context recall, faithfulness and attribution (None: 5 when 5 is a k value, else the largest).
    ``listwise``: chunks per relevance call (None: one call per chunk). ``add_labels``: write labels judged now back
    into the golden folder. ``strata``: question fields to stratify by, besides type and difficulty. ``metrics``:
    only these (ranking names, or LLM metric families such as ``faithfulness``); empty = all. A named metric is
    computed whatever ``k_values`` say: :meth:`checked` joins its cut-off to them (``k_values=(10,)``,
    ``metrics=("P@5",)`` evaluates at k = 5 and 10), see :mod:`~assay.pipelines.evaluate.scoring.names`. ``also``:
    metrics computed besides ``metrics`` (besides the defaults when it is empty), such as the ``--fail-under`` ones.
    Comparisons (:mod:`~assay.pipelines.evaluate.statistics.compare`): ``correction`` ``holm`` | ``tukey`` | ``none``
    within each metric's family of run pairs, ``baseline`` (each run against it; None: all pairs), ``primary`` (the
    metric leading the verdict; None: ndcg@10, else the first compared), ``alpha`` the family-wise significance level.
    ``diagnosis``: how the diagnosis gets its claim x chunk entailment
    (:mod:`~assay.pipelines.evaluate.judging.pair_checks`): ``answers`` (default: each answer claim checked against each
    chunk, the reference claims read off the context call), ``exact`` (both sides checked per pair, as RAGChecker does)
    or ``approx`` (both read off the calls).
    """

    k_values: tuple[int, ...] = (1, 3, 5, 10)
    metrics: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    seed: int = 0
    n_boot: int = 2000
    confidence: float = 0.95
    threshold: int = 1
    cp_threshold: int = 2
    context_k: int | None = None
    listwise: int | None = 10
    add_labels: bool = True
    strata: tuple[str, ...] = ()
    min_audited: int = 10
    correction: str = "holm"
    baseline: str | None = None
    primary: str | None = None
    alpha: float = 0.05
    diagnosis: str = DEFAULT_MODE

    def checked(self) -> EvalSettings:
        """Raise :class:`ConfigError` for values that cannot work (an unknown metric name among them, with the
        close names); return the settings with the cut-offs of the named metrics joined to ``k_values``."""
        if not self.k_values or min(self.k_values) < 1:
            raise ConfigError(f"k values must be whole numbers >= 1, e.g. -k 1,3,5,10; got {list(self.k_values)}")
        if self.listwise is not None and self.listwise < 1:
            raise ConfigError(f"--listwise must be >= 1 (chunks per call), got {self.listwise}")
        if self.n_boot < 100:
            raise ConfigError(f"n_boot must be at least 100 resamples, got {self.n_boot}")
        if self.correction not in CORRECTIONS:
            raise ConfigError(f"--correction {self.correction}: use one of {', '.join(CORRECTIONS)}")
        if not 0.0 < self.alpha < 1.0:
            raise ConfigError(f"alpha must be between 0 and 1 (e.g. 0.05), got {self.alpha}")
        if self.diagnosis not in DIAGNOSIS_MODES:
            raise ConfigError(f"--diagnosis {self.diagnosis}: use one of {', '.join(DIAGNOSIS_MODES)}")
        k_values = joined_k(self.k_values, check_names((*self.metrics, *self.also)))
        return self if k_values == tuple(self.k_values) else replace(self, k_values=k_values)

    @property
    def depth(self) -> int:
        return max(self.k_values)

    @property
    def k_head(self) -> int:
        """The headline cut-off (:func:`~assay.results.headline_k`: 10 when evaluated, else the largest k)."""
        return headline_k(self.k_values) or self.depth

    @property
    def ctx_k(self) -> int:
        if self.context_k is not None:
            return self.context_k
        return 5 if 5 in self.k_values else max(self.k_values)

    def stat(self) -> StatSettings:
        return StatSettings(n_boot=self.n_boot, seed=self.seed, confidence=self.confidence, alpha=self.alpha,
                            correction=self.correction, baseline=self.baseline, primary=self.primary)  # fmt: skip


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
    gold, folder = _load(golden)
    resolver = Resolver(gold, folder)
    loaded = load_runs(specs_of(runs), gold, resolver)
    index = SpanIndex(gold, resolver)
    ranking, families, spans = split_metrics(config, gold, loaded, index)
    judges = judges_of(judge)
    before = [{stage: usage.model_copy() for stage, usage in one.usage.items()} for one in judges]
    carried = label_passages(gold, index, folder=folder, loaded=loaded, judge=judge, progress=progress,
                             **_passage_settings(config))  # fmt: skip
    assessed: dict[str, dict[str, Assessed]] = {}
    diagnosed: list[DiagnosisExample] = []
    if judge is not None:
        assessed, diagnosed = judge_runs(gold, folder, loaded, judge, families=families, progress=progress,
                              add_labels=config.add_labels, carried=carried, **_judging_settings(config))  # fmt: skip
    base = er.Labels.of(gold, strict_unscored=judge is not None)
    labels = {run.name: labels_with_passages(base, run, carried) for run in loaded}
    per_run = {
        run.name: _rows(
            gold,
            run,
            labels=labels[run.name],
            ranking=ranking,
            families=families,
            assessed=assessed,
            config=config,
            spans=(spans, index),
        )
        for run in loaded
    }
    humans = ppi_inputs(gold, human_labels, threshold=config.threshold, min_audited=config.min_audited,
                        annotations=annotations)  # fmt: skip
    passages = passage_rows(loaded, labels, carried, config.depth)
    result = _result(gold, folder, runs=loaded, per_run=per_run, labels=labels, judge=judge, config=config,
                     humans=humans, passages=passages)  # fmt: skip
    result.usage = _spent(judges, before)
    result.judges = panel_agreement(gold.qrels, human=humans.human, n_resamples=config.n_boot, seed=config.seed)
    result.diagnosis_examples = diagnosed
    resolver.save_cache()
    rows = [row for rows in per_run.values() for row in rows.values()]
    support = [r for per in assessed.values() for a in per.values() for r in a.rows]
    return Evaluated(result, rows, support, passages)


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


def split_metrics(
    settings: EvalSettings, gold: GoldenSet, runs: Sequence[LoadedRun], index: SpanIndex
) -> tuple[list[str], set[str], list[str]]:
    """(ranking measure names, LLM families asked for, span metric names): those of ``metrics``, else the defaults
    and every family that ``gold`` and ``runs`` can give (:func:`applicable`);
    then those of ``also``. The names were checked by :meth:`EvalSettings.checked`."""
    if settings.metrics:
        ranking = list(dict.fromkeys(m for m in settings.metrics if kind_of(m) == "ranking"))
        families = {family(m) for m in settings.metrics if kind_of(m) == "llm"}
        spans = list(dict.fromkeys(m for m in settings.metrics if kind_of(m) == "span"))
    else:
        ranking, families = default_measures(settings.k_values), applicable(set(LLM_FAMILIES), gold, runs)
        spans = default_span_names(settings.k_values, gold, index)
    ranking += [m for m in dict.fromkeys(settings.also) if kind_of(m) == "ranking" and m not in ranking]
    spans += [m for m in dict.fromkeys(settings.also) if kind_of(m) == "span" and m not in spans]
    return ranking, families | {family(m) for m in settings.also if kind_of(m) == "llm"}, spans


def applicable(families: set[str], gold: GoldenSet, runs: Sequence[LoadedRun]) -> set[str]:
    """The judged ``families`` something in ``gold`` and ``runs`` can be computed from. Without named metrics, those
    left out are shown nowhere rather than unscored for every query: answer metrics when no run has an answer,
    ``context_recall`` without reference answers or claims, ``nugget_recall`` without nuggets or answers,
    ``coverage_recall`` without nugget support (a golden set imported from BEIR or TREC has none of these)."""
    answers = any(run.counts.with_answer for run in runs)
    has = {
        "coverage_recall": bool(gold.nuggets),
        "context_recall": any(q.claims or q.reference_answer for q in gold.questions),
        "nugget_recall": answers and any(q.nuggets for q in gold.questions),
        **dict.fromkeys(ANSWER_METRICS, answers),
    }
    return {f for f in families if has.get(f, True)}


def estimate_evaluation(
    golden: GoldenSet | Path | str,
    runs: Runs,
    judge: Grader,
    settings: EvalSettings | None = None,
) -> dict[str, Estimate]:
    """Calls, cached items, prompt tokens and a cost bound per stage, without calling the model (``--dry-run``)."""
    config = (settings or EvalSettings()).checked()
    gold, folder = _load(golden)
    resolver = Resolver(gold, folder)
    loaded = load_runs(specs_of(runs), gold, resolver)
    index = SpanIndex(gold, resolver)
    _, families, _ = split_metrics(config, gold, loaded, index)
    carried = carry_labels(gold, loaded, index, config.depth)
    return estimate_judging(gold, loaded, judge, families=families, carried=carried, **_judging_settings(config))


def _passage_settings(config: EvalSettings) -> dict[str, Any]:
    return {"depth": config.depth, "listwise": config.listwise, "seed": config.seed, "add_labels": config.add_labels}


def _judging_settings(config: EvalSettings) -> dict[str, Any]:
    return {"depth": config.depth, "ctx_k": config.ctx_k, "listwise": config.listwise, "seed": config.seed,
            "diagnosis": config.diagnosis}  # fmt: skip


# -- per-query rows ----------------------------------------------------------------------------------------------


def _rows(
    gold: GoldenSet,
    run: LoadedRun,
    *,
    labels: er.Labels,
    ranking: list[str],
    families: set[str],
    assessed: Mapping[str, Mapping[str, Assessed]],
    config: EvalSettings,
    spans: tuple[list[str], SpanIndex],
) -> dict[str, QueryResult]:
    parts: list[Mapping[str, er.QueryValues]] = []
    if ranking:
        parts.append(er.rank_run(run, labels, ranking, threshold=config.threshold, depth=config.depth))
    if labels.strict_unscored and "ragas_context_precision" in families:  # strict_unscored: evaluated with a judge
        parts.append(er.context_precision(run, labels, config.k_values, config.cp_threshold))
    if "coverage_recall" in families:
        parts.append(er.coverage(run, gold, config.k_values, spans[1].stands_for))
    if spans[0]:
        parts.append(span_values(run, spans[1], spans[0]))
    parts.append(assessed.get(run.name, {}))
    rows: dict[str, QueryResult] = {}
    for qid in run.lines:
        strata = question_strata(gold.question(qid), config.strata)
        row = rows[qid] = QueryResult(run=run.name, query_id=qid, strata=strata)
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


def _run_result(run: LoadedRun, rows: Mapping[str, QueryResult], labels: er.Labels, config: EvalSettings) -> RunResult:
    names = _metric_names(rows)
    stat = config.stat()
    summaries = summarize_all(list(rows.values()), names, stat)
    curves = er.rank_curves(run, labels, config.threshold, config.depth)
    for fam in AT_K:  # at the k values; ranking curves are dense
        curves[fam] = {str(k): summaries[f"{fam}@{k}"].mean for k in config.k_values if f"{fam}@{k}" in summaries}
    fields = ["type", "difficulty", *config.strata]
    return RunResult(
        name=run.name,
        path=str(run.path),
        counts=run.counts,
        metrics=summaries,
        curves={family: curve for family, curve in curves.items() if curve},
        strata=_informative(strata_summaries(list(rows.values()), _headline(names, config), fields, stat), config),
        judged_at_k=er.judged_at_k(run, labels, config.k_values),
        pr_curve=er.pr_curve(run, labels, config.threshold),
        grade_histogram=er.grade_histogram(run, labels, config.depth),
        system=system_summary(run),
    )


def _informative(strata: dict[str, dict[str, dict[str, MetricSummary]]], config: EvalSettings) -> dict[str, Any]:
    """The strata worth a table: a field with one value only (every imported query of type ``unknown``) repeats
    the overall figures, so it is left out unless ``--by`` asked for it."""
    return {name: values for name, values in strata.items() if len(values) > 1 or name in config.strata}


def _result(
    gold: GoldenSet,
    folder: Path | None,
    *,
    runs: list[LoadedRun],
    per_run: Mapping[str, Mapping[str, QueryResult]],
    labels: Mapping[str, er.Labels],
    judge: Grader | None,
    config: EvalSettings,
    humans: PPIInputs,
    passages: Sequence[Mapping[str, Any]],
) -> EvalResult:
    from assay import __version__

    results = [_run_result(run, per_run[run.name], labels[run.name], config) for run in runs]
    for run, result in zip(runs, results, strict=True):
        result.passage_lengths = run.length_summary()
        result.passage_labels = dict(Counter(row["labelled_by"] for row in passages if row["run"] == run.name))
    own = any(set(r.passage_labels) - {"chunk"} for r in results)  # a run chunked its own way
    warnings = [note for run in runs for note in run.notes] + (length_note(results) if own else [])
    if any(one.model == "offline" for one in judges_of(judge)):
        warnings.insert(0, "offline judge: a lexical baseline, not an LLM; use --judge MODEL for real judgements")
    names = _headline(_metric_names(per_run[runs[0].name]), config) if runs else []
    diagnosed = [name for name in names if name in DIAGNOSIS_NAMES]  # compared as their own family
    names = [name for name in names if name not in DIAGNOSIS_NAMES]
    corrected = []
    audited = any(pair in humans.judge for pair in humans.human)  # else one line in the report says to audit
    for run in runs if audited else []:  # PPI corrects judge labels with human ones
        found, notes = corrected_metrics(run, sorted({config.ctx_k, config.k_head}), humans, config.stat())
        corrected += found
        warnings += notes
    settings = {**asdict(config), "context_k": config.ctx_k, "relevance": f"grade >= {config.threshold}"}
    return EvalResult(
        assay_version=__version__,
        golden=str(folder) if folder is not None else "(in memory)",
        judge=judge.model if judge is not None else None,
        k_values=list(config.k_values),
        settings=settings,
        runs=results,
        comparisons=(comparisons := compare_runs(per_run, names, config.stat())),
        primary_metric=next((c.metric for c in comparisons if c.primary), None),
        diagnosis_comparisons=directed(compare_runs(per_run, diagnosed, replace(config.stat(), primary=None))),
        corrected=corrected,
        agreement=agreement_of(gold, humans, fields=("type", "difficulty", *config.strata), settings=config.stat()),
        warnings=warnings,
        label_origin=gold.label_origin(),
        label_sources=gold.label_sources(),
    )
