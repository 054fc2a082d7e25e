"""Run submitted suites on programs: a pool of sandboxed fork servers.

`default_executor()` gives a `ForkServerExecutor`: `workers` fork servers (default: one per core),
each a supervisor with a clean zygote that has imported pytest once and forks one isolated job per
execution (see forkserver.py, keepers.py and sandbox.py). `run_many` runs independent executions in parallel,
one host thread per server; identical (suite, program) jobs run once. Outcomes are cached by the
wrapper the seam puts around every executor (cached_executor.py), not here.

What a server is told about a job: two digests, the limits and the entry kind. The executor copies
each tree into the staging folder under its digest (read-only) and compiles it in a short-lived
helper process first (precompile.py), so no host path, task or candidate id or label reaches any
process near untrusted code. Trusted suites (a task's hidden tests, measured for coverage targets)
run on a separate pool with its own staging folder: `trusted()`.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import testhelix
from testhelix.core import staging
from testhelix.core.plugins import import_root
from testhelix.execution.cached_executor import DigestedJob, digest_jobs, tree_digest
from testhelix.execution.cgroup import CGROUPS_ENV
from testhelix.execution.environments import PythonEnv
from testhelix.execution.masking import HIDE_ENV, hidden_paths
from testhelix.execution.outcome import RUNNER_VERSION, Limits, Outcome, RawRun, outcome_of
from testhelix.execution.outcome_cache import OutcomeCache
from testhelix.execution.pagecache import DROP_ENV
from testhelix.execution.precompile import compile_in_helper
from testhelix.execution.protocols import Executor
from testhelix.execution.ram_view import (
    VIEW_DIR_ENV,
    View,
    ViewPlan,
    ensure_view,
    plan,
    release_dead_tree_mounts,
    trees_in_memory,
    wanted,
)
from testhelix.execution.sandbox import HOST_PREFIX_ENV, OVERLAY_ENV, Sandbox, sandbox_env
from testhelix.execution.seam import create_executor, select_sandbox
from testhelix.execution.syscalls import umount
from testhelix.execution.workspace import ENTRY_SCRIPT, TreeCache, force_rmtree

__all__ = ["Executor", "ForkServerExecutor", "Limits", "Outcome", "OutcomeCache", "default_executor"]

SERVER_START_TIMEOUT_S = 60.0  # on an idle machine; scaled with the load per core (start_timeout)
SERVER_START_TIMEOUT_MAX_S = 600.0
# (first uid, how many): disjoint ranges, above any system or login uid, below 2**31.
UNTRUSTED_UIDS = (1 << 28, 1 << 28)
TRUSTED_UIDS = (1 << 29, 1 << 28)
KEEP_FILE = "keep-modules.json"
COMPILE_BATCH = 4  # executions in one run_many call from which new trees are compiled first


def _entry(suite: Path, coverage: bool) -> tuple[str, str | None]:
    """(entry kind, pre-run error) of a suite folder: the seed's "missing entry script" cases."""
    if not suite.is_dir():
        return "pytest", "missing entry: no suite submitted"
    script = suite / ENTRY_SCRIPT
    if coverage:
        return "coverage", None  # coverage always measures pytest in-process; an own script is not run
    if not os.path.lexists(script):
        return "pytest", None
    if not script.is_file() or script.is_symlink() or script.stat().st_size == 0:
        return "script", "missing entry script (run_tests.sh is not a non-empty regular file)"
    return "script", None


_KEEP_PROBE = """
import json, os, sys
def pytest_collection(session):
    with open(os.environ["PRISM_KEEP_OUT"], "w") as f:
        json.dump(sorted({m.split(".", 1)[0] for m in sys.modules}), f)
"""


@functools.lru_cache(maxsize=1)
def fresh_pytest_modules() -> tuple[str, ...]:
    """Top-level modules a fresh `pytest` process has imported when it starts collecting.

    The zygote has imported more (its warm-up ran tests, coverage, the harness). A suite or
    program module named like one of those extras must not meet the zygote's copy: the test
    process forgets them, and keeps these, exactly as a plain pytest run would have them.
    """
    with tempfile.TemporaryDirectory(prefix="prism-keep-") as tmp:
        (Path(tmp) / "conftest.py").write_text(_KEEP_PROBE)
        (Path(tmp) / "test_probe.py").write_text("def test_probe():\n    pass\n")
        out = Path(tmp) / "keep.json"
        env = {**sandbox_env(home=tmp, tmp=tmp, pythonpath=tmp), "PRISM_KEEP_OUT": str(out)}
        subprocess.run([sys.executable, "-s", "-m", "pytest", "-q", "-p", "no:cacheprovider", tmp], cwd=tmp,
                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120, check=False)
        try:
            return tuple(json.loads(out.read_text()))
        except (OSError, ValueError):
            return tuple(sorted(sys.builtin_module_names))  # forget more rather than less


