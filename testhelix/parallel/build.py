"""The one builder of a task runner and its work backend, from a `RunSetup`.

`testhelix run`, `autosaddler search|resume|gate` (autosaddler/session.py) and the bench scripts
build their runner here: the executor the setup chose (sized by its concurrency), the backend
(local threads or Ray) passed to the runner when it is built, and a model factory that applies the
setup's model settings. A Ray worker builds its own runner with `worker_runner`, which the driver
hands to the backend, so neither `helix/runner.py` nor a backend imports this builder.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from testhelix.core.errors import UserError
from testhelix.helix.jobs import Backend, ProgressSink
from testhelix.helix.runner import HelixRunner, ModelFactory
from testhelix.parallel.jobs import BACKENDS, WorkerBuilder, WorkerSettings
from testhelix.parallel.local import LocalBackend
from testhelix.run.setup import ModelSettings, RunSetup

if TYPE_CHECKING:
    from testhelix.execution.outcome_cache import OutcomeCache
    from testhelix.execution.seam import Executor
    from testhelix.llm.base import ChatModel
    from testhelix.llm.modelref import ModelRef
    from testhelix.store.runstore import RunStore
    from testhelix.tasks.task import Task


def model_factory(models: ModelSettings) -> ModelFactory:
    """The runner's model factory with the setup's context windows and rate limits."""

    def create(ref: ModelRef, task: Task, seed: int) -> ChatModel:
        return models.create_model(ref, task=task, seed=seed)

    return create


def build_runner(setup: RunSetup, store: RunStore | None, executor: Executor, work_root: Path, *, coverage: bool,
                 panel: bool, backend: Backend | None = None, progress: ProgressSink | None = None) -> HelixRunner:
    return HelixRunner(store, executor, work_root, model_factory=model_factory(setup.models), coverage=coverage,
                       panel=panel, call_timeout_s=setup.models.call_timeout_s,
                       concurrent_pairs=setup.concurrency.pairs_in_parallel, backend=backend, progress=progress)


@contextmanager
def task_runner(setup: RunSetup, store: RunStore, work_root: Path, *, coverage: bool, panel: bool,
                progress: ProgressSink | None = None) -> Iterator[HelixRunner]:
    """A runner writing to `store`, with its executor and backend; both are closed afterwards."""
    from testhelix.execution.outcome_cache import StoreOutcomeCache

    concurrency = setup.concurrency
    # a local executor shared by many tasks in flight gets more servers than slots (testhelix/run/setup.py)
    servers = concurrency.fork_servers() if setup.backend == "local" else concurrency.execution_slots
    with setup.execution.create_executor(workers=servers, cache=StoreOutcomeCache(store)) as executor:
        settings = WorkerSettings(setup=setup, coverage=coverage, panel=panel, work_root=str(Path(work_root).resolve()))
        backend = make_backend(setup, settings, worker_runner)
        try:
            yield build_runner(setup, store, executor, work_root, coverage=coverage, panel=panel, backend=backend,
                               progress=progress)
        finally:
            backend.close()


def worker_runner(settings: WorkerSettings, cache: OutcomeCache) -> tuple[Executor, HelixRunner]:
    """A Ray worker's executor and runner (no store: results go back to the driver)."""
    setup = settings.setup
    executor = setup.execution.create_executor(workers=setup.concurrency.execution_slots, cache=cache)
    return executor, build_runner(setup, None, executor, Path(settings.work_root), coverage=settings.coverage,
                                  panel=settings.panel)


def make_backend(setup: RunSetup, settings: WorkerSettings | None = None,
                 build_worker: WorkerBuilder | None = None) -> Backend:
    """The backend `setup.backend` names, running up to `setup.concurrency.tasks_in_flight` jobs."""
    jobs = setup.concurrency.tasks_in_flight
    if setup.backend == "local":
        if setup.ray_address:
            raise UserError("--ray-address needs --backend ray")
        return LocalBackend(jobs)
    if setup.backend == "ray":
        if settings is None or build_worker is None:
            raise UserError("--backend ray is not available for this command")
        from testhelix.parallel.ray_backend import RayBackend  # imports Ray only when chosen

        return RayBackend(settings, build_worker, jobs, setup.ray_address)
    raise UserError(f"--backend: unknown backend {setup.backend!r} (use {' or '.join(BACKENDS)})")
