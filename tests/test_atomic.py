"""Atomic writes leave either the old content or the new, never a half-written file or a stray temp file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from assay.formats.atomic import PENDING_GLOB, atomic_dir, atomic_files, atomic_write, atomic_write_text, finish_pending


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


def test_files_written_together_replace_their_targets_at_once_keeping_their_modes(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("old a")
    os.chmod(tmp_path / "a.jsonl", 0o640)
    with atomic_files(tmp_path) as stage:
        atomic_write_text(stage("a.jsonl"), "new a")
        stage("b.jsonl").write_text("new b")
        assert (tmp_path / "a.jsonl").read_text() == "old a"  # nothing replaced before the end
    assert [(tmp_path / n).read_text() for n in ("a.jsonl", "b.jsonl")] == ["new a", "new b"]
    assert stat.S_IMODE((tmp_path / "a.jsonl").stat().st_mode) == 0o640  # not the staged file's private 0600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]


def test_files_written_together_an_error_replaces_none(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("old a")
    with pytest.raises(RuntimeError), atomic_files(tmp_path) as stage:
        stage("a.jsonl").write_text("new a")
        raise RuntimeError("the second file could not be built")
    assert [p.name for p in tmp_path.iterdir()] == ["a.jsonl"] and (tmp_path / "a.jsonl").read_text() == "old a"


def test_a_record_left_by_a_crash_is_finished_once(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("old a")
    (tmp_path / ".a.jsonl.x.staged").write_text("new a")
    (tmp_path / ".b.jsonl.y.staged").write_text("new b")
    # the crash came after the first rename: its staged file is gone, the record is still there
    (tmp_path / ".b.jsonl.y.staged").rename(tmp_path / "b.jsonl")
    record = '{"replace": [[".b.jsonl.y.staged", "b.jsonl"], [".a.jsonl.x.staged", "a.jsonl"]]}'
    (tmp_path / ".assay-pending.00000000000000000001-1.json").write_text(record)
    assert finish_pending(tmp_path) == ["a.jsonl"]
    assert [(tmp_path / n).read_text() for n in ("a.jsonl", "b.jsonl")] == ["new a", "new b"]
    assert not list(tmp_path.glob(PENDING_GLOB)) and finish_pending(tmp_path) == []
