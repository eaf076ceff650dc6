"""Running a coroutine from synchronous code, promptly interruptible, and blocking work that never holds it up.

:func:`run_sync` is ``asyncio.run`` with two differences:

1. The coroutine's result is handed back outside the main task, which returns None. Why: Python 3.11's
   ``asyncio.Runner`` installs ``functools.partial(_on_sigint, main_task=task)`` as the SIGINT handler, and when the
   run ends it calls ``signal.getsignal(SIGINT)``, which tries to turn that handler into the ``signal.Handlers``
   enum; the failed conversion formats ``repr(handler)``, hence ``repr(task)``, hence ``reprlib.repr(task.result())``,
   and reprlib builds the *whole* repr of an object it does not know before cutting it to 40 characters. For a build
   that result is the golden set, every document, chunk, question and label as pydantic models: minutes of work
   nobody asked for at 50,000 documents. A main task whose result is None costs nothing.
2. Ctrl-C is seen at once, whichever thread the kernel hands SIGINT to. The runner's handler (it cancels the main
   task, and the run ends in ``KeyboardInterrupt``) runs in the main thread, and only once that thread runs Python
   code. The loop's thread sleeps in ``epoll_wait`` while every task waits: when the signal lands on another thread
   (a worker running a hung target), nothing woke it, and Ctrl-C waited for the worker's call to end (minutes).
   While the coroutine runs, :func:`signal.set_wakeup_fd` points at a socket the loop reads, so any signal wakes the
   loop and its handler runs within milliseconds.

:func:`in_daemon_thread` runs blocking work (a user's synchronous function) in a daemon thread of its own and gives a
future of it: cancelling the future (as Ctrl-C does) abandons the thread, whose late outcome is dropped, and a daemon
thread does not hold the process open at exit. (``asyncio.to_thread`` would: the default executor's threads are
joined when the loop closes and again when the interpreter exits.)
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

__all__ = ["in_daemon_thread", "run_sync"]

T = TypeVar("T")


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run(make())``, with the result kept out of the main task and any signal waking the loop (module
    docstring)."""
    box: list[T] = []

    async def main() -> None:
        with _signals_wake_the_loop():
            box.append(await make())

    asyncio.run(main())
    return box[0]


@contextlib.contextmanager
def _signals_wake_the_loop() -> Iterator[None]:
    """While inside: a signal caught in any thread writes a byte to a socket the running loop reads (step 2 of the
    module docstring). Only the main thread may set the wakeup fd; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    reader, writer = socket.socketpair()
    for end in (reader, writer):
        end.setblocking(False)
    try:
        loop.add_reader(reader.fileno(), _drain, reader)
    except NotImplementedError:  # a loop without readers (Windows' proactor): signals reach its main thread anyway
        reader.close()
        writer.close()
        yield
        return
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        loop.remove_reader(reader.fileno())
        reader.close()
        writer.close()


def _drain(reader: socket.socket) -> None:
    """Read the bytes written for signals: the loop is awake, and the signal's own handler has run or runs next."""
    with contextlib.suppress(OSError):
        while reader.recv(4096):
            pass


def in_daemon_thread(work: Callable[[], T]) -> asyncio.Future[T]:
    """A future of ``work()`` run in a new daemon thread; its outcome is dropped when the future was cancelled, or
    when the loop closed while it ran (module docstring)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(method: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            method(value)

    def run() -> None:
        try:
            outcome: tuple[Callable[[Any], None], Any] = (future.set_result, work())
        except BaseException as exc:
            outcome = (future.set_exception, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed while the call ran
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=run, daemon=True, name="assay-blocking").start()
    return future
