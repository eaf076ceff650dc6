"""Test-wide setup: litellm's offline settings, a network guard that fails any test reaching past loopback, user
folders that no test can write, and Ctrl-C restored for the commands the tests start.

Ctrl-C: a shell without job control starts a background job (``pytest &`` in a script, some CI runners) with SIGINT
ignored, and a program inherits that: Python then installs no KeyboardInterrupt handler, and every test that sends
SIGINT to an ``assay`` command it started waits for a command that never hears it. At import this process takes
SIGINT back to Python's default handler when it was ignored, so the commands it starts get the default disposition,
as they would from a terminal.

The user folders, step by step:

1. at import, before any test runs, the folders assay would use are resolved from the real environment
   (:data:`WATCHED`: assay's user cache, config and data folders, and ``ASSAY_CACHE_DIR`` when set) and their files
   listed with sizes and mtimes; the local model's build and weights (:data:`LOCAL_MODEL_CACHE`, which the
   ``real_model`` tier and ``.ci/provide local-model`` legitimately fill) are left out of the list;
2. for the session (session and module fixtures) and again for each test, ``HOME``, ``XDG_*`` and the ``ASSAY_*``
   folder variables point into a temporary home, so every default folder (platformdirs, ``~``) resolves there;
3. at the session's end the listing is made again; any file added, removed or changed fails the session (exit
   status 1) with the files named.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
import pytest

# Before anything imports litellm: bundled price map, no .env loading, no hub downloads.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["LITELLM_MODE"] = "PRODUCTION"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.pop("OPENAI_API_KEY", None)
os.environ.pop("ANTHROPIC_API_KEY", None)

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # inherited from a background launch: see the docstring
    signal.signal(signal.SIGINT, signal.default_int_handler)


class NetworkAccessError(AssertionError):
    """Raised when a test tries to reach anything but loopback."""


_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def _is_loopback(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode()
    host = str(host).strip("[]")
    if host in _LOCAL_NAMES or host == "":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
        raise NetworkAccessError(f"test tried to connect to {address!r}: tests never touch the network")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _is_loopback(host):
        raise NetworkAccessError(f"test tried to resolve {host!r}: tests never touch the network")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _network_guard(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
    yield


# -- user folders (see the module docstring) ------------------------------------------------------------------------

HOME_VARIABLES = {"XDG_CACHE_HOME": ".cache", "XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share",
                  "XDG_STATE_HOME": ".local/state"}  # fmt: skip
# The folders the CLI reads from ASSAY_* variables, under the temporary home as their defaults would be.
ASSAY_FOLDER_VARIABLES = {
    "ASSAY_CACHE_DIR": ".cache/assay/judge",
    "ASSAY_LOCAL_MODEL_CACHE": ".cache/assay/local-model",
}

LOCAL_MODEL_CACHE = Path(os.environ.get("ASSAY_LOCAL_MODEL_CACHE") or Path(platformdirs.user_cache_dir("assay"),
                         "local-model"))  # fmt: skip
WATCHED = tuple(dict.fromkeys(Path(folder) for folder in (
    platformdirs.user_cache_dir("assay"), platformdirs.user_config_dir("assay"), platformdirs.user_data_dir("assay"),
    os.environ.get("ASSAY_CACHE_DIR"),
) if folder))  # fmt: skip


def _listing(roots: tuple[Path, ...], left_out: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``roots`` (the roots themselves and ``left_out`` excluded): path -> (size, mtime
    in ns), folders as (-1, 0)."""
    found: dict[str, tuple[int, int]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if Path(folder, d) != left_out)
            for name in dirs:
                found[str(Path(folder, name))] = (-1, 0)
            for name in files:
                stat = Path(folder, name).lstat()
                found[str(Path(folder, name))] = (stat.st_size, stat.st_mtime_ns)
    return found


BEFORE = _listing(WATCHED, LOCAL_MODEL_CACHE)


def _point_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    for name, below in {**HOME_VARIABLES, **ASSAY_FOLDER_VARIABLES}.items():
        monkeypatch.setenv(name, str(home / below))


