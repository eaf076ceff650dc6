"""Atomic writes leave either the old content or the new, never a half-written file or a stray temp file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from assay.formats.atomic import atomic_dir, atomic_write, atomic_write_text


def test_write_replaces_content(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    atomic_write_text(target, "old\n")
    atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_error_midway_keeps_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    atomic_write_text(target, "old\n")
    with pytest.raises(RuntimeError), atomic_write(target) as handle:
        handle.write("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_dir_appears_only_when_complete(tmp_path: Path) -> None:
    target = tmp_path / "golden"
    with pytest.raises(RuntimeError), atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("x")
        raise RuntimeError("interrupted")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []
    with atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("x")
    assert (target / "a.txt").read_text() == "x"


def test_dir_refuses_to_clobber_without_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "golden"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError), atomic_dir(target):
        pass
    with atomic_dir(target, overwrite=True) as tmp:
        (tmp / "new.txt").write_text("y")
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]


def test_new_file_gets_umask_mode_and_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        target = tmp_path / "report.md"
        atomic_write_text(target, "x")
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
        os.chmod(target, 0o600)
        atomic_write_text(target, "y")
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
    finally:
        os.umask(old_umask)
