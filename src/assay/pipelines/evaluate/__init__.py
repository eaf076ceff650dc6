"""``assay eval``: a golden set and RAG runs in, an :class:`~.results.EvalResult` out.

Flow: :mod:`.runs` reads and checks the runs; :mod:`.judging` has :mod:`.judged` grade the unlabelled retrieved chunks
and make the LLM metric calls (adding the new labels to the golden set); :mod:`.ranking` computes the label-based
metrics per query; :mod:`.stats` adds intervals, strata, paired comparisons and the PPI-corrected metrics, with
:mod:`.agreement` for judge-vs-human agreement (also used by ``assay agreement``); :mod:`.pipeline` ties them
together. :mod:`.results` is the record that ``assay.report`` renders and ``results.json`` stores (with the
headline-k rule that summaries, strata and comparisons share).
"""

from assay.pipelines.evaluate.pipeline import (
    EvalSettings,
    Evaluated,
    Progress,
    estimate_evaluation,
    evaluate,
    evaluate_detailed,
)

__all__ = ["EvalSettings", "Evaluated", "Progress", "estimate_evaluation", "evaluate", "evaluate_detailed"]
