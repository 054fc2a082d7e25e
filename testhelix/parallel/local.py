"""The local backend: up to `jobs` task evaluations in a thread pool of this process.

Threads share the executor (its fork-server pool bounds the executions) and the model clients (the
provider's limiter bounds the calls); a thread mostly waits on a model. The driver thread receives
each result as soon as it is ready. With `jobs == 1` nothing runs in a thread: the tasks run one
after another in the order given, the reference order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Generic, TypeVar

# What one evaluation takes: a TaskJob for the task runners (the Backend protocol), a task id for
# `testhelix evaluate`, which judges suites that already exist; and what it gives: a TaskResult for
# the task runners, a judged suite for `testhelix evaluate` (given to `run` with the evaluation).
JobT = TypeVar("JobT")
ResultT = TypeVar("ResultT")


class LocalBackend(Generic[JobT]):
    remote = False

    def __init__(self, jobs: int):
        self.jobs = max(1, int(jobs))
        self.on_start: Callable[[JobT], None] = lambda job: None

    def run(self, jobs: Sequence[JobT], evaluate: Callable[[JobT], ResultT]) -> Iterator[tuple[JobT, ResultT]]:
        if self.jobs == 1:
            for job in jobs:
                self.on_start(job)
                yield job, evaluate(job)
            return
        pending = list(reversed(list(enumerate(jobs))))
        running: dict[Future[ResultT], tuple[int, JobT]] = {}
        pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="task")
        try:
            while pending or running:
                while pending and len(running) < self.jobs:   # at most `jobs` submitted: the rest may wait
                    index, job = pending.pop()
                    self.on_start(job)
                    running[pool.submit(evaluate, job)] = (index, job)
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: running[f][0]):
                    _, job = running.pop(future)
                    yield job, future.result()
        finally:
            for future in running:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        pass
