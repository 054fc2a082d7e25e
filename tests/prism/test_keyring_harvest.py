"""Kernel keyrings carry nothing between evaluations (issue 28): one `testhelix evaluate` process,
run as a user runs it, whose suite tries to publish every panel source into kernel keys (user,
session, user-session, process, thread, group and persistent keyrings, a named session keyring,
request_key), all through raw syscalls; then a second, separate `testhelix evaluate` process whose
suite tries to harvest them; then the host, as an unprivileged user, looks for them.

Each suite fails on any program where its attempt succeeds, so "pass on every program" (S=0)
is the proof that nothing was published and nothing was found.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testhelix.execution.executor import TRUSTED_UIDS, UNTRUSTED_UIDS
from testhelix.execution.sandbox import namespaces_available

needs_ns = pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare (namespaced sandbox)")
pytestmark = [needs_ns, pytest.mark.slow]

TASK = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack" / "fx-clamp-m01"
TESTHELIX = Path(sys.executable).with_name("testhelix")

COMMON = r'''
import ctypes, glob, os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD_KEY, REQUEST_KEY, KEYCTL = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[os.uname().machine]
RINGS = {"thread": -1, "process": -2, "session": -3, "user": -4, "user-session": -5, "group": -6}
GET_PERSISTENT, JOIN_SESSION, SETPERM, SEARCH, READ = 22, 1, 5, 10, 11
PREFIX = b"prism-harvest-"


def keyctl(*args):
    return libc.syscall(KEYCTL, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])


def rings():
    found = dict(RINGS)
    persistent = keyctl(GET_PERSISTENT, -1, RINGS["user"])  # the uid's persistent keyring, linked into @u
    if persistent >= 0:
        found["persistent"] = persistent
    return found
'''

PUBLISH = COMMON + r'''

def test_publish_every_source():
    sources = b"".join(open(p, "rb").read() for p in sorted(glob.glob("/workspace/**/*.py", recursive=True))
                       if "/suite/" not in p)[:30000]
    published = []
    for name, ring in rings().items():
        kid = libc.syscall(ADD_KEY, b"user", PREFIX + name.encode(), sources, ctypes.c_size_t(len(sources)),
                           ctypes.c_long(ring))
        if kid >= 0:
            keyctl(SETPERM, kid, 0x3F3F3F3F)  # anyone may view and read it
            published.append(name)
    if keyctl(JOIN_SESSION, PREFIX + b"session") >= 0:  # a named session keyring a later job could join
        published.append("named session keyring")
    if libc.syscall(REQUEST_KEY, b"user", PREFIX + b"request", b"callout", ctypes.c_long(RINGS["user"])) >= 0:
        published.append("request_key")
    assert not published, published
'''

HARVEST = COMMON + r'''

def test_harvest_nothing():
    found = []
    for name, ring in rings().items():
        for key in RINGS:
            kid = keyctl(SEARCH, ring, b"user", PREFIX + key.encode(), 0)
            if kid >= 0:
                buf = ctypes.create_string_buffer(1 << 16)
                found.append((name, key, keyctl(READ, kid, buf, 1 << 16)))
    if keyctl(JOIN_SESSION, PREFIX + b"session") >= 0:
        found.append("joined the named session keyring")
    if libc.syscall(REQUEST_KEY, b"user", PREFIX + b"user", None, ctypes.c_long(0)) >= 0:
        found.append("request_key")
    for path in ("/proc/keys", "/proc/key-users"):
        try:
            text = open(path).read()
        except OSError:
            continue
        if PREFIX.decode() in text:
            found.append(path)
    assert not found, found
'''


def _evaluate(suite: Path, tmp: Path) -> dict:
    """`testhelix evaluate --task ... --suite ... --json` in a process of its own, as a user runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    proc = subprocess.run([str(TESTHELIX), "evaluate", "--task", str(TASK), "--suite", str(suite), "--workers", "2",
                           "--json"], capture_output=True, text=True, env=env, cwd=tmp, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _suite(root: Path, name: str, text: str) -> Path:
    suite = root / name
    suite.mkdir()
    (suite / f"test_{name}.py").write_text(text)
    return suite


def _sandbox_uids_with_keys() -> list[int]:
    """uids in the sandbox ranges that own kernel keys (/proc/key-users lists every uid with keys)."""
    uids = []
    for line in Path("/proc/key-users").read_text().splitlines():
        uid = int(line.split(":", 1)[0])
        if any(first <= uid < first + count for first, count in (UNTRUSTED_UIDS, TRUSTED_UIDS)):
            uids.append(uid)
    return uids


def test_keys_published_by_one_evaluation_reach_no_later_one(tmp_path):
    if not TESTHELIX.exists():
        pytest.skip("the testhelix command is not installed beside this interpreter")
    published = _evaluate(_suite(tmp_path, "publish", PUBLISH), tmp_path)
    harvested = _evaluate(_suite(tmp_path, "harvest", HARVEST), tmp_path)
    for res in (published, harvested):
        outcomes = res["outcomes"]
        assert len(outcomes) >= 5 and all(o["outcome"] == "pass" for o in outcomes.values()), outcomes
        assert res["S"] == 0
    # The host, as an unprivileged user, finds no key of the sandbox either.
    assert _sandbox_uids_with_keys() == []
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")  # one that nobody may run
    if shutil.which("runuser") and python:
        probe = ("import sys\ntext = open('/proc/keys').read()\n"
                 "sys.exit(1 if 'prism-harvest-' in text else 0)\n")
        seen = subprocess.run(["runuser", "-u", "nobody", "--", python, "-I", "-c", probe],
                              capture_output=True, text=True, timeout=60)
        assert seen.returncode == 0, (seen.stdout, seen.stderr)
    assert "prism-harvest-" not in Path("/proc/keys").read_text()


CONTROL = COMMON + r'''
keyctl(JOIN_SESSION, None)  # an anonymous session keyring: it ends with this process
kid = libc.syscall(ADD_KEY, b"user", PREFIX + b"control", b"sources", ctypes.c_size_t(7), ctypes.c_long(RINGS["session"]))
found = keyctl(SEARCH, RINGS["session"], b"user", PREFIX + b"control", 0)
buf = ctypes.create_string_buffer(64)
size = keyctl(READ, found, buf, 64)
print(kid > 0 and found == kid and buf.raw[:size] == b"sources")
'''


def test_the_same_calls_publish_and_harvest_outside_the_sandbox():
    """The control: the suites' raw syscalls do publish, find and read a key where no filter
    stands in the way (in a throw-away session keyring), so their failing inside means the sandbox."""
    out = subprocess.run([sys.executable, "-c", CONTROL], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True", (out.stdout, out.stderr)
