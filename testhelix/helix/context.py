"""Everything one task's pipeline run shares: the task, strategy, configuration, model, budget,
executor, deadline and an event log that becomes the task's trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testhelix.agent.budget import Budget, Deadline, execution_time_limit_s
from testhelix.agent.loop import AgentSession
from testhelix.execution.outcome import Limits, Outcome
from testhelix.helix.config import RunConfig
from testhelix.llm.base import ChatModel
from testhelix.strategy.model import Strategy

if TYPE_CHECKING:
    from testhelix.execution.executor import Executor
    from testhelix.strategy.skills import Skill
    from testhelix.tasks.task import Task


@dataclass
class HelixContext:
    task: Task                # the pipeline reads only its public parts
    strategy: Strategy
    config: RunConfig
    model: ChatModel
    budget: Budget
    executor: Executor
    work_dir: Path            # the task's workspaces and trajectories
    library: dict[str, Skill] | None = None
    deadline: Deadline | None = None
    # the task's log: each step its own JSON fields (`log`); typed as `HelixEvent` where it is stored
    events: list[dict[str, Any]] = field(default_factory=list)
    concurrent: bool = False  # pairs (and reviews) run in threads; results are the same either way
    session_class: type[AgentSession] = AgentSession   # a subclass overrides the loop's named steps

    def __post_init__(self) -> None:
        if self.deadline is None:
            self.deadline = Deadline.for_agent_limit(self.agent_time_limit_s)

    @property
    def agent_time_limit_s(self) -> float:
        """T: the run's override when one is given, else the limit the task declares."""
        if self.config.agent_time_limit_s is not None:
            return self.config.agent_time_limit_s
        return self.task.agent_timeout_s

    def time_is_up(self) -> bool:
        return self.deadline is not None and self.deadline.expired()   # __post_init__ always sets one

    @property
    def limits(self) -> Limits:
        return Limits(wall_s=execution_time_limit_s(self.task.verifier_timeout_s))

    def execute(self, suite: Path, program: Path, repetition: int = 0) -> Outcome:
        """Run a suite on a program; later repetitions bypass the outcome cache so that
        "reproducible" means the behaviour was observed again, not read back."""
        if repetition:
            return self.executor.run_repeat(suite, program, self.limits, repetition)
        return self.executor.run(suite, program, self.limits)

    def execute_many(self, jobs: list[tuple[Path, Path]]) -> list[Outcome]:
        """Several (suite, program) executions in one executor call (the pool runs them in parallel)."""
        return self.executor.run_many(jobs, self.limits) if jobs else []

    def log(self, step: str, **data: Any) -> None:  # JSON values
        self.events.append({"step": step, **data})
