"""``.ci/provide``: under CI=true a test tier that cannot be provided fails the build; elsewhere it only says why.

The tools it calls (``apt-get``, ``python``) are replaced by scripts on PATH, so nothing is installed or built here.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROVIDE = ROOT / ".ci" / "provide"


def tool(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/usr/bin/env bash\n" + body + "\n")
    path.chmod(0o755)


def provide(tmp_path: Path, what: str, *, ci: bool, tools: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in tools.items():
        tool(bin_dir, name, body)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env |= {"PATH": f"{bin_dir}:{env['PATH']}", "ASSAY_CI_CHROMIUM": str(tmp_path / "chromium")}
    if ci:
        env["CI"] = "true"
    return subprocess.run([str(PROVIDE), what], env=env, capture_output=True, text=True, check=False)


FAILING_APT = {"apt-get": "exit 100"}


def test_a_failing_chromium_install_is_a_red_build_under_ci(tmp_path: Path) -> None:
    done = provide(tmp_path, "browser", ci=True, tools=FAILING_APT)
    assert done.returncode == 1
    assert "CI=true: apt-get install chromium failed" in done.stderr


def test_a_failing_chromium_install_only_says_why_outside_ci(tmp_path: Path) -> None:
    done = provide(tmp_path, "browser", ci=False, tools=FAILING_APT)
    assert done.returncode == 0
    assert "apt-get install chromium failed; its tests will skip" in done.stdout


def test_an_install_that_leaves_no_browser_is_a_red_build_under_ci(tmp_path: Path) -> None:
    done = provide(tmp_path, "browser", ci=True, tools={"apt-get": "exit 0"})
    assert done.returncode == 1
    assert f"left no {tmp_path / 'chromium'}" in done.stderr


@pytest.mark.parametrize("ci", [True, False])
def test_an_installed_browser_is_provided(tmp_path: Path, ci: bool) -> None:
    browser = tmp_path / "chromium"
    installs = f'[ "$1" = install ] && printf "#!/bin/sh\\n" > {browser} && chmod +x {browser}'
    done = provide(tmp_path, "browser", ci=ci, tools={"apt-get": installs + "\nexit 0"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize(("ci", "code"), [(True, 1), (False, 0)])
def test_a_local_model_that_cannot_be_built_fails_only_under_ci(tmp_path: Path, ci: bool, code: int) -> None:
    tools = {"python": "exit 1", "cmake": "exit 0", "ninja": "exit 0"}
    done = provide(tmp_path, "local-model", ci=ci, tools=tools)
    assert done.returncode == code
    assert "the local model (llama-server + SmolLM2-135M) was not built" in done.stdout + done.stderr


def test_an_unknown_tier_is_a_usage_error(tmp_path: Path) -> None:
    done = provide(tmp_path, "gpu", ci=True, tools={})
    assert done.returncode == 2 and "usage: .ci/provide browser|local-model" in done.stderr
