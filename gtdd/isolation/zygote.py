"""Isolated launcher, zygote and per-trace processes; run as a FILE (never imported as part of `gtdd`).

Started by runner.py as `[sandbox launch prefix] python -s -P zygote.py KIND SERVER_DIR WORKSPACE UID
CONFIG_JSON`, talking to the harness over its three standard streams only (what the executor's fork
server needs of a sandbox too, so one Sandbox adapter serves both). Process tree, namespaced
sandbox (testhelix/execution/sandbox.py primitives; the per-process steps shared with the
executor's fork server are in jobprocess.py there):

    launcher (fresh net/mount/IPC/UTS namespaces, builds the minimal root)
      zygote = PID 1 of a batch PID namespace, chrooted, root, has NOT run any candidate code:
               it only compiled the candidate's source (compiling executes nothing)
        worker = PID 1 of a PID namespace of its own, one per trace: a private mount namespace with
                 a fresh /tmp, /dev/shm and /proc; drops to the sandbox uid with rlimits, reads ONE
                 trace from stdin, executes the candidate module fresh, runs the trace, writes one
                 record to a pipe of its own

So every trace starts from the same state: a fresh interpreter state forked from a zygote that has
never executed candidate code, empty temporary directories, the same PID (1), the same uid, no
process left by an earlier trace (the trace's PID namespace dies with its worker). The trace's
operations are read by the worker itself, and the zygote moves the worker's record to the harness
with splice(2), so no process a candidate runs in has ever held another trace, another trace's
replies, or the batch's length or position; the zygote counts nothing. In the plain fallback there
are no namespaces: each trace gets a fresh, empty temporary directory and leftovers of the sandbox
uid are killed and deleted after each trace (PIDs then differ between traces).

Limits are CPU time, not wall clock: an ITIMER_PROF timer interrupts the import (budget
`import_cpu_s`) and then the trace (`cpu_s`), and RLIMIT_CPU backs both up for a candidate that
swallows or blocks the timer signal. Memory is RLIMIT_AS. The harness keeps a wall-clock watchdog
only for a worker that blocks without using CPU time; it reports a harness error, never a verdict.

Stdout carries one JSON line per event: {"ready":1} (sandbox up), {"loaded":1} or
{"import_error": CLASS} (the source compiled or not), then per trace frame received
{"n": bytes, "status": wait status, "cpu": seconds}, where the worker's `n` bytes -- JSON lines
{"phase": ...} and its record {"r": [replies], "e": error|null} or {"import_error": CLASS} -- were
spliced to stderr just before (runner.classify_worker reads them). Trace frames on stdin: 8-byte
big-endian length, then a JSON list of ops. The launcher's own diagnostics go to SERVER_DIR/launcher.log.
"""

from __future__ import annotations  # annotations are never evaluated: this file imports only what it runs

import array
import fcntl
import gc
import json
import math
import os
import resource
import select
import signal
import sys
import termios
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from testhelix.execution.jobprocess import (
    die_with_parent,
    end_leftovers_of,
    fork_as_pid1,
    keep_only_fds,
    mount_fresh_temp,
    mount_own_proc,
    stdio_to,
)
from testhelix.execution.outcome import Limits
from testhelix.execution.sandbox import sandbox_env
from testhelix.execution.seam import select_sandbox
from testhelix.execution.syscalls import CLONE_NEWNS, unshare

if TYPE_CHECKING:
    from testhelix.execution.sandbox import Sandbox

STDLIB_PATHS = [p for p in sys.path if p and p.startswith(sys.base_prefix) and "site-packages" not in p]
# The plain fallback drops to a uid that may not be able to read the Python installation (here it
# lives under /root); the modules a store implementation commonly uses are loaded before that.
PRELOAD = ("bisect", "collections", "copy", "dataclasses", "enum", "fnmatch", "functools", "heapq",
           "itertools", "json", "math", "operator", "re", "string", "time", "typing")
EXIT_NO_MORE = 3  # the worker found stdin at its end: the batch is over
MAX_RECORD_BYTES = 16 << 20
COMPILE_CPU_S = 10
TRACE_TMP_MB = 16  # each trace's fresh /tmp and /dev/shm
LAUNCHER_LOG = "launcher.log"  # in SERVER_DIR; runner.py shows its tail when the isolation fails


class CpuLimit(BaseException):
    """BaseException so that a candidate's `except Exception` cannot swallow it."""


def _on_cpu_limit(signum: int, frame: types.FrameType | None) -> NoReturn:  # noqa: ARG001 - the signature signal.signal gives a handler
    raise CpuLimit()


# The same check as gtdd.domains.base.is_json_value, kept apart on purpose: the zygote must not
# import gtdd, or a candidate would find the package in its inherited sys.modules
# (tests/gtdd/test_isolation.py::test_project_files_and_packages_are_out_of_reach).
def json_value(value: object) -> bool:
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(json_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and json_value(v) for k, v in value.items())
    return False


