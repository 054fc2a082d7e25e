"""Test-wide network guard: a socket connect to a non-loopback address fails the test.

The attempt raises `NetworkBlocked` inside the code under test and is also remembered, so the
test fails even when a library catches the error and retries or gives up quietly.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest

# CI requires zero unexpected skips (tests/skip_policy.py, tests/allowed_skips.toml)
pytest_plugins = ["skip_policy"]

_attempts: list[str] = []
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class NetworkBlocked(RuntimeError):
    pass


def _loopback(address) -> bool:
    if not isinstance(address, tuple):            # AF_UNIX paths and the like stay local
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False                               # a host name: would need DNS and the network


def _guard(sock, address):
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
        _attempts.append(repr(address))
        raise NetworkBlocked(f"tests must not reach the network (connect to {address!r})")


def _connect(self, address):
    _guard(self, address)
    return _real_connect(self, address)


def _connect_ex(self, address):
    _guard(self, address)
    return _real_connect_ex(self, address)


socket.socket.connect = _connect  # type: ignore[method-assign]  # the guard wraps every socket
socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _no_network():
    _attempts.clear()
    yield
    if _attempts:
        tried = ", ".join(_attempts)
        _attempts.clear()
        pytest.fail(f"test tried to reach the network: {tried}")


@pytest.fixture(autouse=True)
def _private_autosaddler_data(tmp_path_factory, monkeypatch):
    """Every test gets its own user-level data directory (the release ledger): never ~."""
    monkeypatch.setenv("AUTOSADDLER_DATA_DIR", str(tmp_path_factory.mktemp("autosaddler-data")))


@pytest.fixture(autouse=True)
def _no_backend_choice_leaks(monkeypatch):
    """`--sandbox` / `--executor` publish the choice in the process environment (the fork servers and
    Ray workers read it there); a command run in-process must not leave it to the next test."""
    for name in ("TESTHELIX_SANDBOX", "TESTHELIX_EXECUTOR"):
        monkeypatch.setenv(name, "")      # records the value before the test, restored afterwards
        monkeypatch.delenv(name)
