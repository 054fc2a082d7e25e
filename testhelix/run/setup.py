"""One run's settings, built once from the command line and passed explicitly (`RunSetup`).

A command that runs models builds one `RunSetup` from the shared options (testhelix/commands/run_options.py)
and hands it to the builder of its runner and backend (testhelix/parallel/build.py); a Ray worker gets
the same object inside its `WorkerSettings`. Nothing the command line decided travels through the
process environment or a module global: the model factory applies the context windows and rate
limits, the executor factory gets the executor and sandbox choice, and the concurrency is three
named quantities:

- `tasks_in_flight` (`--jobs`): task evaluations at once;
- `pairs_in_parallel`: whether the pairs of one task (and its reviews) develop at once; on
  whenever more than one task is in flight, so results never depend on it;
- `execution_slots` (`--workers`): parallel suite executions the executor is sized for (a local
  executor shared by many tasks runs `fork_servers()` servers: two per slot, at most one per task).

Environment variables a user sets as defaults (`$TESTHELIX_EXECUTOR`, `$TESTHELIX_SANDBOX`) are read
once, when the setup is built (`ExecutionChoice.from_options`), and never written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from testhelix.execution import seam

if TYPE_CHECKING:
    from testhelix.execution.outcome_cache import OutcomeCache
    from testhelix.execution.seam import Executor
    from testhelix.llm.base import ChatModel
    from testhelix.llm.modelref import ModelRef

# Fork servers per execution slot when many callers share the executor. An execution is far from
# all CPU: measured on the bundled katas, one costs ~0.23 s of CPU in its process tree but takes
# 1-4 s of wall time on the loaded 2-core machine (process creation, namespace and cgroup set-up
# and tear-down, pipes). With one server per slot, concurrent pairs queue for a server while the
# cores are partly idle; two per slot let one execution's waiting overlap another's CPU.
SERVERS_PER_SLOT = 2


@dataclass(frozen=True)
class ModelSettings:
    """What the command line says about models: `--call-timeout`, `--context-window`, `--rpm/--tpm`
    (per model name as given; every value range-checked once, by its option)."""

    call_timeout_s: float | None = None
    context_windows: tuple[tuple[str, int], ...] = ()                     # (model name, tokens)
    rate_limits: tuple[tuple[str, float | None, float | None], ...] = ()  # (model name, rpm, tpm)

    @classmethod
    def for_models(cls, models: Sequence[ModelRef | str], call_timeout_s: float | None = None,
                   context_window: int | None = None, rpm: float | None = None,
                   tpm: float | None = None) -> ModelSettings:
        """The same context window and rate limits for every model a command names (keyed by the
        name as given: a ModelRef's `given`, or GTDD's recorded role names)."""
        return cls(call_timeout_s=call_timeout_s,
                   context_windows=tuple((str(m), int(context_window)) for m in models if context_window),
                   rate_limits=tuple((str(m), rpm, tpm) for m in models if rpm or tpm))

    def context_window(self, name: str) -> int | None:
        return next((tokens for m, tokens in self.context_windows if m == name), None)

    def rate_limit(self, name: str) -> tuple[float | None, float | None]:
        return next(((rpm, tpm) for m, rpm, tpm in self.rate_limits if m == name), (None, None))

    def for_workers(self, count: int) -> ModelSettings:
        """The settings of one of `count` processes that each have their own limiter: each gets
        1/count of every requests- and tokens-per-minute allowance, so together they stay within it."""
        count = max(1, int(count))
        return replace(self, rate_limits=tuple((m, rpm / count if rpm else rpm, tpm / count if tpm else tpm)
                                               for m, rpm, tpm in self.rate_limits))

    def create_model(self, ref: ModelRef, *, task: Any = None, seed: int = 0,
                     timeout_s: float | None = None, max_retries: int = 2) -> ChatModel:
        """The model `ref` names with this setup's context window and rate limits (`max_retries`: the
        SDK's own retries, the only retry layer)."""
        from testhelix.llm.registry import create_model

        rpm, tpm = self.rate_limit(ref.given)
        return create_model(ref, task=task, seed=seed, timeout_s=timeout_s, context_window=self.context_window(ref.given),
                            requests_per_minute=rpm, tokens_per_minute=tpm, max_retries=max_retries)

    def create_optimizer_model(self, ref: ModelRef, *, seed: int = 0, timeout_s: float | None = None) -> ChatModel:
        from testhelix.llm.registry import create_optimizer_model

        rpm, tpm = self.rate_limit(ref.given)
        return create_optimizer_model(ref, seed=seed, timeout_s=timeout_s, context_window=self.context_window(ref.given),
                                      requests_per_minute=rpm, tokens_per_minute=tpm)


@dataclass(frozen=True)
class ExecutionChoice:
    """Which executor runs suites and in which sandbox (`--executor`, `--sandbox`)."""

    executor: str = seam.DEFAULT_EXECUTOR
    sandbox: str | None = None          # None: the strongest built-in available (a value made in code)

    @classmethod
    def from_options(cls, executor: str | None = None, sandbox: str | None = None) -> ExecutionChoice:
        """The command line's choice, else the user's defaults in the environment, else the default
        executor and the strongest built-in sandbox: the environment is read here, once, and both
        are checked now, so a bad name stops the command before any work (exit 2) and nothing later
        checks or reads them again (`create_executor`)."""
        chosen = cls(executor=executor or os.environ.get(seam.EXECUTOR_ENV) or seam.DEFAULT_EXECUTOR,
                     sandbox=sandbox or os.environ.get(seam.SANDBOX_ENV) or seam.strongest_sandbox())
        seam.load_executor_factory(chosen.executor)
        seam.select_sandbox(chosen.sandbox)
        return chosen

    def create_executor(self, workers: int | None = None, cache: OutcomeCache | None = None) -> Executor:
        # a choice from_options made is trusted; one made in code (sandbox None) is checked by the seam
        return seam.create_executor(spec=self.executor, workers=workers, cache=cache, sandbox=self.sandbox,
                                    checked=self.sandbox is not None)


@dataclass(frozen=True)
class Concurrency:
    """The three quantities of concurrency, each with one name (see the module docstring)."""

    tasks_in_flight: int = 1
    execution_slots: int = field(default_factory=lambda: os.cpu_count() or 1)

    @property
    def pairs_in_parallel(self) -> bool:
        return self.tasks_in_flight > 1

    def fork_servers(self) -> int:
        """Servers of a local executor shared by `tasks_in_flight` evaluations: the slots when one
        task runs at a time (its pairs take turns), else two per slot, never more than the tasks."""
        slots = max(1, int(self.execution_slots))
        if self.tasks_in_flight <= 1:
            return slots
        return max(slots, min(int(self.tasks_in_flight), SERVERS_PER_SLOT * slots))


@dataclass(frozen=True)
class RunSetup:
    """A run's settings: models, execution choice, concurrency, and where task evaluations run."""

    models: ModelSettings = ModelSettings()
    execution: ExecutionChoice = ExecutionChoice()
    concurrency: Concurrency = Concurrency()
    backend: str = "local"               # local | ray
    ray_address: str | None = None

    def for_workers(self, count: int) -> RunSetup:
        """The setup one of `count` Ray workers runs under (its share of the rate limits)."""
        return replace(self, models=self.models.for_workers(count))