@pytest.fixture(scope="session", autouse=True)
def _session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A temporary home for the session's and modules' fixtures (set up before any test's own)."""
    with pytest.MonkeyPatch.context() as patch:
        home = tmp_path_factory.mktemp("session-home")
        _point_home(patch, home)
        yield home


@pytest.fixture(autouse=True)
def _test_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary home of each test's own: nothing one test caches is seen by another."""
    home = tmp_path_factory.mktemp("home")
    _point_home(monkeypatch, home)
    return home


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the session, naming the files, when the user folders of :data:`WATCHED` changed while it ran."""
    after = _listing(WATCHED, LOCAL_MODEL_CACHE)
    changed = sorted(path for path in BEFORE.keys() | after.keys() if BEFORE.get(path) != after.get(path))
    if not changed:
        return
    shown = "\n".join(f"  {path} ({_change(BEFORE.get(path), after.get(path))})" for path in changed[:20])
    more = f"\n  ... and {len(changed) - 20} more" if len(changed) > 20 else ""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = (f"the tests changed the user's folders ({', '.join(map(str, WATCHED))}); a test must write into "
               "its temporary folder, never there (another process writing there meanwhile shows here too):\n"
               f"{shown}{more}")  # fmt: skip
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_sep("=", "user folders changed", red=True)
        reporter.write_line(message)
    else:
        print(message)
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _change(before: tuple[int, int] | None, after: tuple[int, int] | None) -> str:
    return "added" if before is None else "removed" if after is None else "changed"


CHROMIUM = Path("/usr/bin/chromium")
# Flags for Debian's Chromium on a machine without network: no background traffic, no lookups but loopback.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium driven by playwright (never `playwright install`, which downloads a browser).

    Skips when Chromium is absent, unless ASSAY_REQUIRE_BROWSER=1 (as in CI), where that is a failure. Module scope:
    playwright's sync API keeps an event loop running in the main thread while it is open, which would break the
    ``asyncio.run`` of later test modules.
    """
    if not CHROMIUM.exists():
        if os.environ.get("ASSAY_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{CHROMIUM} is missing and ASSAY_REQUIRE_BROWSER=1: apt-get install -y chromium")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass(frozen=True)
class RealModel:
    """A real model server for the ``real_model`` tier: the judge string and api base to pass to the commands."""

    judge: str
    api_base: str
    slots: int


@pytest.fixture(scope="session")
def real_model() -> Iterator[RealModel]:
    """llama.cpp's server with SmolLM2-135M on 127.0.0.1, for the ``real_model`` tier.

    ``ASSAY_REAL_MODEL_URL`` (with ``ASSAY_REAL_MODEL_JUDGE``) points at a server already running. Otherwise the
    server is started from the cache that ``python -m assay.testing.local_model build`` fills (the tests never
    build it: that takes minutes). Skips with the reason when neither can be had, unless ASSAY_REQUIRE_REAL_MODEL=1
    (as in CI), where that is a failure.
    """
    url = os.environ.get("ASSAY_REAL_MODEL_URL")
    if url:
        yield RealModel(os.environ.get("ASSAY_REAL_MODEL_JUDGE", "hosted_vllm/smollm2-135m"), url, 4)
        return
    from assay.testing.local_model import LocalModelError, LocalModelServer

    try:  # the tool cache as the real environment names it (the tests' own homes are temporary)
        server = LocalModelServer.start(cache_dir=LOCAL_MODEL_CACHE, build=False)
    except LocalModelError as exc:
        if os.environ.get("ASSAY_REQUIRE_REAL_MODEL") == "1":
            pytest.fail(f"ASSAY_REQUIRE_REAL_MODEL=1 but no real model server could be started: {exc}")
        pytest.skip(f"no local model server ({exc})")
    with server:
        yield RealModel(server.judge, server.api_base, server.slots)


@pytest.fixture
def ascii_locale_env() -> dict[str, str]:
    """The environment of a machine whose locale encoding is ASCII: the C locale with Python's UTF-8 mode and locale
    coercion off, so a text file opened without an explicit encoding is read and written as ASCII (and fails on a
    degree sign). Checked, so that a Python that ignored these variables could not make a test of it pass vacuously.
    The child imports the same ``assay`` as this process (its folder first on PYTHONPATH): under the mutation script
    that is the mutated copy, so a test run in the child can kill a mutant."""
    import assay

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONUTF8", "PYTHONIOENCODING"))}
    env |= {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    src = str(Path(assay.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    probe = "import locale, sys; print(locale.getpreferredencoding(False), sys.flags.utf8_mode)"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["ANSI_X3.4-1968", "0"], f"not an ASCII locale: {done.stdout}"
    return env
