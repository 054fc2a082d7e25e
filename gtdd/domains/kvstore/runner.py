"""Run an untrusted implementation on many traces in ONE isolated subprocess.

`run_traces(source, traces)` writes the candidate module and the trace driver into a fresh
workspace, starts sandbox_launch.py (TestPrism sandbox primitives: namespaces, chroot, unprivileged
uid, rlimits, allow-listed environment; see that file), sends all traces as one JSON document on
stdin and reads one JSON line per trace from a pipe the harness owns (the candidate's stdout and
stderr go elsewhere, so printing cannot corrupt results). Each trace runs on a fresh instance under
an interval timer in the child. The harness also keeps a wall-clock watchdog per trace: if the child
stops answering (a candidate that swallows the timer, a hang in native code) or dies, the pending
trace is classified ("timeout" / "crash"), the process group is killed and a new child resumes with
the next trace.

Nothing here is specific to the key-value store except the defaults: a candidate is a module file
defining a class whose instances have `execute(cmd, args)`.
"""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

from testhelix.prism.sandbox import detect_sandbox

from gtdd.domains.base import ERROR_CRASH, ERROR_IMPORT, ERROR_TIMEOUT, Trace, TraceResult

HERE = Path(__file__).parent
LAUNCHER = HERE / "sandbox_launch.py"
DRIVER = HERE / "trace_child.py"
DRIVER_NAME = "_gtdd_trace_child.py"  # must match sandbox_launch.DRIVER_FILE
START_GRACE_S = 20.0  # building the sandbox and importing the candidate (bounded in the child too)
ANSWER_GRACE_S = 2.0  # the child's own timer normally fires first; the watchdog is the backstop
MEMORY_MB = 1024


def import_limit(timeout: float) -> float:
    """How long the child lets a candidate import take (trace_child.py uses the same rule)."""
    return max(timeout * 10, 2.0)


class EvaluatorError(RuntimeError):
    """The trusted harness or its isolation failed: the execution is invalid, not the candidate's fault."""


def _sandbox_uid() -> int:
    # A uid of our own (RLIMIT_NPROC counts per uid); kept apart from the TestPrism executor's range.
    return 5_000_000 + os.getpid() % (1 << 20)


def run_traces(module_source: str, traces: Sequence[Trace], per_trace_timeout_s: float = 1.0,
               module_file: str = "kvstore.py", entry: str = "Store",
               sandbox_kind: str | None = None) -> list[TraceResult]:
    """One TraceResult per trace, in order. Raises EvaluatorError when the isolation itself fails."""
    if not traces:
        return []
    kind = sandbox_kind or detect_sandbox().kind
    payload = {"module": Path(module_file).stem, "entry": entry, "timeout": per_trace_timeout_s,
               "traces": [[dict(op) for op in t.ops] for t in traces]}
    results: list[TraceResult | None] = [None] * len(traces)
    with tempfile.TemporaryDirectory(prefix="gtdd-run-") as tmp:
        base = Path(tmp)
        workspace = base / "workspace"
        workspace.mkdir()
        (workspace / module_file).write_text(module_source)
        shutil.copyfile(DRIVER, workspace / DRIVER_NAME)
        for path in (base, workspace):
            path.chmod(0o755)  # the unprivileged uid reads, never writes, the workspace
        for path in workspace.iterdir():
            path.chmod(0o644)
        start = 0
        while start < len(traces):
            payload["start"] = start
            start = _run_child(kind, base, workspace, payload, per_trace_timeout_s, results, start)
    return [r if r is not None else TraceResult((), ERROR_CRASH) for r in results]


def _run_child(kind: str, base: Path, workspace: Path, payload: dict, timeout: float,
               results: list, start: int) -> int:
    """Run one child from trace `start`; returns the index to resume from (len(results) when done)."""
    n = len(results)
    cpu_s = int(math.ceil((n - start) * timeout)) + 10
    server_dir = Path(tempfile.mkdtemp(prefix="server-", dir=base))
    read_fd, write_fd = os.pipe()
    argv = [*detect_sandbox(kind).launch_prefix(), sys.executable, "-s", "-P", str(LAUNCHER), kind, str(server_dir),
            str(workspace), str(_sandbox_uid()), str(write_fd), str(cpu_s), str(MEMORY_MB)]
    log_path = base / "child.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(write_fd,),
                                start_new_session=True, cwd=str(base), env=_launcher_env())
    os.close(write_fd)
    try:
        _send(proc, payload)
        return _collect(proc, read_fd, timeout, results, start, log_path)
    finally:
        os.close(read_fd)
        _kill(proc)


def _launcher_env() -> dict[str, str]:
    # The launcher runs trusted code only; it still gets no host variables beyond what Python needs.
    # An explicit allow-list (no host variables reach the child), so -E/-I are not needed and the
    # fixed hash seed applies: set iteration order must not vary between runs of one module.
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0"}


def _send(proc: subprocess.Popen, payload: dict) -> None:
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the child died early; _collect classifies it


def _collect(proc: subprocess.Popen, fd: int, timeout: float, results: list, start: int, log: Path) -> int:
    buffer = b""
    ready = loaded = False  # the sandbox is up / the candidate is imported
    pending = start  # the trace the child is working on
    deadline = time.monotonic() + START_GRACE_S
    while pending < len(results):
        remaining = deadline - time.monotonic()
        readable, _, _ = select.select([fd], [], [], max(remaining, 0))
        chunk = os.read(fd, 1 << 16) if readable else None
        if not chunk:  # the watchdog fired (None) or the child is gone (b"")
            if not ready:
                raise EvaluatorError(f"trace child failed before the candidate was loaded: {_tail(log)}")
            if not loaded:  # hung or died while importing: no trace can run
                return _fill(results, start, ERROR_IMPORT)
            results[pending] = TraceResult((), ERROR_CRASH if chunk == b"" else ERROR_TIMEOUT)
            return pending + 1
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            record = json.loads(line)
            if "ready" in record:
                ready = True
                deadline = time.monotonic() + import_limit(timeout) + ANSWER_GRACE_S
            elif "loaded" in record:
                loaded = True
                deadline = time.monotonic() + timeout + ANSWER_GRACE_S
            elif "import_error" in record:
                return _fill(results, start, ERROR_IMPORT)
            else:
                index = record["i"]
                results[index] = TraceResult(tuple(record["replies"]), record["error"])
                pending = index + 1
                deadline = time.monotonic() + timeout + ANSWER_GRACE_S
    return len(results)


def _fill(results: list, start: int, error: str) -> int:
    for i in range(start, len(results)):
        results[i] = TraceResult((), error)
    return len(results)


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher's session; PID 1's exit ends the namespace
        except ProcessLookupError:
            pass
    proc.wait()


def _tail(log: Path, limit: int = 2000) -> str:
    try:
        return log.read_text(errors="replace")[-limit:] or "(no output)"
    except OSError:
        return "(no log)"
