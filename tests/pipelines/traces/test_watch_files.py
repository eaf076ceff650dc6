"""``traces watch`` and its files: a file replaced under the same inode (bigger, smaller, the old offset on a line
boundary) read from its start and said so; lines delivered twice counted once; a stray or bad file in a folder
skipped and named while the others are read; a pretty-printed OTLP document read as ``import traces`` reads it; a
line over the limit an error at its line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from watch_fixture import Q1, Q2, Q3, append, line, rewrite_in_place, run_of, save_passages_golden, trace

from assay.errors import FormatError
from assay.formats.golden import GoldenSet
from assay.pipelines.traces.watch import WatchPass, watch_once


@pytest.fixture
def golden(tmp_path: Path) -> GoldenSet:
    return GoldenSet.load(save_passages_golden(tmp_path / "golden"))


def tid(n: int) -> str:
    return f"{n:032x}"


def test_a_bigger_file_under_the_same_inode_is_read_from_its_start(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "grow.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)) + line(trace(2, Q2)), encoding="utf-8")
    watch_once(export, golden, out)
    inode = export.stat().st_ino
    rewrite_in_place(export, "".join(line(trace(n, Q3)) for n in (3, 4, 5)))
    assert export.stat().st_ino == inode
    done = watch_once(export, golden, out)  # before: the old offset fell mid-line, "invalid JSON at column 1"
    assert (done.lines, done.traces, done.totals["traces"]) == (3, 3, 5)
    assert any(
        "was replaced (same inode, other bytes)" in note and "read from the start" in note for note in done.notes
    )
    assert {r["query_id"]: r["trace_id"] for r in run_of(out)} == {"q1": tid(1), "q2": tid(2), "q3": tid(5)}


def test_a_smaller_file_under_the_same_inode_is_read_from_its_start(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)) + line(trace(2, Q2)), encoding="utf-8")
    watch_once(export, golden, out)
    rewrite_in_place(export, line(trace(3, Q3)))
    done = watch_once(export, golden, out)
    assert (done.lines, done.traces) == (1, 1) and any("shrank" in note for note in done.notes)


def test_a_new_file_whose_old_offset_is_a_line_boundary_is_read_from_its_start(
    tmp_path: Path, golden: GoldenSet
) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    watch_once(export, golden, out)
    first = line(trace(2, Q1))
    assert len(first) == export.stat().st_size  # the old offset falls exactly after the new first line
    rewrite_in_place(export, first + line(trace(3, Q2)))
    done = watch_once(export, golden, out)  # before: exit 0, no note, trace 2 skipped
    assert (done.lines, done.traces, done.totals["traces"]) == (2, 2, 3)
    assert any("read from the start" in note for note in done.notes)
    assert {r["query_id"]: r["trace_id"] for r in run_of(out)} == {"q1": tid(2), "q2": tid(3)}


def test_a_file_that_grows_is_read_on_from_its_cursor(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    watch_once(export, golden, out)
    append(export, line(trace(2, Q2)))
    done = watch_once(export, golden, out)
    assert (done.lines, done.traces, done.notes) == (1, 1, ["matched by kind: 1 question"])


def test_lines_delivered_twice_count_once(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    batch = "".join(line(trace(n, question)) for n, question in ((1, Q1), (2, Q2)))
    export.write_text(batch + batch, encoding="utf-8")  # a retry within one pass
    done = watch_once(export, golden, out)
    first = run_of(out)[0]
    assert len(first["retrieved"]) == 2 and first["usage"]["prompt_tokens"] == 50  # not 4 passages, not 100 tokens
    assert (done.traces, done.duplicate_spans) == (2, 6)
    append(export, batch + line(trace(3, Q3)))  # a retry in a later pass, and one new trace
    done = watch_once(export, golden, out)
    assert (done.traces, done.duplicate_spans, done.totals["traces"], done.totals["matched"]) == (1, 6, 3, 3)
    assert [len(r["retrieved"]) for r in run_of(out)] == [2, 2, 2]


def notes_naming(done: WatchPass, name: str) -> list[str]:
    return [note for note in done.notes if name in note]


def test_a_stray_or_bad_file_in_a_folder_is_skipped_and_named(tmp_path: Path, golden: GoldenSet) -> None:
    folder, out = tmp_path / "exports", tmp_path / "out"
    folder.mkdir()
    (folder / "a.jsonl").write_text(line(trace(1, Q1)), encoding="utf-8")
    (folder / "package.json").write_text('{"name": "my-app", "version": "1.0.0"}\n', encoding="utf-8")
    (folder / "c.jsonl").write_text(line(trace(2, Q2)) + "{oops\n", encoding="utf-8")
    (folder / "d.jsonl").write_text(line(trace(3, Q3)), encoding="utf-8")
    done = watch_once(folder, golden, out)  # before: the first bad file stopped the pass
    assert (done.files, done.traces) == (4, 2) and [r["query_id"] for r in run_of(out)] == ["q1", "q3"]
    assert "a JSON object of another shape" in notes_naming(done, "package.json")[0]
    assert f"{folder / 'c.jsonl'}:2: invalid JSON" in notes_naming(done, "c.jsonl")[0]
    rewrite_in_place(folder / "c.jsonl", line(trace(2, Q2)))  # mended: read from its start next pass
    done = watch_once(folder, golden, out)
    assert done.traces == 1 and [r["query_id"] for r in run_of(out)] == ["q1", "q2", "q3"]


def test_the_only_file_watched_that_is_bad_stops_the_pass(tmp_path: Path, golden: GoldenSet) -> None:
    export = tmp_path / "package.json"
    export.write_text('{"name": "my-app"}\n', encoding="utf-8")
    with pytest.raises(FormatError, match="another shape"):
        watch_once(export, golden, tmp_path / "out")
    assert not (tmp_path / "out" / "watch-cursor.json").exists()


def test_a_pretty_printed_document_is_read_whole_and_again_when_rewritten(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "export.json", tmp_path / "out"
    document = json.loads(line(trace(1, Q1), trace(2, Q2)))
    export.write_text(json.dumps(document, indent=2), encoding="utf-8")
    done = watch_once(export, golden, out)  # before: "invalid JSON at column 2"
    assert done.traces == 2 and [r["query_id"] for r in run_of(out)] == ["q1", "q2"]
    assert watch_once(export, golden, out).traces == 0  # unchanged: nothing read again
    bigger = json.loads(line(trace(1, Q1), trace(2, Q2), trace(3, Q3)))
    export.write_text(json.dumps(bigger, indent=2), encoding="utf-8")
    done = watch_once(export, golden, out)
    assert (done.traces, done.totals["traces"]) == (1, 3) and any("rewritten" in n for n in done.notes)


def test_a_line_over_the_limit_is_an_error_at_its_line_even_unfinished(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)) + '{"resourceSpans": "' + "x" * 5000, encoding="utf-8")
    with pytest.raises(FormatError) as caught:  # not reread up to its end on every pass: refused past 4,096 bytes
        watch_once(export, golden, out, max_line=4096)
    assert f"{export}:2: a line over the limit of 4,096 bytes" in str(caught.value) and "--max-line" in str(
        caught.value
    )


def test_an_unfinished_last_line_under_the_limit_waits(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    whole = line(trace(2, Q2))
    export.write_text(line(trace(1, Q1)) + whole[:1500], encoding="utf-8")
    assert len(whole) < 4096 and watch_once(export, golden, out, max_line=4096).traces == 1
    append(export, whole[1500:])
    assert watch_once(export, golden, out, max_line=4096).traces == 1


def test_state_survives_a_file_read_with_the_cursor_from_an_earlier_pass(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    watch_once(export, golden, out)
    cursor = json.loads((out / "watch-cursor.json").read_text(encoding="utf-8"))
    entry = next(iter(cursor["files"].values()))
    assert entry["inode"] == os.stat(export).st_ino and entry["offset"] == export.stat().st_size
    assert cursor["counted"] == [tid(1)] and cursor["pending"] is False and len(cursor["run"]) == 1


def test_a_cursor_of_version_1_is_read_on(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    watch_once(export, golden, out)
    _as_version_1(out)
    append(export, line(trace(1, Q1)) + line(trace(2, Q2)))  # a retry of trace 1, and a new trace
    done = watch_once(export, golden, out)
    assert (done.lines, done.traces, done.totals["traces"]) == (2, 1, 2)
    assert [r["query_id"] for r in run_of(out)] == ["q1", "q2"]


def test_a_file_truncated_under_a_cursor_of_version_1_is_read_from_its_start(tmp_path: Path, golden: GoldenSet) -> None:
    # a version-1 cursor has no fingerprints: the size alone tells that the file was cut below the cursor
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)) + line(trace(2, Q2)), encoding="utf-8")
    watch_once(export, golden, out)
    _as_version_1(out)
    rewrite_in_place(export, line(trace(3, Q3)))
    done = watch_once(export, golden, out)
    assert (done.lines, done.traces, done.totals["traces"]) == (1, 1, 3)
    assert any("shrank since the last pass: read from the start" in note for note in done.notes)
    assert {r["query_id"]: r["trace_id"] for r in run_of(out)} == {"q1": tid(1), "q2": tid(2), "q3": tid(3)}


def _as_version_1(out: Path) -> None:
    """The cursor rewritten as version 1 wrote it: per file inode, offset and line only (no size, no fingerprints)."""
    cursor = json.loads((out / "watch-cursor.json").read_text(encoding="utf-8"))
    files = {
        key: {"inode": at["inode"], "offset": at["offset"], "line": at["line"]} for key, at in cursor["files"].items()
    }
    old = {"assay": "watch-cursor", "version": 1, "held": [], "totals": cursor["totals"], "files": files}
    (out / "watch-cursor.json").write_text(json.dumps(old), encoding="utf-8")
