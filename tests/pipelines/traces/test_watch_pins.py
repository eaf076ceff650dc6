"""``traces watch`` pinned further (found by the mutation habit): the sample's bound; each note's words; held spans
let go by when their trace last ended, down to the limit and no further, and no note at the limit; a trace that
arrives late never replaces the newer one the run holds; fingerprints of 32 hex digits; a held span keeps its events
from pass to pass; a cursor of version 1 is upgraded once, whatever it lacks (a run file, a files entry, a run line's
start), into a version-2 cursor with every field, and a pass after the upgrade with nothing new evaluates nothing."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "formats"))
from otlp_fixture import span
from watch_fixture import Q1, Q2, Q3, append, line, rewrite_in_place, run_of, save_passages_golden, trace

from assay.errors import FormatError, InputError
from assay.formats.golden import GoldenSet
from assay.pipelines.traces import watch
from assay.pipelines.traces.watch import sampled, watch_once


@pytest.fixture
def golden(tmp_path: Path) -> GoldenSet:
    return GoldenSet.load(save_passages_golden(tmp_path / "golden"))


def _cursor(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / "watch-cursor.json").read_text(encoding="utf-8"))
    return loaded


def _write_version_1(out: Path, files: dict[str, Any] | None) -> None:
    old: dict[str, Any] = {"assay": "watch-cursor", "version": 1, "held": [], "totals": {}}
    if files is not None:
        old["files"] = files
    out.mkdir(parents=True, exist_ok=True)
    (out / "watch-cursor.json").write_text(json.dumps(old), encoding="utf-8")


def test_a_held_span_keeps_its_events_from_pass_to_pass(tmp_path: Path, golden: GoldenSet) -> None:
    event = {"name": "exception", "attributes": [{"key": "exception.type", "value": {"stringValue": "KeyError"}}]}
    child = span(7, 2, 1, name="Retriever", events=[event])  # its root (span 1) has not arrived
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line([child]), encoding="utf-8")
    watch_once(export, golden, out)
    held = [["exception", {"exception.type": "KeyError"}]]
    assert [s["events"] for s in _cursor(out)["held"]] == [held]
    watch_once(export, golden, out)  # nothing new: the held span is read back from the cursor and written again
    assert [s["events"] for s in _cursor(out)["held"]] == [held]


def test_a_version_1_cursor_without_a_run_file_or_files_is_upgraded_once(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    _write_version_1(out, files=None)  # no files entry, no watch-run.jsonl: the file is read from its start
    done = watch_once(export, golden, out)
    assert (done.lines, done.traces) == (1, 1)
    cursor = _cursor(out)
    assert cursor["version"] == 2 and cursor["counted"] == [f"{1:032x}"]


def test_a_pass_after_an_upgrade_with_nothing_new_evaluates_nothing(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    calls: list[Path] = []
    watch_once(export, golden, out, evaluate=calls.append)
    assert len(calls) == 1
    cursor = _cursor(out)
    files = {
        key: {"inode": at["inode"], "offset": at["offset"], "line": at["line"]} for key, at in cursor["files"].items()
    }
    _write_version_1(out, files)
    done = watch_once(export, golden, out, evaluate=calls.append)
    assert (done.lines, done.traces, done.evaluated, len(calls)) == (0, 0, False, 1)
    assert _cursor(out)["pending"] is False


def test_an_upgraded_entry_of_a_file_skipped_in_its_pass_is_written_whole(tmp_path: Path, golden: GoldenSet) -> None:
    folder, out = tmp_path / "exports", tmp_path / "out"
    folder.mkdir()
    good, bad = folder / "a.jsonl", folder / "b.jsonl"
    good.write_text(line(trace(1, Q1)), encoding="utf-8")
    bad.write_text(line(trace(2, Q2)), encoding="utf-8")
    watch_once(folder, golden, out)
    cursor = _cursor(out)
    files = {
        key: {"inode": at["inode"], "offset": at["offset"], "line": at["line"]} for key, at in cursor["files"].items()
    }
    _write_version_1(out, files)
    append(bad, "{oops\n")  # b.jsonl cannot be read this pass: its (upgraded) entry is kept as it is
    done = watch_once(folder, golden, out)
    assert any("skipped" in note and "b.jsonl" in note for note in done.notes)
    entry = _cursor(out)["files"][str(bad.resolve())]
    assert entry == files[str(bad.resolve())] | {"size": entry["offset"], "head": None, "tail": None, "document": False}
    assert _cursor(out)["version"] == 2


def tid(n: int) -> str:
    return f"{n:032x}"


def test_a_trace_is_sampled_strictly_below_its_share_of_the_32_bit_range() -> None:
    # CRC-32 of the ASCII ids: tid(2) -> 1,325,200,380 and tid(1) -> 3,623,199,302 (above 2**31)
    assert not sampled(tid(2), 1_325_200_380 / 2**32)  # exactly at the bound: out
    assert sampled(tid(2), 1_325_200_381 / 2**32)
    assert not sampled(tid(1), 0.5) and sampled(tid(2), 0.5)
    assert sampled(tid(1), 1.0)


def test_a_file_under_another_inode_is_said_to_be_replaced(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    watch_once(export, golden, out)
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text(line(trace(2, Q2)), encoding="utf-8")
    os.replace(fresh, export)  # both files exist at once: the new one has another inode
    done = watch_once(export, golden, out)
    assert f"{export} was replaced (another inode) since the last pass: read from the start." in done.notes
    rewrite_in_place(export, line(trace(3, Q3)) + line(trace(4, Q1)))  # longer, other bytes, the same inode
    done = watch_once(export, golden, out)
    assert f"{export} was replaced (same inode, other bytes) since the last pass: read from the start." in done.notes


def test_a_document_rewritten_to_another_size_is_said_so(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.json", tmp_path / "out"
    export.write_text(json.dumps(json.loads(line(trace(1, Q1))), indent=2), encoding="utf-8")
    watch_once(export, golden, out)
    export.write_text(json.dumps(json.loads(line(trace(1, Q1), trace(2, Q2))), indent=2), encoding="utf-8")
    done = watch_once(export, golden, out)
    assert f"{export} was rewritten (another size) since the last pass: read from the start." in done.notes


def test_the_fingerprints_are_the_first_32_hex_digits_of_sha256(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    text = line(trace(1, Q1))
    export.write_text(text, encoding="utf-8")
    watch_once(export, golden, out)
    entry = _cursor(out)["files"][str(export.resolve())]
    digest = hashlib.sha256(text.encode("utf-8")[:4096]).hexdigest()
    assert len(text) < 4096 and (entry["head"], entry["tail"]) == (digest[:32], digest[:32])
    assert (_cursor(out)["assay"], _cursor(out)["version"]) == ("watch-cursor", 2)  # the file says what it is


def test_the_notes_of_retries_kinds_and_unmatched_traces_are_worded(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    near = Q2.replace("weigh", "weight")  # one word off: a near question
    other = "Which colours does the Brackenhow tent come in?"
    batch = line(trace(1, Q1), trace(2, near), trace(3, other))
    export.write_text(batch + batch, encoding="utf-8")
    done = watch_once(export, golden, out)
    assert done.notes == [
        "9 span(s) read again (the same trace id and span id, or a trace already counted: a collector's retry) "
        "counted once.",
        "matched by kind: 1 question, 1 near question, 1 none",
        "1 sampled trace(s) match no golden question (left out).",
    ]


def test_a_trace_that_arrives_late_does_not_replace_the_newer_one_in_the_run(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(5, Q1)), encoding="utf-8")  # started at 500 ms
    watch_once(export, golden, out)
    append(export, line(trace(1, Q1), trace(6, Q2)))  # trace 1 started at 100 ms: older than trace 5
    done = watch_once(export, golden, out)
    assert done.traces == 2
    assert [(r["query_id"], r["trace_id"]) for r in run_of(out)] == [("q1", tid(5)), ("q2", tid(6))]


def test_a_version_1_run_line_without_its_start_is_replaced_by_a_new_trace(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    watch_once(export, golden, out)
    cursor = _cursor(out)
    files = {
        key: {"inode": at["inode"], "offset": at["offset"], "line": at["line"]} for key, at in cursor["files"].items()
    }
    _write_version_1(out, files)
    old_line = {key: value for key, value in run_of(out)[0].items() if key != "start_ns"}
    header = (out / "watch-run.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (out / "watch-run.jsonl").write_text(header + "\n" + json.dumps(old_line) + "\n", encoding="utf-8")
    append(export, line(trace(2, Q1)))
    watch_once(export, golden, out)
    assert [(r["query_id"], r["trace_id"]) for r in run_of(out)] == [("q1", tid(2))]


def _held_ending(tmp_path: Path, ends: dict[int, int]) -> Path:
    """An export of rootless traces (two spans each), trace n's spans ending at ``ends[n]`` ms."""
    spans = []
    for n, end in ends.items():
        spans += [span(n, 2, 1, start_ms=0, end_ms=end), span(n, 3, 1, start_ms=0, end_ms=end - 1)]
    export = tmp_path / "t.jsonl"
    export.write_text(line(spans), encoding="utf-8")
    return export


