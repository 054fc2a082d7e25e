"""What the runner hands a work backend: a `TaskJob`, and the `Backend` and progress it drives.

The runner (runner.py) turns every (task, strategy, configuration, model) into a `TaskJob` and gives
the jobs to a `Backend`, which yields each job with its typed result (`TaskResult`: results.py) in
completion order. The backends themselves (threads, Ray) live above this layer in
`testhelix/parallel/`, and the live display in `parallel/progress.py`; the runner knows them only
by these Protocols, so `helix/` never imports `parallel/`.

A job names its task by a path every worker can read plus the digest of that folder; the worker
refuses a folder whose digest differs. The strategy travels as the Strategy (validated once, where it
entered; pickled only when the job leaves the process), the run configuration as a frozen dataclass
and the model as the ModelRef the command resolved. No secret travels: a worker builds its model
clients from its own environment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from testhelix.helix.config import RunConfig
from testhelix.helix.results import TaskResult
from testhelix.llm.modelref import ModelRef
from testhelix.strategy.model import Strategy

if TYPE_CHECKING:
    from testhelix.agent.budget import LedgerSink


@dataclass(frozen=True)
class TaskJob:
    task_id: str
    task_path: str
    task_digest: str          # tree digest of the task folder ("" when the job never leaves this process)
    strategy: Strategy
    config: RunConfig
    model: ModelRef
    label: str


class JobEvaluator(Protocol):
    """What evaluates one job (a HelixRunner); a Ray worker builds its own (testhelix/parallel/build.py)."""

    def evaluate_job(self, job: TaskJob, sink: LedgerSink | None = None) -> TaskResult: ...


class Backend(Protocol):
    remote: bool              # True: results carry their ledger and execution rows for the driver to store
    on_start: Callable[[TaskJob], None]   # told when a job starts (the progress display)

    # `evaluate` runs one job in this process (a local backend calls it; a remote one has its own)
    def run(self, jobs: Sequence[TaskJob],
            evaluate: Callable[[TaskJob], TaskResult]) -> Iterator[tuple[TaskJob, TaskResult]]: ...
    def close(self) -> None: ...


class ProgressSink(Protocol):
    """What the runner tells the live display (testhelix/parallel/progress.py `TaskProgress`)."""

    def add_total(self, n: int) -> None: ...
    def skipped(self, n: int = 1) -> None: ...
    def started(self, *_ignored: object) -> None: ...
    def finished(self, result: TaskResult | None = None) -> None: ...
    def call(self, row: dict) -> None: ...  # one model-call ledger row (thread-safe)
