"""Extension points of the search: what evaluates a strategy, what proposes edits, what screens."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, runtime_checkable

from autosaddler.edits import Edit
from autosaddler.traces import OptimizerTrace, TaskEval
from testhelix.strategy.model import Strategy


class SessionUsage(TypedDict):
    """What one optimizer session used in one search step: a row of optimizer_sessions and an entry
    of the DAG node's optimizer_usage (JSON, so a dict)."""

    calls: int
    input_tokens: int
    output_tokens: int
    tokens: int
    cost_usd: float | None         # None: some call's price is unknown
    failures: int
    timeouts: int
    tool_calls: int
    step_limits: int
    elapsed_s: float
    timeout_s: float


# Per session name (selection, diagnosis, reflection): what it used.
OptimizerUsage = dict[str, SessionUsage]


class PromptMessage(TypedDict):
    role: str
    content: str


class Exchange(TypedDict):
    """One optimizer model call as recorded for the search report (JSON in search_state)."""

    session: str
    step: int | None
    prompt: list[PromptMessage]    # the messages as sent at this step
    reply: str | None
    failure: str | None            # why there is no reply


class StrategyEvaluator(Protocol):
    def evaluate(self, strategy: Strategy, task_ids: Sequence[str]) -> dict[str, TaskEval]: ...


@runtime_checkable
class EvaluatesEach(Protocol):
    """An evaluator that runs tasks concurrently and yields each (task id, evaluation) as it
    finishes (the TestHelix evaluator); the search asks with isinstance, else calls `evaluate`."""

    def evaluate_each(self, strategy: Strategy, task_ids: Sequence[str]) -> Iterator[tuple[str, TaskEval]]: ...


@dataclass(frozen=True)
class ParentView:
    """What the parent-selection session sees of a node: aggregates only, no per-task dev outcomes."""

    node_id: str
    dev_score: float
    depth: int
    edit: str
    minibatch_successes: int | None


@dataclass(frozen=True)
class Diagnosis:
    """Session 2's answer: a field edit, or the decision that a lesson is needed (session 3).
    `edit` is what the session proposed, parsed (an `UnparsedEdit` when it is not an edit)."""

    text: str
    edit: Edit
    wants_lesson: bool


class Optimizer(Protocol):
    """Three sessions, each with its own prompt, time limit and usage accounting.

    Sessions are stateless: everything they may use arrives as arguments (`history` lists the
    earlier proposals with their fate), so a resumed search asks them the same questions again.
    """

    def select_parent(self, candidates: Sequence[ParentView]) -> str: ...
    def diagnose(self, parent: Strategy, traces: Sequence[OptimizerTrace], history: Sequence[str]) -> Diagnosis: ...
    def reflect(self, parent: Strategy, traces: Sequence[OptimizerTrace], diagnosis: Diagnosis) -> Edit: ...
    def usage(self) -> OptimizerUsage:
        """Per session, what it used since the previous call (each DAG node records its own round)."""
        ...


@runtime_checkable
class RecordsExchanges(Protocol):
    """An optimizer that keeps its prompts and replies (the model-driven one): `exchanges()` hands
    over every call since the previous one, recorded per node for the search report."""

    def exchanges(self) -> list[Exchange]: ...


@runtime_checkable
class ResumesUsage(Protocol):
    """An optimizer with a budget over the whole search: a resumed search hands it what the recorded
    nodes used (the model-driven one)."""

    # each node's optimizer_usage as stored: JSON recorded by whichever optimizer ran the search
    def restore_usage(self, recorded: list[dict[str, Any]]) -> None: ...


class ScreenRule(Protocol):
    """The minibatch screen: does the child pass on the parent's tasks (and why)?"""

    def passes(self, parent: dict[str, int], child: dict[str, int]) -> tuple[bool, str]: ...