def test_held_traces_are_let_go_by_their_last_end_down_to_the_limit_and_no_further(
    tmp_path: Path, golden: GoldenSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    # trace 1 ended last (900 ms), trace 3 first (100 ms), trace 2 in between; 6 spans held, limit 4: only trace 3
    export = _held_ending(tmp_path, {1: 900, 2: 500, 3: 100})
    monkeypatch.setattr(watch, "HELD_KEPT", 4)
    done = watch_once(export, golden, tmp_path / "out")
    assert (done.abandoned, done.held_spans) == (1, 4)
    assert sorted({s["trace_id"] for s in _cursor(tmp_path / "out")["held"]}) == [tid(1), tid(2)]
    assert done.notes == [
        "1 incomplete trace(s) abandoned: their root span never arrived and more than 4 spans were held (the oldest "
        "let go first)."
    ]


def test_held_spans_exactly_at_the_limit_are_kept_without_a_note(
    tmp_path: Path, golden: GoldenSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = _held_ending(tmp_path, {1: 900, 2: 500})
    monkeypatch.setattr(watch, "HELD_KEPT", 4)
    done = watch_once(export, golden, tmp_path / "out")
    assert (done.abandoned, done.held_spans, done.notes) == (0, 4, [])


@pytest.mark.parametrize("rate", [0.0, -0.5, 1.5])
def test_a_sample_rate_outside_zero_to_one_is_refused(tmp_path: Path, golden: GoldenSet, rate: float) -> None:
    export = tmp_path / "t.jsonl"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        watch_once(export, golden, tmp_path / "out", rate=rate)
    assert str(caught.value) == (f"--sample {rate}: give a rate above 0 and at most 1 (the share of traces evaluated)")


def test_each_step_of_a_pass_is_named_and_the_out_folder_made_with_its_parents(
    tmp_path: Path, golden: GoldenSet
) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "not" / "yet" / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    steps: list[str] = []
    done = watch_once(export, golden, out, evaluate=lambda _run: None, checkpoint=steps.append)
    assert steps == ["read", "commit", "committed", "run", "evaluated"] and done.evaluated is True
    header = json.loads((out / "watch-run.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert (header["assay"], header["target"]) == ("runs", "traces watch")
    steps.clear()
    done = watch_once(export, golden, out, checkpoint=steps.append)  # nothing new: no run written, none evaluated
    assert steps == ["read", "commit", "committed"]
    assert (done.run_lines, done.evaluated) == (1, False)


def test_a_trace_the_rules_refuse_is_named_at_the_watched_file_and_line(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    kindless = span(1, 1, name="Retriever", attrs={"llm.model_name": "m"})  # an LLM attribute without a kind
    export.write_text(line(trace(2, Q2)) + line([kindless]), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, out)
    assert (caught.value.path, caught.value.line) == (str(export), 2)


def test_a_folder_watches_its_json_files_only_and_counts_the_lines_of_each(tmp_path: Path, golden: GoldenSet) -> None:
    folder, out = tmp_path / "exports", tmp_path / "out"
    folder.mkdir()
    (folder / "a.jsonl").write_text(line(trace(1, Q1)) + line(trace(2, Q2)), encoding="utf-8")
    (folder / "b.json").write_text(line(trace(3, Q3)), encoding="utf-8")
    (folder / "notes.txt").write_text("not an export\n", encoding="utf-8")
    (folder / "old.jsonl").mkdir()  # a folder with an export's name
    done = watch_once(folder, golden, out)
    assert (done.files, done.lines, done.traces, done.notes) == (2, 3, 3, ["matched by kind: 3 question"])


def test_a_source_that_does_not_exist_is_refused(tmp_path: Path, golden: GoldenSet) -> None:
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(InputError) as caught:
        watch_once(missing, golden, tmp_path / "out")
    assert str(caught.value) == (
        f"{missing}: no such file or folder (give the OTLP export file, or the folder of them)"
    )


def test_the_only_file_watched_that_cannot_be_opened_is_named(
    tmp_path: Path, golden: GoldenSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = tmp_path / "t.jsonl"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")

    def denied(*_args: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(watch, "_read_new", denied)
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, tmp_path / "out")
    assert (caught.value.path, caught.value.line, caught.value.problem) == (
        str(export),
        None,
        "cannot read: Permission denied",
    )


def test_a_document_counts_no_lines_and_unchanged_is_passed_over_without_a_note(
    tmp_path: Path, golden: GoldenSet
) -> None:
    export, out = tmp_path / "t.json", tmp_path / "out"
    export.write_text(json.dumps(json.loads(line(trace(1, Q1))), indent=2), encoding="utf-8")
    first = watch_once(export, golden, out)
    assert (first.lines, first.traces) == (0, 1)
    again = watch_once(export, golden, out)
    assert (again.lines, again.traces, again.notes) == (0, 0, [])


def test_a_document_is_read_under_the_line_limit_given(tmp_path: Path, golden: GoldenSet) -> None:
    export = tmp_path / "t.json"
    export.write_text(json.dumps(json.loads(line(trace(1, Q1))), indent=2), encoding="utf-8")
    longest = max(len(text.encode("utf-8")) + 1 for text in export.read_text(encoding="utf-8").splitlines())
    assert watch_once(export, golden, tmp_path / "out", max_line=longest).traces == 1
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, tmp_path / "other", max_line=longest - 2)
    assert "a line over the limit" in caught.value.problem


def test_a_byte_order_mark_is_read_on_the_first_line_only(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_bytes(b"\xef\xbb\xbf" + line(trace(1, Q1)).encode("utf-8"))
    assert watch_once(export, golden, out).traces == 1
    append(export, "\ufeff" + line(trace(2, Q2)))  # on line 2 the mark is a character before the JSON
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, out)
    assert (caught.value.path, caught.value.line) == (str(export), 2)


def test_bad_bytes_are_named_at_their_file_and_line(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_bytes(b'{"a": "\xff"}\n')  # on the first line: found while telling JSON lines from a document
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, out)
    assert (caught.value.path, caught.value.line, caught.value.problem, caught.value.expected) == (
        str(export),
        1,
        "bytes that are not UTF-8 at byte 8",
        "UTF-8",
    )
    export.write_bytes(line(trace(1, Q1)).encode("utf-8") + b'{"a": "\xff"}\n')
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, out)
    assert (caught.value.path, caught.value.line) == (str(export), 2)


def test_an_empty_file_is_watched_without_error(tmp_path: Path, golden: GoldenSet) -> None:
    export = tmp_path / "t.jsonl"
    export.write_text("\n\n", encoding="utf-8")
    done = watch_once(export, golden, tmp_path / "out")
    assert (done.lines, done.traces, done.notes) == (2, 0, [])  # two blank lines read, no trace


def test_a_first_line_over_the_limit_is_named_at_the_file(tmp_path: Path, golden: GoldenSet) -> None:
    export = tmp_path / "t.jsonl"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, tmp_path / "out", max_line=100)
    assert (caught.value.path, caught.value.line) == (str(export), 1)


def test_lines_read_in_a_later_pass_are_numbered_on_from_the_cursor(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)) + line(trace(2, Q2)), encoding="utf-8")
    watch_once(export, golden, out)
    append(export, line(trace(3, Q3)))
    watch_once(export, golden, out)
    assert next(iter(_cursor(out)["files"].values()))["line"] == 3
    append(export, "{oops\n")
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, out)
    assert (caught.value.path, caught.value.line) == (str(export), 4)


