"""The zygote and what it forks: the keeper (first process of a job) and the test process.

See forkserver.py for the whole picture. The zygote is forked from the fork server right after its
warm-up and from then on only forks: per job it receives the descriptors of three pipes over a
socket (the job spec to read, the output to write, the status to report) and nothing else, so no
job ever inherits anything of another job. The keeper reads its spec after the supervisor has
moved it into the job's cgroup, mounts the workspace, forks the test process and reports the test's
exit status, whether the harness part of the test process completed ("set-up done", a pipe closed
before suite code runs), and whether a job tmpfs filled up.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import struct
import sys
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

from testhelix.execution.coverage_run import run_under_coverage
from testhelix.execution.jobprocess import die_with_parent, keep_only_fds, stdio_to
from testhelix.execution.outcome import Limits, pytest_args
from testhelix.execution.overlay import Layers
from testhelix.execution.pytest_warm import ConfigTemplate
from testhelix.execution.sandbox import HOST_PREFIX_ENV, Sandbox, sandbox_env
from testhelix.execution.syscalls import deny_unix_sockets
from testhelix.execution.workspace import ENTRY_SCRIPT, HOME_SUBDIR, SUITE_SUBDIR

FULL_BYTES = 64 * 1024  # a job tmpfs with less room than this ran out of space

# sys.path entries a test process may keep: the Python installation, never the project checkout.
# Under a task environment the harness's own prefix (sandbox.HOST_PREFIX_ENV) is part of the installation.
_PREFIXES = tuple(p for p in (sys.base_prefix, sys.prefix, os.environ.get(HOST_PREFIX_ENV)) if p)
_BASE_PATHS = [p for p in sys.path if p and p.startswith(_PREFIXES)]


@dataclass(frozen=True)
class Job:
    """One execution, as the keeper and the test process see it (no host path but cached trees')."""

    workspace: Path | Layers  # a built folder, or the layers the sandbox mounts as one
    entry: str  # "pytest" (in-process), "coverage" (in-process, under coverage.py) or "script" (run_tests.sh)
    forget: tuple[str, ...]  # modules of the zygote that the job's trees would shadow
    limits: Limits
    uid: int
    cgroup: bool

    def to_spec(self) -> bytes:
        ws = (self.workspace.__dict__ | {"program": str(self.workspace.program), "suite": str(self.workspace.suite)}
              if isinstance(self.workspace, Layers) else str(self.workspace))
        return json.dumps({"workspace": ws, "layers": isinstance(self.workspace, Layers), "entry": self.entry,
                           "forget": self.forget, "limits": self.limits.as_dict(), "uid": self.uid,
                           "cgroup": self.cgroup}).encode()

    @classmethod
    def from_spec(cls, data: bytes) -> Job:
        d = json.loads(data)
        if d["layers"]:
            w = d["workspace"]
            ws: Path | Layers = Layers(Path(w["program"]), Path(w["suite"]), tuple(w["program_folders"]),
                                       tuple(w["suite_folders"]), w["owner"], tuple(w["hidden"]))
        else:
            ws = Path(d["workspace"])
        return cls(ws, d["entry"], tuple(d["forget"]), Limits(**d["limits"]), d["uid"], d["cgroup"])


@dataclass
class Zygote:
    """What the zygote (and so every job) holds: nothing about any job."""

    sandbox: Sandbox
    template: ConfigTemplate


# ----------------------------------------------------------------------------- test process
def _run_test_process(z: Zygote, job: Job, cwd: str, out_w: int, ready_w: int) -> None:
    """Never returns."""
    sandbox, limits = z.sandbox, job.limits
    code = 71
    try:
        os.setsid()
        if not sandbox.pid_namespace:
            die_with_parent()
        stdio_to(out_w)
        os.close(out_w)
        keep_only_fds(ready_w)  # nothing of the zygote or the keeper stays open
        os.chdir(cwd)
        os.umask(0o022)
        sandbox.confine(limits, job.uid, job.cgroup)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # an exceeded file size kills: a resource error
        tmp = "/tmp" if sandbox.private_root else os.path.join(cwd, ".tmp")
        os.makedirs(tmp, exist_ok=True)
        env = sandbox_env(home=os.path.join(cwd, HOME_SUBDIR), tmp=tmp, pythonpath=cwd)
        if job.entry == "script":
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # Python ignores it; a new program should not
            if sandbox.plugin_dir:  # type: ignore[attr-defined]
                env["PYTHONPATH"] = f"{cwd}:{sandbox.plugin_dir}"  # type: ignore[attr-defined]
            _set_up_done(ready_w)
            os.execve("/bin/sh", ["sh", f"{SUITE_SUBDIR}/{ENTRY_SCRIPT}"], env)
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # the zygote's cached choice is not visible here
        code = _pytest_in_process(z, job, cwd, ready_w)
    except BaseException:  # noqa: BLE001 - report and leave; never fall back into zygote code
        try:
            traceback.print_exc()
        finally:
            code = 71
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _set_up_done(ready_w: int) -> None:
    """Tell the keeper the harness part of the test process finished; from here on suite code runs,
    and it must not be able to say anything on this channel."""
    os.write(ready_w, b"1")
    os.close(ready_w)


def _pytest_in_process(z: Zygote, job: Job, cwd: str, ready_w: int) -> int:
    sys.path[:] = [cwd] + [p for p in _BASE_PATHS if os.path.isdir(p)]
    for name in job.forget:
        sys.modules.pop(name, None)
    # The import system's cached finders stay: they cover only the Python installation (the
    # zygote's other paths are no longer on sys.path), and each one re-lists its directory when
    # the directory's mtime changes.
    sys.dont_write_bytecode = True
    sys.argv = ["pytest"]
    random.seed()  # a fresh interpreter would not share the zygote's random state
    args = [*pytest_args(job.limits), SUITE_SUBDIR]
    z.template.install(args)
    _set_up_done(ready_w)
    try:
        if job.entry == "coverage":
            rc = run_under_coverage(args, SUITE_SUBDIR)
        else:
            rc = pytest.main(args)
    except SystemExit as exc:  # a conftest calling sys.exit at import time
        rc = exc.code if isinstance(exc.code, int) else 1
    return int(rc)


# ----------------------------------------------------------------------------- keeper (PID 1)
def _run_keeper(z: Zygote, spec_r: int, out_w: int, st_w: int) -> None:
    """First process of a job. Never returns; in a PID namespace its exit ends every leftover."""
    try:
        die_with_parent()  # the zygote died: take the job down
        data = b""
        while chunk := os.read(spec_r, 1 << 16):  # written once we are in the job's cgroup
            data += chunk
        os.close(spec_r)
        job = Job.from_spec(data)
        cwd = z.sandbox.enter_job(job.workspace, job.limits)
        ready_r, ready_w = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(st_w)
            os.close(ready_r)
            _run_test_process(z, job, cwd, out_w, ready_w)
        os.close(out_w)
        os.close(ready_w)
        os.write(st_w, struct.pack("i", child))  # plain sandbox: the test's process group
        set_up = os.read(ready_r, 1) == b"1"
        while True:  # reap every orphan; stop when the test process is done
            pid, status = os.wait()
            if pid == child:
                break
        full = _full_mounts(z.sandbox.scratch_mounts(cwd))
        os.write(st_w, struct.pack("iii", status, int(set_up), full))
        os._exit(0)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(70)


def _full_mounts(paths: list[str]) -> int:
    full = 0
    for path in paths:
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        if st.f_blocks and st.f_bavail * st.f_frsize < FULL_BYTES or st.f_files and st.f_favail == 0:
            full += 1
    return full


# ----------------------------------------------------------------------------- zygote
def zygote_loop(z: Zygote, sock: socket.socket) -> None:
    """Fork one keeper per request; receives four descriptors and nothing else. Never returns."""
    try:
        # The test process's seccomp filter, installed once here and inherited by every keeper and
        # test process (deny_unix_sockets then does nothing there). Nothing the zygote or a keeper
        # does needs what it refuses: they only use sockets that exist already, and AF_INET.
        deny_unix_sockets()
    except OSError:
        pass  # not root: each test process installs it after setting no_new_privs
    while True:
        _reap()
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 16, 4)
        except OSError:
            os._exit(0)
        if not msg or len(fds) != 3:
            os._exit(0)
        spec_r, out_w, st_w = fds
        pid = z.sandbox.fork_job()
        if pid == 0:
            sock.close()
            _run_keeper(z, spec_r, out_w, st_w)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        socket.send_fds(sock, [struct.pack("i", pid)], [pidfd])
        os.close(pidfd)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
