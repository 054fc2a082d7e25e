"""What the importers share: staging, the atomic and idempotent commit, record checks, the result loop."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from testhelix.core.digest import tree_sha256
from testhelix.core.errors import UserError
from testhelix.execution.outcome import Limits, Outcome
from testhelix.execution.protocols import Executor
from testhelix.tasks.model import ID_PATTERN, TaskToml, read_task_toml

ID_RE = re.compile(ID_PATTERN)
Status = Literal["imported", "updated", "unchanged", "refused"]
STAGING = ".import-staging"
SOLVE_SH = ("#!/bin/sh\n# Copies the reference program over the working program (our layout).\n"
            'set -e\ncp -R "$(dirname "$0")/program/." "${1:-.}"\n')
_NOT_MODULES = {"conftest", "setup", "noxfile", "fabfile", "tasks", "docs", "doc", "tests", "test", "testing",
                "examples", "benchmarks", "scripts"}


class Refused(Exception):
    """One task cannot be imported; the message says why (shown in the summary)."""


@dataclass(frozen=True)
class ImportResult:
    task_id: str
    status: Status
    reason: str = ""
    path: Path | None = None


Progress = Callable[[ImportResult], None]


def check_id(value: object, what: str) -> str:
    """A task or record id is a name, never a path."""
    if not isinstance(value, str) or not ID_RE.match(value) or value in (".", ".."):
        raise Refused(f"{what} {value!r} is not a name ([A-Za-z0-9_.-]+, not '.' or '..')")
    return value


def importable_modules(program: Path) -> list[str]:
    """Top-level modules a program provides: packages (folders holding Python code) and modules,
    without tests, conftest, build scripts and data folders."""
    names = []
    for entry in sorted(Path(program).iterdir()):
        stem = entry.name[:-3] if entry.name.endswith(".py") and entry.is_file() else entry.name
        if not stem.isidentifier() or stem in _NOT_MODULES or stem.startswith(("test_", "_")) or stem.endswith("_test"):
            continue
        if entry.is_file() and entry.name.endswith(".py"):
            names.append(stem)
        elif entry.is_dir() and any(entry.rglob("*.py")):
            names.append(stem)
    return names


def copy_program(src: Path, dest: Path, drop: tuple[str, ...] = ()) -> None:
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache", *drop)
    shutil.copytree(src, dest, ignore=ignore, symlinks=True)
    for d, _, files in os.walk(dest):
        for name in files:
            if os.path.islink(os.path.join(d, name)):
                raise Refused(f"{src}: holds a symbolic link ({os.path.relpath(os.path.join(d, name), dest)}); "
                              "a program tree must be plain files")


def apply_patch(tree: Path, patch: str, what: str) -> None:
    """Apply a unified diff with `patch -p1` (a data transformation: nothing of the patch executes).
    Paths that leave the tree are refused before patching."""
    for rel in re.findall(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", patch, re.M):
        if rel != "/dev/null" and (rel.startswith("/") or ".." in Path(rel).parts):
            raise Refused(f"{what}: patch touches a path outside the repository ({rel})")
    with tempfile.NamedTemporaryFile("w", suffix=".diff", delete=False) as fh:
        fh.write(patch)
    try:
        run = subprocess.run(["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-i", fh.name],
                             cwd=tree, capture_output=True, text=True, timeout=60)
    finally:
        Path(fh.name).unlink()
    if run.returncode != 0:
        raise Refused(f"{what}: patch does not apply: {(run.stdout + run.stderr).strip()[-300:]}")


def patched_files(patch: str) -> list[str]:
    return sorted(set(re.findall(r"^\+\+\+ b/(\S+)", patch, re.M)))


# ----------------------------------------------------------------------------- running trusted tests
class TrustedRunner:
    """The trusted tests of a staged task on its programs, in the sandboxed executor (started on
    first use) and in the task's Python environment when it declares one."""

    def __init__(self, workers: int = 2, wheels: Path | None = None):
        self.workers, self.wheels = workers, wheels
        self._executor: Executor | None = None

    def run(self, stage: Path, doc: TaskToml, programs: list[Path]) -> list[Outcome]:
        # imported on the first task that runs trusted tests: a refused or unchanged import never starts one
        from testhelix.execution.environments import check_python, environment_executor
        from testhelix.execution.executor import default_executor

        if self._executor is None:
            self._executor = default_executor(self.workers)
        executor = self._executor
        where = f"task {doc.metadata.id}"
        try:
            check_python(doc.environment.python, where)
        except UserError as err:
            raise Refused(f"environment: {err}") from None
        if doc.environment.requirements:
            try:
                executor = environment_executor(executor, doc.environment.requirements, self.wheels, where)
            except UserError as err:
                raise Refused(f"environment: {err}") from None
        limits = Limits(wall_s=float(doc.verifier.timeout_sec), traceback="line")
        return executor.run_many([(stage / "tests", p) for p in programs], limits)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()
            self._executor = None


