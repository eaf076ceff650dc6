"""The guard in conftest.py must stop any connection past loopback and let loopback through."""

from __future__ import annotations

import socket

import pytest

_REFUSED = "never touch the network"


def test_public_address_is_refused() -> None:
    with (
        pytest.raises(AssertionError, match=_REFUSED),
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
    ):
        sock.connect(("93.184.216.34", 80))


def test_public_name_is_not_resolved() -> None:
    with pytest.raises(AssertionError, match=_REFUSED):
        socket.getaddrinfo("example.com", 443)


def test_private_range_is_refused_too() -> None:
    with (
        pytest.raises(AssertionError, match=_REFUSED),
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
    ):
        sock.connect_ex(("10.0.0.1", 80))


def test_loopback_is_allowed() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=2):
            conn, _ = server.accept()
            conn.close()