@functools.lru_cache(maxsize=1)
def _hidden_paths() -> list[str]:
    return hidden_paths()


@functools.lru_cache(maxsize=8)
def _view_plan(prefixes: tuple[str, ...]) -> ViewPlan:
    return plan(list(prefixes), _hidden_paths())  # walks the installations (~0.5 s): once per process


class _ServerHandle:
    """One fork server process and its line-based JSON protocol. Used by one thread at a time."""

    def __init__(self, sandbox: Sandbox, staging: Path, index: int, environment: PythonEnv | None = None,
                 trusted: bool = False, view: View | None = None):
        self.sandbox, self.staging, self.index = sandbox, staging, index
        self.view = view  # the RAM view the server's read-only folders show (ram_view.py), if any
        self.environment = environment  # None: the harness's own interpreter
        # Each job draws a uid of its own from its pool's range (RLIMIT_NPROC counts per uid, and
        # leftovers are attributable); trusted and untrusted pools never share one.
        self.uids = TRUSTED_UIDS if trusted else UNTRUSTED_UIDS
        self.dir = staging / f"server{index}"
        self.proc: subprocess.Popen | None = None
        self._buf = b""
        self.cgroups = "none"  # what the started server reports (v1, v2, none)

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        package_parent = str(Path(testhelix.__file__).resolve().parent.parent)
        plugin_root = import_root(self.sandbox)  # a plug-in sandbox: the server imports it too
        env = sandbox_env(home=str(self.dir), tmp=str(self.dir),
                          pythonpath=os.pathsep.join(filter(None, (package_parent, plugin_root))))
        for knob in (OVERLAY_ENV, CGROUPS_ENV, DROP_ENV):  # the harness's own settings, passed on by name
            if knob in os.environ:
                env[knob] = os.environ[knob]
        env[HIDE_ENV] = json.dumps(_hidden_paths())  # what the sandbox covers (masking.py)
        if self.view is not None:
            env[VIEW_DIR_ENV] = str(self.view.path)
        python = sys.executable
        if self.environment is not None:  # a task environment: its interpreter, the harness mounted beside it
            python = str(self.environment.python)
            env[HOST_PREFIX_ENV] = sys.prefix
            env["PATH"] = f"{self.environment.python.parent}:{env['PATH']}"
        keep = self.staging / KEEP_FILE  # written by the executor before any server starts
        argv = [*self.sandbox.launch_prefix(), python, "-s", "-m", "testhelix.execution.forkserver"]
        settings = {"dir": str(self.dir), "staging": str(self.staging), "uids": f"{self.uids[0]}:{self.uids[1]}",
                    "kind": self.sandbox.spec, "keep_modules": str(keep)}
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=self.dir)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(settings).encode() + b"\n")  # not argv: jobs see the command line
        self.proc.stdin.flush()
        self._buf = b""
        hello = self._read_line(start_timeout())
        if not hello or not hello.get("ready"):
            detail = (hello or {}).get("error") or self._log_tail()
            self.stop()
            raise RuntimeError(f"fork server {self.index} did not start: {detail}")
        self.cgroups = hello.get("cgroups", "none")

    def _log_tail(self) -> str:
        try:
            return (self.dir / "server.log").read_text(errors="replace")[-2000:]
        except OSError:
            return "no log"

    def _read_line(self, timeout: float) -> dict | None:
        assert self.proc and self.proc.stdout
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, job: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            error = _try_start(self)
            if error is not None:  # a harness fault of this job (never cached: a rerun redoes it)
                return {"fault": error}
        assert self.proc and self.proc.stdin
        try:
            self.proc.stdin.write(json.dumps(job).encode() + b"\n")
            self.proc.stdin.flush()
            reply = self._read_line(timeout)
        except (BrokenPipeError, OSError, json.JSONDecodeError) as exc:
            reply = None
            self.stop()
            return {"fault": f"fork server lost: {exc}"}
        if reply is None:
            self.stop()  # unresponsive or dead: the next call starts a fresh one
            return {"fault": "fork server did not answer"}
        return reply

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self.proc = None


