"""What a remote worker is given besides its jobs (`WorkerSettings`, the function that builds its
runner), and the default number of tasks in flight.

The jobs, the `Backend` Protocol and the typed results are the runner's (testhelix/helix/jobs.py,
results.py); choosing a backend is the builder's (testhelix/parallel/build.py `make_backend`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from testhelix.helix.jobs import JobEvaluator
from testhelix.llm.modelref import ModelRef
from testhelix.run.setup import RunSetup

BACKENDS = ("local", "ray")  # the --backend choices (testhelix/commands/run_options.py)


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


# (settings, outcome cache) -> (executor, evaluator): how a remote worker builds what it runs jobs with
WorkerBuilder = Callable[[WorkerSettings, Any], tuple[Any, JobEvaluator]]


def default_jobs(models: Sequence[ModelRef]) -> int:
    """Tasks in flight when --jobs is not given: the smallest number any of the models' providers
    suggests (`ModelRef.suggested_tasks`), so one slow local server sets the pace for all."""
    return max(1, min([ref.suggested_tasks for ref in models] or [os.cpu_count() or 1]))

