"""assay.aio: run_sync without the repr of the result that Python 3.11's SIGINT handling builds, woken by a signal
whichever thread takes it; in_daemon_thread abandoned on cancel."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from pathlib import Path

import pytest

from assay.aio import in_daemon_thread, run_sync
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


def test_a_sigint_caught_by_a_worker_thread_still_stops_the_run_at_once() -> None:
    """The kernel may hand SIGINT to any thread; here a worker (a hung synchronous target) takes it. Without the
    wakeup socket the loop slept on until the worker's call ended; with it, the run ends in KeyboardInterrupt."""
    sent: list[float] = []

    def hung() -> None:
        time.sleep(0.2)  # so that the loop is asleep in epoll first (the case that hung; the test holds either way)
        sent.append(time.monotonic())
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # delivered to this thread, not the main one
        time.sleep(10)

    async def wait_for_it() -> None:
        await in_daemon_thread(hung)

    with pytest.raises(KeyboardInterrupt):
        run_sync(wait_for_it)
    assert time.monotonic() - sent[0] < 2.0
    assert signal.set_wakeup_fd(-1) == -1  # the wakeup socket was handed back


def test_a_cancelled_daemon_thread_call_is_abandoned_and_its_outcome_dropped() -> None:
    release = threading.Event()

    async def cancel_it() -> bool:
        future = in_daemon_thread(lambda: release.wait(10))
        future.cancel()
        release.set()
        await asyncio.sleep(0.05)  # the thread's late outcome arrives and is dropped
        return future.cancelled()

    assert run_sync(cancel_it)
