"""``assay import traces`` and ``assay traces watch`` at the edges: ``--max-line`` (documented, settable, an error at
the line past it), typo'd questions matched and counted by kind, a stray file in a watched folder named."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "traces"))
from watch_fixture import Q1, Q2, line, save_passages_golden, trace

from assay.cli import main


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", [("import", "traces"), ("traces", "watch")])
def test_max_line_is_documented(command: tuple[str, str]) -> None:
    code, stdout, _ = run(*command, "--help")
    assert code == 0 and "--max-line SIZE" in stdout and "8M" in stdout


def test_max_line_is_settable_on_both_commands(tmp_path: Path) -> None:
    golden = save_passages_golden(tmp_path / "golden")
    export = tmp_path / "t.jsonl"
    export.write_text(line(trace(1, Q1)) + line(trace(2, Q2), trace(3, Q2)), encoding="utf-8")
    code, _, stderr = run("import", "traces", export, "-o", tmp_path / "r.jsonl", "--max-line", "3K")
    assert code == 1 and f"{export}:2: a line over the limit of 3,072 bytes" in stderr
    assert run("import", "traces", export, "-o", tmp_path / "r.jsonl", "--max-line", "1M")[0] == 0
    code, _, stderr = run("traces", "watch", export, "--golden", golden, "-o", tmp_path / "w", "--once",
                          "--max-line", "3072")  # fmt: skip
    assert code == 1 and f"{export}:2: a line over the limit of 3,072 bytes" in stderr
    code, _, stderr = run("traces", "watch", export, "--golden", golden, "-o", tmp_path / "w", "--once",
                          "--max-line", "lots")  # fmt: skip
    assert code == 2 and "'lots' is not a size" in stderr


def test_typos_are_matched_and_counted_by_kind(tmp_path: Path) -> None:
    golden = save_passages_golden(tmp_path / "golden")
    export = tmp_path / "t.jsonl"
    typo = Q1.replace("customers", "custmers")
    export.write_text(line(trace(1, typo), trace(2, Q2), trace(3, "Do you ship to Mars?")), encoding="utf-8")
    code, stdout, stderr = run("import", "traces", export, "-o", tmp_path / "r.jsonl", "--golden", golden)
    assert code == 0, stderr
    assert f"matched to {golden}: 1 by near question, 1 by question; 1 unmatched (0 ambiguous)" in stdout
    code, stdout, stderr = run("traces", "watch", export, "--golden", golden, "-o", tmp_path / "w", "--once")
    assert code == 0, stderr
    assert "note: matched by kind: 1 question, 1 near question, 1 none" in stdout


def test_a_stray_file_in_a_watched_folder_is_named_and_the_others_read(tmp_path: Path) -> None:
    golden, folder = save_passages_golden(tmp_path / "golden"), tmp_path / "exports"
    folder.mkdir()
    (folder / "a.jsonl").write_text(line(trace(1, Q1)), encoding="utf-8")
    (folder / "tsconfig.json").write_text('{"compilerOptions": {}}\n', encoding="utf-8")
    code, stdout, stderr = run("traces", "watch", folder, "--golden", golden, "-o", tmp_path / "w", "--once")
    assert code == 0, stderr
    assert "1 trace(s), 1 sampled, 1 matched" in stdout
    assert f"note: skipped {folder / 'tsconfig.json'} (the other files were read" in stdout
