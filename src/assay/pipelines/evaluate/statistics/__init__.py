"""What the per-query values add up to: :mod:`.stats` (bootstrap intervals, strata, PPI corrections, agreement
with humans), :mod:`.compare` (paired comparisons of runs, one family per metric, with the correction) and
:mod:`.gates` (the release gates of ``--fail-under`` and the pytest plugin). It imports
:mod:`~assay.pipelines.evaluate.runs` and the records of :mod:`assay.results`, never
:mod:`~assay.pipelines.evaluate.judging`.
"""
