"""The judge's part of an evaluation: what is still unlabelled goes to the judge. It imports
:mod:`~assay.pipelines.evaluate.scoring` and :mod:`~assay.pipelines.evaluate.runs`, never the statistics or the
pipeline.

Modules, one line each:

- ``asking``: :class:`~.asking.JudgingSettings`, what the judge is asked to do, passed whole.
- ``drive``: the judge's work over the runs in one event loop, and its dry run.
- ``calls``: the relevance calls for unlabelled chunks and the LLM-judged metrics.
- ``passages``: the labels of the runs' own passages (carried over by span, else judged).
- ``pool_growth``: what other runs' passages did to a run's scores.
- ``diagnosis``: RAGChecker's metrics on the claim x chunk support matrix.
- ``pair_checks``: exact per-(claim, chunk) entailment for the diagnosis.
- ``criteria``: a team's judged criteria (scale, steps or decision tree) asked of each model judge.
- ``pairwise``: each pair of runs' answers judged in both orders (``--pairwise``).
- ``contradiction``: whether a conversational system contradicts its own earlier answers.
- ``noise``: judge noise (``--judge-repeats N``) and what it does to the primary metric.
"""
