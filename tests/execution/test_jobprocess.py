"""The per-job process steps both fork-per-job runners share (testhelix/execution/jobprocess.py):
the executor's fork server and GTDD's trace isolation. Each probe runs in a child interpreter, so
the namespaces and descriptors it changes are never this test process's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from testhelix.execution.jobprocess import end_leftovers_of
from testhelix.execution.sandbox import namespaces_available

NAMESPACE_PROBE = r'''
import json, os, sys
from testhelix.execution import jobprocess as jp
from testhelix.execution.syscalls import CLONE_NEWNS, MS_REC, mount, unshare

MS_PRIVATE = 1 << 18
out = {}
own = os.open("/proc/self/ns/pid", os.O_RDONLY)
before = os.readlink("/proc/self/ns/pid")
pids = []
for _ in range(2):  # a second call fails unless the first set the caller's namespace back
    r, w = os.pipe()
    pid = jp.fork_as_pid1(own)
    if pid == 0:
        os.write(w, str(os.getpid()).encode())
        os._exit(0)
    os.close(w)
    pids.append(int(os.read(r, 16)))
    os.waitpid(pid, 0)
out["child_pids"] = pids
out["caller_ns_kept"] = os.readlink("/proc/self/ns/pid") == before

root = sys.argv[1]
unshare(CLONE_NEWNS)
mount(None, "/", None, MS_REC | MS_PRIVATE)  # unshare(2) keeps shared propagation: stop it here
jp.mount_fresh_temp(root, 1)
out["empty"] = os.listdir(root + "/tmp") == [] and os.listdir(root + "/dev/shm") == []
st = os.statvfs(root + "/tmp")
out["tmp_mb"] = st.f_blocks * st.f_frsize / (1 << 20)
out["mode"] = oct(os.stat(root + "/dev/shm").st_mode & 0o7777)
open(root + "/tmp/written-inside", "w").close()
print(json.dumps(out))
'''

FDS_PROBE = r'''
import json, os, sys
from testhelix.execution import jobprocess as jp

keep_r, keep_w = os.pipe()
other_r, other_w = os.pipe()
out_r, out_w = os.pipe()
pid = os.fork()
if pid == 0:
    jp.stdio_to(out_w)
    os.close(out_w)
    jp.keep_only_fds(keep_w)
    still = []
    for fd in range(3, 256):
        try:
            os.fstat(fd)
            still.append(fd)
        except OSError:
            pass
    print("to the job's output", flush=True)
    os.write(keep_w, json.dumps({"open": still, "stdin": sys.stdin.read()}).encode())
    os._exit(0)
for fd in (keep_w, out_w):
    os.close(fd)
os.waitpid(pid, 0)
report = json.loads(os.read(keep_r, 4096))
report["kept"] = keep_w
report["output"] = os.read(out_r, 4096).decode()
print(json.dumps(report))
'''


def _probe(code: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_a_job_keeps_only_its_own_descriptors_and_writes_to_its_output() -> None:
    got = _probe(FDS_PROBE)
    assert got["open"] == [got["kept"]]  # the other pipe and the output pipe's spare end are closed
    assert got["output"] == "to the job's output\n"
    assert got["stdin"] == ""


@pytest.mark.skipif(not namespaces_available(), reason="needs root and namespaces (CI has both)")
def test_pid1_forks_and_fresh_temp_mounts(tmp_path: Path) -> None:
    for sub in ("tmp", "dev/shm"):
        (tmp_path / sub).mkdir(parents=True)
    (tmp_path / "tmp" / "left-by-someone").write_text("x")
    got = _probe(NAMESPACE_PROBE, str(tmp_path))
    assert got["child_pids"] == [1, 1]
    assert got["caller_ns_kept"] is True
    assert got["empty"] is True  # what was in the folder before is hidden
    assert 0.5 <= float(got["tmp_mb"]) <= 1.5  # the size cap asked for
    assert got["mode"] == "0o1777"
    # The mounts were private to the probe's mount namespace and ended with it.
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == ["left-by-someone"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a process under another uid (CI is root)")
def test_leftovers_of_a_plain_job_are_killed_and_deleted() -> None:
    uid = 5_990_000 + os.getpid() % 1000
    other = 5_980_000 + os.getpid() % 1000
    left = subprocess.Popen(["sleep", "60"], user=uid, group=uid)
    bystander = subprocess.Popen(["sleep", "60"], user=other, group=other)
    stray = Path("/tmp") / f"jobprocess-test-{uid}"
    stray.write_text("left behind")
    os.chown(stray, uid, uid)
    kept = Path("/tmp") / f"jobprocess-test-{other}"
    kept.write_text("not the job's")
    os.chown(kept, other, other)
    try:
        time.sleep(0.1)
        end_leftovers_of(uid)
        assert left.wait(timeout=10) == -9
        assert not stray.exists()
        assert bystander.poll() is None and kept.exists()  # another uid's processes and files stay
    finally:
        for proc in (left, bystander):
            proc.kill()
            proc.wait()
        kept.unlink(missing_ok=True)
        stray.unlink(missing_ok=True)
