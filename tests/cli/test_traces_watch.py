"""``assay traces watch --once``: a growing export read across passes (a cut last line, a trace split over two
passes, a restart, a rotated file) with nothing counted twice or lost; bad input named by file and line."""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path
from typing import Any

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "formats"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
from otlp_fixture import rag_trace, request
from passages_fixture import QUESTIONS, chunk_text, save_passages_golden

from assay.cli import main
from assay.pipelines.traces.watch import sampled


def watch(source: Path, golden: Path, out: Path, *more: str) -> tuple[int, str, str]:
    args = ["traces", "watch", str(source), "--golden", str(golden), "-o", str(out), "--once", *more]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def line(*spans: list[dict[str, Any]]) -> str:
    return json.dumps(request([s for group in spans for s in group])) + "\n"


def trace(n: int, question: str) -> list[dict[str, Any]]:
    return rag_trace(n, question, [chunk_text("returns#1"), chunk_text("tent#1")], "An answer.", start_ms=n * 100)


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def state(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cursor = json.loads((out / "watch-cursor.json").read_text(encoding="utf-8"))
    run = [json.loads(raw) for raw in (out / "watch-run.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    return cursor, run


def test_a_cut_line_and_a_restart_count_each_trace_once(tmp_path: Path) -> None:
    golden, out, export = save_passages_golden(tmp_path / "golden"), tmp_path / "report", tmp_path / "traces.jsonl"
    third = line(trace(3, "Do you ship to Mars?"), trace(4, QUESTIONS["q3"][0]))
    export.write_text(line(trace(1, QUESTIONS["q1"][0]), trace(2, QUESTIONS["q2"][0])) + third[:50], encoding="utf-8")
    code, stdout, stderr = watch(export, golden, out)
    assert code == 0, stderr
    assert "1 new line(s) in 1 file(s): 2 trace(s), 2 sampled, 2 matched" in stdout
    cursor, run = state(out)
    assert [r["query_id"] for r in run] == ["q1", "q2"]
    assert cursor["totals"] == {"traces": 2, "sampled": 2, "matched": 2, "abandoned": 0}
    assert (out / "report.html").exists()
    append(export, third[50:])  # the exporter finishes its line
    code, stdout, _ = watch(export, golden, out)
    assert code == 0 and "1 new line(s) in 1 file(s): 2 trace(s), 2 sampled, 1 matched" in stdout
    assert "1 sampled trace(s) match no golden question" in stdout
    cursor, run = state(out)
    assert [r["query_id"] for r in run] == ["q1", "q2", "q3"] and cursor["totals"]["traces"] == 4
    assert next(iter(cursor["files"].values()))["offset"] == export.stat().st_size
    code, stdout, _ = watch(export, golden, out)  # a restart with nothing new reads nothing again
    assert code == 0 and "0 new line(s) in 1 file(s): 0 trace(s)" in stdout
    assert state(out) == (cursor, run)


def test_a_trace_split_over_two_passes_waits_for_its_root(tmp_path: Path) -> None:
    golden, out, export = save_passages_golden(tmp_path / "golden"), tmp_path / "report", tmp_path / "traces.jsonl"
    root, *children = trace(1, QUESTIONS["q1"][0])
    export.write_text(line(children), encoding="utf-8")
    code, stdout, _ = watch(export, golden, out)
    assert code == 0 and "0 trace(s)" in stdout and "2 span(s) of unfinished traces held" in stdout
    append(export, line([root]))
    code, stdout, _ = watch(export, golden, out)
    assert code == 0 and "1 trace(s), 1 sampled, 1 matched" in stdout and "0 span(s) of unfinished" in stdout
    cursor, run = state(out)
    assert len(run) == 1 and len(run[0]["retrieved"]) == 2 and cursor["totals"]["traces"] == 1


def test_a_rotated_file_is_read_from_the_start_and_a_folder_is_followed(tmp_path: Path) -> None:
    golden, out, folder = save_passages_golden(tmp_path / "golden"), tmp_path / "report", tmp_path / "exports"
    folder.mkdir()
    (folder / "a.jsonl").write_text(line(trace(1, QUESTIONS["q1"][0]), trace(2, QUESTIONS["q2"][0])), "utf-8")
    (folder / "notes.txt").write_text("not an export\n", encoding="utf-8")
    assert watch(folder, golden, out)[0] == 0
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(line(trace(5, QUESTIONS["q3"][0])), encoding="utf-8")
    replacement.replace(folder / "a.jsonl")  # rotated: a shorter file under the same name
    (folder / "b.json").write_text(line(trace(6, "Do you ship to Mars?")), encoding="utf-8")
    code, stdout, _ = watch(folder, golden, out)
    assert code == 0 and "2 new line(s) in 2 file(s): 2 trace(s)" in stdout
    assert "a.jsonl was replaced (another inode) since the last pass: read from the start." in stdout
    assert [r["query_id"] for r in state(out)[1]] == ["q1", "q2", "q3"]


def test_the_sample_is_the_trace_ids_crc32(tmp_path: Path) -> None:
    ids = [f"{n:032x}" for n in range(1, 401)]
    half = [t for t in ids if sampled(t, 0.5)]
    assert half == [t for t in ids if zlib.crc32(t.encode()) < 2**31] and 150 < len(half) < 250
    assert all(sampled(t, 1.0) for t in ids)
    golden, out, export = save_passages_golden(tmp_path / "golden"), tmp_path / "report", tmp_path / "traces.jsonl"
    export.write_text(line(*(trace(n, QUESTIONS["q1"][0]) for n in range(1, 41))), encoding="utf-8")
    code, stdout, _ = watch(export, golden, out, "--sample", "0.5")
    kept = sum(sampled(f"{n:032x}", 0.5) for n in range(1, 41))
    assert code == 0 and f"40 trace(s), {kept} sampled" in stdout


def test_a_bad_line_names_file_and_line_and_moves_no_cursor(tmp_path: Path) -> None:
    golden, out, export = save_passages_golden(tmp_path / "golden"), tmp_path / "report", tmp_path / "traces.jsonl"
    export.write_text(line(trace(1, QUESTIONS["q1"][0])) + "{not json\n", encoding="utf-8")
    code, _, stderr = watch(export, golden, out)
    assert code == 1 and f"{export}:2" in stderr and "invalid JSON" in stderr
    assert not (out / "watch-cursor.json").exists()
