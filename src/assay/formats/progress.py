"""Progress of long reads and writes, for a caller that shows it (``assay import`` and ``assay export`` draw a bar).

The readers and writers of :mod:`assay.formats` report through :func:`reading` and :func:`writing` while a
:func:`reporting` block is active in the current context (a :class:`~contextvars.ContextVar`, so nothing changes in
their signatures and nothing is reported, at the cost of one lookup per file, when nobody listens). The callback
gets ``(what, done, total)``: ``what`` is ``"reading NAME"`` (``done``/``total`` in bytes of the file) or
``"writing NAME"`` (in records; ``total`` 0 when unknown). It is called at most ~200 times per file, and always once
at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sized
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

__all__ = ["Callback", "Meter", "reading", "reporting", "writing"]

T = TypeVar("T")
Callback = Callable[[str, int, int], None]  # (what, done, total)
_CALLBACK: ContextVar[Callback | None] = ContextVar("assay_formats_progress", default=None)
_STEPS = 200  # reports per file at most (besides the last)


@contextmanager
def reporting(callback: Callback) -> Iterator[None]:
    """Send the progress of every read and write inside the block to ``callback``."""
    token = _CALLBACK.set(callback)
    try:
        yield
    finally:
        _CALLBACK.reset(token)


class Meter:
    """Counts ``done`` towards ``total`` and reports every ``total / 200`` (or ``step``) of it."""

    def __init__(self, callback: Callback | None, what: str, total: int, step: int) -> None:
        self.callback, self.what, self.total = callback, what, total
        self.done = 0
        self.step = max(step, total // _STEPS, 1)
        self._next = self.step

    def add(self, amount: int) -> None:
        """``amount`` more done."""
        self.done += amount
        if self.callback is not None and self.done >= self._next:
            self._report(self.callback)
            self._next = self.done + self.step

    def finish(self) -> None:
        """Report the end."""
        if self.callback is not None:
            self._report(self.callback)

    def _report(self, callback: Callback) -> None:
        done = min(self.done, self.total) if self.total else self.done
        callback(self.what, done, self.total or done)


def reading(path: Path) -> Meter:
    """A meter of the bytes read from ``path`` (a no-op when nobody listens)."""
    callback = _CALLBACK.get()
    total = path.stat().st_size if callback is not None and path.is_file() else 0
    return Meter(callback, f"reading {path.name}", total, step=1 << 16)


def writing(path: str | Path, records: Iterable[T], total: int | None = None) -> Iterator[T]:
    """``records``, counted as they are written to ``path``; ``total`` defaults to ``len(records)`` when it has one."""
    callback = _CALLBACK.get()
    if callback is None:
        yield from records
        return
    if total is None:
        total = len(records) if isinstance(records, Sized) else 0
    meter = Meter(callback, f"writing {Path(path).name}", total, step=256)
    for record in records:
        yield record
        meter.add(1)
    meter.finish()
