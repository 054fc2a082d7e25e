"""Attacks on the judge (tests/fixtures/hostile2/): label oracles, memory of other jobs, aggregate
memory, forged verdicts, sockets, warm-up name collisions, linked-mode disk use. Each is contained,
and a suite that tests nothing scores F=0 and S=0."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from testhelix.execution.cgroup import Cgroups
from testhelix.execution.executor import ForkServerExecutor
from testhelix.execution.outcome import Limits
from testhelix.execution.sandbox import OVERLAY_ENV, namespaces_available
from testhelix.prism.evaluation import evaluate_task
from testhelix.tasks.task import load_task

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOSTILE = FIXTURES / "hostile2"
TASK = FIXTURES / "tasks" / "pack" / "fx-clamp-m01"
PROGRAM = TASK / "solution" / "program"
LIMITS = Limits(wall_s=20, cpu_s=10, memory_mb=256, fsize_mb=16, nofile=64, nproc=32, output_bytes=8192)

needs_ns = pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare (namespaced sandbox)")
pytestmark = [needs_ns, pytest.mark.slow]


@pytest.fixture(scope="module")
def ex():
    with ForkServerExecutor(workers=1, sandbox="namespaced") as executor:  # one server: every job meets the last
        yield executor


def _copy(name: str, tmp: Path) -> Path:
    dest = tmp / name
    shutil.copytree(HOSTILE / name, dest)
    return dest


@pytest.mark.parametrize("oracle", ["stack_oracle", "memory_oracle", "tests_nothing"])
def test_a_suite_that_tests_nothing_scores_nothing(ex, oracle, tmp_path):
    res = evaluate_task(ex, load_task(TASK), _copy(oracle, tmp_path))
    assert (res.indicators.F, res.indicators.S) == (False, False), res.outcomes
    assert all(s == "pass" for s in res.statuses().values()), res.outcomes  # no label leaked


def test_memory_holds_nothing_of_earlier_jobs_or_trusted_tests(ex, tmp_path):
    marks = {k: "PRISMSECRET" + secrets.token_hex(8) for k in ("tree", "output", "trusted")}
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    (earlier / "test_earlier.py").write_text(f"TREE = {marks['tree']!r}\n\ndef test_e():\n"
                                             f"    print({marks['output'][:11]!r} + {marks['output'][11:]!r})\n")
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    (trusted / "test_hidden.py").write_text(f"def test_hidden():\n    assert {marks['trusted']!r}\n")
    assert ex.run(earlier, PROGRAM, LIMITS).status == "pass"
    assert ex.trusted().run(trusted, PROGRAM, LIMITS).status == "pass"
    scan = ex.run(_copy("memory_scan", tmp_path), PROGRAM, LIMITS)
    assert scan.status == "pass", scan.output[-2000:]


def test_ran_hostile_expectations(ex, tmp_path):
    invalid = TASK / "environment"  # clamp does not clamp from above: the real test fails there
    cases = {
        "aggregate_memory": (PROGRAM, "error", "resource limit: memory"),
        "threads": (PROGRAM, "error", "resource limit: processes"),
        "tmpfs_full": (PROGRAM, "error", "resource limit: disk"),
        "forge_summary": (invalid, "fail", "tests failed"),
        "forge_script": (invalid, "fail", "exit code 1"),
    }
    outs = ex.run_many([(_copy(n, tmp_path), prog) for n, (prog, _, _) in cases.items()], LIMITS)
    for (name, (_, status, reason)), out in zip(cases.items(), outs):
        assert (out.status, (out.reason or "")[:len(reason)]) == (status, reason), (name, out.reason,
                                                                                     out.output[-1200:])
    assert "told the report descriptor" not in outs[-1].output


def test_unix_socket_under_a_mounted_tree_is_unreachable(tmp_path, monkeypatch):
    """With the host's folders shown (TESTHELIX_RAM_VIEW=0), the socket file is visible and
    connecting is refused (seccomp). With the RAM view it is not even there: the view copies no
    socket (tests/prism/test_cache_timing.py checks what the view shows)."""
    monkeypatch.setenv("TESTHELIX_RAM_VIEW", "0")
    path = Path(sys.prefix) / f"prism-hostile-{os.getpid()}.sock"  # the Python prefix is mounted read-only
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    got: list[bytes] = []
    try:
        server.bind(str(path))
        server.listen(1)
        server.settimeout(0.2)

        def accept():
            for _ in range(100):
                try:
                    conn, _ = server.accept()
                    got.append(conn.recv(64))
                    return
                except OSError:
                    continue

        t = threading.Thread(target=accept)
        t.start()
        suite = _copy("unix_socket", tmp_path)
        (suite / "target.txt").write_text(str(path))
        with ForkServerExecutor(workers=1, sandbox="namespaced") as ex:
            out = ex.run(suite, PROGRAM, LIMITS)
        t.join()
    finally:
        server.close()
        path.unlink(missing_ok=True)
    assert out.status == "pass", out.output[-1000:]  # the suite checks the refusal is EPERM (seccomp)
    assert got == []


@pytest.mark.parametrize("name", ["warm_test", "warm_gzip", "warm_zoneinfo"])
def test_warm_up_modules_never_shadow_the_suite(ex, name, tmp_path):
    suite = _copy(name, tmp_path)
    out = ex.run(suite, PROGRAM, LIMITS)
    ws = tmp_path / "plain-ws"
    shutil.copytree(PROGRAM, ws)
    shutil.copytree(suite, ws / "suite")
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "suite"], cwd=ws,
                           env={**os.environ, "PYTHONPATH": str(ws)}, capture_output=True, text=True)
    assert plain.returncode == 0, plain.stdout[-800:]
    assert out.status == "pass", out.output[-1500:]
    assert "testhelix-prism" not in out.output  # no host staging path in what the suite sees


def test_linked_mode_caps_disk_and_cleans_deep_nests(tmp_path, monkeypatch):
    monkeypatch.setenv(OVERLAY_ENV, "0")
    ex = ForkServerExecutor(workers=1, sandbox="namespaced", staging_parent=tmp_path)
    try:
        fill, nest = ex.run_many([(_copy("disk_fill", tmp_path), PROGRAM), (_copy("deep_nest", tmp_path), PROGRAM)],
                                 LIMITS)
        after = ex.run(FIXTURES / "tasks" / "suites" / "good" / "fx-clamp-m01", PROGRAM, LIMITS)
        assert fill.status == "error" and (fill.reason or "").startswith("resource limit"), (fill.reason, fill.output[-800:])
        assert nest.status == "pass", (nest.reason, nest.output[-800:])
        assert after.status == "pass"
        ws = [p for p in ex.staging.rglob("ws/*")]
        assert ws == []  # nothing of either job left in the staging folder
        assert shutil.disk_usage(tmp_path).used >= 0
    finally:
        ex.close()  # never raises
    assert not ex.staging.exists()


def _job_cgroups(server_pid: int) -> list[Path]:
    """Job cgroups (random names) holding a keeper of this server's zygote (a grandchild)."""
    root = Path("/sys/fs/cgroup")
    found = []
    for p in [*root.glob("*/testhelix-prism/*"), *root.glob("cpu/**/testhelix-prism-*")]:
        try:
            pids = (p / "cgroup.procs").read_text().split()
        except OSError:
            continue
        if any(_parent(_parent(int(pid))) == server_pid for pid in pids):
            found.append(p)
    return found


