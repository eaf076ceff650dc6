"""``traces watch`` killed (``os._exit``, as kill -9 leaves a process: nothing flushed, nothing cleaned up) at points
of its passes chosen by a seed, then run again: the counts, the run and the report equal those of passes never
interrupted. Before the run and the cursor were committed together, a kill after the run was written and before
the cursor lost the traces it held from every later count."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from watch_fixture import Q1, Q2, Q3, append, line, save_passages_golden, trace

from assay.formats.golden import GoldenSet
from assay.pipelines.traces.watch import watch_once

SRC = Path(__file__).resolve().parents[3] / "src"
KILLED = 137
STEPS = 5  # checkpoints of a pass over one file whose run changes: read, commit, committed, run, evaluated

# A pass that dies at its DIE-th checkpoint (never when DIE is 0); "evaluation" is a copy of the run, the report.
PASS = """
import os, shutil, sys
from pathlib import Path
from assay.formats.golden import GoldenSet
from assay.pipelines.traces.watch import watch_once
source, golden, out, die = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
calls = []
def checkpoint(name):
    calls.append(name)
    if len(calls) == die:
        os._exit(137)
watch_once(source, GoldenSet.load(golden), out, evaluate=lambda run: shutil.copy(run, out / "report.txt"),
           checkpoint=checkpoint)
"""

# What lands in the export before each pass: new traces, a trace split over two passes, a collector's retry.
ARRIVALS = [
    line(trace(1, Q1), trace(2, Q2)) + line(trace(3, "Do you ship to Mars?")[1:]),
    line(trace(3, "Do you ship to Mars?")[:1]) + line(trace(4, Q3)),
    line(trace(1, Q1), trace(2, Q2)) + line(trace(5, Q1)),
    line(trace(6, "how much does the Brackenhow 4 tnet weigh")),
]


def one_pass(export: Path, golden: Path, out: Path, die: int) -> int:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    args = [sys.executable, "-c", PASS, str(export), str(golden), str(out), str(die)]
    return subprocess.run(args, env=env, check=False, timeout=60).returncode


def calm_pass(export: Path, golden: Path, out: Path) -> None:
    """A pass in this process, never interrupted, with the same stand-in evaluation."""
    watch_once(export, GoldenSet.load(golden), out, evaluate=lambda run: shutil.copy(run, out / "report.txt"))


def state(out: Path) -> tuple[Any, ...]:
    cursor = json.loads((out / "watch-cursor.json").read_text(encoding="utf-8"))
    run = (out / "watch-run.jsonl").read_text(encoding="utf-8")
    report = (out / "report.txt").read_text(encoding="utf-8")
    return cursor["totals"], cursor["counted"], cursor["held"], cursor["run"], cursor["pending"], run, report


@pytest.mark.parametrize("seed", [1, 2])
def test_a_kill_at_seeded_points_neither_loses_nor_double_counts(tmp_path: Path, seed: int) -> None:
    golden = save_passages_golden(tmp_path / "golden")
    calm, calm_out = tmp_path / "calm.jsonl", tmp_path / "calm"
    export, out = tmp_path / "t.jsonl", tmp_path / "out"
    calm.write_text("", encoding="utf-8")
    export.write_text("", encoding="utf-8")
    rng = random.Random(seed)
    for arrival in ARRIVALS:
        append(calm, arrival)
        append(export, arrival)
        calm_pass(calm, golden, calm_out)
        die = rng.randint(1, STEPS)
        assert one_pass(export, golden, out, die) == KILLED
        calm_pass(export, golden, out)  # run again after the kill
        assert state(out) == state(calm_out), f"killed at checkpoint {die}"
    totals = state(out)[0]
    # 6 traces (1 and 2 twice), "Mars" matches nothing
    assert totals == {"traces": 6, "sampled": 6, "matched": 5, "abandoned": 0}


def test_every_checkpoint_of_a_pass_is_a_safe_place_to_die(tmp_path: Path) -> None:
    golden = save_passages_golden(tmp_path / "golden")
    calm, calm_out = tmp_path / "calm.jsonl", tmp_path / "calm"
    calm.write_text(ARRIVALS[0], encoding="utf-8")
    calm_pass(calm, golden, calm_out)
    for die in range(1, STEPS + 1):
        export, out = tmp_path / f"t{die}.jsonl", tmp_path / f"out{die}"
        export.write_text(ARRIVALS[0], encoding="utf-8")
        assert one_pass(export, golden, out, die) == KILLED
        calm_pass(export, golden, out)  # run again after the kill
        assert state(out) == state(calm_out), f"killed at checkpoint {die}"
