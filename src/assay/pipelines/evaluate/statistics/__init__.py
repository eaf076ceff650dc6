"""What the per-query values add up to. It imports :mod:`~assay.pipelines.evaluate.runs` and the records of
:mod:`assay.results`, never :mod:`~assay.pipelines.evaluate.judging`.

Modules, one line each:

- ``stats``: bootstrap intervals, strata, PPI corrections, agreement with humans.
- ``compare``: paired comparisons of runs, one family per metric, with the correction.
- ``gates``: the release gates of ``--fail-under`` and the pytest plugin.
- ``clustering``: which questions move together (``--cluster-by``), and what that costs in evidence.
- ``repeats``: runs asked every question several times, their variance split.
- ``history``: what a conversational system gains by being asked raw turns with their history.
- ``criteria``: judged criteria against people's labels: kappa, confusion matrix, PPI-corrected means.
- ``preferences``: the runs' pairwise preferences: wins, ties, position consistency, Bradley-Terry strengths.
- ``planning``: how many questions would settle it (``EvalResult.planning``).
"""
