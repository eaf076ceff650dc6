"""Metric values per query, from labels that are already there. :mod:`.names` is the one catalogue of metric names
(families, defaults, the check of a name before any work): every other module reads the names from it, and it
imports none of them. Scoring imports only :mod:`~assay.pipelines.evaluate.runs` (and the row records of
:mod:`~assay.pipelines.evaluate.evaluated`).

Modules, one line each:

- ``names``: the metric names, what each asks for, the cut-off it needs, and the check before any work.
- ``available``: which names exist for a golden set and its runs, and why the others do not.
- ``ranking``: trec_eval measures in labelled units, RAGAS context precision, coverage recall, curves.
- ``budget``: recall, precision, MAP and nDCG of the first B tokens or characters a run retrieved.
- ``spans``: character recall, precision and IoU against the evidence.
- ``fill``: how full each context budget is, and how much of its text is judged.
- ``comparable``: what can be compared across runs that cut their text differently.
- ``conversations``: what conversations add to the per-turn scores (turn strata, rewrites, nugget coverage).
- ``scored``: the record of a run once scored (the run, its projection, its rows, its passage rows).
- ``criteria``: the team's own criteria files per question (``criterion:NAME``), checked before any call.
- ``system``: the system side of a run (latency, failures, tokens, cost).
- ``trajectory``: what a system that searches several times saw along the way (recall per search, evidence dropped,
  hop coverage, loops).
"""
