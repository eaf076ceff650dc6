"""Writing report files atomically (:func:`assay.formats.atomic.atomic_write_text` gives them the usual mode)."""

from __future__ import annotations

from pathlib import Path

from assay.formats.atomic import atomic_write_text

__all__ = ["write_public"]


def write_public(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically; returns the path."""
    target = Path(path)
    atomic_write_text(target, text)
    return target
