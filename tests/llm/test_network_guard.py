"""The guard in tests/conftest.py: a non-loopback connect fails the test, even when swallowed."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def test_loopback_is_allowed():
    """The guard is installed, lets a loopback connection carry data, and records no attempt."""
    guard = socket.socket.connect.__globals__                # the module that patched connect
    assert Path(guard["__file__"]).resolve() == CONFTEST     # the connection below goes through the guard
    assert socket.socket.connect is guard["_connect"]
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname(), timeout=2)
    peer, _ = server.accept()
    client.sendall(b"ping")
    assert peer.recv(4) == b"ping"
    for s in (peer, client, server):
        s.close()
    assert guard["_attempts"] == []


def test_swallowed_network_attempt_still_fails_the_test(tmp_path):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    for helper in ("skip_policy.py", "allowed_skips.toml"):  # the conftest loads the skip policy
        shutil.copy(CONFTEST.parent / helper, tmp_path / helper)
    (tmp_path / "test_net.py").write_text(
        "import socket\n\n"
        "def test_reaches_out():\n"
        "    try:\n"
        "        socket.create_connection(('203.0.113.7', 443), timeout=1)\n"
        "    except Exception:\n"
        "        pass\n\n"
        "def test_stays_home():\n"
        "    assert True\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stdout
    assert "ERROR test_net.py::test_reaches_out - Failed: test tried to reach the network" in proc.stdout
    assert "1 error" in proc.stdout


def test_direct_attempt_raises():
    guard = socket.socket.connect.__globals__          # the module namespace of tests/conftest.py
    NetworkBlocked, _attempts = guard["NetworkBlocked"], guard["_attempts"]
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("198.51.100.1", 80), timeout=1)
    _attempts.clear()            # this test provoked the attempt on purpose
