"""The execution seam: what runs suites on programs, and how a backend is chosen.

`Executor` is the small Protocol every backend implements: it caches program and suite trees
(`prepare`), runs a suite on a program under `Limits` and returns an `Outcome` (`run`, `run_many`,
`run_repeat`), and releases what it holds (`close`). The pool of sandboxed fork servers
(executor.py, `ForkServerExecutor`) is one implementation; a container or remote backend is
another, registered by name without an edit here.

Backends and sandboxes are found through the project's plug-in loader (testhelix/core/plugins.py):

- `create_executor(spec, ...)`: `--executor` / $TESTHELIX_EXECUTOR is a built-in name (`forkserver`), `package.module:FACTORY`
  or a `testhelix.executors` entry point; the factory is called as
  `FACTORY(workers=..., cache=None, sandbox=...)` and returns an `Executor`, which the seam puts
  behind the outcome cache (cached_executor.py), so no backend implements caching.
- `select_sandbox(spec)`: `--sandbox` / $TESTHELIX_SANDBOX is a built-in name (`namespaced`,
  `plain`), `package.module:CLASS` or a `testhelix.sandboxes` entry point; the object is called with
  no argument and returns a `Sandbox` (sandbox.py). Without a choice: the strongest available.

Code outside a backend never branches on which backend or sandbox it got: it asks the object.
A command passes its choice explicitly (testhelix/run/setup.py `ExecutionChoice`); the variables are
only a user's defaults, read, never written.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Protocol

from testhelix.core.errors import UserError
from testhelix.core.plugins import (
    EXECUTORS_GROUP,
    SANDBOXES_GROUP,
    check_callable,
    load_plugin,
    missing_members,
    run_plugin_code,
)
from testhelix.execution.protocols import Executor

if TYPE_CHECKING:
    from testhelix.execution.cached_executor import CachedExecutor
    from testhelix.execution.outcome_cache import OutcomeCache
    from testhelix.execution.sandbox import Sandbox

SANDBOX_ENV = "TESTHELIX_SANDBOX"
EXECUTOR_ENV = "TESTHELIX_EXECUTOR"
EXECUTORS = {"forkserver": "testhelix.execution.executor:ForkServerExecutor"}
SANDBOXES = {"namespaced": "testhelix.execution.sandbox:NamespaceSandbox",
             "plain": "testhelix.execution.sandbox:PlainSandbox"}
DEFAULT_EXECUTOR = "forkserver"


class ExecutorFactory(Protocol):
    def __call__(self, workers: int | None = None, cache: OutcomeCache | None = None,
                 sandbox: str | None = None) -> Executor: ...


def load_executor_factory(spec: str) -> ExecutorFactory:
    factory = load_plugin(spec, group=EXECUTORS_GROUP, builtins=EXECUTORS, option="--executor", what="executor")
    check_callable(factory, option="--executor", spec=spec, what="an executor factory",
                   workers=None, cache=None, sandbox=None)
    return factory


def create_executor(spec: str | None = None, workers: int | None = None, cache: OutcomeCache | None = None,
                    sandbox: str | None = None, *, checked: bool = False) -> CachedExecutor:
    """The executor `spec` names (default: $TESTHELIX_EXECUTOR, else the fork-server pool) with the
    sandbox `sandbox` names (default: see sandbox_spec), behind the outcome cache (cached_executor.py: in
    memory, then `cache`): every backend gets it, so the factory itself is given no cache.
    `checked`: both names come from a RunSetup's ExecutionChoice, which checked them (and read the
    environment) once when the command line was parsed, so nothing is checked or read again."""
    if checked and spec:
        factory = load_plugin(spec, group=EXECUTORS_GROUP, builtins=EXECUTORS, option="--executor", what="executor")
    else:
        spec = spec or os.environ.get(EXECUTOR_ENV) or DEFAULT_EXECUTOR
        factory = load_executor_factory(spec)
        if sandbox is not None:
            select_sandbox(sandbox)  # a bad --sandbox is reported before anything starts
    from testhelix.execution.cached_executor import with_cache
    # a bad $TESTHELIX_SANDBOX: UserError in the factory
    backend = run_plugin_code("--executor", spec, "building the executor",
                              functools.partial(factory, workers=workers, cache=None, sandbox=sandbox))
    return with_cache(backend, cache)


def sandbox_spec(spec: str | None = None) -> str:
    """The sandbox choice as text: `spec`, else $TESTHELIX_SANDBOX, else the strongest built-in."""
    spec = spec or os.environ.get(SANDBOX_ENV)   # a user's default, never a command's choice (RunSetup)
    return spec or strongest_sandbox()


def strongest_sandbox() -> str:
    """The strongest built-in sandbox this machine supports."""
    from testhelix.execution.sandbox import namespaces_available
    return "namespaced" if namespaces_available() else "plain"


def select_sandbox(spec: str | None = None) -> Sandbox:
    """A fresh Sandbox for `spec` (see sandbox_spec); `.spec` is what a child process passes back here."""
    spec = sandbox_spec(spec)
    option = "--sandbox" if spec != os.environ.get(SANDBOX_ENV) else f"${SANDBOX_ENV}"
    factory = load_plugin(spec, group=SANDBOXES_GROUP, builtins=SANDBOXES, option=option, what="sandbox")
    if callable(factory):
        check_callable(factory, option=option, spec=spec, what="a sandbox factory")
    sandbox = run_plugin_code(option, spec, "building the sandbox", factory) if callable(factory) else factory
    from testhelix.execution.sandbox import Sandbox
    missing = [name for name in missing_members(sandbox, Sandbox) if name != "spec"]  # spec: set just below
    if missing:
        raise UserError(f"{option} {spec!r}: {type(sandbox).__name__} {'object ' if not callable(factory) else ''}"
                        f"lacks Sandbox members: {', '.join(missing)} (a sandbox is a class or factory whose "
                        "instances declare them; see testhelix/execution/sandbox.py)")
    run_plugin_code(option, spec, "naming the sandbox", functools.partial(setattr, sandbox, "spec", spec))
    return sandbox
