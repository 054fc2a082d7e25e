"""The result of one task evaluation, as the runner hands it on: `Finished | Incomplete`.

A `Finished` task carries its TestPrism metrics whole (`TaskMetrics`: F, A, R, S and coverage), the
judgement's outcome rows and secret panel order, usage and the submission detail; the store's
task_results row is built from it in one place (`Finished.row`). An `Incomplete` one is an
evaluation the provider prevented: a state with its cause, never a score (DESIGN: "failure is a
state"), so a consumer has to say what it does with each case -- `match result: case Finished(...)`.

Both are frozen dataclasses of plain values, so a Ray worker's result crosses the process boundary
pickled as it is. What a remote worker could not store itself (its model-call ledger rows and fresh
executions) travels with the result as `WorkerRecords`, which the driver stores once
(`HelixRunner.absorb`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from testhelix.helix.detail import SubmissionDetail
from testhelix.prism.judgement import PanelOrder, ProgramOutcome, TaskMetrics

# A task_results row: the stored columns by name, handed to the store's INSERT as they are (the
# column list is the store's schema, testhelix/store/migrations.py).
ResultRow = dict[str, Any]


@dataclass(frozen=True)
class WorkerRecords:
    """What a remote worker hands to the driver to store: model-call ledger rows and the
    executions its outcome cache added, as (key, row). Both are store rows passed through to the
    store's INSERTs unread (their columns are the store's schema), so they stay column dicts."""

    ledger: tuple[dict[str, Any], ...] = ()
    executions: tuple[tuple[str, dict[str, Any]], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Usage:
    """What one evaluation used: tokens and model calls (also for an incomplete one: the calls were made)."""

    tokens: int
    calls: int


@dataclass(frozen=True, kw_only=True)
class Finished:
    """A task run and judged."""

    task_id: str
    run_label: str
    metrics: TaskMetrics
    submitted: bool            # False: no suite was submitted (an error on every program)
    suite_digest: str | None
    rule: str                  # how the submitted suite was chosen
    detail: SubmissionDetail   # stored as task_results.detail (JSON)
    outcomes: tuple[ProgramOutcome, ...]
    panel_order: PanelOrder | None
    usage: Usage
    wall_s: float
    records: WorkerRecords = field(default_factory=WorkerRecords)

    @property
    def simulated(self) -> bool:
        """Did a simulated model take part (by name, or served behind a real provider's name)?"""
        return self.detail.simulated

    def row(self) -> ResultRow:
        """The task_results row, column for column as it has always been stored."""
        return {"run_label": self.run_label, "task_id": self.task_id, "submitted": self.submitted,
                "suite_digest": self.suite_digest, **self.metrics.columns(),
                "tokens": self.usage.tokens, "calls": self.usage.calls, "wall_s": self.wall_s,
                "detail": self.detail.stored_json()}

    def outcome_rows(self) -> list[dict[str, str | None]]:
        return [o.row() for o in self.outcomes]


@dataclass(frozen=True, kw_only=True)
class Incomplete:
    """An evaluation the provider prevented (a `ModelError` after the SDK's retries): never scored;
    stored with its cause and retried by a resumed run."""

    task_id: str
    run_label: str
    cause: str                 # the ModelError's cause: rate_limited, server_error, ...
    error: str                 # its message
    usage: Usage
    records: WorkerRecords = field(default_factory=WorkerRecords)


TaskResult = Finished | Incomplete
