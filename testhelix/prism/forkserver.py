"""The fork server: imports pytest once, then forks one sandboxed child per execution.

Started by the executor (`python -m testhelix.prism.forkserver ...`) already inside the sandbox's
outer isolation (for the namespaced sandbox: new network / mount / IPC / UTS namespaces), with an
allow-listed environment, so its memory never held the host's secrets. It speaks one JSON object
per line on stdin/stdout; every other output of its own goes to a log file.

Per job, two processes under the server, which itself enforces the wall clock and reads the output
and report pipes:

    server ──fork──► init (PID 1 of a new PID namespace)   unshares mount/IPC namespaces, mounts the
                     │                                      workspace into the minimal root, chroots,
                     │                                      forks the test process, reaps every
                     │                                      orphan, reports the test's exit status
                     └─fork──► test process   new session, stdio to the pipes, drops to the sandbox
                                              uid, rlimits, forgets the program's modules, runs
                                              pytest.main in-process (or execs the suite's
                                              run_tests.sh)

Init exists because the first process of a PID namespace has init's duties (reaping, and its exit
ends the namespace with every leftover process); the test itself should not carry them. With the
plain sandbox the server forks the test process directly.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import select
import signal
import struct
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import pytest

from testhelix.prism.coverage_run import run_under_coverage
from testhelix.prism.outcome import Limits, pytest_args
from testhelix.prism.precompile import asks_for_pass_hook, is_rewritten_pyc, precompile_tree
from testhelix.prism.pytest_report import PrismReport
from testhelix.prism.pytest_warm import ConfigTemplate, warm_up
from testhelix.prism.overlay import Layers
from testhelix.prism.sandbox import PLUGIN_MODULE, Sandbox, detect_sandbox, kill_uid, remove_files_of, sandbox_env
from testhelix.prism.syscalls import PR_SET_PDEATHSIG, prctl
from testhelix.prism.workspace import (ENTRY_SCRIPT, HOME_SUBDIR, SUITE_SUBDIR, TreeCache, build_workspace,
                                       program_packages, remove_workspace)

REPORT_CAP = 65536  # bytes accepted on the report pipe; more means someone else wrote to it
DRAIN_GRACE_S = 2.0

# sys.path entries a test process may keep: the Python installation, never the project checkout.
_BASE_PATHS = [p for p in sys.path if p and (p.startswith(sys.base_prefix) or p.startswith(sys.prefix))]


@dataclass(frozen=True)
class _Job:
    """One execution, as the server, init and test process see it."""

    sandbox: Sandbox
    workspace: Path | Layers  # a built folder, or the layers the sandbox mounts as one
    entry: str  # "pytest" (in-process), "coverage" (in-process, under coverage.py) or "script" (run_tests.sh)
    shadowed: tuple[str, ...]  # server modules the program's own packages replace (forgotten in the child)
    limits: Limits
    uid: int
    template: ConfigTemplate


# ----------------------------------------------------------------------------- test process
def _run_test_process(job: _Job, cwd: str, out_w: int, rep_w: int) -> None:
    """Never returns."""
    sandbox, limits = job.sandbox, job.limits
    code = 71
    try:
        os.setsid()
        if sandbox.kind == "plain":
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        for fd in (devnull, out_w):
            if fd > 2:
                os.close(fd)
        # Nothing of the server (protocol pipes, log, cached directories) stays open.
        os.closerange(3, rep_w)
        os.closerange(rep_w + 1, 1 << 16)
        os.chdir(cwd)
        os.umask(0o022)
        sandbox.confine(limits, job.uid)
        tmp = "/tmp" if sandbox.kind == "namespaced" else os.path.join(cwd, ".tmp")
        os.makedirs(tmp, exist_ok=True)
        env = sandbox_env(home=os.path.join(cwd, HOME_SUBDIR), tmp=tmp, pythonpath=cwd)
        if job.entry == "script":
            for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; a new program should not
                signal.signal(sig, signal.SIG_DFL)
            os.set_inheritable(rep_w, True)
            env.update(PRISM_REPORT_FD=str(rep_w), PYTEST_PLUGINS=PLUGIN_MODULE,
                       PYTHONPATH=f"{cwd}:{sandbox.plugin_dir}")  # type: ignore[attr-defined]
            os.execve("/bin/sh", ["sh", f"{SUITE_SUBDIR}/{ENTRY_SCRIPT}"], env)
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # the server's cached choice is not visible here
        code = _pytest_in_process(job, cwd, rep_w)
    except BaseException:  # noqa: BLE001 - report and leave; never fall back into server code
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


def _pytest_in_process(job: _Job, cwd: str, rep_w: int) -> int:
    sys.path[:] = [cwd] + [p for p in _BASE_PATHS if os.path.isdir(p)]
    for name in job.shadowed:
        del sys.modules[name]
    # The import system's cached finders stay: they cover only the Python installation (the
    # server's other paths are no longer on sys.path), and each one re-lists its directory when
    # the directory's mtime changes. Clearing them cost ~1 ms per execution.
    sys.dont_write_bytecode = True
    sys.argv = ["pytest"]
    random.seed()  # a fresh interpreter would not share the server's random state
    args = [*pytest_args(job.limits), SUITE_SUBDIR]
    job.template.install(args)
    try:
        if job.entry == "coverage":
            rc = run_under_coverage(args, SUITE_SUBDIR, plugins=[PrismReport(rep_w)])
        else:
            rc = pytest.main(args, plugins=[PrismReport(rep_w)])
    except SystemExit as exc:  # a conftest calling sys.exit at import time
        rc = exc.code if isinstance(exc.code, int) else 1
    return int(rc)


# ----------------------------------------------------------------------------- init (PID 1)
def _run_init(job: _Job, out_w: int, rep_w: int, st_w: int) -> None:
    """PID 1 of the execution's namespace. Never returns; its exit kills the whole namespace."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the server died: take the namespace down
        cwd = job.sandbox.enter_job(job.workspace, job.limits)
        child = os.fork()
        if child == 0:
            os.close(st_w)
            _run_test_process(job, cwd, out_w, rep_w)
        os.close(out_w)
        os.close(rep_w)
        while True:  # reap every orphan; stop when the test process is done
            pid, status = os.wait()
            if pid == child:
                break
        os.write(st_w, struct.pack("i", status))
        os._exit(0)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(70)


