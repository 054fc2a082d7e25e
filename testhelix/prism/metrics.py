"""TestPrism metrics over per-task outcome records.

Everything here is a pure function of recorded outcomes. One task's record maps a program id to
`(role, status)`: role is "initial", "reference", "alternative" or "invalid"; status is the outcome
of the submitted suite on that program, "pass" | "fail" | "error" | "missing".

Conventions (docs/design.md §5):
- a "missing" outcome has no execution record: it leaves the task-rate denominators of A and R but
  still denies F and S their credit;
- an "error" stays in the denominators and counts in neither numerator;
- an empty denominator leaves the task rate undefined (None) and out of the split mean;
- Reference Acceptance Rate and Joint Success Function average over all N tasks of the split;
- H is the harmonic mean of VAR and IRR after each is rounded to two decimals of a percent, and is
  itself rounded the same way.

Rates are fractions in [0, 1]; `H` is also a fraction, but it is exactly a two-decimal percentage
divided by 100 (see `round_percent`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from statistics import fmean
from typing import Literal

from scipy import stats

Role = Literal["initial", "reference", "alternative", "invalid"]
Status = Literal["pass", "fail", "error", "missing"]
TaskOutcomes = Mapping[str, tuple[str, str]]  # program id -> (role, status)

ROLES = ("initial", "reference", "alternative", "invalid")
STATUSES = ("pass", "fail", "error", "missing")
OBSERVED = ("pass", "fail", "error")  # statuses with an execution record


@dataclass(frozen=True)
class TaskIndicators:
    """Per-task indicators: F (reference transition), A, R (task rates or None), S (joint)."""

    F: bool
    A: float | None
    R: float | None
    S: bool


def _check(outcomes: TaskOutcomes) -> None:
    for pid, pair in outcomes.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"outcome of {pid!r} must be a (role, status) pair, got {pair!r}")
        role, status = pair
        if role not in ROLES:
            raise ValueError(f"program {pid!r}: unknown role {role!r} (expected one of {ROLES})")
        if status not in STATUSES:
            raise ValueError(f"program {pid!r}: unknown status {status!r} (expected one of {STATUSES})")


def _statuses(outcomes: TaskOutcomes, *roles: str) -> list[str]:
    return [status for role, status in outcomes.values() if role in roles]


def _share(statuses: list[str], wanted: str) -> float | None:
    """Share of observed statuses equal to `wanted`; missing ones leave the denominator."""
    observed = [s for s in statuses if s in OBSERVED]
    if not observed:
        return None
    return sum(s == wanted for s in observed) / len(observed)


def reference_transition(outcomes: TaskOutcomes) -> bool:
    """F: the suite fails on the initial program and passes on the reference."""
    initial = _statuses(outcomes, "initial")
    reference = _statuses(outcomes, "reference")
    return initial == ["fail"] and reference == ["pass"]


def task_indicators(outcomes: TaskOutcomes) -> TaskIndicators:
    """F, A, R, S of one task from `{program_id: (role, status)}`.

    A task without an "initial" or "reference" entry (or with a non-fail / non-pass one) has F=0.
    """
    _check(outcomes)
    f = reference_transition(outcomes)
    a = _share(_statuses(outcomes, "alternative"), "pass")
    r = _share(_statuses(outcomes, "invalid"), "fail")
    valid_ok = all(s == "pass" for s in _statuses(outcomes, "reference", "alternative"))
    invalid_ok = all(s == "fail" for s in _statuses(outcomes, "invalid"))
    no_error = "error" not in _statuses(outcomes, *ROLES)
    return TaskIndicators(F=f, A=a, R=r, S=bool(f and valid_ok and invalid_ok and no_error))


def valid_acceptance_with_reference(outcomes: TaskOutcomes) -> float | None:
    """The stored companion task rate: share of ALL valid candidates (reference included) passing."""
    _check(outcomes)
    return _share(_statuses(outcomes, "reference", "alternative"), "pass")


def round_percent(rate: float) -> float:
    """Round a fraction to two decimals of a percent, half up on the decimal value.

    Decimal(repr(x)) keeps the shortest decimal form of the float, so 0.12345 rounds to 12.35 %
    rather than following binary noise (0.12345 * 100 == 12.344999...).
    """
    pct = (Decimal(repr(float(rate))) * 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return float(pct / 100)


def harmonic_h(var: float | None, irr: float | None) -> float | None:
    """H from VAR and IRR under the rounding rule of docs/design.md §5; 0 when both are 0, None when either is."""
    if var is None or irr is None:
        return None
    v, i = round_percent(var), round_percent(irr)
    if v + i == 0:
        return 0.0
    return round_percent(2 * v * i / (v + i))


def _mean_defined(values: Iterable[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return fmean(defined) if defined else None


@dataclass(frozen=True)
class SplitMetrics:
    """Aggregate metrics over the N tasks of a split (fractions; None = undefined)."""

    n: int
    reference_acceptance: float | None  # mean F over all N (None only when N == 0)
    joint_success: float | None  # mean S over all N
    valid_acceptance: float | None  # VAR: mean of defined A_i
    invalid_rejection: float | None  # IRR: mean of defined R_i
    h: float | None
    valid_tasks: int  # |T_V|: tasks with a defined A_i
    invalid_tasks: int  # |T_I|
    missing_tasks: int  # tasks without any execution record
    # stored companions (seed appendix): kept for comparison with other tools' summaries
    valid_acceptance_with_reference: float | None
    balanced_accuracy: float | None  # mean of the companion above and IRR
    mutation_score: float | None  # an alias of IRR, not an independent observation

    def as_dict(self) -> dict[str, float | int | None]:
        return dict(self.__dict__)


def split_metrics(tasks: Mapping[str, TaskOutcomes | None]) -> SplitMetrics:
    """Aggregate metrics over a fixed split: `{task_id: outcomes}`; None (or {}) = missing task.

    Every task id counts in the N of Reference Acceptance Rate and Joint Success Function.
    """
    indicators: list[TaskIndicators] = []
    companions: list[float | None] = []
    missing = 0
    for outcomes in tasks.values():
        outcomes = outcomes or {}
        if not any(status in OBSERVED for _, status in outcomes.values()):
            missing += 1
        indicators.append(task_indicators(outcomes))
        companions.append(valid_acceptance_with_reference(outcomes))
    n = len(indicators)
    var = _mean_defined(t.A for t in indicators)
    irr = _mean_defined(t.R for t in indicators)
    stored_var = _mean_defined(companions)
    balanced = None if stored_var is None or irr is None else (stored_var + irr) / 2
    return SplitMetrics(
        n=n,
        reference_acceptance=fmean(t.F for t in indicators) if n else None,
        joint_success=fmean(t.S for t in indicators) if n else None,
        valid_acceptance=var,
        invalid_rejection=irr,
        h=harmonic_h(var, irr),
        valid_tasks=sum(t.A is not None for t in indicators),
        invalid_tasks=sum(t.R is not None for t in indicators),
        missing_tasks=missing,
        valid_acceptance_with_reference=stored_var,
        balanced_accuracy=balanced,
        mutation_score=irr,
    )


@dataclass(frozen=True)
class PairedDifference:
    """Paired comparison of one per-task quantity between configurations X and Y (Y - X)."""

    n: int  # tasks where both values are defined
    mean_x: float | None
    mean_y: float | None
    delta: float | None  # mean of per-task differences (== mean_y - mean_x on the paired tasks)
    improved: int  # tasks with y > x
    worsened: int  # tasks with y < x
    sign_test_p: float | None  # exact two-sided sign test over non-tied tasks (None when all tie)


def paired_difference(
    x: Mapping[str, float | None], y: Mapping[str, float | None]
) -> PairedDifference:
    """Compare per-task values of two configurations over the tasks both define.

    Callers pass F and S with missing tasks as 0 (they count over all N); A and R as None when
    undefined, so those tasks drop out of the pairing. The sign test uses scipy's exact binomial test.
    """
    common = sorted(t for t in x.keys() & y.keys() if x[t] is not None and y[t] is not None)
    xs = [float(x[t]) for t in common]  # type: ignore[arg-type]
    ys = [float(y[t]) for t in common]  # type: ignore[arg-type]
    up = sum(b > a for a, b in zip(xs, ys))
    down = sum(b < a for a, b in zip(xs, ys))
    p = stats.binomtest(up, up + down, 0.5).pvalue if up + down else None
    return PairedDifference(
        n=len(common),
        mean_x=fmean(xs) if xs else None,
        mean_y=fmean(ys) if ys else None,
        delta=fmean(b - a for a, b in zip(xs, ys)) if xs else None,
        improved=up,
        worsened=down,
        sign_test_p=float(p) if p is not None else None,
    )
