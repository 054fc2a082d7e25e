"""The test process's seccomp filter, installed in a child process: keyrings, io_uring, unix
datagram pairs and unix sockets are refused; what tests need (inet sockets, stream pairs,
multiprocessing) still works."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = r"""
import ctypes, fcntl, mmap, os, signal, socket, sqlite3, sys, tempfile, multiprocessing
signal.signal(signal.SIGIO, signal.SIG_IGN)  # F_NOTIFY, where allowed, signals changes
from testhelix.execution.syscalls import deny_unix_sockets, prctl, PR_SET_NO_NEW_PRIVS
if sys.argv[1] == "filtered":
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    deny_unix_sockets()
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": dict(add_key=248, keyctl=250, io_uring=425, io_setup=206, mincore=27, readahead=187,
                     inotify_init1=294, fanotify_init=300, cachestat=451),
      "aarch64": dict(add_key=217, keyctl=219, io_uring=425, io_setup=0, mincore=232, readahead=213,
                      inotify_init1=26, fanotify_init=262, cachestat=451)}[os.uname().machine]

def works(f):
    try:
        f()
        return True
    except OSError:
        return False

def sc(nr, *args):
    if libc.syscall(nr, *args) < 0:
        raise OSError(ctypes.get_errno(), "refused")

shared = sys.executable  # a file every job can read
tmp = tempfile.mkdtemp()
own = os.path.join(tmp, "own")
open(own, "wb").write(b"x" * 8192)
fd = os.open(shared, os.O_RDONLY)
page = mmap.mmap(fd, 4096, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
page_addr = ctypes.addressof(ctypes.c_char.from_buffer(page))

def mincore():
    sc(NR["mincore"], ctypes.c_void_p(page_addr), ctypes.c_size_t(4096), ctypes.create_string_buffer(1))

def flock():
    with open(shared, "rb") as f:
        fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)

def posix_lock():
    with open(own, "r+b") as f:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)

def sqlite(mode):
    db = sqlite3.connect(os.path.join(tmp, mode + ".db"))
    db.execute(f"pragma journal_mode={mode}")
    db.execute("create table t (x)")
    db.execute("insert into t values (1)")
    db.commit()
    other = sqlite3.connect(os.path.join(tmp, mode + ".db"))
    assert other.execute("select x from t").fetchall() == [(1,)]

got = {
    "inet": works(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()),
    "inet6": works(lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM).close()),
    "netlink route": works(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()),
    "netlink uevent": works(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 15).close()),
    "vsock": works(lambda: socket.socket(40, socket.SOCK_STREAM).close()),
    "stream pair": works(lambda: [s.close() for s in socket.socketpair()]),
    "unix": works(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
    "dgram pair": works(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)),
    "add_key": works(lambda: sc(NR["add_key"], b"user", b"x", b"y", 1, -4)),
    "keyctl": works(lambda: sc(NR["keyctl"], 0, -3, 0)),
    "io_uring": works(lambda: sc(NR["io_uring"], 4, ctypes.create_string_buffer(120))),
    "aio": works(lambda: sc(NR["io_setup"], 1, ctypes.byref(ctypes.c_ulong(0)))),
    "mincore": works(mincore),
    "readahead": works(lambda: sc(NR["readahead"], fd, ctypes.c_long(0), ctypes.c_size_t(4096))),
    "fadvise": works(lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)),
    "cachestat": works(lambda: sc(NR["cachestat"], fd, ctypes.create_string_buffer(16), ctypes.create_string_buffer(40), 0)),
    "preadv2 nowait": works(lambda: os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)),
    "preadv2": works(lambda: os.preadv(fd, [bytearray(16)], 0, 0)),
    "madvise pageout": works(lambda: page.madvise(21)),
    "madvise dontneed": works(lambda: page.madvise(mmap.MADV_DONTNEED)),
    "inotify": works(lambda: sc(NR["inotify_init1"], 0)),
    "fanotify": works(lambda: sc(NR["fanotify_init"], 0, 0)),
    "dnotify": works(lambda: fcntl.fcntl(os.open(tmp, os.O_RDONLY), 1026, 1)),
    "flock": works(flock),
    "posix lock": works(posix_lock),
    "sqlite": works(lambda: sqlite("delete")),
    "sqlite wal": works(lambda: sqlite("wal")),
}
q = multiprocessing.get_context("fork").Queue()
q.put(1)
got["multiprocessing"] = q.get(timeout=10) == 1
import json
print(json.dumps(got))
"""
KEPT = ("inet", "inet6", "netlink route", "stream pair", "preadv2", "madvise dontneed", "posix lock", "sqlite",
        "sqlite wal", "multiprocessing")


def _probe(mode: str) -> dict[str, bool]:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="filter for x86_64 and aarch64 only")
def test_filter_refuses_shared_kernel_state_and_keeps_the_rest():
    got = _probe("filtered")
    assert {k for k, ok in got.items() if ok} == set(KEPT), got


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="filter for x86_64 and aarch64 only")
def test_without_the_filter_every_refused_call_works_here():
    """The positive control: each refusal above is the filter's doing, not this machine's (the
    unix socket aside, every probe succeeds unfiltered; vsock needs the kernel module)."""
    got = _probe("unfiltered")
    assert all(ok for k, ok in got.items() if k != "vsock"), got


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
