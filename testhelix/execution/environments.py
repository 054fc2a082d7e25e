"""Per-task Python environments: one virtual environment per distinct set of pinned requirements.

A task may declare `[environment] requirements = ["attrs==23.2.0", ...]` (tasks/README.md). Its
program and suites then run in a fork-server pool whose server runs under that environment's
interpreter (executor.py, `ForkServerExecutor.for_environment`), so `import attrs` in the job finds
the pinned version, and a task of the same pack without that requirement never sees it.

An environment is built once with pip and cached by digest (requirements, interpreter version) in
`$TESTHELIX_ENV_CACHE` (default `~/.cache/testhelix/envs`). It is built in a private folder and
renamed into place, so a half-built environment is never used. Offline builds install from a local
wheel folder (`--wheels DIR` or `$TESTHELIX_WHEELS`: `pip install --no-index --find-links DIR`).

The environment sees the harness's own packages (pytest, testhelix) through a `.pth` file that adds
the host's site-packages *after* its own, so a pinned requirement wins over a host copy. The fork
server is told the host prefix (`HOST_PREFIX_ENV`) so the namespaced sandbox mounts it read-only next
to the environment itself, which is mounted read-only as the server's own Python prefix.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import site
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from testhelix.core.errors import UserError
from testhelix.execution.protocols import Executor

if TYPE_CHECKING:
    from testhelix.tasks.task import Task

__all__ = ["PythonEnv", "RunsEnvironments", "ensure_environment", "environment_executor", "executor_for",
           "task_environment"]
CACHE_ENV = "TESTHELIX_ENV_CACHE"
WHEELS_ENV = "TESTHELIX_WHEELS"
BUILD_TIMEOUT_S = 900
_MARK = "testhelix-env.json"  # written last: an environment folder without it is not finished


@dataclass(frozen=True)
class PythonEnv:
    """A built environment: where it is and what identifies it."""

    digest: str
    root: Path
    requirements: tuple[str, ...]

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"


@runtime_checkable
class RunsEnvironments(Protocol):
    """An optional ability of an Executor: a sibling pool whose jobs run under a task environment's
    interpreter. The fork-server pool has it; a plug-in backend may not."""

    def for_environment(self, environment: PythonEnv) -> Executor: ...


class EnvironmentError_(UserError):
    """A task's environment cannot be built (a task-level error, never a traceback)."""


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "testhelix" / "envs")


