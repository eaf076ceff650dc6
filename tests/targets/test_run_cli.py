"""``assay run`` end to end: the run file, exit codes, the label, the secret check (a known secret searched for in
every file written), and kill -9 in the middle of a run (nothing finished is lost; the rerun asks only the rest)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from targets_fixture import make_golden

from assay.cli import main
from assay.formats.jsonl import iter_json_lines, read_header
from assay.testing.fake_target import FakeTarget

SECRET = "sk-test-5ecret-value-0042"


def run(*args: str | Path, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    make_golden(4).save(tmp_path / "golden")
    return tmp_path / "golden"


APP = """
calls = []

def answer(question, query_id):
    calls.append(query_id)
    if query_id == "q4":
        raise RuntimeError("no index for q4")
    return {"retrieved": ["c" + query_id[1:]], "answer": "yes"}
"""


def test_python_target_from_the_working_directory(golden: Path, tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "my_rag_app.py").write_text(APP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out, cache = tmp_path / "runs" / "app.jsonl", tmp_path / "cache"
    args = ("run", golden, "--target", "python:my_rag_app:answer", "-o", out, "--cache-dir", cache, "--label", "v1")
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert "4 questions, 3 answered (0 from the cache), 1 failed (1 exception), 0 retries" in result.output
    head = read_header(out)
    assert head is not None and (head.target, head.label) == ("python:my_rag_app:answer", "v1")
    lines = [obj for _, obj in iter_json_lines(out, kind="runs")]
    assert lines[3] == {"query_id": "q4", "error": {"kind": "exception", "message": "RuntimeError: no index for q4"}}
    again = run(*args)
    assert "4 questions, 3 answered (3 from the cache), 1 failed" in again.output
    import my_rag_app  # the module the command imported, with its call log

    assert my_rag_app.calls.count("q1") == 1 and my_rag_app.calls.count("q4") == 2


def test_no_answer_at_all_exits_1_with_the_reason(golden: Path, tmp_path: Path) -> None:
    with FakeTarget(fault=lambda body, attempt: "400") as server:
        result = run("run", golden, "--target", server.url, "-o", tmp_path / "r.jsonl", "--cache-dir", tmp_path / "c")
    assert result.exit_code == 1
    assert "the target answered none of 4 questions" in result.output and "4 http_status" in result.output
    assert "HTTP 400" in result.output


def test_flags_of_another_kind_are_refused(golden: Path, tmp_path: Path) -> None:
    result = run("run", golden, "--target", "python:textwrap:dedent", "--map", "answer=/a", "-o", tmp_path / "r.jsonl")
    assert result.exit_code == 1 and "--body, --map and --header are for http(s) targets" in result.output
    result = run("run", golden, "--target", "http://127.0.0.1:9/x?k=${NOT_SET_ANYWHERE}", "-o", tmp_path / "r.jsonl")
    assert result.exit_code == 1
    assert "environment variable NOT_SET_ANYWHERE is named in the target but not set" in result.output
    assert not (tmp_path / "r.jsonl").exists()


def test_a_known_secret_is_written_nowhere(golden: Path, tmp_path: Path) -> None:
    def fault(body: dict[str, Any], attempt: int) -> str | None:
        return "400" if body["query_id"] == "q2" else None  # its error body quotes the URL with the key

    out, cache = tmp_path / "runs" / "prod.jsonl", tmp_path / "cache"
    with FakeTarget(fault=fault) as server:
        url = server.url + "?key=${RAG_TOKEN}"
        result = run("run", golden, "--target", url, "--header", "Authorization: Bearer ${RAG_TOKEN}",
                     "--body", '{"q": "{question}", "query_id": "{query_id}", "auth": "${RAG_TOKEN}"}',
                     "-o", out, "--cache-dir", cache, env={"RAG_TOKEN": SECRET})  # fmt: skip
        seen = server.requests
    assert result.exit_code == 0, result.output
    assert all(r["headers"]["authorization"] == f"Bearer {SECRET}" and r["body"]["auth"] == SECRET for r in seen)
    assert all(r["path"].endswith(f"?key={SECRET}") for r in seen)
    error = next(obj["error"] for _, obj in iter_json_lines(out, kind="runs") if "error" in obj)
    assert "?key=${RAG_TOKEN}" in error["message"]  # the reply quoted the key: put back as its name
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert out in written and any(p.is_relative_to(cache) for p in written)
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
        assert SECRET not in path.name
    assert SECRET not in result.output


SLOW_APP = """
import json, os, sys, time

