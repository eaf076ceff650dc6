"""``assay eval``: a golden set and RAG runs in, an :class:`~assay.results.EvalResult` out.

Split by what each part does, with imports pointing one way (top to bottom; checked by import-linter):

- :mod:`.called` evaluates a Python callable or a target (it writes the run first), then calls :mod:`.pipeline`,
  which ties the four steps together in order, one module each: :mod:`.prepared` (read and check; shared with the
  dry run), :mod:`.judged` (the judge's part), :mod:`.per_query` (each run's values per question, one
  :class:`~.scoring.scored.ScoredRun` per run) and :mod:`.outcome` (statistics, and the result built once);
  :mod:`.explore` builds the report explorer's per-question views; :mod:`.settings` holds
  :class:`~.settings.EvalSettings` and the metrics they select; :mod:`.evaluated` bundles what an evaluation
  produced beside the result (per-query rows, typed support-matrix and passage rows).
- :mod:`.statistics`: intervals, strata, PPI corrections, paired comparisons of runs, release gates.
- :mod:`.judging`: what is still unlabelled goes to the judge; the LLM metrics; the diagnosis (RAGChecker's
  metrics) on the claim x chunk support matrix; the labels of the runs' own passages.
- :mod:`.scoring`: per-query metric values (ranking on the projection, budget, span, system), what can be compared
  across runs that cut their text differently (:mod:`.scoring.comparable`); :mod:`.scoring.names` is the one home
  of the metric names.
- :mod:`.runs`: reading and checking the runs, locating their passages in the documents, the pool of labelled spans
  and the rule that grades a span from it (:mod:`.runs.carry`), each run projected onto the golden chunks
  (:mod:`.runs.units`).

The result records live in :mod:`assay.results` (what ``assay.report`` renders and ``results.json`` stores), and
judge-versus-human agreement in :mod:`assay.pipelines.agreement` (also used by ``assay agreement``), both outside
this package so that their readers need none of it.
"""

from assay.pipelines.evaluate.pipeline import (
    Evaluated,
    Progress,
    estimate_evaluation,
    evaluate,
    evaluate_detailed,
)
from assay.pipelines.evaluate.settings import EvalSettings

__all__ = ["EvalSettings", "Evaluated", "Progress", "estimate_evaluation", "evaluate", "evaluate_detailed"]