# ----------------------------------------------------------------------------- watching a job
def _read_available(fd: int, sink: bytearray, cap: int, total: list[int]) -> bool:
    """Read what is there; keep only the last `cap` bytes. False at end of file."""
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return True
    if not chunk:
        return False
    total[0] += len(chunk)
    sink += chunk
    if len(sink) > cap:
        del sink[: len(sink) - cap]
    return True


def _execute(job: _Job) -> dict:
    """Fork the job, enforce its wall clock, collect its output, report and exit status."""
    sandbox, limits = job.sandbox, job.limits
    out_r, out_w = os.pipe()
    rep_r, rep_w = os.pipe()
    st_r, st_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = sandbox.fork_job()
    if pid == 0:
        for fd in (out_r, rep_r, st_r):
            os.close(fd)
        if sandbox.pid_namespace:
            _run_init(job, out_w, rep_w, st_w)
        os.close(st_w)
        _run_test_process(job, sandbox.enter_job(job.workspace, limits), out_w, rep_w)
    for fd in (out_w, rep_w, st_w):
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    out, rep = bytearray(), bytearray()
    out_total, rep_total = [0], [0]
    open_fds = {out_r: (out, limits.output_bytes, out_total), rep_r: (rep, REPORT_CAP, rep_total)}
    for fd in open_fds:
        os.set_blocking(fd, False)
    deadline = started + limits.wall_s
    timed_out = exited = False
    grace_end = None
    while open_fds or not exited:
        now = time.monotonic()
        end = grace_end if grace_end is not None else deadline
        if now >= end:
            if grace_end is not None:
                break
            timed_out = True
            _kill(sandbox, pid)
            grace_end = now + DRAIN_GRACE_S
            continue
        watch = list(open_fds) + ([] if exited else [pidfd])
        ready, _, _ = select.select(watch, [], [], end - now)
        for fd in ready:
            if fd == pidfd:
                exited = True
                _kill(sandbox, pid)  # leftovers of the session (plain) / nothing to do (namespaced)
                grace_end = min(deadline, time.monotonic() + DRAIN_GRACE_S) if not timed_out else grace_end
            elif not _read_available(fd, *open_fds[fd]):
                del open_fds[fd]
    if not exited:
        _kill(sandbox, pid)
    _, status = os.waitpid(pid, 0)
    if sandbox.kind == "plain" and sandbox.drops_privileges:
        kill_uid(job.uid)  # children that escaped into sessions of their own
        remove_files_of(job.uid)
    duration = time.monotonic() - started
    init_status = status
    if sandbox.pid_namespace:
        packed = os.read(st_r, 4)
        status = struct.unpack("i", packed)[0] if len(packed) == 4 else None
    for fd in (out_r, rep_r, st_r, pidfd):
        os.close(fd)
    exit_code = sig = None
    if status is not None and not timed_out:
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
        elif os.WIFEXITED(status):
            exit_code = os.WEXITSTATUS(status)
    text = out.decode("utf-8", errors="replace")
    if out_total[0] > len(out):
        text = f"[... {out_total[0] - len(out)} bytes of output truncated ...]\n" + text
    lines = rep.decode("utf-8", errors="replace").splitlines()
    if rep_total[0] > len(rep):
        lines.append("<report pipe overflow>")
    return {"exit_code": exit_code, "signal": sig, "timed_out": timed_out, "duration_s": duration,
            "report_lines": [ln for ln in lines if ln.strip()], "output": text,
            "fault": None if status is not None or timed_out else f"init process gave no status ({init_status})"}


