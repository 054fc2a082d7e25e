"""The execution seam: what runs suites on programs, and how a backend is chosen.

`Executor` is the small Protocol every backend implements: it caches program and suite trees
(`prepare`), runs a suite on a program under `Limits` and returns an `Outcome` (`run`, `run_many`,
`run_repeat`), and releases what it holds (`close`). The pool of sandboxed fork servers
(executor.py, `ForkServerExecutor`) is one implementation; a container or remote backend is
another, registered by name without an edit here.

Backends and sandboxes are found through the project's plug-in loader (testhelix/plugins.py):

- `create_executor(spec, ...)`: `--executor` / $TESTHELIX_EXECUTOR is a built-in name (`forkserver`), `package.module:FACTORY`
  or a `testhelix.executors` entry point; the factory is called as
  `FACTORY(workers=..., cache=..., sandbox=...)` and returns an `Executor`.
- `select_sandbox(spec)`: `--sandbox` / $TESTHELIX_SANDBOX is a built-in name (`namespaced`,
  `plain`), `package.module:CLASS` or a `testhelix.sandboxes` entry point; the object is called with
  no argument and returns a `Sandbox` (sandbox.py). Without a choice: the strongest available.

Code outside a backend never branches on which backend or sandbox it got: it asks the object.
A command passes its choice explicitly (testhelix/runsetup.py `ExecutionChoice`); the variables are
only a user's defaults, read, never written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from testhelix.errors import UserError
from testhelix.execution.outcome import Limits, Outcome
from testhelix.plugins import EXECUTORS_GROUP, SANDBOXES_GROUP, check_callable, load_plugin

if TYPE_CHECKING:
    from testhelix.execution.cache import OutcomeCache
    from testhelix.execution.environments import PythonEnv
    from testhelix.execution.sandbox import Sandbox

SANDBOX_ENV = "TESTHELIX_SANDBOX"
EXECUTOR_ENV = "TESTHELIX_EXECUTOR"
EXECUTORS = {"forkserver": "testhelix.execution.executor:ForkServerExecutor"}
SANDBOXES = {"namespaced": "testhelix.execution.sandbox:NamespaceSandbox",
             "plain": "testhelix.execution.sandbox:PlainSandbox"}
DEFAULT_EXECUTOR = "forkserver"


class Executor(Protocol):
    runner_version: str  # names the runner and its isolation: part of every outcome-cache key
    workers: int  # executions it runs at once

    def prepare(self, folders: Sequence[Path]) -> None: ...  # cache these trees before they are run
    # coverage=True: pytest runs under coverage.py and the output ends with its line report
    # (coverage_run.py); such runs are cached apart from plain ones.
    def run(self, suite_dir: Path, program_dir: Path, limits: Limits = Limits(), coverage: bool = False) -> Outcome: ...
    def run_many(self, jobs: Sequence[tuple[Path, Path]], limits: Limits = Limits(),
                 coverage: bool = False) -> list[Outcome]: ...
    def run_repeat(self, suite_dir: Path, program_dir: Path, limits: Limits, repetition: int) -> Outcome: ...
    def close(self) -> None: ...
    def __enter__(self) -> Executor: ...  # `with create_executor(...) as executor:` closes it
    def __exit__(self, *exc: object) -> None: ...


@runtime_checkable
class RunsEnvironments(Protocol):
    """An optional ability of an Executor: a sibling pool whose jobs run under a task environment's
    interpreter (environments.py). The fork-server pool has it; a plug-in backend may not."""

    def for_environment(self, environment: PythonEnv) -> Executor: ...


class ExecutorFactory(Protocol):
    def __call__(self, workers: int | None = None, cache: OutcomeCache | None = None,
                 sandbox: str | None = None) -> Executor: ...


def load_executor_factory(spec: str) -> ExecutorFactory:
    factory = load_plugin(spec, group=EXECUTORS_GROUP, builtins=EXECUTORS, option="--executor", what="executor")
    check_callable(factory, option="--executor", spec=spec, what="an executor factory",
                   workers=None, cache=None, sandbox=None)
    return factory


def create_executor(spec: str | None = None, workers: int | None = None, cache: OutcomeCache | None = None,
                    sandbox: str | None = None) -> Executor:
    """The executor `spec` names (default: $TESTHELIX_EXECUTOR, else the fork-server pool) with the
    sandbox `sandbox` names (default: see sandbox_spec)."""
    spec = spec or os.environ.get(EXECUTOR_ENV) or DEFAULT_EXECUTOR
    factory = load_executor_factory(spec)
    if sandbox is not None:
        select_sandbox(sandbox)  # a bad --sandbox is reported before anything starts
    return factory(workers=workers, cache=cache, sandbox=sandbox)  # a bad $TESTHELIX_SANDBOX: UserError there


def sandbox_spec(spec: str | None = None) -> str:
    """The sandbox choice as text: `spec`, else $TESTHELIX_SANDBOX, else the strongest built-in."""
    spec = spec or os.environ.get(SANDBOX_ENV)   # a user's default, never a command's choice (RunSetup)
    if spec:
        return spec
    from testhelix.execution.sandbox import namespaces_available
    return "namespaced" if namespaces_available() else "plain"


def select_sandbox(spec: str | None = None) -> Sandbox:
    """A fresh Sandbox for `spec` (see sandbox_spec); `.spec` is what a child process passes back here."""
    spec = sandbox_spec(spec)
    option = "--sandbox" if spec != os.environ.get(SANDBOX_ENV) else f"${SANDBOX_ENV}"
    factory = load_plugin(spec, group=SANDBOXES_GROUP, builtins=SANDBOXES, option=option, what="sandbox")
    if callable(factory):
        check_callable(factory, option=option, spec=spec, what="a sandbox factory")
    sandbox = factory() if callable(factory) else factory
    missing = [a for a in ("kind", "launch_prefix", "setup_server", "fork_job", "enter_job", "confine",
                           "scratch_mounts", "private_root", "pid_namespace", "drops_privileges",
                           "links_programs", "builds_workspace") if not hasattr(sandbox, a)]
    if missing:
        raise UserError(f"{option} {spec!r}: the object lacks Sandbox members: {', '.join(missing)} "
                        "(see testhelix/execution/sandbox.py)")
    sandbox.spec = spec
    return sandbox
