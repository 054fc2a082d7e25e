"""Harness side of trace isolation: one sandboxed zygote per batch, one fresh process per trace.

`run_traces(source, traces, limits)` writes the candidate module into a fresh read-only workspace,
starts zygote.py inside the TestPrism sandbox (see that file for the process tree), and then feeds
it one trace at a time: each trace is read by a process forked for it alone from a zygote that has
never executed candidate code, so a trace's result is the same alone and in any batch, and nothing
tells a development batch from an audit or population batch.

Before the traces, one empty probe trace tells whether the module imports at all (an import is
deterministic under the fixed-loss assumption, so a failing import fails every trace without
spending its CPU budget once per trace).

Verdicts come from CPU-time limits inside the sandbox (see zygote.py). The only wall-clock limit is
the watchdog here, for a worker that blocks without using CPU time or a harness that hangs: its
trace gets the harness error ERROR_WALL_CLOCK (gtdd.domains.base.HARNESS_ERRORS), which the
executor never caches, and the batch goes on in a fresh zygote.

CPU time is not a deterministic measure: the same trace uses more of it on a loaded machine (cache
and memory-bus contention, page faults), so a trace close to its limit could pass in one run and
time out in the next. A limit hit is therefore only a screen: every trace that timed out (in its
body or while importing) or met the wall-clock backstop is run again, alone, under limits
`confirm_factor` times larger, and that run decides. A correct candidate would have to be slowed
down that many times by load to be reported as a timeout, while a looping one still is; the factor
is part of the limits and so of every commitment.

Nothing here is specific to a domain: a candidate is a module file defining an entry class whose
instances have `execute(cmd, args)` returning JSON values.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtdd.domains.base import (
    ERROR_CRASH,
    ERROR_IMPORT,
    ERROR_MALFORMED,
    ERROR_TIMEOUT,
    ERROR_WALL_CLOCK,
    Trace,
    TraceResult,
)
from testhelix.core.forkrun import process_alive
from testhelix.core.plugins import import_root
from testhelix.execution import jobprocess
from testhelix.execution.seam import select_sandbox

if TYPE_CHECKING:
    from testhelix.execution.sandbox import Sandbox

HERE = Path(__file__).parent
ZYGOTE = HERE / "zygote.py"
RUN_DIR_PREFIX = "gtdd-run-"  # a run's folder in the temporary directory: gtdd-run-<pid>-<random>
LAUNCHER_LOG = "launcher.log"  # zygote.py's own diagnostics, in its server folder
START_GRACE_S = 30.0  # building the sandbox and compiling the candidate
NAMESPACED_UID = 4_900_000  # one fixed uid, so no batch differs from another in what it can see


@dataclass(frozen=True)
class IsolationLimits:
    """Per-trace resource limits; part of every commitment (they decide verdicts)."""

    cpu_s: float = 1.0  # CPU seconds for one trace's operations
    import_cpu_s: float = 2.0  # CPU seconds for executing the module body and finding the entry
    memory_mb: int = 1024  # RLIMIT_AS of the worker
    fsize_mb: int = 8
    nofile: int = 64
    nproc: int = 64
    wall_factor: float = 10.0  # watchdog: wall_factor x rlimit_cpu_s + wall_grace_s
    wall_grace_s: float = 5.0
    confirm_factor: float = 4.0  # a limit hit is confirmed under limits this many times larger

    def confirming(self) -> IsolationLimits:
        """The limits of the run that confirms a limit hit (see the module docstring)."""
        f = self.confirm_factor
        return replace(self, cpu_s=self.cpu_s * f, import_cpu_s=self.import_cpu_s * f, confirm_factor=1.0)

    @classmethod
    def for_timeout(cls, per_trace_cpu_s: float, **kw: Any) -> IsolationLimits:  # any other IsolationLimits field
        return cls(cpu_s=per_trace_cpu_s, import_cpu_s=max(2 * per_trace_cpu_s, 1.0), **kw)

    @property
    def rlimit_cpu_s(self) -> int:
        """RLIMIT_CPU of a worker: stops a candidate that swallows or blocks the timer signal."""
        return int(math.ceil(self.cpu_s + self.import_cpu_s)) + 1

    @property
    def wall_backstop_s(self) -> float:
        return self.wall_factor * self.rlimit_cpu_s + self.wall_grace_s


class EvaluatorError(RuntimeError):
    """The trusted harness or its isolation failed: the execution is invalid, not the candidate's fault."""


