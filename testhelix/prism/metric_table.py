"""The metric table: one entry per TestPrism metric, read by every place that shows metrics.

Each entry names a metric once: the key it has in a report row (`SplitMetrics.as_dict`, the run rows
of `testhelix/prism/report.py`, MLflow), its abbreviation and full name (the README's glossary uses
the same words), the per-task indicator it averages (F, A, R, S), whether it is compared between
configurations task by task, and how it is shown. The Markdown report (`testhelix report`), the HTML
page (`testhelix view`), MLflow tracking and `testhelix evaluate` iterate `METRICS`; adding a metric is
one entry here plus its computation (`testhelix/prism/metrics.py` for a split rate, or a result column
for a per-task measure such as coverage).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Shown = Literal["percent", "percent_or_missing", "count"]


@dataclass(frozen=True)
class Metric:
    """One metric: its report key, its names and how it is shown and compared."""

    key: str                      # key in a report row and in SplitMetrics.as_dict(); MLflow's metric name
    abbreviation: str             # the short name used in tables (RAR, VAR, IRR, H, JSF, ΔC, EC, N, ...)
    name: str                     # the full name
    meaning: str                  # one line for the glossary and the reports' keys
    indicator: str | None = None  # the per-task value it averages (F, A, R, S), when there is one
    over_all_tasks: bool = False  # the mean runs over every task of the split (a task with no value counts 0)
    paired: bool = False          # compared task by task between configurations of one model
    shown: Shown = "percent"
    missing_key: str | None = None  # key of the count of tasks whose value is missing (coverage)

    @property
    def label(self) -> str:
        """The column heading every table uses: the full name with its abbreviation."""
        return self.name if self.abbreviation == self.name else f"{self.name} ({self.abbreviation})"


REFERENCE_ACCEPTANCE = Metric(
    "reference_acceptance", "RAR", "Reference Acceptance Rate",
    "mean of F over all N tasks: F = 1 when the suite fails on the initial program and passes on the reference",
    indicator="F", over_all_tasks=True, paired=True)
VALID_ACCEPTANCE = Metric(
    "valid_acceptance", "VAR", "Valid Acceptance Rate",
    "mean of A over the tasks where A is defined: A = share of the other valid programs the suite passes",
    indicator="A", paired=True)
INVALID_REJECTION = Metric(
    "invalid_rejection", "IRR", "Invalid Rejection Rate",
    "mean of R over the tasks where R is defined: R = share of the invalid programs the suite fails",
    indicator="R", paired=True)
HARMONIC = Metric(
    "h", "H", "H",
    "harmonic mean of VAR and IRR, each first rounded to two decimals of a percent")
JOINT_SUCCESS = Metric(
    "joint_success", "JSF", "Joint Success Function",
    "mean of S over all N tasks: S = 1 when F = 1, every valid program passes, every invalid one fails, no error",
    indicator="S", over_all_tasks=True, paired=True)
CHANGE_COVERAGE = Metric(
    "delta_c", "ΔC", "Change coverage",
    "share of the changed lines (removed from the initial program, added in the reference) that the trusted "
    "tests execute and the suite executes too (coverage.py); missing, never 0, when it cannot be measured",
    shown="percent_or_missing", missing_key="delta_c_missing")
ENTRY_COVERAGE = Metric(
    "entry_coverage", "EC", "Entry Coverage",
    "share of the statements of the entry points the trusted tests call that the suite executes on the "
    "reference (coverage.py); missing, never 0, when it cannot be measured",
    shown="percent_or_missing", missing_key="entry_coverage_missing")

#: The rates of a run, in the order every table shows them.
METRICS: tuple[Metric, ...] = (REFERENCE_ACCEPTANCE, VALID_ACCEPTANCE, INVALID_REJECTION, HARMONIC,
                               JOINT_SUCCESS, CHANGE_COVERAGE, ENTRY_COVERAGE)
#: Counts shown beside the rates.
COUNTS: tuple[Metric, ...] = (
    Metric("n", "N", "N", "tasks of the split (a rate over all N counts an unfinished or unsubmitted task as 0)",
           shown="count"),
    Metric("tokens", "tokens", "tokens", "model tokens the run spent (input + output)", shown="count"),
    Metric("calls", "calls", "calls", "model calls the run made", shown="count"),
)
#: The per-task indicators compared between configurations, in report order.
PAIRED: tuple[Metric, ...] = tuple(m for m in METRICS if m.paired)
#: The per-task indicators and what they mean, for the keys printed beside per-task values.
INDICATORS: dict[str, str] = {
    "F": "fails on the initial program and passes on the reference (0/1)",
    "A": "share of the other valid programs the suite passes (undefined without any)",
    "R": "share of the invalid programs the suite fails (undefined without any)",
    "S": "joint success: F = 1, every valid passes, every invalid fails, no error (0/1)",
}


def by_indicator(indicator: str) -> Metric:
    """The split metric that averages a per-task indicator (F, A, R or S)."""
    for metric in METRICS:
        if metric.indicator == indicator:
            return metric
    raise KeyError(indicator)


def indicator_key() -> str:
    """One line naming the per-task indicators, printed wherever F, A, R and S appear bare."""
    return "key: " + "; ".join(f"{symbol} = {meaning}" for symbol, meaning in INDICATORS.items())
