"""What one task evaluation tells the search (`TaskEval`) and what of it the optimizer may see.

`PublicTrace` is the public information about one attempt (no task id, no hidden material, no panel
outcomes), built by the TestHelix evaluator (autosaddler/evaluator.py). The search stores each
evaluation in search_evals.trace as `{...trace, "usage": {"tokens", "calls"}}` (`eval_column`) and
reads stored ones back through the same schema (`stored_eval`), so a row that is not what the search
wrote is refused with its field named, not half-read. `OptimizerTrace` is what the optimizer's
sessions receive: the trace under a position label (`task 3`), never under the task's id; its
`prompt_json` is the object the prompts print, key for key as they always printed it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter, ValidationError

from testhelix.core.errors import UserError
from testhelix.helix.results import Finished, Usage

_USAGE = TypeAdapter(Usage)


class PublicTrace(BaseModel):
    """One attempt as the optimizer may see it (the prompt's `## Traces` entries, autosaddler/prompts.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    context: str
    success: int                   # F_i: 1 when the submitted suite fails the initial program and passes the reference
    exit: str                      # the most common session exit, "none" without sessions
    steps: int                     # sessions run, over all pairs
    elided: int                    # observations trimmed from the sessions' context
    failed_initial: bool           # some pair's suite failed the initial program on every repetition
    passed_repair: bool            # some pair's suite passed its repair on every repetition
    review: str                    # approve | revise
    submission: str                # the selection rule that chose the submitted suite
    instruction_excerpt: str


@dataclass(frozen=True)
class TaskEval:
    """One task's binary score (F_i: the submitted suite fails the initial program and passes the
    reference), the trace of public information for the optimizer and what the evaluation used
    (None when an evaluator reports no trace or no usage)."""

    success: int
    trace: PublicTrace | None = None
    usage: Usage | None = None

    @classmethod
    def of(cls, result: Finished, trace: PublicTrace) -> TaskEval:
        """The score of a finished TestHelix evaluation: F_i and what it used. Only a `Finished`
        result has one; an `Incomplete` evaluation is never scored."""
        return cls(success=int(result.metrics.success), trace=trace, usage=result.usage)


@dataclass(frozen=True)
class OptimizerTrace:
    """A minibatch trace as the optimizer's sessions see it: the task by position only."""

    task: str                      # "task 3": the position in the minibatch, never the task's id
    success: int
    trace: PublicTrace | None

    def prompt_json(self) -> dict[str, JsonValue]:
        """The object the prompts and the session tools print for this trace."""
        return {"task": self.task, "success": self.success, **(self.trace.model_dump() if self.trace else {})}


def optimizer_traces(outcomes: dict[str, TaskEval]) -> list[OptimizerTrace]:
    """The minibatch's traces for the optimizer, in task-id order, each under its position."""
    return [OptimizerTrace(f"task {i + 1}", o.success, o.trace) for i, (_, o) in enumerate(sorted(outcomes.items()))]


def eval_column(ev: TaskEval) -> dict[str, JsonValue]:
    """The search_evals.trace column of one evaluation: the trace's fields and its usage."""
    usage: dict[str, JsonValue] = {"tokens": ev.usage.tokens, "calls": ev.usage.calls} if ev.usage else {}
    return {**(ev.trace.model_dump() if ev.trace else {}), "usage": usage}


def stored_eval(success: int, column: object, where: str) -> TaskEval:
    """A stored evaluation read back (the column as JSON text, an already decoded object or NULL)."""
    try:
        data = json.loads(column) if isinstance(column, str) else (column or {})
    except ValueError as err:
        raise UserError(f"{where}: the stored trace is not JSON ({err})") from None
    if not isinstance(data, dict):
        raise UserError(f"{where}: the stored trace is a {type(data).__name__}, not a JSON object")
    fields = dict(data)
    usage = fields.pop("usage", None)
    try:
        return TaskEval(success=success, trace=PublicTrace.model_validate(fields) if fields else None,
                        usage=_USAGE.validate_python(usage) if usage else None)
    except ValidationError as err:
        problems = [(".".join(str(p) for p in e["loc"]) or "$", e["msg"]) for e in err.errors()]
        raise UserError(f"{where}: the stored trace does not match its schema", problems) from None
