"""One record per run through an evaluation, once it is scored: the run as read, its projection onto the golden
chunks (:mod:`~assay.pipelines.evaluate.runs.units`), its row per question and its passage rows. The pipeline's third
step builds one per run (an asking of a repeated run is a run of its own here); the statistics, the pool shifts and
the result take them whole, never as lists to zip."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assay.pipelines.evaluate.evaluated import PassageRow
from assay.pipelines.evaluate.runs.loaded import LoadedRun
from assay.results import QueryResult

__all__ = ["ScoredRun"]


@dataclass(frozen=True)
class ScoredRun:
    """A run scored: ``run`` as read, ``projected`` onto the golden chunks (what the label-based measures rank),
    ``rows`` (query id -> its values) and ``passages`` (its top k_max, labelled)."""

    run: LoadedRun
    projected: LoadedRun
    rows: Mapping[str, QueryResult]
    passages: tuple[PassageRow, ...]

    @property
    def name(self) -> str:
        return self.run.name
