"""The book-keeping of one build: the counts and warnings the stages add up, the sampling plan and the conversations
written, passed from stage to stage by :mod:`.pipeline` and read by :func:`.written.manifest_of`."""

from __future__ import annotations

from typing import Any

from assay.pipelines.bootstrap.settings import ProgressFn, StageOutput
from assay.types import Conversation

__all__ = ["BuildRun"]


class BuildRun:
    """Book-keeping of one build: counts and warnings, progress for model-free stages."""

    def __init__(self, progress: ProgressFn | None) -> None:
        self.progress = progress
        self.counts: dict[str, int] = {}
        self.warnings: list[str] = []
        self.sampling: dict[str, Any] = {}
        self.conversations: list[Conversation] = []

    def take(self, stage: str, output: StageOutput[Any]) -> list[Any]:
        for key, value in output.counts.items():
            self.counts[key] = self.counts.get(key, 0) + value
        self.warnings.extend(output.warnings)
        if self.progress is not None:
            self.progress(stage, len(output.records), len(output.records))
        return output.records
