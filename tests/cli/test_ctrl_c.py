"""Ctrl-C: ``assay run``, ``build``, ``grade`` and ``eval`` stop within 2 s of SIGINT whatever they are doing, at
twenty moments drawn from a seeded generator while two CPU-bound processes load the machine.

What each command is doing when the signal comes: importing the CLI (the ``fresh`` trials), reading its inputs, or
waiting on something that never answers: ``run`` on a synchronous Python function that sleeps for ten minutes (in a
worker thread: the kernel may hand SIGINT to that thread, which is how Ctrl-C was once swallowed), the others on a
judge server that answers after ten minutes. Each must exit 130, print no traceback, and say how to resume (or,
while importing, that nothing was done). The harness (``ctrl_c_harness.py``) forks the trials from a process that
imported the CLI once, so twenty trials take well under a minute; the timing is measured there.

The bound follows the machine's speed at the time: ``max(2 s, no-op + 1.5 s)``, at most 6 s, the no-op being a
fresh Python that imports the CLI and exits (:func:`noop_seconds`), timed under the same load in the same test
(before and after the trials; the slower counts). On an idle machine the no-op takes under half a second, so the
bound is the 2 s promised; a loaded 2-core machine slows every process, the no-op too (a stop of 2.19 s failed a
fixed 2 s bound once). The cap keeps the teeth where the load is so heavy that the no-op takes seconds (stops
measured there stay under 2 s: ``python bench/interrupt.py``): a stop of 6 s is a command doing work after the
signal, and one that waits for its work in flight (ten minutes here) is killed as hung 8 s after the signal and
fails on its status. A fresh trial's moment falls after the time the program takes to reach assay's own code under
that load (:func:`startup_seconds`): a Ctrl-C sooner is the interpreter's to answer. A trial that misses the bound
is run once more, with the no-op timed again: the load of a shared machine comes in bursts (a stop missed the
bound once in a fresh clone while another suite and a pip install shared the two cores), and a burst seldom
strikes the same trial twice, while a command that really stops late misses both times.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines" / "evaluate"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "targets"))
from evaluate_fixture import save_golden, weak_lines, write_run
from targets_fixture import make_golden

from assay.testing import FakeOpenAIServer

HARNESS = Path(__file__).with_name("ctrl_c_harness.py")
TINY = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "tiny"
LIMIT = 2.0  # seconds from SIGINT to exit, on an idle machine
MARGIN = 1.5  # seconds allowed beyond a no-op's time on a loaded one
CAP = 6.0  # seconds, whatever the load (the harness gives up on a command at 8)
TRIALS = 20
SEED = 30
HUNG_APP = """
import os, time

def answer(question, query_id):
    if int(query_id[1:]) > 2:
        time.sleep(600)  # hung: no timeout would end it before the test
    return {"retrieved": ["c" + query_id[1:]], "answer": "yes"}
"""


@pytest.fixture
def load() -> Iterator[None]:
    """Two CPU-bound processes for the length of the test."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def noop_seconds(times: int = 3) -> float:
    """The median wall time of a fresh Python that imports the CLI and exits: what the machine's load costs any
    process at the moment."""
    took = []
    for _ in range(times):
        began = time.monotonic()
        subprocess.run([sys.executable, "-c", "import assay.cli"], check=True, timeout=120)
        took.append(time.monotonic() - began)
    return statistics.median(took)


def startup_seconds(times: int = 3) -> float:
    """The slowest of ``times`` starts of what the ``assay`` program runs before assay can answer a Ctrl-C (the
    interpreter, its site hooks, the entry script and the ``assay`` package): a signal sooner is the interpreter's
    to answer (a traceback), so the fresh trials' moments start after it."""
    took = []
    for _ in range(times):
        began = time.monotonic()
        subprocess.run([sys.executable, "-c", "import re, assay.__main__"], check=True, timeout=120)
        took.append(time.monotonic() - began)
    return max(took)


def stop_bound(noop: float) -> float:
    """Seconds a stop may take when a no-op takes ``noop`` (module docstring)."""
    return min(max(LIMIT, noop + MARGIN), CAP)


def commands(tmp: Path, judge_url: str) -> dict[str, list[str]]:
    """One command line per command under test, each of which waits forever once it has started its work."""
    make_golden(4).save(tmp / "targets_golden")
    (tmp / "hung_app.py").write_text(HUNG_APP, encoding="utf-8")
    golden = save_golden(tmp / "golden")
    run = write_run(tmp / "weak.jsonl", weak_lines())  # chunks without a label: the judge is asked
    pairs = tmp / "pairs.jsonl"
    pairs.write_text(json.dumps({"query_id": "q1", "question": "what?", "chunk_id": "c1", "text": "Fact."}) + "\n")
    judge = ["--judge", "openai/fake", "--api-base", judge_url, "--api-key", "k", "--timeout", "900"]
    return {
        "run": ["run", str(tmp / "targets_golden"), "--target", "python:hung_app:answer", "-o", "{out}/run.jsonl",
                "--cache-dir", "{out}/answers", "--label", "v1", "--timeout", "900"],
        "build": ["build", str(TINY), "-o", "{out}/golden", *judge, "--questions", "1", "--cache-dir", "{out}/cache"],
        "grade": ["grade", str(pairs), "-o", "{out}/labels.jsonl", *judge, "--cache-dir", "{out}/cache"],
        "eval": ["eval", str(golden), str(run), "-o", "{out}/report", *judge, "--cache-dir", "{out}/cache"],
    }  # fmt: skip


