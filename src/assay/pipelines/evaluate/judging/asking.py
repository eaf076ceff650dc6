"""How the judge is asked in an evaluation: :class:`JudgingSettings`, the judging part of
:class:`~assay.pipelines.evaluate.settings.EvalSettings` (its :meth:`~.EvalSettings.judging` gives them, as its
``stat()`` gives the statistics'), passed whole to the steps that call the judge."""

from __future__ import annotations

from dataclasses import dataclass

from assay.pipelines.evaluate.judging.pair_checks import DEFAULT_MODE

__all__ = ["JudgingSettings"]


@dataclass(frozen=True)
class JudgingSettings:
    """``depth``: the ranks whose unlabelled chunks and passages are judged (k_max); ``context_k``: the chunks shown
    as an answer's context; ``listwise``: chunks per relevance call (None: one call per chunk); ``seed``: the order
    of the chunks in a listwise call; ``add_labels``: write the labels judged now back into the golden folder;
    ``diagnosis``: how the diagnosis gets its claim x chunk entailment (:data:`~.pair_checks.DIAGNOSIS_MODES`)."""

    depth: int
    context_k: int
    listwise: int | None = 10
    seed: int = 0
    add_labels: bool = True
    diagnosis: str = DEFAULT_MODE
