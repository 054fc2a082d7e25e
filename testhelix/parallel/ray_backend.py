"""The Ray backend: task evaluations on a Ray cluster (`pip install -e '.[ray]'`).

`ray.init(address)` joins a running cluster; without an address it starts a local one, so the same
command runs on a laptop. The driver starts one actor per CPU of the cluster (at most one per job);
each actor builds its own executor and runner from `WorkerSettings` with the builder function the
driver hands it (this module never imports the runner) and runs up to ceil(jobs / actors)
evaluations at once in threads. The driver's whole RunSetup travels in the settings (call timeout,
context windows, the executor and sandbox choice; its rate limits too, each actor getting an equal
part, so the actors together stay within them). Model clients are built inside the actor from
the actor's own environment: no key ever enters the object store. A result returns to the driver
as the typed `Finished | Incomplete` the runner made (frozen dataclasses of plain values, pickled as
they are), carrying the model-call ledger rows and the fresh executions of its task as
`WorkerRecords`; the driver, alone, writes them to the run store -- so killing the driver loses only
unfinished tasks, which a resumed run redoes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from testhelix.core.errors import UserError
from testhelix.helix.jobs import TaskJob
from testhelix.helix.results import TaskResult, WorkerRecords
from testhelix.parallel.jobs import WorkerBuilder, WorkerSettings
from testhelix.run.setup import RunSetup

if TYPE_CHECKING:
    from testhelix.execution.outcome import Limits, Outcome


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UserError("--backend ray needs Ray: pip install -e '.[ray]'") from None
    return ray


class RecordingCache:
    """A worker's outcome cache: in memory, and every new entry is kept until the driver takes it."""

    def __init__(self) -> None:
        import threading

        from testhelix.execution.outcome_cache import MemoryOutcomeCache

        self.memory = MemoryOutcomeCache()
        self._lock = threading.Lock()
        self._parts: dict[str, dict] = {}
        self.fresh: list[tuple[str, dict]] = []

    def describe(self, key: str, suite_digest: str, program_digest: str, runner_version: str,
                 limits: Limits) -> None:
        import json
        with self._lock:
            self._parts[key] = {"suite_digest": suite_digest, "program_digest": program_digest,
                                "runner_version": runner_version, "limits": json.dumps(limits.as_dict())}

    def get(self, key: str) -> Outcome | None:
        return self.memory.get(key)

    def put(self, key: str, outcome: Outcome) -> None:
        self.memory.put(key, outcome)
        with self._lock:
            parts = self._parts.pop(key, {})
            self.fresh.append((key, {**parts, "status": outcome.status, "reason": outcome.reason,
                                     "tests_run": outcome.tests_run, "duration_s": outcome.duration_s,
                                     "output": outcome.output}))

    def take(self) -> list[tuple[str, dict]]:
        with self._lock:
            out, self.fresh = self.fresh, []
        return out


class TaskWorker:
    """The actor body (wrapped with ray.remote at start-up, so importing this module needs no Ray).

    `build` (testhelix/parallel/build.py `worker_runner`, handed over by the driver) builds the worker's
    executor and runner from the settings' RunSetup: the executor and sandbox the driver chose, its
    model settings (its share of the rate limits) and its concurrency."""

    def __init__(self, settings: WorkerSettings, build: WorkerBuilder):
        self.settings = settings
        self.cache = RecordingCache()
        self.executor, self.runner = build(settings, self.cache)

    def evaluate(self, job: TaskJob) -> TaskResult:
        from testhelix.agent.budget import MemoryLedger

        ledger = MemoryLedger()
        result = self.runner.evaluate_job(job, sink=ledger)
        # executions are shared between the tasks of this actor: whichever result leaves first carries them
        return replace(result, records=WorkerRecords(ledger=tuple(ledger.rows), executions=tuple(self.cache.take())))

    def ping(self) -> str:
        return os.uname().nodename

    def execution(self) -> dict:
        """The executor this worker built (for checks and diagnostics)."""
        choice = self.settings.setup.execution
        return {"executor": choice.executor, "sandbox": choice.sandbox, "runner_version": self.executor.runner_version}

    def setup(self) -> RunSetup:
        """The RunSetup this worker runs under (for checks and diagnostics)."""
        return self.settings.setup

    def close(self) -> None:
        self.executor.close()


class RayBackend:
    remote = True

    def __init__(self, settings: WorkerSettings, build: WorkerBuilder, jobs: int, address: str | None = None):
        ray = _ray()
        self.ray = ray
        self.jobs = max(1, int(jobs))
        self.started = not ray.is_initialized()          # a cluster we start, we stop
        if self.started:
            try:
                if address:
                    ray.init(address=address, include_dashboard=False, log_to_driver=False)
                else:
                    ray.init(include_dashboard=False, log_to_driver=False)
            except Exception as err:  # noqa: BLE001 - Ray reports a failed start with a bare Exception
                raise UserError(f"--ray-address {address or '(local cluster)'}: cannot start or join Ray: {err}") from None
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        count = max(1, min(self.jobs, cpus))
        per_actor = math.ceil(self.jobs / count)
        actor = ray.remote(num_cpus=1, max_concurrency=per_actor)(TaskWorker)
        self.actors = [actor.remote(settings.for_workers(count), build) for _ in range(count)]
        ray.get([a.ping.remote() for a in self.actors])          # fail here, clearly, if a worker cannot start
        self.on_start = lambda job: None

    def run(self, jobs: Sequence[TaskJob],
            evaluate: Callable[[TaskJob], TaskResult]) -> Iterator[tuple[TaskJob, TaskResult]]:
        del evaluate  # the actors evaluate with their own runners
        ray = self.ray
        pending = list(reversed(list(enumerate(jobs))))
        running: dict = {}
        load = [0] * len(self.actors)             # evaluations running on each actor
        while pending or running:
            while pending and len(running) < self.jobs:
                index, job = pending.pop()
                self.on_start(job)
                # the least busy actor: taking turns would queue a job behind an actor's full slots
                # while another actor has a free one (tasks finish in any order)
                actor = min(range(len(self.actors)), key=lambda a: (load[a], a))
                load[actor] += 1
                running[self.actors[actor].evaluate.remote(job)] = (index, job, actor)
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in sorted(done, key=lambda r: running[r][0]):
                _, job, actor = running.pop(ref)
                load[actor] -= 1
                yield job, ray.get(ref)

    def close(self) -> None:
        actors, self.actors = getattr(self, "actors", []), []
        try:
            self.ray.get([a.close.remote() for a in actors], timeout=60)
        except Exception:  # noqa: BLE001 - closing is best effort; the actors are killed next
            pass
        for a in actors:
            self.ray.kill(a)
        if self.started:
            self.ray.shutdown()
