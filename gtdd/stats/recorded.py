"""What an audit rule would have done to recorded trajectories (the case study's audit analysis).

Each recorded candidate's failure count K on the population fixes exactly the chance a fresh size-n
audit accepts it (Proposition 4.2). With an independent audit each round and stopping at the first
acceptance, trajectory candidate t is accepted with probability p_t prod_{s<t} (1 - p_s). Summing
those over candidates above tolerance (K >= K_rho) gives the expected false acceptances, over the
rest the expected acceptances within tolerance, and prod_t (1 - p_t) is the chance of no acceptance.
This assumes the audit only decides whether a trajectory stops, not which candidates it produces.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeAlias

from gtdd.stats import hypergeom, params
from gtdd.stats.acceptance import failure_threshold, resolve_method
from gtdd.stats.params import Method, Number
from testhelix.core.errors import UserError

Prob: TypeAlias = Fraction | float


@dataclass(frozen=True)
class TrajectoryAudit:
    acceptance: tuple[float, ...]  # p_t: acceptance probability of each candidate on its own
    false_acceptance: float  # probability the trajectory stops at a candidate above tolerance
    tolerable_acceptance: float  # probability it stops at a candidate within tolerance
    no_acceptance: float  # probability no candidate is accepted


@dataclass(frozen=True)
class RecordedAudit:
    trajectories: tuple[TrajectoryAudit, ...]
    expected_false_acceptances: float
    expected_tolerable_acceptances: float
    mean_no_acceptance: float
    candidates: int
    candidates_within_tolerance: int


def recorded_audit(
    failure_counts: Sequence[Sequence[int]],
    population: int,
    tolerance: Number,
    sample: int,
    failures_allowed: int = 0,
    method: Method = "auto",
) -> RecordedAudit:
    """Audit outcomes for trajectories given as lists of per-candidate failure counts."""
    k_rho = failure_threshold(population, tolerance)
    params.count(sample, "sample")
    params.at_most(sample, "sample", population, "population")
    params.count(failures_allowed, "failures_allowed")
    if not failure_counts:
        raise UserError("failure counts: at least one trajectory is needed")
    exact = resolve_method(method, population) == "exact"
    cache: dict[int, Prob] = {}

    def accept(k: int) -> Prob:
        if k not in cache:
            if exact:
                ratio = hypergeom.exact_lower_tail(population, k, sample, failures_allowed)
                cache[k] = Fraction(*ratio)
            else:
                log_p = hypergeom.log_lower_tail(population, k, sample, failures_allowed)
                cache[k] = math.exp(log_p)
        return cache[k]

    rows = []
    candidates = within = 0
    for a, counts in enumerate(failure_counts):
        reach: Prob = Fraction(1) if exact else 1.0  # probability no earlier candidate was accepted
        bad: Prob = 0
        good: Prob = 0
        probs = []
        for t, k in enumerate(counts):
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= population:
                raise UserError(
                    f"failure counts[{a}][{t}] must be a whole number in [0, {population}], "
                    f"got {k!r}"
                )
            p = accept(k)
            probs.append(float(p))
            candidates += 1
            if k >= k_rho:
                bad += reach * p
            else:
                within += 1
                good += reach * p
            reach *= 1 - p
        rows.append(TrajectoryAudit(tuple(probs), float(bad), float(good), float(reach)))
    return RecordedAudit(
        trajectories=tuple(rows),
        expected_false_acceptances=sum(r.false_acceptance for r in rows),
        expected_tolerable_acceptances=sum(r.tolerable_acceptance for r in rows),
        mean_no_acceptance=sum(r.no_acceptance for r in rows) / len(rows),
        candidates=candidates,
        candidates_within_tolerance=within,
    )
