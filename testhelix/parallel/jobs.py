"""What travels to a worker (`TaskJob`, `WorkerSettings`), the backend Protocol, and choosing one.

A job names its task by a path every worker can read plus the digest of that folder; the worker
refuses a folder whose digest differs. The strategy travels as its JSON and the run configuration as
a frozen dataclass. No secret travels: a worker builds its model clients from its own environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from testhelix.errors import UserError
from testhelix.helix.config import RunConfig

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
    """How a remote worker builds its own executor and runner (nothing secret in here)."""

    executor_workers: int
    coverage: bool
    panel: bool
    work_root: str
    concurrent_pairs: bool


class Backend(Protocol):
    remote: bool              # True: results carry their ledger and execution rows for the driver to store
    on_start: Callable[[TaskJob], None]   # told when a job starts (the progress display)

    def run(self, jobs: Sequence[TaskJob]) -> Iterator[tuple[TaskJob, dict]]: ...
    def close(self) -> None: ...


def default_jobs(models: Sequence[str]) -> int:
    """Tasks at once when --jobs is not given: a simulated model without latency is CPU-bound (one task
    per core); a server on this machine shares its hardware (4); a hosted API mostly waits (8)."""
    cores = os.cpu_count() or 1
    picks = []
    for name in models:
        if name.startswith("sim:"):
            picks.append(8 if "latency=" in name else cores)
        elif name.startswith("openai-compatible:"):
            picks.append(4)
        else:
            picks.append(8)
    return max(1, min(picks or [cores]))


def make_backend(kind: str, jobs: int, evaluate: Callable[[TaskJob], dict], settings: WorkerSettings | None = None,
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
