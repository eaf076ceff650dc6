"""Running a coroutine from synchronous code without a hidden repr of its result.

:func:`run_sync` is ``asyncio.run`` whose main task returns None: the coroutine's result is handed back outside the
task. Why: Python 3.11's ``asyncio.Runner`` installs ``functools.partial(_on_sigint, main_task=task)`` as the SIGINT
handler, and when the run ends it calls ``signal.getsignal(SIGINT)``, which tries to turn that handler into the
``signal.Handlers`` enum; the failed conversion formats ``repr(handler)``, hence ``repr(task)``, hence
``reprlib.repr(task.result())``, and reprlib builds the *whole* repr of an object it does not know before cutting it
to 40 characters. For a build that result is the golden set, every document, chunk, question and label as pydantic
models: minutes of work nobody asked for at 50,000 documents. A main task whose result is None costs nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run(make())``, with the result kept out of the main task (module docstring)."""
    box: list[T] = []

    async def main() -> None:
        box.append(await make())

    asyncio.run(main())
    return box[0]
