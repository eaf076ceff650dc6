"""Writing report files: atomically, and readable by others like any file a user saves.

:func:`assay.formats.atomic.atomic_write_text` builds the file with :func:`tempfile.mkstemp`, which makes it
private (mode 0600); a report is meant to be shared (served by CI, attached to a pull request), so it gets 0644.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.formats.atomic import atomic_write_text

__all__ = ["write_public"]


def write_public(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically with mode 0644; returns the path."""
    target = Path(path)
    atomic_write_text(target, text)
    os.chmod(target, 0o644)
    return target
