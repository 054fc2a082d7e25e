"""What travels to a worker (`TaskJob`, `WorkerSettings`), the backend Protocol, and choosing one.

A backend yields each job with its typed result (`TaskResult`: `Finished | Incomplete`,
testhelix/helix/results.py), whichever process evaluated it.

A job names its task by a path every worker can read plus the digest of that folder; the worker
refuses a folder whose digest differs. The strategy travels as its JSON and the run configuration as
a frozen dataclass. No secret travels: a worker builds its model clients from its own environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from testhelix.errors import UserError
from testhelix.helix.config import RunConfig
from testhelix.helix.results import TaskResult

BACKENDS = ("local", "ray")


@dataclass(frozen=True)
class TaskJob:
    task_id: str
    task_path: str
    task_digest: str          # tree digest of the task folder ("" when the job never leaves this process)
    strategy: dict            # Strategy.model_dump(mode="json")
    config: RunConfig
    model: str
    label: str


@dataclass(frozen=True)
class WorkerSettings:
    """How a remote worker builds its own executor, runner and model clients (nothing secret in here).

    The model settings the driver's command line gave (`--call-timeout`, `--context-window`,
    `--rpm/--tpm`) travel here, because a worker process starts with none of the driver's
    process-wide settings; `apply_model_settings` installs them in the worker's process.
    """

    executor_workers: int
    coverage: bool
    panel: bool
    work_root: str
    concurrent_pairs: bool
    call_timeout_s: float | None = None
    context_windows: tuple[tuple[str, int], ...] = ()                     # (model name, tokens)
    rate_limits: tuple[tuple[str, float | None, float | None], ...] = ()  # (model name, rpm, tpm)
    # the driver's --executor / --sandbox choice (None: the worker's default); a worker on another
    # machine does not inherit the driver's environment, where the command line put the choice
    executor: str | None = None
    sandbox: str | None = None

    def with_execution_choice(self) -> WorkerSettings:
        """These settings with the executor and sandbox this (driver) process chose filled in."""
        from testhelix.execution.seam import EXECUTOR_ENV, SANDBOX_ENV

        return replace(self, executor=self.executor or os.environ.get(EXECUTOR_ENV) or None,
                       sandbox=self.sandbox or os.environ.get(SANDBOX_ENV) or None)

    def for_workers(self, count: int) -> WorkerSettings:
        """The settings of one of `count` workers: each worker has its own limiter, so each gets
        1/count of every requests- and tokens-per-minute allowance, and the cluster as a whole
        stays within what the driver was allowed."""
        count = max(1, int(count))
        return replace(self, rate_limits=tuple((m, rpm / count if rpm else rpm, tpm / count if tpm else tpm)
                                               for m, rpm, tpm in self.rate_limits))

    def apply_model_settings(self) -> None:
        """Install the context windows and rate limits in this (worker) process, as the driver's
        command did in its own."""
        from testhelix.llm import ratelimit
        from testhelix.llm.registry import set_context_window

        for name, tokens in self.context_windows:
            set_context_window(name, tokens)
        for name, rpm, tpm in self.rate_limits:
            ratelimit.configure(name, rpm, tpm)


class Backend(Protocol):
    remote: bool              # True: results carry their ledger and execution rows for the driver to store
    on_start: Callable[[TaskJob], None]   # told when a job starts (the progress display)

    def run(self, jobs: Sequence[TaskJob]) -> Iterator[tuple[TaskJob, TaskResult]]: ...
    def close(self) -> None: ...


def default_jobs(models: Sequence[str]) -> int:
    """Tasks at once when --jobs is not given: the smallest number any of the models' providers
    suggests (registry.concurrent_tasks), so one slow local server sets the pace for all."""
    from testhelix.llm.registry import concurrent_tasks

    cores = os.cpu_count() or 1
    return max(1, min([concurrent_tasks(name, cores) for name in models] or [cores]))


# Fork servers per CPU-bound execution slot when many callers share the executor. An execution is far
# from all CPU: measured on the bundled katas, one costs ~0.23 s of CPU in its process tree but takes
# 1-4 s of wall time on the loaded 2-core machine (process creation, namespace and cgroup set-up and
# tear-down, pipes). With one server per slot, concurrent pairs queue for a server while the cores
# are partly idle; two per slot let one execution's waiting overlap another's CPU.
SERVERS_PER_SLOT = 2


def execution_servers(workers: int, jobs: int) -> int:
    """Fork servers for an executor shared by `jobs` concurrent task evaluations, where `workers`
    is the configured number of parallel executions (one per core by default). One task at a time
    keeps `workers`: its pairs take turns, so more servers would only sit idle."""
    workers = max(1, int(workers))
    if jobs <= 1:
        return workers
    return max(workers, min(int(jobs), SERVERS_PER_SLOT * workers))


def make_backend(kind: str, jobs: int, evaluate: Callable[[TaskJob], TaskResult], settings: WorkerSettings | None = None,
                 address: str | None = None) -> Any:
    if kind == "local":
        if address:
            raise UserError("--ray-address needs --backend ray")
        from testhelix.parallel.local import LocalBackend
        return LocalBackend(evaluate, jobs)
    if kind == "ray":
        if settings is None:
            raise UserError("--backend ray is not available for this command")
        from testhelix.parallel.ray_backend import RayBackend
        return RayBackend(settings, jobs, address)
    raise UserError(f"--backend: unknown backend {kind!r} (use {' or '.join(BACKENDS)})")
