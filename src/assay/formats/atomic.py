"""Atomic file writes: write to a temporary file beside the target, fsync, then rename over it.

A crash or an error midway leaves the old file (or no file), never half of a new one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_dir", "atomic_write", "atomic_write_text"]


def _final_mode(target: Path) -> int:
    """The mode a plain ``open(target, "w")`` would give: the existing file's, else 0666 less the umask.

    ``mkstemp`` makes its file private (0600); a golden set or a report is meant to be shared like any saved file.
    """
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[str]]:
    """Open a temporary file for writing; on a clean exit it replaces ``path``, on an error it is removed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    binary = "b" in mode
    os.chmod(tmp_name, _final_mode(target))
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_write(path) as handle:
        handle.write(text)


@contextlib.contextmanager
def atomic_dir(path: str | Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Build a folder under a temporary name beside ``path``; on a clean exit it takes ``path``'s place.

    With ``overwrite`` an existing folder is replaced (the old one is removed only after the new one is complete);
    without it an existing non-empty folder is left alone and ``FileExistsError`` is raised before any work.
    """
    target = Path(path)
    if target.exists() and any(target.iterdir()) and not overwrite:
        raise FileExistsError(str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
