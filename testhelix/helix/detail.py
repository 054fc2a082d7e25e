"""What a finished task evaluation records about how its suite came to be: `SubmissionDetail`.

It is stored as the JSON column task_results.detail and read by the run summary (`simulated`),
AutoSaddler's evaluator (the optimizer's public trace) and the reports (the selection rule). The
models here are its schema: the runner builds one, `stored_json` writes the column exactly as it has
always been written, and `stored_rule` reads the one field the reports need back from any store,
old rows included (an older detail may lack fields added since, so nothing else is required there).
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, ValidationError


class PairSummary(BaseModel):
    """One test-and-repair pair as the task ended: its sessions' exits, its local qualification
    (statuses on the initial program and on its repair) and the review's verdict."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    pair: int
    direction: str
    sessions: list[str]            # exit reason of each session
    qualified: bool
    initial: list[str]             # the suite's status on the initial program, per repetition
    repair: list[str]              # ... and on the pair's repair
    approved: bool | None          # None: not reviewed
    suspect_tests: list[str]


class HelixEvent(BaseModel):
    """One step of the task's log (`HelixContext.log`): the step's name and its own fields."""

    # Each step logs its own fields (plan: directions, qualify: statuses, ...): kept open, as logged.
    model_config = ConfigDict(frozen=True, extra="allow")
    step: str


class BudgetUse(BaseModel):
    """The task's token budget as it ended: the cap, what was used and the calls it refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    cap: int
    used: int
    refused: int


class SubmissionDetail(BaseModel):
    """How the submitted suite was chosen and what the task's pairs did (task_results.detail)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    submission: str                # the selection rule (testhelix/helix/selection.py)
    pair: int | None               # the submitted pair; None when nothing was submitted
    support: int
    pairs: list[PairSummary]
    events: list[HelixEvent]
    budget: BudgetUse
    elided: int                    # observations trimmed from the sessions' context
    simulated: bool                # a simulated model took part (by name or served behind a real one)

    def stored_json(self) -> str:
        """The task_results.detail column: the same keys in the same order as always; an event's
        value JSON cannot hold (a path, say) is written as its text."""
        return json.dumps(self.model_dump(), default=str)


class _StoredRule(BaseModel):
    model_config = ConfigDict(extra="ignore")
    submission: str | None = None


def stored_rule(column: object) -> str | None:  # a JSON column as the database hands it over
    """The selection rule recorded in a task_results.detail column (JSON text, an already decoded
    object or NULL); None when the row records none or the column is not a JSON object."""
    try:
        if isinstance(column, str | bytes):
            return _StoredRule.model_validate_json(column).submission
        return _StoredRule.model_validate(column or {}).submission
    except ValidationError:
        return None