def test_a_first_pass_with_no_trace_writes_no_run_and_evaluates_nothing(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)[1:]), encoding="utf-8")  # a trace without its root: held, not counted
    calls: list[Path] = []
    done = watch_once(export, golden, out, evaluate=calls.append)
    assert (done.held_spans, done.evaluated, calls) == (2, False, [])
    assert not (out / "watch-run.jsonl").exists() and _cursor(out)["pending"] is False


def test_a_cursor_that_is_not_json_or_of_another_version_is_refused(tmp_path: Path, golden: GoldenSet) -> None:
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    export.write_text(line(trace(1, Q1)), encoding="utf-8")
    out.mkdir()
    cursor = out / "watch-cursor.json"
    cursor.write_text('{"version": 2,\n oops}\n', encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, out)
    assert (caught.value.path, caught.value.line, caught.value.problem, caught.value.expected) == (
        str(cursor),
        2,
        "invalid JSON: Expecting property name enclosed in double quotes",
        "the cursor watch writes",
    )
    cursor.write_text('{"version": 3}\n', encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        watch_once(export, golden, out)
    assert (caught.value.path, caught.value.line, caught.value.problem, caught.value.expected) == (
        str(cursor),
        1,
        "not a watch cursor of version 2",
        "the cursor this version of watch writes (delete it to read every trace again)",
    )


def test_a_version_1_run_file_is_read_as_utf_8_under_an_ascii_locale(
    tmp_path: Path, ascii_locale_env: dict[str, str]
) -> None:
    # A question with a non-ASCII character in the old run file: read with the locale's encoding on an ASCII
    # machine, the upgrade would fail (or misread it) instead of carrying the run over.
    out = tmp_path / "out"
    _write_version_1(out, files={})
    header = {"assay": "run", "version": 1}
    row = {"trace_id": f"{5:032x}", "question": "Why is the jacket rated to −10 °C?"}
    (out / "watch-run.jsonl").write_text(
        json.dumps(header) + "\n" + json.dumps(row, ensure_ascii=False) + "\n", "utf-8"
    )
    script = (
        "import json, sys; from pathlib import Path; from assay.pipelines.traces.watch import _load_cursor; "
        "cursor = _load_cursor(Path(sys.argv[1])); print(json.dumps(cursor['run'][0]['question']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(out / "watch-cursor.json")],
        env=ascii_locale_env,
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == row["question"]