class ForkServerExecutor:
    def __init__(self, workers: int | None = None, cache: OutcomeCache | None = None,
                 sandbox: str | None = None, staging_parent: Path | None = None,
                 environment: PythonEnv | None = None, trusted: bool = False):
        # `cache` is part of the factory's signature (seam.ExecutorFactory) and unused: the seam
        # caches every executor (cached_executor.py). Kept for the sibling pools, which are made alike.
        self._args = (workers, cache, sandbox, staging_parent, environment)
        self.trusted_pool = trusted  # runs a task's hidden tests: uids of its own (TRUSTED_UIDS)
        self._trusted: ForkServerExecutor | None = None
        self.environment = environment
        self._by_env: dict[str, ForkServerExecutor] = {}
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.sandbox = select_sandbox(sandbox)
        self.runner_version = f"{RUNNER_VERSION}/{self.sandbox.kind}"
        if environment is not None:  # the same trees may behave differently under other packages
            self.runner_version += f"/env:{environment.digest[:16]}"
        if getattr(self.sandbox, "reads_ram_view", False) and wanted():
            release_dead_tree_mounts()  # before make_staging reclaims dead executors' folders
        self.staging = staging.make_staging("testhelix-prism-", staging_parent)
        if not self.sandbox.private_root and self.sandbox.drops_privileges:
            os.chmod(self.staging, 0o711)  # without a private mount the uid reaches its workspace by path
        self._trees_in_memory = getattr(self.sandbox, "reads_ram_view", False) and wanted() and \
            trees_in_memory(self.staging / "trees")
        # One compile helper per worker: a batch's new trees are compiled on every core the servers use.
        self.trees = TreeCache(self.staging, compile_trees=functools.partial(compile_in_helper, helpers=self.workers))
        self._idle: queue.Queue[_ServerHandle] = queue.Queue()
        self._handles: list[_ServerHandle] = []
        self._start_lock = threading.Lock()
        self.executions = 0  # how many executions actually ran
        self.view: View | None = None  # set when the servers start (ram_view.py)
        self.view_error = ""  # why there is none, where one was wanted

    # -- servers ----------------------------------------------------------------------------------
    def _ensure_started(self) -> None:
        with self._start_lock:
            if self._handles:
                return
            keep = self.staging / KEEP_FILE
            if not keep.exists():
                keep.write_text(json.dumps(fresh_pytest_modules()))
            self.view = self._ram_view()
            handles = [_ServerHandle(self.sandbox, self.staging, i, self.environment, self.trusted_pool, self.view)
                       for i in range(self.workers)]
            with ThreadPoolExecutor(self.workers) as pool:
                list(pool.map(_try_start, handles))
            # A server that did not start (twice) is started again by its next job, which gets a
            # harness fault if that fails too: recorded as such, never a traceback.
            self._handles = handles
            for h in handles:
                self._idle.put(h)

    def _ram_view(self) -> View | None:
        """The RAM view of what this pool's jobs read (built once per machine and content); None
        for a sandbox that mounts no host folders, with TESTHELIX_RAM_VIEW=0, or where it cannot be
        built (then the servers show the host folders and drop what each job read)."""
        if not getattr(self.sandbox, "reads_ram_view", False) or not wanted():
            return None
        prefixes = [sys.prefix] if self.environment is None else [str(self.environment.root), sys.prefix]
        try:
            return ensure_view(_view_plan(tuple(prefixes)))
        except OSError as exc:
            self.view_error = str(exc)
            return None

    def trusted(self) -> ForkServerExecutor:
        """A separate pool (own servers, own staging) for the task's hidden tests: trusted and
        untrusted suites never share a server or a tree cache."""
        with self._start_lock:
            if self._trusted is None:
                self._trusted = ForkServerExecutor(*self._args, trusted=True)
            return self._trusted

    def for_environment(self, environment: PythonEnv) -> ForkServerExecutor:
        """A sibling pool whose servers run under a task environment's interpreter (environments.py),
        started on first use and closed with this one."""
        with self._start_lock:
            if environment.digest not in self._by_env:
                workers, cache, sandbox, staging_parent, _ = self._args
                self._by_env[environment.digest] = ForkServerExecutor(workers, cache, sandbox, staging_parent,
                                                                      environment, trusted=self.trusted_pool)
            return self._by_env[environment.digest]

    @property
    def cgroups(self) -> str:
        """"v1", "v2" or "none": how the started servers limit a job as a whole."""
        return self._handles[0].cgroups if self._handles else "not started"

    # -- the Executor protocol -------------------------------------------------------------------------
    def prepare(self, folders: Sequence[Path]) -> None:
        """Copy (and compile) these trees into the cache now, so later runs only fork."""
        self.trees.ensure({tree_digest(Path(f)): Path(f) for f in folders if Path(f).is_dir()}, compile_new=True)

    def run(self, suite_dir: Path, program_dir: Path, limits: Limits = Limits(), coverage: bool = False) -> Outcome:
        return self.run_many([(suite_dir, program_dir)], limits, coverage=coverage)[0]

    def run_repeat(self, suite_dir: Path, program_dir: Path, limits: Limits, repetition: int) -> Outcome:  # noqa: ARG002
        """Another execution of the pair: nothing is cached here, so every run is one (the seam's
        wrapper keys each repetition apart)."""
        return self.run(suite_dir, program_dir, limits)

    def run_many(self, jobs: Sequence[tuple[Path, Path]], limits: Limits = Limits(),
                 coverage: bool = False) -> list[Outcome]:
        """Each distinct (suite, program) pair once; nothing is cached here (the seam's wrapper
        caches every executor: cached_executor.py)."""
        prepared = digest_jobs(jobs, limits)
        distinct = list({(j.suite_digest, j.program_digest): j for j in prepared if isinstance(j, DigestedJob)}.values())
        ran = dict(zip(((j.suite_digest, j.program_digest) for j in distinct),
                       self.run_digested(distinct, limits, coverage)))
        return [j if isinstance(j, Outcome) else ran[j.suite_digest, j.program_digest] for j in prepared]

    def run_digested(self, jobs: Sequence[DigestedJob], limits: Limits, coverage: bool) -> list[Outcome]:
        """Run each job as given; both trees travel to the servers by digest (staged here)."""
        if not jobs:
            return []
        trees = {digest: folder for job in jobs for digest, folder in ((job.suite_digest, job.suite),
                 (job.program_digest, job.program)) if not digest.startswith("missing:")}
        # Compiling costs a helper process (~0.3 s idle); it pays off for a batch (a panel), not
        # for one run (an agent's run_tests), where the test process compiles what it imports.
        self.trees.ensure(trees, compile_new=len(jobs) >= COMPILE_BATCH,
                          suites=frozenset(job.suite_digest for job in jobs))
        self._ensure_started()
        # The suite folder is read here for its entry point.
        with ThreadPoolExecutor(min(self.workers, len(jobs))) as pool:
            return list(pool.map(lambda job: self._execute(job.suite, job.suite_digest, job.program_digest,
                                                           limits, coverage), jobs))

    def close(self) -> None:
        if self._trusted is not None:
            self._trusted.close()
            self._trusted = None
        for sibling in self._by_env.values():
            sibling.close()
        self._by_env = {}
        for h in self._handles:
            h.stop()
        self._handles = []
        if self._trees_in_memory:
            self._trees_in_memory = False
            umount(str(self.staging / "trees"))  # (detached: the files go with the tmpfs)
        force_rmtree(self.staging)  # cached trees are read-only folders
        staging.release(self.staging)

    def __enter__(self) -> ForkServerExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------------
    def _execute(self, suite: Path, sd: str, pd: str, limits: Limits, coverage: bool) -> Outcome:
        entry, pre_error = _entry(suite, coverage)
        if pre_error is None and pd.startswith("missing:"):
            pre_error = "harness fault: missing program"
        if pre_error is not None:
            return outcome_from_reply({"pre_error": pre_error, "entry": entry}, limits, 0.0)
        # Digests and limits only: the server finds the trees by digest in the staging folder.
        job = {"suite": sd, "program": pd, "limits": limits.as_dict(), "entry": entry}
        handle = self._idle.get()
        started = time.monotonic()
        try:
            reply = handle.call(job, timeout=limits.wall_s + 60)
        finally:
            self._idle.put(handle)
        self.executions += 1
        return outcome_from_reply(reply, limits, time.monotonic() - started)


