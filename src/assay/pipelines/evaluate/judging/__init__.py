"""The judge's part of an evaluation: what is still unlabelled goes to the judge. :mod:`.drive` runs the judge's
work over the runs in one event loop (and counts it for a dry run), asked as :class:`~.asking.JudgingSettings` say;
:mod:`.calls` makes the relevance and LLM-metric calls; :mod:`.diagnosis` computes RAGChecker's metrics on the
claim x chunk support matrix, with the exact per-(claim, chunk) checks of :mod:`.pair_checks`; :mod:`.passages`
labels the runs' own passages (carried over, else judged). It imports :mod:`~assay.pipelines.evaluate.scoring` and
:mod:`~assay.pipelines.evaluate.runs`, never the statistics or the pipeline.
"""