def _kill(sandbox: Sandbox, pid: int) -> None:
    for target in ((pid,) if sandbox.kind == "namespaced" else (-pid, pid)):
        try:
            (os.killpg if target < 0 else os.kill)(abs(target), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# ----------------------------------------------------------------------------- server
class Server:
    def __init__(self, sandbox: Sandbox, server_dir: Path, staging: Path, uid: int, template: ConfigTemplate):
        self.sandbox, self.server_dir, self.uid, self.template = sandbox, server_dir, uid, template
        self.trees = TreeCache(staging, prepare=precompile_tree)
        self.ws_root = staging / "ws"
        self.ws_root.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def handle(self, job: dict) -> dict:
        limits = Limits(**job["limits"])
        suite, program = Path(job["suite"]), Path(job["program"])
        if not suite.is_dir():
            return {"pre_error": "missing suite", "entry": "pytest"}
        script = suite / ENTRY_SCRIPT
        entry = "script" if os.path.lexists(script) else "pytest"
        if job.get("coverage"):
            entry = "coverage"  # coverage always measures pytest in-process; an own script is not run
        if entry == "script" and not (script.is_file() and not script.is_symlink()):
            return {"pre_error": "missing entry script", "entry": entry}
        if not program.is_dir():
            return {"pre_error": "missing program", "entry": entry}
        self.count += 1
        cached_program = self.trees.get(program, job["program_digest"])
        cached_suite = self.trees.get(suite, job["suite_digest"])
        hide = is_rewritten_pyc if _asks_for_pass_hook(cached_program) or _asks_for_pass_hook(cached_suite) else None
        shadowed = _shadowed_by(cached_program, len(sys.modules))
        workspace: Path | Layers
        if self.sandbox.builds_workspace:
            workspace = self.ws_root / f"{self.server_dir.name}-{self.count}"
        else:
            workspace = self._layers(cached_program, cached_suite, hide)
        try:
            if isinstance(workspace, Path):
                owner = self.uid if self.sandbox.drops_privileges else None
                build_workspace(workspace, cached_program, cached_suite, self.sandbox.links_programs, owner,
                                hide or _hide_nothing)
            raw = _execute(_Job(self.sandbox, workspace, entry, shadowed, limits, self.uid, self.template))
        finally:
            if isinstance(workspace, Path):
                remove_workspace(workspace)
        return {**raw, "entry": "script" if entry == "script" else "pytest"}  # how to classify it

    def _layers(self, program: Path, suite: Path, hide: Callable[[str], bool] | None) -> Layers:
        (program_folders, program_files), (suite_folders, suite_files) = map(self.trees.listing, (program, suite))
        hidden: list[str] = []
        if hide is not None:
            hidden = [rel for rel in program_files if hide(os.path.basename(rel))
                      and not rel.startswith(SUITE_SUBDIR + "/")]  # the suite's own overlay covers those
            hidden += [f"{SUITE_SUBDIR}/{rel}" for rel in suite_files if hide(os.path.basename(rel))]
        return Layers(program, suite, program_folders, suite_folders, self.uid, tuple(hidden))


def _hide_nothing(name: str) -> bool:
    return False


# Facts about a cached tree, read once: cached trees are content-addressed and read-only.
@lru_cache(maxsize=4096)
def _asks_for_pass_hook(tree: Path) -> bool:
    return asks_for_pass_hook(tree)


@lru_cache(maxsize=4096)
def _shadowed_by(program: Path, n_modules: int) -> tuple[str, ...]:
    """Server modules named like the program's top-level packages (keyed on the module count too,
    so a module the server imports later is not missed)."""
    packages = program_packages(program)
    return tuple(name for name in sys.modules if name.split(".", 1)[0] in packages)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="TestPrism fork server (started by the executor)")
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--staging", required=True, type=Path)
    ap.add_argument("--uid", required=True, type=int)
    ap.add_argument("--kind", required=True, choices=["namespaced", "plain"])
    args = ap.parse_args(argv)
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    log = os.open(args.dir / "server.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(log, 1)
    os.dup2(log, 2)

    def send(obj: dict) -> None:
        proto_out.write(json.dumps(obj).encode() + b"\n")
        proto_out.flush()

    try:
        sandbox = detect_sandbox(args.kind)
        sandbox.setup_server(args.dir)
        warm_up(args.dir)
        template = ConfigTemplate.build()
    except BaseException:  # noqa: BLE001
        send({"ready": False, "error": traceback.format_exc(limit=5)})
        return
    server = Server(sandbox, args.dir, args.staging, args.uid, template)
    gc.collect()
    gc.freeze()  # children share the heap pages instead of copying them on the next collection
    send({"ready": True, "kind": sandbox.kind})
    for line in proto_in:
        try:
            result = server.handle(json.loads(line))
        except BaseException:  # noqa: BLE001
            result = {"fault": "server: " + traceback.format_exc(limit=3)}
        send(result)


if __name__ == "__main__":
    main()
