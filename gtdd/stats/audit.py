"""Audit sizes for an error allocation (Corollaries 4.11 and 4.13, Theorems 4.10-4.14).

The smallest exact size is the least n with q^{(c)}_{N,rho}(n) <= epsilon. q is nonincreasing in n
(one more draw can only add failures to the sample) and reaches zero at the finite-population
endpoint n = N - K_rho + c + 1, so a doubling search followed by bisection finds it with about
2 log2(n) evaluations, none of them larger than 2n.

The exponential sufficient size (zero-failure audits only) is the least n with
(1 - rho)^n <= epsilon, i.e. n >= log(1/epsilon) / log(1/(1 - rho)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from gtdd.stats import hypergeom, params
from gtdd.stats.acceptance import failure_threshold, resolve_method
from gtdd.stats.allocation import ErrorAllocation
from gtdd.stats.params import Method, Number
from testhelix.core.errors import UserError

# In log space a comparison closer than this (in log units) is settled with exact integers, so
# both methods return the same size; beyond EXACT_CHECK_BITS the exact check is skipped as too slow.
LOG_GUARD = 1e-9
EXACT_CHECK_BITS = 4_000_000


@dataclass(frozen=True)
class AuditSize:
    exact_n: int
    exponential_n: int | None  # None when failures are allowed (no exponential formula)
    q: float  # q^{(c)}_{N,rho}(exact_n)
    allocation: Fraction
    failure_threshold: int  # K_rho
    method: str  # "exact" or "log"


def _first_true(holds: Callable[[int], bool], endpoint: int) -> int:
    """Least n in [0, endpoint] with holds(n), for monotone `holds` and holds(endpoint) true."""
    if holds(0):
        return 0
    lo, hi = 0, 1
    while hi < endpoint and not holds(hi):
        lo, hi = hi, min(2 * hi, endpoint)
    hi = min(hi, endpoint)
    while hi - lo > 1:  # invariant: holds(lo) false, holds(hi) true
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _exact_affordable(population: int, failures: int, sample: int) -> bool:
    return min(sample, failures) * population.bit_length() <= EXACT_CHECK_BITS


def smallest_exact_size(
    population: int, failures: int, allowed: int, epsilon: Fraction, method: str
) -> tuple[int, float]:
    """Least n with P(Hyp(N, K, n) <= c) <= epsilon, and that probability; no input checks."""
    endpoint = population - failures + allowed + 1
    eps_num, eps_den = epsilon.numerator, epsilon.denominator

    def exact_holds(n: int) -> bool:
        ratio = hypergeom.exact_lower_tail(population, failures, n, allowed)
        return hypergeom.ratio_le(ratio, eps_num, eps_den)

    log_eps = params.log_of(epsilon)

    def log_holds(n: int) -> bool:
        margin = hypergeom.log_lower_tail(population, failures, n, allowed) - log_eps
        if abs(margin) <= LOG_GUARD * max(1.0, abs(log_eps)) and _exact_affordable(
            population, failures, n
        ):
            return exact_holds(n)
        return margin <= 0

    n = _first_true(exact_holds if method == "exact" else log_holds, endpoint)
    if method == "exact":
        q = hypergeom.ratio_float(hypergeom.exact_lower_tail(population, failures, n, allowed))
    else:
        q = math.exp(hypergeom.log_lower_tail(population, failures, n, allowed))
    return n, q


def smallest_power(base: Fraction, bound: Fraction) -> int:
    """Least n >= 0 with base**n <= bound, for 0 < base < 1 and bound > 0."""
    if bound >= 1:
        return 0
    estimate = math.ceil(params.log_of(bound) / params.log_of(base))
    # The float quotient can land a hair above an exact integer; check the neighbours exactly
    # when the powers are small enough to build.
    for n in (estimate - 1, estimate):
        if n >= 0 and n * base.denominator.bit_length() <= EXACT_CHECK_BITS:
            if base**n <= bound:
                return n
    return estimate


def exponential_audit_size(tolerance: Number, error: Number) -> int:
    """Least n with (1 - rho)^n <= epsilon (equation 18 with epsilon = alpha / (M T J))."""
    rho = params.open_unit(tolerance, "tolerance")
    eps = params.positive_probability(error, "error")
    return smallest_power(1 - rho, eps)


def exact_audit_size(
    population: int,
    tolerance: Number,
    error: Number,
    failures_allowed: int = 0,
    method: Method = "auto",
) -> int:
    """Smallest n whose audit accepts any candidate above tolerance with probability <= error."""
    return audit_size(population, tolerance, error, failures_allowed, method).exact_n


def audit_size(
    population: int,
    tolerance: Number,
    error: Number,
    failures_allowed: int = 0,
    method: Method = "auto",
) -> AuditSize:
    """Exact and exponential sizes for one audit with allocation `error` (an epsilon in (0, 1])."""
    k_rho = failure_threshold(population, tolerance)
    eps = params.positive_probability(error, "error")
    params.count(failures_allowed, "failures_allowed")
    if failures_allowed >= k_rho:
        raise UserError(
            f"failures-allowed ({failures_allowed}) must be below K_rho = {k_rho}: "
            "otherwise even a full census accepts a candidate just above tolerance"
        )
    chosen = resolve_method(method, population)
    n, q = smallest_exact_size(population, k_rho, failures_allowed, eps, chosen)
    expo = exponential_audit_size(tolerance, eps) if failures_allowed == 0 else None
    return AuditSize(n, expo, q, eps, k_rho, chosen)


def audit_size_for(
    allocation: ErrorAllocation,
    population: int,
    tolerance: Number,
    round_index: int = 1,
    failures_allowed: int = 0,
    method: Method = "auto",
) -> AuditSize:
    """Audit size for one family audit in round `round_index` under an error allocation."""
    eps = allocation.per_audit(round_index)
    return audit_size(population, tolerance, eps, failures_allowed, method)
