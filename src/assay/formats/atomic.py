"""Atomic file writes: write to a temporary file beside the target, fsync, then rename over it.

A crash or an error midway leaves the old file (or no file), never half of a new one.

Several files of one folder that must agree are written as one with :func:`atomic_files`: each new file is staged
beside its target (written and fsynced under a temporary name), then a record of the renames (``.assay-pending.*.json``,
itself written atomically and made durable) is the commit point, then the renames, then the record is removed. A
crash before the record leaves every old file; a crash after it leaves the record, and :func:`finish_pending` (run by
every reader of the folder, e.g. :meth:`assay.formats.golden.GoldenSet.load`) does the renames left, so no reader sees
some files new and others old.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from assay.errors import DatasetError

__all__ = ["PENDING_GLOB", "atomic_dir", "atomic_files", "atomic_write", "atomic_write_text", "finish_pending"]

PENDING_GLOB = ".assay-pending.*.json"  # a record of renames not yet done (module docstring)


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


def _fsync_dir(folder: Path) -> None:
    """Make the folder's entries (a new record, renames) durable; a platform that cannot open a folder skips it."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_files(folder: str | Path) -> Iterator[Callable[[str], Path]]:
    """Replace several files of ``folder`` together (module docstring). ``stage(name)`` gives the temporary path
    to write ``name``'s new content to (any writer, e.g. :func:`assay.formats.jsonl.write_jsonl`); on a clean exit
    every staged file replaces its target, on an error before the commit none does and the staged files go."""
    where = Path(folder)
    finish_pending(where)  # an earlier write cut short comes first
    staged: dict[str, Path] = {}

    def stage(name: str) -> Path:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".staged", dir=where)
        os.close(fd)
        os.chmod(tmp, _final_mode(where / name))
        staged[name] = Path(tmp)
        return staged[name]

    record = where / f".assay-pending.{time.time_ns():020d}-{os.getpid()}.json"
    try:
        yield stage
        atomic_write_text(record, json.dumps({"replace": [[tmp.name, name] for name, tmp in staged.items()]}))
    except BaseException:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(where)  # committed: from here on the renames happen, now or at the next finish_pending
    _finish(where, record)


def finish_pending(folder: str | Path) -> list[str]:
    """Do the renames of every record a write cut short left in ``folder`` (oldest first); the files replaced. A
    rename that cannot be done (a read-only folder) raises :class:`DatasetError`: reading on would mix old and new
    files."""
    where = Path(folder)
    done: list[str] = []
    for record in sorted(where.glob(PENDING_GLOB)):
        try:
            done += _finish(where, record)
        except OSError as error:
            raise DatasetError(
                f"{where}: a write of several files was cut short and cannot be finished here ({error}); open the "
                "folder once where it can be written (any assay command that loads it finishes the write)"
            ) from error
    return done


def _finish(folder: Path, record: Path) -> list[str]:
    try:
        renames = json.loads(record.read_text(encoding="utf-8"))["replace"]
    except FileNotFoundError:
        return []  # another process finished it
    done = []
    for tmp, name in renames:
        with contextlib.suppress(FileNotFoundError):  # renamed already (by the writer or another reader)
            os.replace(folder / tmp, folder / name)
            done.append(name)
    _fsync_dir(folder)
    record.unlink(missing_ok=True)
    return done
