"""Test-wide setup: litellm's offline settings, and a network guard that fails any test reaching past loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Before anything imports litellm: bundled price map, no .env loading, no hub downloads.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["LITELLM_MODE"] = "PRODUCTION"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.pop("OPENAI_API_KEY", None)
os.environ.pop("ANTHROPIC_API_KEY", None)


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
    from assay.testing.local_model import LocalModelError, LocalModelServer, default_cache_dir

    cache = Path(os.environ.get("ASSAY_LOCAL_MODEL_CACHE") or default_cache_dir())
    try:
        server = LocalModelServer.start(cache_dir=cache, build=False)
    except LocalModelError as exc:
        if os.environ.get("ASSAY_REQUIRE_REAL_MODEL") == "1":
            pytest.fail(f"ASSAY_REQUIRE_REAL_MODEL=1 but no real model server could be started: {exc}")
        pytest.skip(f"no local model server ({exc})")
    with server:
        yield RealModel(server.judge, server.api_base, server.slots)