def _parent(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("PPid:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return -1


# Asked the way the executor asks (which makes the parent group): whether an earlier run left the
# folder behind must not decide whether this test runs.
@pytest.mark.skipif(Cgroups.detect().version is None, reason="needs job cgroups (root, a writable cgroup tree)")
def test_keepers_forked_ahead_follow_the_limits_and_leave_nothing(tmp_path):
    """A server forks the next job's keeper (in its cgroup) ahead of the job: a job with other
    memory limits still gets its own limits, and closing the executor removes the waiting keeper's
    cgroup."""
    suite = tmp_path / "hog"
    suite.mkdir()
    (suite / "test_hog.py").write_text("def test_hog():\n    data = b'x' * (300 << 20)\n"
                                       "    assert len(data) == 300 << 20\n")
    ex = ForkServerExecutor(workers=1, sandbox="namespaced")
    try:
        small = ex.run(suite, PROGRAM, LIMITS)  # 256 MB
        large = ex.run_repeat(suite, PROGRAM, Limits(**{**LIMITS.as_dict(), "memory_mb": 768}), 1)
        again = ex.run_repeat(suite, PROGRAM, LIMITS, 2)
        assert small.status == "error" and small.reason == "resource limit: memory", small.output[-800:]
        assert large.status == "pass", (large.reason, large.output[-800:])
        assert again.status == "error" and again.reason == "resource limit: memory", again.output[-800:]
        proc = ex._handles[0].proc
        assert proc is not None
        pid = proc.pid
        waiting = _job_cgroups(pid)
        assert ex.cgroups == "none" or waiting  # the next job's keeper waits in its cgroup
    finally:
        ex.close()
    assert not [p for p in waiting if p.exists()]
