"""The README's target commands run as written: the first block of "Evaluate runs" (demo, assay run, assay eval
--target), the HTTP server of the second, and the release test of "Gate releases in pytest" (by python -m pytest)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent


def _blocks(heading: str, language: str) -> list[str]:
    start = README.index(heading)
    section = README[start : README.index("\n### ", start + 1)]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)


def _run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(line, comments=True)
    argv[0] = str(BIN / argv[0]) if (BIN / argv[0]).exists() else argv[0]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=600)


def test_readme_target_commands_run_as_written(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "datasets" / "demo" / "runs", tmp_path / "datasets" / "demo" / "runs")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    first, second = _blocks("### Evaluate runs", "bash")[:2]
    for line in first.strip().splitlines():
        done = _run(line, tmp_path, env)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    assert (tmp_path / "runs" / "app.jsonl").is_file() and (tmp_path / "report" / "runs" / "app.jsonl").is_file()
    assert "System under test" in (tmp_path / "report" / "report.md").read_text()
    serve, ask = [line for line in second.strip().splitlines() if "8000" in line]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    server = subprocess.Popen(shlex.split(serve.replace("8000", port), comments=True), cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("serving http://127.0.0.1:")
        done = _run(ask.replace("8000", port), tmp_path, env)
        assert done.returncode == 0 and "59 answered" in done.stderr, done.stderr
    finally:
        server.terminate()
        server.wait(timeout=30)
    [release] = _blocks("### Gate releases in pytest", "python")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_release.py").write_text(release, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_release.py", "-p", "no:cacheprovider", "-q"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