def start_timeout() -> float:
    """How long a fork server may take to start: longer on a loaded machine, within a bound."""
    try:
        per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        per_core = 1.0
    return min(SERVER_START_TIMEOUT_MAX_S, SERVER_START_TIMEOUT_S * max(1.0, per_core))


def _try_start(handle: _ServerHandle, attempts: int = 2) -> str | None:
    """Start a server, trying once more after a failure; the error text when both failed."""
    error = None
    for _ in range(attempts):
        try:
            handle.start()
            return None
        except (RuntimeError, OSError) as exc:
            error = str(exc)
    return error


def outcome_from_reply(reply: dict, limits: Limits, elapsed: float) -> Outcome:
    raw = RawRun(entry=reply.get("entry", "pytest"), exit_code=reply.get("exit_code"),
                 signal=reply.get("signal"), timed_out=bool(reply.get("timed_out")), wall_s=limits.wall_s,
                 duration_s=float(reply.get("duration_s") or elapsed), output=reply.get("output") or "",
                 fault=reply.get("fault"), pre_error=reply.get("pre_error"), resource=reply.get("resource"))
    return outcome_of(raw)


def default_executor(workers: int | None = None, cache: OutcomeCache | None = None) -> Executor:
    """The process's chosen executor (--executor / $TESTHELIX_EXECUTOR; default: this pool), see seam.py."""
    return create_executor(None, workers=workers, cache=cache)