def describe(outcome: Outcome) -> str:
    tail = outcome.output.strip().splitlines()[-3:]
    return f"{outcome.status}{f' ({outcome.reason})' if outcome.reason else ''}: {' | '.join(tail)[-300:]}"


# ----------------------------------------------------------------------------- atomic, idempotent commit
def staging_dir(pack: Path, task_id: str) -> Path:
    root = Path(pack) / STAGING
    root.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f"{task_id}-", dir=root))
    return stage


def discard(stage: Path) -> None:
    shutil.rmtree(stage, ignore_errors=True)
    try:
        stage.parent.rmdir()  # the staging root goes when it is empty
    except OSError:
        pass


def commit(stage: Path, pack: Path, task_id: str, source: str) -> ImportResult:
    """Move a complete staged task into the pack: imported, unchanged or updated."""
    dest = Path(pack) / task_id
    if not dest.exists():
        os.rename(stage, dest)
        discard(stage)
        return ImportResult(task_id, "imported", "", dest)
    if tree_sha256(dest) == tree_sha256(stage):
        discard(stage)
        return ImportResult(task_id, "unchanged", "identical to the task already in the pack", dest)
    try:
        owner = read_task_toml(dest / "task.toml").metadata.source
    except UserError:
        owner = None
    if owner != source:
        discard(stage)
        raise Refused(f"{dest} exists and was not imported from {source}; refusing to replace it")
    old = dest.with_name(f"{STAGING}-old-{task_id}-{os.getpid()}")
    os.rename(dest, old)
    os.rename(stage, dest)
    shutil.rmtree(old, ignore_errors=True)
    discard(stage)
    return ImportResult(task_id, "updated", "replaced the earlier import (its files differed)", dest)


def import_one(pack: Path, task_id: str, source: str, build: Callable[[Path], None]) -> ImportResult:
    """Stage, build (which raises Refused), commit; a refusal leaves nothing behind."""
    stage = staging_dir(pack, task_id)
    try:
        build(stage)
        return commit(stage, pack, task_id, source)
    except Refused as err:
        discard(stage)
        return ImportResult(task_id, "refused", str(err))
    except BaseException:
        discard(stage)
        raise


def collect_results(results: Iterable[ImportResult], runner: TrustedRunner,
                    progress: Progress | None = None) -> list[ImportResult]:
    """Run the imports `results` yields, one at a time, telling `progress` of each as it finishes;
    the runner's executor is closed afterwards, also when an import raises."""
    done: list[ImportResult] = []
    try:
        for result in results:
            done.append(result)
            if progress:
                progress(result)
    finally:
        runner.close()
    return done


def summary_counts(results: list[ImportResult]) -> dict[str, int]:
    out = {s: 0 for s in ("imported", "updated", "unchanged", "refused")}
    for r in results:
        out[r.status] += 1
    return out
