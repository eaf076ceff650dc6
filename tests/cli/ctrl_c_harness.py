"""Send Ctrl-C to ``assay`` commands at planned moments and time how long each takes to exit (for test_ctrl_c.py).

``python ctrl_c_harness.py PLAN.json`` reads a list of trials, each ``{"argv", "cwd", "env", "moment", "fresh",
"log"}``, runs them one after another and prints one JSON object per trial: ``{"took", "status", "hung"}``.

A trial starts the command, waits ``moment`` seconds, sends SIGINT to it and times its exit (polled every 5 ms; a
command alive 8 s after the signal is killed and marked hung). A ``fresh`` trial runs the installed ``assay``
program, so the moment may fall while it imports; the others are forked from this process once it has imported the
CLI (importing takes seconds on a loaded machine, which would make a test of twenty moments long): the child is a
whole process of its own that runs ``assay.__main__.main`` and exits through the interpreter's normal shutdown, so
threads and exit handlers that could hold it up still do. stdout and stderr go to ``log``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import assay.cli  # noqa: F401  (imported once, before the forks)
from assay.__main__ import main

POLL = 0.005
GIVE_UP = 8.0


def _fork(trial: dict[str, Any]) -> int:
    pid = os.fork()
    if pid:
        return pid
    # the child: never returns into the harness's loop (SystemExit ends it, with the interpreter's shutdown)
    log = os.open(trial["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.chdir(trial["cwd"])
    os.environ.update(trial["env"])
    sys.argv = ["assay", *trial["argv"]]
    main()
    sys.exit(0)


def _spawn(trial: dict[str, Any]) -> subprocess.Popen[bytes]:
    program = str(Path(sys.executable).parent / "assay")
    with open(trial["log"], "wb") as log:
        return subprocess.Popen([program, *trial["argv"]], cwd=trial["cwd"], env={**os.environ, **trial["env"]},
                                stdout=log, stderr=log)  # fmt: skip


def _wait(pid: int, sent: float) -> tuple[float, int | None]:
    while time.monotonic() - sent < GIVE_UP:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return time.monotonic() - sent, os.waitstatus_to_exitcode(status)
        time.sleep(POLL)
    return time.monotonic() - sent, None


def trial(plan: dict[str, Any]) -> dict[str, Any]:
    pid = _spawn(plan).pid if plan["fresh"] else _fork(plan)
    time.sleep(plan["moment"])
    sent = time.monotonic()
    os.kill(pid, signal.SIGINT)
    took, status = _wait(pid, sent)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return {"took": round(took, 3), "status": status, "hung": status is None}


if __name__ == "__main__":
    for one in json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")):
        print(json.dumps(trial(one)), flush=True)
