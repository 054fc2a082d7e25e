"""Run our own trusted test files (kata tests, bank tests) on program trees, with per-test results.

The pack tools only ever run code we wrote and reviewed (kata tests, bank tests, kata programs and
their mutants), so a plain pytest subprocess is enough here; untrusted agent suites go through the
sandboxed executor in testhelix.prism. The workspace mirrors the harness layout: the program tree
at the root (on PYTHONPATH) and the test files in `suite/`.

Per-test results come from pytest's junit XML, written OUTSIDE the workspace so a test cannot
overwrite it by accident. Plugin autoloading is switched off: the kata tests need no third-party
pytest plugin, and loading every installed plugin costs ~0.6 s per run (measured: 0.84 s vs 0.19 s
for the lru_cache trusted tests), which dominates a build of thousands of runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from testhelix.core import forkrun

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
# Environment variables that would change how the child interpreter or pytest behaves.
_DROPPED_ENV = ("PYTHONPATH", "PYTHONSTARTUP", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "COVERAGE_PROCESS_START")


@dataclass(frozen=True)
class SuiteRun:
    """Outcome of one test folder (or file) on one program."""

    status: Literal["pass", "fail", "error"]
    reason: str | None
    results: dict[str, bool] = field(default_factory=dict)  # "<classname>::<name>" -> passed
    duration_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def _parse_junit(report: Path) -> dict[str, bool]:
    results: dict[str, bool] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        bad = any(child.tag in ("failure", "error", "skipped") for child in case)
        key = f"{case.get('classname', '')}::{case.get('name', '?')}"
        # A test reported twice (a failing teardown after a passing call) counts as failed.
        results[key] = results.get(key, True) and not bad
    return results


def _child_env(work: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    if work is not None:
        env["PYTHONPATH"] = str(work)
    return env


def _pytest_args(suite: Path, work: Path, meta: Path, select: Sequence[str]) -> list[str]:
    """Lay out the workspace (program at the root, tests in suite/) and return pytest's arguments."""
    if suite.is_dir():
        shutil.copytree(suite, work / "suite", ignore=_IGNORE)
        target = "suite"
    else:
        (work / "suite").mkdir()
        shutil.copyfile(suite, work / "suite" / suite.name)
        target = f"suite/{suite.name}"
    # An empty ini outside the workspace pins the rootdir and keeps any ini file of the
    # surrounding folders (e.g. the repository's pyproject addopts) out of the run.
    (meta / "pytest.ini").write_text("[pytest]\n")
    targets = [f"{target}::{name}" for name in select] if select else [target]
    return ["-q", "-p", "no:cacheprovider", "-c", str(meta / "pytest.ini"), "--rootdir", str(work),
            f"--junitxml={meta / 'report.xml'}", *targets]


def _run_subprocess(args: list[str], work: Path, timeout: float) -> int | None:
    """pytest in a fresh interpreter; the exit code, or None on timeout."""
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=work, env=_child_env(work),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        forkrun.kill_session(proc.pid)   # started in a session of its own
        proc.wait()
        return None


def run_suite(suite: Path, program: Path, timeout: float = 60.0, select: Sequence[str] = (),
              worker: WarmWorker | None = None) -> SuiteRun:
    """Run the test file or folder `suite` on the program tree `program` (in `worker` if given,
    else in a fresh interpreter).

    `select` optionally names test functions to run (pytest node ids inside the suite file).
    pass: at least one test ran and every test passed; fail: some test failed or errored (a
    program that does not import fails every test); error: nothing ran, or the run timed out.
    """
    suite, program = Path(suite), Path(program)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pack-run-") as tmpname:
        tmp = Path(tmpname)
        work, meta = tmp / "work", tmp / "meta"
        shutil.copytree(program, work, ignore=_IGNORE)
        meta.mkdir()
        args = _pytest_args(suite, work, meta, select)
        code = worker.run(args, work, timeout) if worker else _run_subprocess(args, work, timeout)
        if code is None:
            return SuiteRun("error", "timeout", {}, time.monotonic() - start)
        report = meta / "report.xml"
        results = _parse_junit(report) if report.exists() else {}
    duration = time.monotonic() - start
    if not results:
        return SuiteRun("error", f"no tests ran (pytest exit {code})", {}, duration)
    if all(results.values()) and code == 0:
        return SuiteRun("pass", None, results, duration)
    failed = [name for name, ok in results.items() if not ok]
    return SuiteRun("fail", f"{len(failed)} of {len(results)} tests failed", results, duration)


class WarmWorker:
    """One warm worker process (testhelix/core/forkrun.py: a long-lived interpreter that has imported
    pytest once and forks one child per run, saving the ~0.1 s interpreter + pytest start-up of
    every run, over half of a kata run); `run` is not thread-safe, so give each thread its own."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None

    def run(self, args: list[str], work: Path, timeout: float) -> int | None:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen([sys.executable, forkrun.__file__], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                          env=_child_env(None), cwd=tempfile.gettempdir())
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(json.dumps({"cwd": str(work), "args": args, "timeout": timeout}) + "\n")
        self._proc.stdin.flush()
        reply = self._proc.stdout.readline()
        if not reply:  # the worker died: report this run as not having run, start afresh next time
            self.close()
            return -1
        return json.loads(reply)["code"]

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None


@dataclass(frozen=True)
class Job:
    """One run; `key` identifies identical runs (e.g. suite digest + program digest) so each
    distinct (suite, program) pair runs once."""

    key: str
    suite: Path
    program: Path
    timeout: float = 60.0


def run_jobs(jobs: Sequence[Job], workers: int = 2, progress: Callable[[int, int], None] | None = None,
             warm: bool = True) -> dict[str, SuiteRun]:
    """Run the distinct jobs (by key) on `workers` parallel pytest processes; results by key."""
    unique: dict[str, Job] = {}
    for job in jobs:
        unique.setdefault(job.key, job)
    todo = sorted(unique.values(), key=lambda j: j.key)
    local = threading.local()
    pool_workers: list[WarmWorker] = []

    def one(job: Job) -> SuiteRun:
        worker = None
        if warm:
            worker = getattr(local, "worker", None)
            if worker is None:
                worker = local.worker = WarmWorker()
                pool_workers.append(worker)
        return run_suite(job.suite, job.program, job.timeout, worker=worker)

    out: dict[str, SuiteRun] = {}
    try:
        with ThreadPoolExecutor(max(1, workers)) as pool:
            futures = {job.key: pool.submit(one, job) for job in todo}
            for done, (key, fut) in enumerate(futures.items(), 1):
                out[key] = fut.result()
                if progress:
                    progress(done, len(todo))
    finally:
        for worker in pool_workers:
            worker.close()
    return out


def run_each(suite: Path, program: Path, names: Sequence[str], timeout: float = 10.0) -> SuiteRun:
    """Run the test functions `names` of one suite file one at a time, merged into one result.
    Used when a whole-file run timed out, so one hanging test does not mark every other test of
    the file as failed."""
    start = time.monotonic()
    results: dict[str, bool] = {}
    for name in names:
        run = run_suite(suite, program, timeout, select=[name])
        results.update(run.results or {f"::{name}": False})
    failed = sum(1 for ok in results.values() if not ok)
    status: Literal["pass", "fail"] = "fail" if failed else "pass"
    return SuiteRun(status, f"{failed} of {len(results)} tests failed (run one by one)" if failed else None,
                    results, time.monotonic() - start)