def normalise(requirements: Sequence[str], where: str) -> tuple[str, ...]:
    """Pinned requirements, canonical and sorted; anything that is not `name==version` is refused
    (an unpinned or URL requirement would make the digest name different environments)."""
    out = []
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement as err:
            raise UserError(f"{where}: requirement {text!r} does not parse: {err}") from None
        pins = [s for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if req.url or len(pins) != 1 or len(req.specifier) != 1:
            raise UserError(f"{where}: requirement {text!r} must be pinned to one version (name==version)")
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        marker = f"; {req.marker}" if req.marker else ""
        out.append(f"{req.name.lower().replace('_', '-')}{extras}{pins[0]}{marker}")
    return tuple(sorted(set(out)))


def check_python(spec: str | None, where: str) -> None:
    """The harness runs every task under its own Python version; a task that needs another is refused."""
    if not spec:
        return
    try:
        ok = SpecifierSet(spec).contains(platform.python_version())
    except InvalidSpecifier:
        raise UserError(f"{where}: python {spec!r} is not a version specifier (e.g. '>=3.11')") from None
    if not ok:
        raise UserError(f"{where}: the task needs Python {spec}, the harness runs {platform.python_version()}")


def env_digest(requirements: tuple[str, ...]) -> str:
    body = json.dumps({"requirements": list(requirements), "python": platform.python_version(),
                       "implementation": sys.implementation.name}, sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def _host_site_dirs() -> list[str]:
    dirs = list(site.getsitepackages())
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def ensure_environment(requirements: Sequence[str], wheels: Path | None = None, where: str = "task",
                       root: Path | None = None) -> PythonEnv:
    """The cached environment for these pins, built now if it is missing."""
    reqs = normalise(requirements, where)
    digest = env_digest(reqs)
    base = Path(root) if root is not None else cache_dir()
    final = base / digest[:32]
    if (final / _MARK).is_file():
        return PythonEnv(digest, final, reqs)
    wheels = wheels or (Path(os.environ[WHEELS_ENV]) if os.environ.get(WHEELS_ENV) else None)
    if wheels is not None and not Path(wheels).is_dir():
        raise UserError(f"{where}: wheel folder {wheels} does not exist")
    base.mkdir(parents=True, exist_ok=True)
    tmp = base / f".build-{digest[:16]}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _build(tmp, reqs, wheels, where)
        (tmp / _MARK).write_text(json.dumps({"digest": digest, "requirements": list(reqs)}) + "\n")
        _read_only(tmp)
        try:
            os.rename(tmp, final)  # atomic; another builder may have won the race
        except OSError:
            if not (final / _MARK).is_file():
                raise
    finally:
        if tmp.exists():
            _writable(tmp)
            shutil.rmtree(tmp, ignore_errors=True)
    return PythonEnv(digest, final, reqs)


def environment_executor(executor: Executor, requirements: Sequence[str], wheels: Path | None = None,
                         where: str = "task") -> Executor:
    """`executor`'s pool for the environment these pins name (built now if missing). An executor
    without that ability is refused before anything is built: the pins would otherwise be ignored."""
    if not isinstance(executor, RunsEnvironments):
        raise UserError(f"{where}: pins requirements, and the executor in use ({type(executor).__name__}) cannot "
                        "run a task environment (it has no for_environment)")
    return executor.for_environment(ensure_environment(requirements, wheels, where))


def _build(tmp: Path, reqs: tuple[str, ...], wheels: Path | None, where: str) -> None:
    run = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp)], capture_output=True, text=True,
                         timeout=BUILD_TIMEOUT_S)
    if run.returncode != 0:
        raise EnvironmentError_(f"{where}: could not create a virtual environment: {run.stderr.strip()[-300:]}")
    purelib = subprocess.run([str(tmp / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    # The harness's own packages, after the environment's own site-packages (a pin wins).
    lines = [f"import site; site.addsitedir({d!r})" for d in _host_site_dirs()]
    Path(purelib, "_testhelix_host.pth").write_text("\n".join(lines) + "\n")
    if not reqs:
        return
    source = ["--no-index", "--find-links", str(wheels)] if wheels else []
    cmd = [sys.executable, "-m", "pip", "--python", str(tmp / "bin" / "python"), "install", "--no-input",
           "--disable-pip-version-check", "--no-warn-script-location", "--ignore-installed", *source, *reqs]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                             env={**os.environ, "PIP_REQUIRE_VIRTUALENV": "0"})
    except subprocess.TimeoutExpired:
        raise EnvironmentError_(f"{where}: installing {', '.join(reqs)} timed out after {BUILD_TIMEOUT_S}s") from None
    if run.returncode != 0:
        tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
        raise EnvironmentError_(f"{where}: installing {', '.join(reqs)} failed: {' | '.join(tail)}")


def _read_only(tree: Path) -> None:
    for d, _, files in os.walk(tree):
        for name in files:
            p = os.path.join(d, name)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode & 0o555)
        os.chmod(d, 0o555)


def _writable(tree: Path) -> None:
    for d, _, _ in os.walk(tree):
        os.chmod(d, 0o755)


def task_environment(task: Task, wheels: Path | None = None) -> PythonEnv | None:
    """The environment a loaded task runs in, or None for the harness's own interpreter."""
    meta = task.meta
    if meta is None or not meta.environment.requirements:
        return None
    where = f"task {task.id}"
    check_python(meta.environment.python, where)
    return ensure_environment(meta.environment.requirements, wheels, where)


def executor_for(executor: Executor, task: Task, wheels: Path | None = None) -> Executor:
    """The executor pool that runs `task`: the given one, or its sibling for the task's environment."""
    env = task_environment(task, wheels)
    if env is None or not isinstance(executor, RunsEnvironments):
        return executor
    return executor.for_environment(env)
