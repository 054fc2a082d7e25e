"""Panel analysis: AST diversity, expected joint score under random panel subsets, correlations.

Expected joint score (seed, panel-size analysis). For configuration m and task i, beyond the
reference: n_V / n_I count the available valid alternatives / invalid candidates, s_V / s_I count the
ones the suite judged correctly (an alternative passed, an invalid failed; missing and error are not
correct), and F marks the initial -> reference transition. A random panel keeps the reference and
draws `a` alternatives and `b` invalid candidates uniformly without replacement. The suite keeps
joint success only when every drawn candidate is judged correctly, which happens with probability
C(s_V, a) / C(n_V, a) * C(s_I, b) / C(n_I, b). The expected score is the mean of F times that
probability over every (configuration, task) pair, with equal weights.

Schedules over j added candidates (panel size k = 1 + j):
  valid        (a, b) = (j, 0)
  invalid      (a, b) = (0, j)
  alternating  (a, b) = (floor(j/2), ceil(j/2))   # reference, invalid, valid, invalid, ...
A schedule's curve goes up to the largest j that ANY task can supply (a <= n_V and b <= n_I). Up to
the largest j that EVERY task can supply, each point averages all tasks; past it, a point averages
only the tasks whose panel is large enough, and says how many (`CurvePoint.tasks` of
`CurvePoint.all_tasks`). Such a point describes a different, smaller set of tasks than the points
before it, so it is reported with its count and never filled in for the tasks that cannot supply it:
nothing is extrapolated beyond a panel. The bundled packs give every task 4 alternatives and 5
invalid candidates, so their curves end at k = 5 (valid), 6 (invalid) and 10 (alternating) with
every task counted at every point.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

from scipy import stats

from testhelix.prism.metrics import TaskOutcomes, reference_transition

Schedule = Literal["valid", "invalid", "alternating"]
SCHEDULES: tuple[Schedule, ...] = ("valid", "invalid", "alternating")


# ----------------------------------------------------------------------------------- diversity


def panel_diversity(features: Sequence[frozenset[str]],
                    distance: Callable[[frozenset[str], frozenset[str]], float] | None = None) -> float:
    """Mean AST-feature Jaccard distance over distinct unordered pairs; 0 for fewer than two."""
    if distance is None:
        from testhelix.prism.astfeatures import jaccard_distance

        distance = jaccard_distance
    pairs = list(itertools.combinations(features, 2))
    if not pairs:
        return 0.0
    return sum(distance(p, q) for p, q in pairs) / len(pairs)


def program_features(dirs: Iterable[Path]) -> list[frozenset[str]]:
    from testhelix.prism.astfeatures import ast_features

    return [ast_features(Path(d)) for d in dirs]


def addition_order(valid: Sequence[str], invalid: Sequence[str], schedule: Schedule, seed: int = 42) -> list[str]:
    """One realized order of added candidates (after the reference) for the diversity prefixes.

    Each label pool is shuffled with the given seed; the schedule then takes from the pools.
    """
    rng = random.Random(seed)
    v, i = list(valid), list(invalid)
    rng.shuffle(v)
    rng.shuffle(i)
    if schedule == "valid":
        return v
    if schedule == "invalid":
        return i
    order: list[str] = []
    for j in range(len(v) + len(i)):
        pool = i if j % 2 == 0 else v  # the reference is valid, so the alternation starts invalid
        if not pool:
            break
        order.append(pool.pop(0))
    return order


def prefix_diversity(reference: frozenset[str], added: Sequence[frozenset[str]]) -> list[float]:
    """Diversity of the nested prefixes reference + added[:j] for j = 0..len(added)."""
    return [panel_diversity([reference, *added[:j]]) for j in range(len(added) + 1)]


# ------------------------------------------------------------------------ expected joint score


@dataclass(frozen=True)
class SubsetRecord:
    """Counts of one (configuration, task) pair that the subset expectation needs."""

    F: bool
    n_valid: int  # available alternatives (reference excluded)
    correct_valid: int  # of those, accepted (pass)
    n_invalid: int
    correct_invalid: int  # of those, rejected (fail)

    def __post_init__(self) -> None:
        if not (0 <= self.correct_valid <= self.n_valid and 0 <= self.correct_invalid <= self.n_invalid):
            raise ValueError(f"correct counts must lie within the available counts: {self}")


def subset_record(outcomes: TaskOutcomes) -> SubsetRecord:
    """Counts from one task's `{program_id: (role, status)}`; missing and error are not correct."""
    roles = list(outcomes.values())
    return SubsetRecord(
        F=reference_transition(outcomes),
        n_valid=sum(r == "alternative" for r, _ in roles),
        correct_valid=sum(r == "alternative" and s == "pass" for r, s in roles),
        n_invalid=sum(r == "invalid" for r, _ in roles),
        correct_invalid=sum(r == "invalid" and s == "fail" for r, s in roles),
    )