def emit(fd: int, record: dict[str, Any]) -> None:
    data = memoryview((json.dumps(record, separators=(",", ":")) + "\n").encode())
    while data:  # a write into a pipe may be partial (a signal while it waits for room): never cut a record
        data = data[os.write(fd, data):]


def read_exact(fd: int, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


# ----------------------------------------------------------------------------------- the worker
def worker(sandbox: Sandbox, cwd: str, uid: int, limits: Limits, config: dict[str, Any], code: types.CodeType,
           server_dir: str, record_fd: int) -> NoReturn:
    """Runs one trace of the candidate (PID 1 of its own namespaces when namespaced). Never returns."""
    status = 0
    try:
        signal.signal(signal.SIGPROF, signal.SIG_DFL)
        if sandbox.pid_namespace:
            unshare(CLONE_NEWNS)  # a mount namespace of the trace's own, on the batch's chroot
            mount_fresh_temp("", TRACE_TMP_MB)
            mount_own_proc("")
            tmp = "/tmp"
        else:
            tmp = fresh_plain_tmp(server_dir, uid if sandbox.drops_privileges else None)
        header = read_exact(0, 8)
        if header is None:
            os._exit(EXIT_NO_MORE)  # the batch is over (nothing written: n == 0 tells it apart)
        body = read_exact(0, int.from_bytes(header, "big"))
        if body is None:  # the harness closed the pipe inside a frame
            raise EOFError("a cut trace frame")
        ops = json.loads(body)
        stdio_to(None)  # the candidate's prints go nowhere; its stdin is empty
        sandbox.confine(limits, uid)
        os.environ.clear()
        os.environ.update(sandbox_env(home=tmp, tmp=tmp, pythonpath=cwd))
        sys.path[:] = [cwd] + [p for p in STDLIB_PATHS if os.path.isdir(p)]
        sys.argv = [config["module_file"]]
        emit(record_fd, run_candidate(config, code, ops, cwd, record_fd))
    except BaseException:  # noqa: BLE001 - leave without running any launcher code again
        status = 71
    finally:
        os._exit(status)


def run_candidate(config: dict[str, Any], code: types.CodeType, ops: list[dict[str, Any]], cwd: str,
                  record_fd: int) -> dict[str, Any]:
    signal.signal(signal.SIGPROF, _on_cpu_limit)
    name = config["module"]
    emit(record_fd, {"phase": "import"})  # a process that dies from here on failed to import
    try:
        signal.setitimer(signal.ITIMER_PROF, config["import_cpu_s"])
        module = types.ModuleType(name)
        module.__file__ = os.path.join(cwd, config["module_file"])
        sys.modules[name] = module
        exec(code, module.__dict__)
        factory = getattr(module, config["entry"])
        signal.setitimer(signal.ITIMER_PROF, 0)
    except BaseException as exc:  # noqa: BLE001 - a failed import is classified, never raised
        signal.setitimer(signal.ITIMER_PROF, 0)
        return {"import_error": "timeout" if isinstance(exc, CpuLimit) else type(exc).__name__}
    emit(record_fd, {"phase": "trace"})
    replies, error = [], None
    try:
        signal.setitimer(signal.ITIMER_PROF, config["cpu_s"])
        instance = factory()
        for op in ops:
            reply = instance.execute(op["cmd"], list(op["args"]))
            if not json_value(reply):
                error = "malformed"
                break
            replies.append(reply)
        signal.setitimer(signal.ITIMER_PROF, 0)
    except CpuLimit:
        error = "timeout"
    except BaseException as exc:  # noqa: BLE001 - the candidate's failure is the result
        signal.setitimer(signal.ITIMER_PROF, 0)
        error = type(exc).__name__
    try:
        json.dumps(replies)
    except (TypeError, ValueError, RecursionError):
        return {"r": [], "e": "malformed"}
    return {"r": replies, "e": error}


def fresh_plain_tmp(server_dir: str, uid: int | None) -> str:
    import shutil

    tmp = os.path.join(server_dir, "trace-tmp")  # the same path for every trace
    os.chmod(server_dir, 0o711)  # the sandbox uid passes through to its folder, lists nothing
    shutil.rmtree(tmp, ignore_errors=True)
    os.mkdir(tmp, 0o700)
    if uid is not None:
        os.chown(tmp, uid, uid)
    return tmp


# ----------------------------------------------------------------------------------- the zygote
def pump(pid: int, record_fd: int, data_fd: int, sink_fd: int) -> tuple[int, int, float]:
    """Move the worker's record to the harness in the kernel (splice) while waiting for the worker;
    returns (bytes moved, wait status, CPU seconds). Beyond MAX_RECORD_BYTES bytes go to /dev/null."""
    moved, pidfd = 0, os.pidfd_open(pid)
    os.set_blocking(record_fd, False)
    done = None
    while done is None:
        readable, _, _ = select.select([record_fd, pidfd], [], [])
        if pidfd in readable:
            done = os.wait4(pid, 0)
        while True:  # whatever is in the pipe now (all of it once the worker's namespace is gone)
            try:
                n = os.splice(record_fd, data_fd if moved < MAX_RECORD_BYTES else sink_fd, 1 << 16)
            except BlockingIOError:
                # EAGAIN means either "nothing to read now" or "the harness's pipe is full" (the
                # kernel makes a pipe-to-pipe splice non-blocking when either end is). Taking the
                # second for the first cut records short when the harness was slow to read, i.e.
                # under load, and a cut record reads as a malformed reply: wait for room instead.
                if _unread(record_fd):
                    select.select([], [data_fd], [])
                    continue
                break
            if n == 0:  # every writer closed the pipe: only the exit is left to wait for
                if done is None:
                    done = os.wait4(pid, 0)
                break
            moved += n if moved < MAX_RECORD_BYTES else 0
    os.close(pidfd)
    _, status, usage = done
    return moved, status, usage.ru_utime + usage.ru_stime


def _unread(fd: int) -> int:
    """Bytes waiting in the pipe `fd`."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count, True)
    return count[0]


def zygote(sandbox: Sandbox, cwd: str, uid: int, limits: Limits, config: dict[str, Any], status_fd: int, data_fd: int,
           server_dir: str) -> NoReturn:
    """Never returns."""
    try:
        os.chdir(cwd)
        os.umask(0o022)
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(null, fd)
        code = compile_candidate(os.path.join(cwd, config["module_file"]))
        if isinstance(code, str):
            emit(status_fd, {"import_error": code})
            os._exit(0)
        if not sandbox.private_root:
            import importlib

            for name in PRELOAD:
                importlib.import_module(name)
        emit(status_fd, {"loaded": 1})
        own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if sandbox.pid_namespace else None
        gc.freeze()  # children share these objects' pages instead of copying them for the collector
        while True:
            read_fd, write_fd = os.pipe()
            # The worker is PID 1 of a namespace of its own (namespaced), else a plain child.
            pid = os.fork() if own_pid_ns is None else fork_as_pid1(own_pid_ns)
            if pid == 0:
                keep_only_fds(write_fd)  # nothing of the harness or the zygote stays open
                worker(sandbox, cwd, uid, limits, config, code, server_dir, write_fd)
            os.close(write_fd)
            moved, status, cpu = pump(pid, read_fd, data_fd, null)
            os.close(read_fd)
            if not sandbox.pid_namespace and sandbox.drops_privileges:
                end_leftovers_of(uid)
            if moved == 0 and os.waitstatus_to_exitcode(status) == EXIT_NO_MORE:
                break
            emit(status_fd, {"n": moved, "status": status, "cpu": cpu})
        os._exit(0)
    except BaseException:  # noqa: BLE001
        os._exit(70)


def compile_candidate(path: str) -> types.CodeType | str:
    """The code object, or the class of the compile error. Compiling runs none of the candidate's
    code; a soft CPU limit stops a source built to make the compiler itself spin."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (int(used.ru_utime + used.ru_stime) + COMPILE_CPU_S, hard))
    try:
        with open(path, "rb") as f:
            return compile(f.read(), path, "exec", dont_inherit=True)
    except BaseException as exc:  # noqa: BLE001
        return type(exc).__name__
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def main() -> None:
    kind, server_dir, workspace, uid_arg, config_json = sys.argv[1:6]
    uid, config = int(uid_arg), json.loads(config_json)
    # Stdout and stderr are the harness's status and record channels from here on; anything else
    # this process prints (a traceback) goes to a log of its own.
    status_fd, data_fd = os.dup(1), os.dup(2)
    log = os.open(os.path.join(server_dir, LAUNCHER_LOG), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    backstop_cpu = config["rlimit_cpu_s"]
    limits = Limits(wall_s=float(backstop_cpu) * 10, cpu_s=backstop_cpu, memory_mb=config["memory_mb"],
                    fsize_mb=config["fsize_mb"], nofile=config["nofile"], nproc=config["nproc"])
    sandbox = select_sandbox(kind)  # the spec the harness chose through the execution seam
    sandbox.setup_server(Path(server_dir))
    emit(status_fd, {"ready": 1})
    init = sandbox.fork_job()
    if init == 0:
        die_with_parent()
        cwd = sandbox.enter_job(Path(workspace), limits)
        zygote(sandbox, cwd, uid, limits, config, status_fd, data_fd, server_dir)
    os.close(status_fd)
    os.close(data_fd)
    _, status = os.waitpid(init, 0)
    sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    main()
