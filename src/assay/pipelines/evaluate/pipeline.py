"""``assay eval`` as a function: score RAG runs against a golden set, judge what it has not seen, compare runs.

Steps (each in its own module, each taking what the earlier ones produced whole):

1. read and check (:mod:`~assay.pipelines.evaluate.prepared`, shared with the dry run): the settings, the golden set,
   the runs (:mod:`~assay.pipelines.evaluate.runs.read`: unknown ids, duplicates, empty lists are counted), each
   projected onto the golden chunks (:mod:`~assay.pipelines.evaluate.runs.units`), the one unit of account of the
   label-based measures;
2. with a judge (:mod:`~assay.pipelines.evaluate.judged`), grade the golden chunks in each projection's top k_max
   that have no label, and the passages the pool's rule cannot grade (:mod:`~assay.pipelines.evaluate.runs.carry`)
   (listwise, cached per pair) and add the new labels to the golden set, and make the LLM-metric calls
   (:mod:`~assay.pipelines.evaluate.judging.drive` drives them in one event loop;
   :mod:`~assay.pipelines.evaluate.judging.calls` holds the steps);
3. metrics per query (:mod:`~assay.pipelines.evaluate.per_query`), against the same labels for every run: on the
   projection (:mod:`~assay.pipelines.evaluate.scoring.ranking`) trec_eval ranking measures, RAGAS context
   precision, coverage recall, judged@k, grade histogram, precision-recall curve; on the passages' text the budget
   measures (:mod:`~assay.pipelines.evaluate.scoring.budget`) and span measures; one
   :class:`~assay.pipelines.evaluate.scoring.scored.ScoredRun` per run;
4. statistics and the result, built once (:mod:`~assay.pipelines.evaluate.outcome`): bootstrap intervals, strata,
   PPI++ (:mod:`~assay.pipelines.evaluate.statistics.stats`); comparisons of runs, one family per metric
   (:mod:`~assay.pipelines.evaluate.statistics.compare`), over the metrics comparable across the runs' chunkings
   (:mod:`~assay.pipelines.evaluate.scoring.comparable`).

With a panel (``judge`` a :class:`~assay.judge.panel.Panel`), every relevance pair is judged by each of its judges
and combined by its rule, the other calls go to its first judge, and ``results.json`` gets the agreement between the
judges (``judges``) over every golden label that keeps votes.

Without a judge (``judge=None``) the evaluation keeps trec_eval's convention: unjudged = not relevant, no LLM
metric, and judged@k in the result shows how complete the labels are.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from assay.formats.golden import GoldenSet
from assay.judge import Estimate
from assay.judge.panel import Grader
from assay.pipelines.evaluate.evaluated import Evaluated
from assay.pipelines.evaluate.judged import estimate, judge_all
from assay.pipelines.evaluate.judging.drive import Progress
from assay.pipelines.evaluate.outcome import evaluated
from assay.pipelines.evaluate.per_query import score_runs
from assay.pipelines.evaluate.prepared import prepare
from assay.pipelines.evaluate.runs.read import Runs
from assay.pipelines.evaluate.settings import EvalSettings
from assay.results import EvalResult, QueryResult

__all__ = ["Evaluated", "Progress", "Runs", "estimate_evaluation", "evaluate", "evaluate_detailed"]


def evaluate(
    golden: GoldenSet | Path | str,
    runs: Runs,
    *,
    judge: Grader | None = None,
    settings: EvalSettings | None = None,
    progress: Progress | None = None,
    human_labels: Mapping[tuple[str, str], int] | None = None,
    annotations: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
    criterion_labels: Mapping[str, str] | None = None,
) -> tuple[EvalResult, list[QueryResult]]:
    """Evaluate ``runs`` against ``golden`` (a folder or a loaded set). A run is a file (JSONL, TREC or RAGAS
    evaluation data) or a list of dicts in the JSONL run format; give runs as paths, ``(name, run)`` pairs or a
    mapping ``{name: run}``.

    ``judge`` None: no judging (trec_eval convention); a :class:`~assay.judge.panel.Panel`: relevance by each of its
    judges, combined. ``human_labels`` ``{(query_id, chunk_id): grade}`` (e.g. the
    audit store's) enable the PPI corrections and the judge-vs-human agreement; human labels in the qrels count too.
    ``annotations`` ``{(query_id, chunk_id): {annotator: grade}}`` add agreement between people.
    ``criterion_labels`` ``{audit item: label}`` (people's labels of judged criteria's verdicts, e.g.
    :func:`assay.audit.criteria.people_labels`) give each judged criterion its agreement with people and its
    PPI-corrected means. See :func:`evaluate_detailed`.
    """
    done = evaluate_detailed(
        golden, runs, judge=judge, settings=settings, progress=progress, human_labels=human_labels,
        annotations=annotations, criterion_labels=criterion_labels,
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
    criterion_labels: Mapping[str, str] | None = None,
) -> Evaluated:
    """:func:`evaluate`, also returning the claim x chunk support rows (for ``support_matrix.jsonl``), the passage
    rows (``passages.jsonl``) and the explorer's per-question views. The four steps of the module docstring."""
    setup = prepare(golden, runs, settings, judge=judge)  # 1. read and check
    judged = judge_all(setup, judge, progress)  # 2. judge what is unlabelled, and the LLM metrics
    scores = score_runs(setup, judged, strict=judge is not None)  # 3. metrics per query
    done = evaluated(setup, judged, scores, judge=judge, human_labels=human_labels, annotations=annotations,
                     criterion_labels=criterion_labels)  # 4.  # fmt: skip
    setup.resolver.save_cache()
    return done


def estimate_evaluation(
    golden: GoldenSet | Path | str,
    runs: Runs,
    judge: Grader,
    settings: EvalSettings | None = None,
) -> dict[str, Estimate]:
    """Calls, cached items, prompt tokens and a cost bound per stage, without calling the model (``--dry-run``):
    step 1 as :func:`evaluate_detailed` takes it, then step 2 counted."""
    return estimate(prepare(golden, runs, settings, judge=judge, dry_run=True), judge)