def isolation_code_digest() -> str:
    """sha256 of the isolation code itself (zygote, runner, and the per-process steps the zygote
    shares with the executor): it is part of the execution image."""
    h = hashlib.sha256()
    for path in (ZYGOTE, Path(__file__), Path(jobprocess.__file__)):
        h.update(path.read_bytes())
    return h.hexdigest()


def execution_config(limits: IsolationLimits, sandbox_kind: str | None = None) -> dict:
    """Everything besides the candidate's files that decides a verdict: sandbox kind and limits,
    the interpreter (the candidate imports only the standard library) and the isolation code."""
    import platform

    return {"sandbox": select_sandbox(sandbox_kind).kind, "limits": asdict(limits), "python": sys.version,
            "implementation": platform.python_implementation(), "machine": platform.machine(),
            "isolation_code": isolation_code_digest(), "dependencies": _dependency_versions()}


def _dependency_versions() -> dict[str, str]:
    """Versions of the installed packages that take part in running a candidate: the project (its
    sandbox primitives) and the schema validator that decides which traces are valid inputs."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("testhelix", "jsonschema"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def _sandbox_uid(sandbox: Sandbox) -> int:
    if sandbox.pid_namespace:  # no leftovers outlive a trace's namespace
        return NAMESPACED_UID
    # The plain fallback kills leftovers by uid after each trace: never share one with another harness.
    return 5_000_000 + os.getpid() % (1 << 20)


def run_traces(module_source: str, traces: Sequence[Trace], limits: IsolationLimits | None = None,
               module_file: str = "candidate.py", entry: str = "Store",
               sandbox_kind: str | None = None) -> list[TraceResult]:
    """One TraceResult per trace, in order. Raises EvaluatorError when the isolation itself fails."""
    if not traces:
        return []
    limits = limits or IsolationLimits()
    results = _run_once(module_source, traces, limits, module_file, entry, sandbox_kind)
    again = [i for i, r in enumerate(results) if r.error in _CONFIRM]
    if again and limits.confirm_factor > 1:
        confirmed = _run_once(module_source, [traces[i] for i in again], limits.confirming(), module_file, entry,
                              sandbox_kind)
        for i, result in zip(again, confirmed):
            results[i] = result
    return [TraceResult((), ERROR_IMPORT) if r.error == _IMPORT_TIMEOUT else r for r in results]


# The import ran out of CPU time: reported as ERROR_IMPORT, but confirmed like a timeout first.
_IMPORT_TIMEOUT = "import:timeout"
_CONFIRM = frozenset({ERROR_TIMEOUT, ERROR_WALL_CLOCK, _IMPORT_TIMEOUT})


def _run_once(module_source: str, traces: Sequence[Trace], limits: IsolationLimits, module_file: str, entry: str,
              sandbox_kind: str | None) -> list[TraceResult]:
    sandbox = select_sandbox(sandbox_kind)  # the execution seam's choice (--sandbox, $TESTHELIX_SANDBOX)
    config = {"module_file": module_file, "module": Path(module_file).stem, "entry": entry,
              "cpu_s": limits.cpu_s, "import_cpu_s": limits.import_cpu_s,
              "rlimit_cpu_s": limits.rlimit_cpu_s, "memory_mb": limits.memory_mb,
              "fsize_mb": limits.fsize_mb, "nofile": limits.nofile, "nproc": limits.nproc}
    results: list[TraceResult | None] = [None] * len(traces)
    _remove_dead_run_dirs_once()
    with tempfile.TemporaryDirectory(prefix=f"{RUN_DIR_PREFIX}{os.getpid()}-") as tmp:
        base = Path(tmp)
        workspace = base / "workspace"
        workspace.mkdir()
        (workspace / module_file).write_text(module_source)
        for path in (base, workspace):
            path.chmod(0o755)  # the unprivileged uid reads, never writes, the workspace
        (workspace / module_file).chmod(0o644)
        start = 0
        while start < len(traces):
            start = _Batch(sandbox, base, workspace, config, limits, traces, results).run(start)
    return [r if r is not None else TraceResult((), ERROR_CRASH) for r in results]


def remove_dead_run_dirs(root: Path) -> list[Path]:
    """Remove the run folders (`gtdd-run-<pid>-...` under `root`) of processes that no longer exist:
    a run killed with SIGKILL cannot remove its own, and each holds a copy of a candidate. A folder
    whose pid is alive (or reused by another process) stays; so do names of another form."""
    removed = []
    for path in root.glob(f"{RUN_DIR_PREFIX}*-*"):
        pid = path.name[len(RUN_DIR_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or not path.is_dir():
            continue
        if not process_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@functools.cache
def _remove_dead_run_dirs_once() -> None:
    remove_dead_run_dirs(Path(tempfile.gettempdir()))


class _Batch:
    """One zygote: runs traces from `start` until all are done or the watchdog fires."""

    def __init__(self, sandbox: Sandbox, base: Path, workspace: Path, config: dict[str, object],
                 limits: IsolationLimits, traces: Sequence[Trace], results: list[TraceResult | None]) -> None:
        self.sandbox, self.base, self.workspace, self.config = sandbox, base, workspace, config
        self.limits, self.traces, self.results = limits, traces, results
        self.log = base / "launcher.log"  # the current batch's (see run)
        self.buffer = b""

    def run(self, start: int) -> int:
        server_dir = Path(tempfile.mkdtemp(prefix="server-", dir=self.base))
        self.log = server_dir / LAUNCHER_LOG
        # The launcher gets its standard streams and nothing else (stdin: trace frames, stdout: status
        # lines, stderr: the workers' records), as the executor's fork server does: a sandbox whose
        # launch prefix carries them serves both.
        argv = [*self.sandbox.launch_prefix(), sys.executable, "-s", "-P", str(ZYGOTE), self.sandbox.spec,
                str(server_dir), str(self.workspace), str(_sandbox_uid(self.sandbox)), json.dumps(self.config)]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, cwd=str(self.base), env=_launcher_env(import_root(self.sandbox)))
        assert proc.stdout is not None and proc.stderr is not None
        self.fd, self.data_fd, self.proc, self.data = proc.stdout.fileno(), proc.stderr.fileno(), proc, b""
        self.early = b""  # what the launcher wrote to stderr before its log was open
        done = start
        try:
            done = self._drive(start)
            return done
        finally:
            proc.stdout.close()
            proc.stderr.close()
            _kill(proc, graceful=done == len(self.traces))

    def _drive(self, start: int) -> int:
        first = self._next(START_GRACE_S)
        if first is None or "ready" not in first:
            raise EvaluatorError(f"the trace sandbox did not start: {self._diagnostics()}")
        # "ready" is written after the launcher moved its own output to its log: whatever came on
        # stderr before (a warning while it imported) is no record. It was written before "ready",
        # so it has been read by now (_next reads both pipes whenever both are readable).
        self.early, self.data = self.data, b""
        loaded = self._next(START_GRACE_S)
        if loaded is None:
            raise EvaluatorError(f"the trace zygote failed before the candidate was loaded: {self._diagnostics()}")
        if "import_error" in loaded:
            return self._fill(start, ERROR_IMPORT)  # a compile error (compiling runs no candidate code)
        backstop = self.limits.wall_backstop_s
        # Frames are written ahead by a thread (each worker reads exactly its own), so a worker never
        # waits for the harness to be scheduled between two traces.
        frames: list[list[dict]] = [[]] + [[dict(op) for op in t.ops] for t in self.traces[start:]]
        writer = threading.Thread(target=_write_frames, args=(self.proc, frames), daemon=True)
        writer.start()
        probe = self._answer(backstop)
        if probe is None:
            self.results[start] = TraceResult((), ERROR_WALL_CLOCK)
            return start + 1
        if probe.error in (ERROR_IMPORT, _IMPORT_TIMEOUT):
            return self._fill(start, probe.error)
        for index in range(start, len(self.traces)):
            result = self._answer(backstop)
            if result is None:  # blocked without using CPU time, or the harness hung
                self.results[index] = TraceResult((), ERROR_WALL_CLOCK)
                return index + 1
            self.results[index] = result
        return len(self.traces)

    def _answer(self, timeout: float) -> TraceResult | None:
        status = self._next(timeout)
        if status is None:
            if self.proc.poll() is not None:
                raise EvaluatorError(f"the trace zygote died: {self._diagnostics()}")
            return None
        while len(self.data) < status["n"]:  # the record was spliced before its status was written
            chunk = os.read(self.data_fd, 1 << 20)
            if not chunk:
                raise EvaluatorError("the trace zygote's record pipe closed early")
            self.data += chunk
        record, self.data = self.data[:status["n"]], self.data[status["n"]:]
        return classify_worker(record, status["status"], status["cpu"], self.limits)

    def _next(self, timeout: float) -> dict | None:
        """The next JSON line on the status pipe, or None after `timeout` s or at its end. Records
        arriving meanwhile are buffered, so a large one never blocks the zygote."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([self.fd, self.data_fd], [], [], remaining)
            if self.data_fd in readable:
                self.data += os.read(self.data_fd, 1 << 20)
            if self.fd in readable:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    return None
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def _diagnostics(self) -> str:
        """The launcher's log, and what it wrote to stderr before that log was open (an import error)."""
        early = (self.early or self.data)[-2000:].decode(errors="replace")
        return _tail(self.log) + (f"\n{early}" if early else "")

    def _fill(self, start: int, error: str) -> int:
        for i in range(start, len(self.results)):
            self.results[i] = TraceResult((), error)
        return len(self.results)