def plan_trials(
    tmp: Path, commands: dict[str, list[str]], trials: int = TRIALS, startup: float = 0.0
) -> list[dict[str, Any]]:
    """Twenty trials (``trials``): the four commands in turn; the last four start the program afresh with the moment
    while it imports (``startup`` seconds after the start at least: :func:`startup_seconds`), the others are forked
    with the moment anywhere in the first 1.5 s of their work."""
    rng = random.Random(SEED)
    plan = []
    for n in range(trials):
        name = list(commands)[n % len(commands)]
        fresh = n >= trials - len(commands)
        out = tmp / f"trial{n}"
        out.mkdir()
        argv = [arg.replace("{out}", str(out)) for arg in commands[name]]
        moment = round(startup + rng.uniform(0.05, 1.0) if fresh else rng.uniform(0.0, 1.5), 3)
        plan.append({"name": name, "argv": argv, "cwd": str(tmp), "env": {}, "moment": moment, "fresh": fresh,
                     "log": str(out / "log.txt")})  # fmt: skip
    return plan


def run_trials(tmp: Path, plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The harness's result per trial: ``{"took", "status", "hung"}``."""
    (tmp / "plan.json").write_text(json.dumps(plan))
    done = subprocess.run([sys.executable, str(HARNESS), str(tmp / "plan.json")], capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_bound_is_2_s_on_an_idle_machine_and_follows_the_no_op_under_load() -> None:
    assert stop_bound(0.3) == LIMIT  # idle: a no-op in 0.3 s, the promised 2 s
    assert stop_bound(1.9) == pytest.approx(3.4)  # loaded: the no-op's own time plus 1.5 s
    assert stop_bound(9.3) == CAP  # so loaded that a no-op takes 9 s: still 6 s at most


def test_ctrl_c_at_twenty_moments_under_load_stops_within_2_s_and_says_how_to_resume(
    tmp_path: Path, load: None
) -> None:
    before, startup = noop_seconds(), startup_seconds()
    with FakeOpenAIServer(latency=600, record=False) as server:  # a judge that never answers in time
        plan = plan_trials(tmp_path, commands(tmp_path, server.url), startup=startup)
        results = run_trials(tmp_path, plan)
    noop = max(before, noop_seconds())  # the load may change during the trials: the slower no-op
    assert len(results) == TRIALS
    report = []
    for trial, result in zip(plan, results, strict=True):
        said = Path(trial["log"]).read_text(encoding="utf-8", errors="replace")
        report.append((trial["name"], trial["fresh"], trial["moment"], result["took"], result["status"], said[-300:]))
    missed = [n for n, row in enumerate(report) if row[3] > stop_bound(noop) or row[4] != 130]
    if missed:  # once more, for a burst of load (module docstring)
        again, noop = _again(tmp_path, [plan[n] for n in missed]), noop_seconds()
        for n, trial, result in zip(missed, again[0], again[1], strict=True):
            said = Path(trial["log"]).read_text(encoding="utf-8", errors="replace")
            report[n] = (trial["name"], trial["fresh"], trial["moment"], result["took"], result["status"], said[-300:])
    slow = [row for row in report if row[3] > stop_bound(noop) or row[4] != 130]
    assert slow == [], (f"no-op {noop:.2f} s, bound {stop_bound(noop):.2f} s; missed first: {missed}", slow)
    for name, fresh, moment, _, _, said in report:
        where = f"{name} (fresh={fresh}) at {moment} s: {said!r}"
        assert "Traceback" not in said, where
        assert "interrupted" in said and ("rerun the same command" in said or "run the command again" in said), where


def _again(tmp: Path, trials: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The trials run once more, each in a folder of its own (``trialN`` -> ``trialN-again``): the plan and the
    harness's results."""
    folder = tmp / "again"
    folder.mkdir()
    plan = []
    for trial in trials:
        first = Path(trial["log"]).parent
        out = first.with_name(first.name + "-again")
        out.mkdir()
        plan.append(trial | {"argv": [arg.replace(str(first), str(out)) for arg in trial["argv"]],
                             "log": str(out / "log.txt")})  # fmt: skip
    return plan, run_trials(folder, plan)
