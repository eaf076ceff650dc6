"""Fixtures for the judge tests: the toy prompts, a no-sleep retry policy, and judges on fake backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.judge.limits import RetryPolicy

TOY_PROMPTS = Path(__file__).resolve().parents[1] / "fixtures" / "judge" / "prompts"


class SleepRecorder:
    """Stands in for asyncio.sleep: records the waits asked for and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def toy_prompts() -> Path:
    return TOY_PROMPTS


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def no_wait(sleeps: SleepRecorder) -> RetryPolicy:
    return RetryPolicy.immediate(attempts=4, sleep=sleeps)
