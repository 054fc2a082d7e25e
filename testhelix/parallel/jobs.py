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
from typing import TYPE_CHECKING, Any, Protocol

from testhelix.errors import UserError
from testhelix.helix.config import RunConfig
from testhelix.helix.results import TaskResult
from testhelix.runsetup import RunSetup

if TYPE_CHECKING:
    from testhelix.agent.budget import LedgerSink

BACKENDS = ("local", "ray")  # the --backend choices (testhelix/runoptions.py)


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
    """How a remote worker builds its own executor, runner and model clients (nothing secret in here):
    the run's `RunSetup` (model settings, the executor and sandbox choice, concurrency), because a
    worker process starts with none of the driver's state, and what its runner judges."""

    setup: RunSetup
    coverage: bool
    panel: bool
    work_root: str

    def for_workers(self, count: int) -> WorkerSettings:
        """The settings of one of `count` workers: each worker has its own limiter, so each gets
        1/count of every requests- and tokens-per-minute allowance, and the cluster as a whole
        stays within what the driver was allowed."""
        return replace(self, setup=self.setup.for_workers(count))


class JobEvaluator(Protocol):
    """What a worker runs jobs with (a HelixRunner): built by the function the driver hands the
    backend, so this package never imports the runner (testhelix/runbuild.py builds both)."""

    def evaluate_job(self, job: TaskJob, sink: LedgerSink | None = None) -> TaskResult: ...


# (settings, outcome cache) -> (executor, evaluator): how a remote worker builds what it runs jobs with
WorkerBuilder = Callable[[WorkerSettings, Any], tuple[Any, JobEvaluator]]


class Backend(Protocol):
    remote: bool              # True: results carry their ledger and execution rows for the driver to store
    on_start: Callable[[TaskJob], None]   # told when a job starts (the progress display)

    # `evaluate` runs one job in this process (a local backend calls it; a remote one has its own)
    def run(self, jobs: Sequence[TaskJob],
            evaluate: Callable[[TaskJob], TaskResult]) -> Iterator[tuple[TaskJob, TaskResult]]: ...
    def close(self) -> None: ...


def default_jobs(models: Sequence[str]) -> int:
    """Tasks in flight when --jobs is not given: the smallest number any of the models' providers
    suggests (registry.concurrent_tasks), so one slow local server sets the pace for all."""
    from testhelix.llm.registry import concurrent_tasks

    cores = os.cpu_count() or 1
    return max(1, min([concurrent_tasks(name, cores) for name in models] or [cores]))


def make_backend(setup: RunSetup, settings: WorkerSettings | None = None,
                 build_worker: WorkerBuilder | None = None) -> Backend:
    """The backend `setup.backend` names, running up to `setup.concurrency.tasks_in_flight` jobs."""
    jobs = setup.concurrency.tasks_in_flight
    if setup.backend == "local":
        if setup.ray_address:
            raise UserError("--ray-address needs --backend ray")
        from testhelix.parallel.local import LocalBackend
        return LocalBackend(jobs)
    if setup.backend == "ray":
        if settings is None or build_worker is None:
            raise UserError("--backend ray is not available for this command")
        from testhelix.parallel.ray_backend import RayBackend
        return RayBackend(settings, build_worker, jobs, setup.ray_address)
    raise UserError(f"--backend: unknown backend {setup.backend!r} (use {' or '.join(BACKENDS)})")