def answer(question, query_id):
    with open(os.environ["CALL_LOG"], "a") as log:
        log.write(query_id + "\\n")
    if int(query_id[1:]) > int(os.environ["ANSWER_UP_TO"]):
        time.sleep(600)
    return {"retrieved": ["c" + query_id[1:]], "answer": "yes"}
"""


def _wait_for_lines(path: Path, n: int, process: subprocess.Popen[bytes]) -> None:
    """Until ``path`` has ``n`` lines (the run's answers cache), or the process ended (then fail)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if path.is_file() and len(path.read_text(encoding="utf-8").splitlines()) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run never kept {n} answers (exit {process.poll()})")


def test_kill_9_mid_run_loses_nothing_and_the_rerun_asks_only_the_rest(tmp_path: Path) -> None:
    make_golden(10).save(tmp_path / "golden")
    (tmp_path / "slow_app.py").write_text(SLOW_APP, encoding="utf-8")
    log, cache, out = tmp_path / "calls.log", tmp_path / "cache", tmp_path / "run.jsonl"
    env = {**os.environ, "CALL_LOG": str(log), "ANSWER_UP_TO": "6"}
    cmd = [str(Path(sys.executable).parent / "assay"), "run", str(tmp_path / "golden"), "--target",
           "python:slow_app:answer", "-o", str(out), "--cache-dir", str(cache), "--label", "v1",
           "--concurrency", "10"]  # fmt: skip
    process = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (cache.exists() and os.listdir(cache)) and time.monotonic() < deadline:
            time.sleep(0.05)
        _wait_for_lines(cache / os.listdir(cache)[0], 6, process)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert not out.exists()  # the run file appears only when complete
    first = log.read_text().split()
    assert sorted(first, key=lambda q: int(q[1:])) == [f"q{i}" for i in range(1, 11)]  # all were asked at once
    log.unlink()
    env["ANSWER_UP_TO"] = "10"
    done = subprocess.run(cmd, check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(log.read_text().split(), key=lambda q: int(q[1:])) == ["q7", "q8", "q9", "q10"]
    assert "10 questions, 10 answered (6 from the cache), 0 failed" in done.stderr
    lines = [obj for _, obj in iter_json_lines(out, kind="runs")]
    assert [line["retrieved"] for line in lines] == [[f"c{i}"] for i in range(1, 11)]
    assert json.loads(out.read_text().splitlines()[0])["label"] == "v1"


def test_ctrl_c_writes_no_run_keeps_the_answers_and_says_how_to_resume(tmp_path: Path) -> None:
    make_golden(4).save(tmp_path / "golden")
    (tmp_path / "slow_app.py").write_text(SLOW_APP, encoding="utf-8")
    cache = tmp_path / "cache"
    env = {**os.environ, "CALL_LOG": str(tmp_path / "calls.log"), "ANSWER_UP_TO": "2"}
    cmd = [str(Path(sys.executable).parent / "assay"), "run", str(tmp_path / "golden"), "--target",
           "python:slow_app:answer", "-o", str(tmp_path / "run.jsonl"), "--cache-dir", str(cache),
           "--label", "v1"]  # fmt: skip
    process = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (cache.exists() and os.listdir(cache)) and time.monotonic() < deadline:
        time.sleep(0.05)
    _wait_for_lines(cache / os.listdir(cache)[0], 2, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert f"every finished answer is kept in {cache}: rerun the same command" in " ".join(err.split()), err
    assert not (tmp_path / "run.jsonl").exists()
