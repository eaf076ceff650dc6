"""Metric values per query, from labels that are already there: :mod:`.ranking` (trec_eval measures in labelled
units, RAGAS context precision, coverage recall, curves), :mod:`.spans` (character recall, precision and IoU against
the evidence), :mod:`.system` (latency, failures, tokens, cost). :mod:`.names` is the one catalogue of metric names
(families, defaults, the check of a name before any work): every other module reads the names from it, and it
imports none of them. :mod:`.scored` holds the record of a run once scored (:class:`~.scored.ScoredRun`: the run,
its projection, its rows, its passage rows). Scoring imports only :mod:`~assay.pipelines.evaluate.runs` (and the
row records of :mod:`~assay.pipelines.evaluate.evaluated`).
"""
