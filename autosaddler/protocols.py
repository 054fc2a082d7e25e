"""Extension points of the search: what evaluates a strategy, what proposes edits, what screens."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from autosaddler.edits import Edit
from testhelix.helix.results import Finished
from testhelix.strategy.model import Strategy


@dataclass(frozen=True)
class TaskEval:
    """One task's binary score (F_i: the submitted suite fails the initial program and passes the
    reference) and a trace of public information for the optimizer."""

    success: int
    trace: dict = field(default_factory=dict)
    usage: dict = field(default_factory=dict)

    @classmethod
    def of(cls, result: Finished, trace: dict[str, Any]) -> TaskEval:
        """The score of a finished TestHelix evaluation: F_i and what it used. Only a `Finished`
        result has one; an `Incomplete` evaluation is never scored."""
        return cls(success=int(result.metrics.success), trace=trace,
                   usage={"tokens": result.usage.tokens, "calls": result.usage.calls})


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
    def diagnose(self, parent: Strategy, traces: Sequence[dict], history: Sequence[str]) -> Diagnosis: ...
    def reflect(self, parent: Strategy, traces: Sequence[dict], diagnosis: Diagnosis) -> Edit: ...
    def usage(self) -> dict:
        """Per session, what it used since the previous call (each DAG node records its own round)."""
        ...


@runtime_checkable
class RecordsExchanges(Protocol):
    """An optimizer that keeps its prompts and replies (the model-driven one): `exchanges()` hands
    over every call since the previous one, recorded per node for the search report."""

    def exchanges(self) -> list[dict]: ...


@runtime_checkable
class ResumesUsage(Protocol):
    """An optimizer with a budget over the whole search: a resumed search hands it what the recorded
    nodes used (the model-driven one)."""

    def restore_usage(self, recorded: list[dict]) -> None: ...


class ScreenRule(Protocol):
    """The minibatch screen: does the child pass on the parent's tasks (and why)?"""

    def passes(self, parent: dict[str, int], child: dict[str, int]) -> tuple[bool, str]: ...
