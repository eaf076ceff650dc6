"""Ranking, RAG, agreement and statistics metrics: pure numpy, per-query arrays in and out.

This package imports nothing else from assay but :mod:`assay.metric_names` (the grammar of a metric name, which
imports nothing), so it can be used (and tested) on its own.

Modules, one line each:

- ``_errors``: the package's one error.
- ``_lookup``: docid lookups within each query of a run held as arrays.
- ``_ranks``: trec_eval's rank of each judged document, without ordering whole runs.
- ``agreement``: agreement between raters (judge and humans).
- ``budget``: measures at a context budget, in characters of relevant text.
- ``close``: the real names nearest a misspelt one.
- ``correlation``: Pearson and Spearman between scores and people's judgements, with a cluster bootstrap interval.
- ``clusters``: means of clustered items, the design effect, cluster-resampled intervals.
- ``curves``: a measure at every cutoff k = 1..K in one pass.
- ``diagnosis``: RAGChecker's diagnostic metrics from claim-level entailment.
- ``judged``: qrels and runs as arrays, and their join.
- ``leniency``: how a judge's grades sit beside people's.
- ``letters``: compact letter display of a significance matrix.
- ``preferences``: a Bradley-Terry model of systems from pairwise preferences with ties, cluster-bootstrapped.
- ``power``: how many questions a paired comparison needs.
- ``ppi``: prediction-powered inference (PPI++).
- ``projection``: one unit of account: a run's passages projected onto labelled units.
- ``rag``: RAG metrics from labels (context precision and recall, faithfulness, nugget and coverage recall).
- ``randomization``: randomization tests over a family of systems, their inverted intervals, effect sizes.
- ``ranking``: ranking measures over a judged join, one float per query.
- ``registry``: measure names as data, and :func:`evaluate`, the one entry point for ranking metrics.
- ``spans``: chunking-independent retrieval metrics over character ranges of documents.
- ``stats``: bootstrap intervals, paired tests, multiple comparisons.
- ``tool_calls``: a system's tool calls against a question's reference calls (names, order, arguments).
- ``trajectory``: what a system that searches several times saw along the way, in characters of relevant text.
"""

from __future__ import annotations

from assay.metrics._errors import MetricError
from assay.metrics.curves import Curves, curves
from assay.metrics.judged import Judged, Qrels, Run
from assay.metrics.registry import DEFAULT_MEASURES, Evaluation, Measure, evaluate, parse_measure

__all__ = [
    "DEFAULT_MEASURES",
    "Curves",
    "Evaluation",
    "Judged",
    "Measure",
    "MetricError",
    "Qrels",
    "Run",
    "curves",
    "evaluate",
    "parse_measure",
]
