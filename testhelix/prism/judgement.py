"""What TestPrism's judge produces for one submitted suite, as values: the outcome on every program,
the task indicators F, A, R, S, the secret panel order, and (with coverage) the per-task metrics.

`Judgement` is the judge's answer (testhelix/prism/evaluation.py); `TaskMetrics` is everything one
task contributes to a split's metrics -- the indicators and the suite's coverage -- kept whole so
that no caller writes F, A, R, S out as four loose numbers. The store's columns for them are built
here, in one place (`TaskMetrics.columns`), with F and S as 0/1 as they were always stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from testhelix.prism.coverage import MISSING, SuiteCoverage
from testhelix.prism.metrics import TaskIndicators, TaskOutcomes

# A task_results column value: the metric columns are numbers, text or NULL.
MetricColumn = int | float | str | None


@dataclass(frozen=True)
class ProgramOutcome:
    """The submitted suite's outcome on one program of the task (a task_outcomes row)."""

    program_id: str
    role: str          # initial | reference | alternative | invalid
    label: str         # the candidate's label ("valid" / "invalid" / the program's own)
    status: str        # pass | fail | error | missing
    reason: str | None

    def row(self) -> dict[str, str | None]:
        """The task_outcomes row (without run label and task id), in the stored column order."""
        return {"program_id": self.program_id, "role": self.role, "label": self.label, "status": self.status,
                "reason": self.reason}


@dataclass(frozen=True)
class PanelOrder:
    """The order the programs ran in, drawn from a per-evaluation secret (kept for audit)."""

    token: str
    run_order: tuple[str, ...]


@dataclass(frozen=True)
class Judgement:
    """One suite judged on one task. `suite_digest` is None for a refused or missing suite;
    `panel_order` is None when nothing ran."""

    task_id: str
    indicators: TaskIndicators
    outcomes: tuple[ProgramOutcome, ...]
    panel_order: PanelOrder | None
    suite_digest: str | None

    def outcome_record(self) -> TaskOutcomes:
        """`{program_id: (role, status)}`, what the split metrics read (testhelix/prism/metrics.py)."""
        return {o.program_id: (o.role, o.status) for o in self.outcomes}

    def statuses(self) -> dict[str, str]:
        """`{program_id: status}`: the outcome on every program."""
        return {o.program_id: o.status for o in self.outcomes}

    def public(self) -> dict[str, object]:   # a JSON document for the CLI to print, built in this one place
        """What `testhelix evaluate --json` prints for one task: no digest, no secret order."""
        ind = self.indicators
        return {"task": self.task_id,
                "outcomes": {o.program_id: {"outcome": o.status, "reason": o.reason} for o in self.outcomes},
                "F": int(ind.F), "A": ind.A, "R": ind.R, "S": int(ind.S)}


@dataclass(frozen=True)
class TaskMetrics:
    """One task's TestPrism metrics: the indicators F, A, R, S and the suite's coverage (ΔC, Entry)."""

    indicators: TaskIndicators
    coverage: SuiteCoverage = MISSING

    @property
    def success(self) -> bool:
        """F_i, the reference transition: what single-reference search and gate score."""
        return self.indicators.F

    def columns(self) -> dict[str, MetricColumn]:
        """The task_results metric columns (F and S stored as 0/1)."""
        ind, cov = self.indicators, self.coverage
        return {"F": int(ind.F), "A": ind.A, "R": ind.R, "S": int(ind.S),
                "delta_c": cov.delta_c, "entry_coverage": cov.entry, "coverage_status": cov.status}
