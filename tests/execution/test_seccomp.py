"""The test process's seccomp filter, installed in a child process: keyrings, io_uring, unix
datagram pairs and unix sockets are refused; what tests need (inet sockets, stream pairs,
multiprocessing) still works."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = r'''
import ctypes, socket, multiprocessing
from testhelix.execution.syscalls import deny_unix_sockets, prctl, PR_SET_NO_NEW_PRIVS
prctl(PR_SET_NO_NEW_PRIVS, 1)
deny_unix_sockets()
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": (248, 250, 425), "aarch64": (217, 219, 425)}[__import__("os").uname().machine]

def works(f):
    try:
        f()
        return True
    except OSError:
        return False

def sc(nr, *args):
    if libc.syscall(nr, *args) < 0:
        raise OSError(ctypes.get_errno(), "refused")

got = {
    "inet": works(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()),
    "stream pair": works(lambda: [s.close() for s in socket.socketpair()]),
    "unix": works(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
    "dgram pair": works(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)),
    "add_key": works(lambda: sc(NR[0], b"user", b"x", b"y", 1, -4)),
    "keyctl": works(lambda: sc(NR[1], 0, -3, 0)),
    "io_uring": works(lambda: sc(NR[2], 4, ctypes.create_string_buffer(120))),
}
q = multiprocessing.get_context("fork").Queue()
q.put(1)
got["multiprocessing"] = q.get(timeout=10) == 1
import json
print(json.dumps(got))
'''


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="filter for x86_64 and aarch64 only")
def test_filter_refuses_shared_kernel_state_and_keeps_the_rest():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got == {"inet": True, "stream pair": True, "unix": False, "dgram pair": False, "add_key": False,
                   "keyctl": False, "io_uring": False, "multiprocessing": True}


JOB_PROBE = r'''
import socket


def test_probe():
    status = [line.split()[1] for line in open("/proc/self/status") if line.startswith("Seccomp")]
    try:
        socket.socket(socket.AF_UNIX)
        unix = "allowed"
    except OSError:
        unix = "refused"
    print("PROBE", status, unix)
    assert False  # the output is kept for a failing run
'''


@pytest.mark.slow
@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="filter for x86_64 and aarch64 only")
@pytest.mark.parametrize("kind", ["namespaced", "plain"])
def test_a_job_runs_under_exactly_one_inherited_filter(kind, tmp_path):
    """The zygote installs the filter once; every job inherits it (mode 2, one filter: the test
    process does not stack another) and unix sockets stay refused."""
    from pathlib import Path

    from testhelix.execution.executor import ForkServerExecutor
    from testhelix.execution.outcome import Limits
    from testhelix.execution.sandbox import namespaces_available

    if os.geteuid() != 0 or (kind == "namespaced" and not namespaces_available()):
        pytest.skip("needs root (and unshare for the namespaced sandbox)")
    (tmp_path / "test_probe.py").write_text(JOB_PROBE)
    program = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack" / "fx-clamp-m01" / "solution" / "program"
    with ForkServerExecutor(workers=1, sandbox=kind) as ex:
        out = ex.run(tmp_path, program, Limits(wall_s=60, cpu_s=60))
    assert "PROBE ['2', '1'] refused" in out.output, out.output[-2000:]