def classify_worker(data: bytes, status: int, cpu_s: float, limits: IsolationLimits) -> TraceResult:
    """A trace's result from what its worker wrote and how it ended (zygote.py, run_candidate)."""
    phase, record = None, None
    for line in data.split(b"\n"):
        try:
            item = json.loads(line) if line else None
        except ValueError:
            item = None
        if isinstance(item, dict) and set(item) == {"phase"} and record is None:
            phase = item["phase"]
        elif line:
            record = item if record is None else "more than one record"
    exited_cleanly = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    if isinstance(record, dict) and exited_cleanly:
        if "import_error" in record:
            return TraceResult((), _IMPORT_TIMEOUT if record["import_error"] == "timeout" else ERROR_IMPORT)
        replies, error = record.get("r"), record.get("e")
        if isinstance(replies, list) and (error is None or isinstance(error, str)):
            return TraceResult(tuple(replies), error)
    if record is None and phase == "import":  # died while its module body ran
        return TraceResult((), ERROR_IMPORT)
    if not exited_cleanly:
        if (os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL)
                and cpu_s >= limits.rlimit_cpu_s - 0.5) or cpu_s >= limits.rlimit_cpu_s:
            return TraceResult((), ERROR_TIMEOUT)  # the CPU rlimit stopped it
        return TraceResult((), ERROR_CRASH)
    return TraceResult((), ERROR_MALFORMED)


def _write_frames(proc: subprocess.Popen, frames: list[list[dict]]) -> None:
    try:
        assert proc.stdin is not None
        for ops in frames:
            body = json.dumps(ops).encode()
            proc.stdin.write(len(body).to_bytes(8, "big") + body)
            proc.stdin.flush()
        proc.stdin.close()  # the next worker reads the end of input and the batch ends
    except (BrokenPipeError, ValueError, OSError):
        pass  # the batch was stopped (watchdog) or the zygote died; the reader reports it


def _launcher_env(plugin_root: str | None = None) -> dict[str, str]:
    # An explicit allow-list (no host variables reach the sandbox), so -E/-I are not needed and the
    # fixed hash seed applies: set iteration order must not vary between runs of one module.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONHASHSEED": "0"}
    if plugin_root:  # a plug-in sandbox: the launcher imports it too
        env["PYTHONPATH"] = plugin_root
    return env


def _kill(proc: subprocess.Popen, graceful: bool) -> None:
    if graceful:
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
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
