"""assay.aio.run_sync: asyncio.run without the repr of the result that Python 3.11's SIGINT handling builds."""

from __future__ import annotations

import asyncio
import signal
import threading
from pathlib import Path

import pytest

from assay.aio import run_sync
from assay.judge import make_judge
from assay.pipelines.bootstrap import BuildSettings, build_golden

DEMO = Path(__file__).resolve().parents[1] / "datasets" / "demo" / "corpus"


class Counted:
    """A result whose repr is counted."""

    reprs = 0

    def __repr__(self) -> str:
        Counted.reprs += 1
        return "Counted()"


def _main_thread_default_sigint() -> bool:
    return threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )


@pytest.fixture(autouse=True)
def _needs_asyncio_sigint_handling() -> None:
    if not _main_thread_default_sigint():
        pytest.skip("asyncio.run installs its SIGINT handler only in the main thread with the default handler")


def test_asyncio_run_reprs_its_result_and_run_sync_does_not() -> None:
    async def make() -> Counted:
        return Counted()

    Counted.reprs = 0
    asyncio.run(make())
    assert Counted.reprs > 0  # the cost run_sync avoids (if this fails, Python no longer does it: keep run_sync anyway)
    Counted.reprs = 0
    assert isinstance(run_sync(make), Counted) and Counted.reprs == 0


def test_a_build_never_reprs_its_records(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import pydantic

    calls = []
    monkeypatch.setattr(pydantic.BaseModel, "__repr__", lambda self: calls.append(1) or "model")
    golden = build_golden(DEMO, judge=make_judge("offline"), settings=BuildSettings(questions=5), output=tmp_path / "g")
    assert golden.questions and calls == []