def survival(correct: int, available: int, drawn: int) -> Fraction:
    """Chance that `drawn` candidates picked without replacement from `available` are all correct.

    Written with math.comb and Fraction so the expectation is exact (the hypergeometric pmf at
    "all drawn are correct", which scipy would only give in floating point).
    """
    if drawn > available:
        raise ValueError(f"cannot draw {drawn} of {available} candidates")
    return Fraction(math.comb(correct, drawn), math.comb(available, drawn))


def schedule_counts(schedule: Schedule, j: int) -> tuple[int, int]:
    if schedule == "valid":
        return j, 0
    if schedule == "invalid":
        return 0, j
    if schedule == "alternating":
        return j // 2, (j + 1) // 2
    raise ValueError(f"unknown schedule {schedule!r} (expected one of {SCHEDULES})")


def expected_joint(records: Sequence[SubsetRecord], a: int, b: int) -> float | None:
    """Expected Joint Success Function with `a` alternatives and `b` invalid candidates drawn."""
    if not records:
        return None
    total = sum(
        (survival(r.correct_valid, r.n_valid, a) * survival(r.correct_invalid, r.n_invalid, b) if r.F else Fraction(0))
        for r in records
    )
    return float(total / len(records))


def supplies(record: SubsetRecord, a: int, b: int) -> bool:
    """Whether the task's panel has `a` alternatives and `b` invalid candidates to draw."""
    return a <= record.n_valid and b <= record.n_invalid


def max_added(records: Sequence[SubsetRecord], schedule: Schedule) -> int:
    """Largest j for which every task can supply the schedule's draw."""
    j = 0
    while records and all(supplies(r, *schedule_counts(schedule, j + 1)) for r in records):
        j += 1
    return j


def largest_added(records: Sequence[SubsetRecord], schedule: Schedule) -> int:
    """Largest j for which at least one task can supply the schedule's draw."""
    j = 0
    while any(supplies(r, *schedule_counts(schedule, j + 1)) for r in records):
        j += 1
    return j


@dataclass(frozen=True)
class CurvePoint:
    schedule: Schedule
    k: int  # panel size, the reference included (the initial program is not counted)
    a: int
    b: int
    expected_joint: float
    tasks: int  # tasks averaged at this k: the ones whose panel can supply the draw
    all_tasks: int  # tasks of the curve; tasks < all_tasks only past the smallest panel


NO_PANEL = SubsetRecord(False, 0, 0, 0, 0)  # a task whose panel is unknown: it scores 0


def panel_curves(records: Sequence[SubsetRecord], schedules: Sequence[Schedule] = SCHEDULES,
                 unknown_panels: int = 0) -> list[CurvePoint]:
    """Expected joint score against panel size for each schedule (all averaged tasks weigh the same).

    `unknown_panels` tasks have no recorded panel (no outcome in any run label): they count as 0 at
    every k that every known panel supplies, as a task without a suite does, and are left out past
    it, where nothing says whether their panel would be large enough."""
    points = []
    for schedule in schedules:
        common = max_added(records, schedule)
        for j in range(largest_added(records, schedule) + 1):
            a, b = schedule_counts(schedule, j)
            able = [r for r in records if supplies(r, a, b)] + [NO_PANEL] * (unknown_panels if j <= common else 0)
            value = expected_joint(able, a, b)
            if value is not None:
                points.append(CurvePoint(schedule, 1 + j, a, b, value, len(able), len(records) + unknown_panels))
    return points


# -------------------------------------------------------------------------------- correlations


@dataclass(frozen=True)
class Correlation:
    x: str
    y: str
    n: int
    pearson_r: float | None
    pearson_p: float | None
    spearman_rho: float | None
    spearman_p: float | None


def correlate(x_name: str, y_name: str, xs: Sequence[float | None], ys: Sequence[float | None]) -> Correlation:
    """Pearson and Spearman (scipy.stats) over configurations where both values are defined.

    Fewer than three pairs, or a constant series, leave the coefficients undefined (None).
    """
    pairs = [(float(x), float(y)) for x, y in zip(xs, ys) if x is not None and y is not None]
    n = len(pairs)
    if n < 3 or len({p[0] for p in pairs}) < 2 or len({p[1] for p in pairs}) < 2:
        return Correlation(x_name, y_name, n, None, None, None, None)
    a, b = zip(*pairs)
    pr = stats.pearsonr(a, b)
    sr = stats.spearmanr(a, b)
    return Correlation(x_name, y_name, n, float(pr.statistic), float(pr.pvalue), float(sr.statistic), float(sr.pvalue))


def correlation_table(
    configs: Mapping[str, Mapping[str, float | None]], metric_pairs: Sequence[tuple[str, str]]
) -> list[Correlation]:
    """Correlations across configurations (one aggregate per configuration, equal weight)."""
    labels = sorted(configs)
    return [
        correlate(x, y, [configs[c].get(x) for c in labels], [configs[c].get(y) for c in labels])
        for x, y in metric_pairs
    ]
