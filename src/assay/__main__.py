"""The ``assay`` program (and ``python -m assay``): the CLI, with Ctrl-C answered at once, even while it loads.

Importing every command takes about a second; a Ctrl-C in that second would otherwise end in a traceback. Once the
CLI runs, :class:`assay.cli._app.AssayGroup` and the long commands answer Ctrl-C themselves (one line saying what was
kept and how to resume, exit status 130). The program then leaves at once, without the interpreter's teardown of
every module loaded (about 0.2 s of CPU, a second on a loaded machine): nothing is lost by it, since every answer a
model or a system gave is committed to its cache or flushed to its journal as it arrives (a run survives even
``kill -9``), and files are only ever replaced whole.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn

__all__ = ["main"]


def main() -> None:
    """Import the CLI and run it; after Ctrl-C, exit 130 at once (module docstring)."""
    try:
        from assay.cli import main as cli  # here, so that a Ctrl-C while importing is caught
        from assay.cli._app import INTERRUPTED
    except KeyboardInterrupt:
        _leave("interrupted while assay was starting: nothing was done; run the command again.\n", 130)
    _printable_streams()
    try:
        cli()
    except SystemExit as exc:
        if exc.code == INTERRUPTED:
            _leave("", INTERRUPTED)
        raise


def _printable_streams() -> None:
    """On a terminal whose encoding is not UTF-8 (a Latin-1 or ASCII locale, a Windows code page), print a
    character it cannot show (the verdict's bullet, a minus sign, a degree sign in a passage) as ``?`` rather than
    end the command with a UnicodeEncodeError after its work is done. Files are always written as UTF-8."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        reconfigure = getattr(stream, "reconfigure", None)
        # the C locale's streams use surrogateescape, which fails on such a character the same way as strict
        strict = getattr(stream, "errors", "") in ("strict", "surrogateescape")
        if reconfigure is not None and strict and not encoding.startswith("utf-8"):
            reconfigure(errors="replace")


def _leave(message: str, status: int) -> NoReturn:
    """Write ``message`` to stderr, flush both streams and end the process with ``status`` now."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(message)
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
