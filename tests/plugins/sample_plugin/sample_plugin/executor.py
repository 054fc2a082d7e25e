"""An execution backend outside the project: `--executor sample` (entry point) or
`--executor sample_plugin.executor:SubprocessExecutor` (dotted path).

It implements testhelix's `Executor` protocol (testhelix/execution/seam.py) without the fork-server
pool, the way a container or remote backend would: `prepare` copies each tree once into a folder of
its own, and each run copies the prepared program and suite into a fresh workspace and runs pytest
(or the suite's run_tests.sh) in a child process with the project's allow-listed environment,
rlimits and a wall-clock timeout, classified by the project's own rules. Its isolation is weaker
than the project's sandboxes (no namespaces) and it caches no outcome: it exists to prove the seam.

Each run appends one line to the file named by $SAMPLE_PLUGIN_LOG, if set, so a test can see
which backend ran its suites.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from testhelix.core.digest import tree_sha256
from testhelix.execution.outcome import Limits, Outcome, RawRun, classify, pytest_args
from testhelix.execution.outcome_cache import OutcomeCache
from testhelix.execution.sandbox import apply_rlimits, sandbox_env

SUITE = "suite"  # where the suite sits in a workspace, as in the project's own layout
SCRIPT = "run_tests.sh"


class SubprocessExecutor:
    runner_version = "sample-subprocess-1"

    def __init__(self, workers: int | None = None, cache: OutcomeCache | None = None,
                 sandbox: str | None = None) -> None:
        self.workers = max(1, workers or 1)
        self.root = Path(tempfile.mkdtemp(prefix="sample-executor-"))
        self.trees: dict[str, Path] = {}  # digest -> prepared copy
        self.log = os.environ.get("SAMPLE_PLUGIN_LOG")

    def prepare(self, folders: Sequence[Path]) -> None:
        for folder in folders:
            self._tree(Path(folder))

    def run(self, suite_dir: Path, program_dir: Path, limits: Limits = Limits(), coverage: bool = False) -> Outcome:
        return self._run(Path(suite_dir), Path(program_dir), limits)

    def run_many(self, jobs: Sequence[tuple[Path, Path]], limits: Limits = Limits(),
                 coverage: bool = False) -> list[Outcome]:
        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(lambda job: self._run(Path(job[0]), Path(job[1]), limits), jobs))

    def run_repeat(self, suite_dir: Path, program_dir: Path, limits: Limits, repetition: int) -> Outcome:
        return self._run(Path(suite_dir), Path(program_dir), limits)  # nothing is cached: always a fresh run

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> SubprocessExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------
    def _tree(self, folder: Path) -> Path:
        digest = tree_sha256(folder)
        if digest not in self.trees:
            target = self.root / "trees" / digest
            if not target.exists():
                shutil.copytree(folder, target, symlinks=True)
            self.trees[digest] = target
        return self.trees[digest]

    def _run(self, suite: Path, program: Path, limits: Limits) -> Outcome:
        if not suite.is_dir():
            return _outcome(RawRun(entry="pytest", pre_error="missing entry: no suite submitted"))
        if not program.is_dir():
            return _outcome(RawRun(entry="pytest", pre_error="harness fault: missing program"))
        script = (suite / SCRIPT).is_file()
        workspace = Path(tempfile.mkdtemp(prefix="ws-", dir=self.root))
        try:
            shutil.copytree(self._tree(program), workspace, symlinks=True, dirs_exist_ok=True)
            shutil.copytree(self._tree(suite), workspace / SUITE, symlinks=True)
            home, tmp = workspace / ".home", workspace / ".tmp"
            home.mkdir()
            tmp.mkdir()
            env = sandbox_env(home=str(home), tmp=str(tmp), pythonpath=str(workspace))
            argv = (["/bin/sh", f"{SUITE}/{SCRIPT}"] if script
                    else [sys.executable, "-s", "-m", "pytest", *pytest_args(limits), SUITE])
            raw = self._spawn(argv, workspace, env, limits, "script" if script else "pytest")
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        if self.log:
            with open(self.log, "a") as f:
                f.write(f"{self.runner_version} {raw.entry} exit={raw.exit_code}\n")
        return _outcome(raw)

    def _spawn(self, argv: list[str], cwd: Path, env: dict, limits: Limits, entry: Literal["pytest", "script"]) -> RawRun:
        started = time.monotonic()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=lambda: apply_rlimits(limits, with_nproc=False))
        try:
            out, _ = proc.communicate(timeout=limits.wall_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            timed_out = True
        code = proc.returncode
        text = out.decode(errors="replace")[-limits.output_bytes:]
        return RawRun(entry=entry, exit_code=code if code is not None and code >= 0 else None,
                      signal=-code if code is not None and code < 0 else None, timed_out=timed_out,
                      wall_s=limits.wall_s, duration_s=time.monotonic() - started, output=text)


def _outcome(raw: RawRun) -> Outcome:
    status, reason, tests_run = classify(raw)
    return Outcome(status=status, reason=reason, tests_run=tests_run, duration_s=round(raw.duration_s, 4),
                   output=raw.output)
