"""The adaptive probing construction against a hidden test set (Theorem 4.6, Corollary 4.7, eq. 23).

With r = T - 1 disjoint regions of m cases, the candidate of round s <= r fails exactly on region s,
so feedback (at most k unreported failing cases) names every sampled case of that region whenever
there are at most k of them. The round-T candidate fails on the unreported rest of the regions; it
passes the hidden set and is above tolerance when at least K_rho such cases remain.

* union lower bound: max(0, 1 - r P(Hyp(N, m, n) > k)), valid when r m <= N and r (m - k) > rho N;
* exact success (23): (1 / C(N, n)) sum_h c_h C(N - r m, n - h) [r m - h >= K_rho], where c_h is
  the coefficient of x^h in (sum_{i<=k} C(m, i) x^i)^r.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from gtdd.stats import hypergeom, params
from gtdd.stats.acceptance import failure_threshold, resolve_method
from gtdd.stats.params import Method, Number
from testhelix.core.errors import UserError


@dataclass(frozen=True)
class ProbeResult:
    union_lower_bound: float
    exact_success: float
    risk_condition: bool  # r (m - k) > rho N; the union bound is 0 (vacuous) when it fails


def occupancy_counts(region: int, report_limit: int, regions: int) -> list[int]:
    """c_h: ways to pick h sampled cases over `regions` regions with at most k in each."""
    one = [math.comb(region, i) for i in range(min(report_limit, region) + 1)]
    coeffs = [1]
    for _ in range(regions):  # plain convolution: the coefficients are exact big integers
        nxt = [0] * (len(coeffs) + len(one) - 1)
        for a, ca in enumerate(coeffs):
            for b, cb in enumerate(one):
                nxt[a + b] += ca * cb
        coeffs = nxt
    return coeffs


def probe_success(
    population: int,
    sample: int,
    region: int,
    report_limit: int,
    rounds: int,
    tolerance: Number,
    method: Method = "auto",
) -> ProbeResult:
    params.count(population, "population", 1)
    params.count(sample, "sample")
    params.at_most(sample, "sample", population, "population")
    params.count(region, "region", 1)
    params.count(report_limit, "report_limit")
    params.count(rounds, "rounds", 2)
    k_rho = failure_threshold(population, tolerance)
    rho = params.open_unit(tolerance, "tolerance")
    regions = rounds - 1
    probed = regions * region
    if probed > population:
        raise UserError(
            f"region ({region}) is too large: {regions} disjoint regions need {probed} cases, "
            f"more than the population ({population})"
        )
    coeffs = occupancy_counts(region, report_limit, regions)
    risky = regions * (region - report_limit) > rho * population
    if resolve_method(method, population) == "exact":
        hit_num, hit_den = hypergeom.exact_lower_tail(population, region, sample, report_limit)
        above = 1 - Fraction(hit_num, hit_den)  # p(m) = P(Hyp(N, m, n) > k)
        union = float(max(Fraction(0), 1 - regions * above)) if risky else 0.0
        total = sum(
            coeffs[h] * math.comb(population - probed, sample - h)
            for h in range(min(len(coeffs) - 1, sample) + 1)
            if probed - h >= k_rho
        )
        success = total / math.comb(population, sample)
    else:
        above_f = -math.expm1(hypergeom.log_lower_tail(population, region, sample, report_limit))
        union = max(0.0, 1.0 - regions * above_f) if risky else 0.0
        success = _log_space_success(population, sample, probed, coeffs, k_rho)
    return ProbeResult(union, float(success), risky)


def _log_space_success(
    population: int, sample: int, probed: int, coeffs: list[int], k_rho: int
) -> float:
    # c_h C(N - rm, n - h) / C(N, n) = (c_h / C(rm, h)) P(Hyp(N, rm, n) = h),
    # and the weight c_h / C(rm, h) lies in [0, 1].
    h_lo, logs = hypergeom.log_pmf_table(population, probed, sample, len(coeffs) - 1)
    total = 0.0
    for offset, log_p in enumerate(logs):
        h = h_lo + offset
        if probed - h >= k_rho:
            weight = Fraction(coeffs[h], math.comb(probed, h))
            total += float(weight) * math.exp(log_p)
    return min(1.0, total)


def probe_size_limit(population: int, report_limit: int, rounds: int, tolerance: Number) -> float:
    """n* = (2 rho / (r k) + 2 / N)^{-1} of equation (15), for m = floor(k N / (2 n))."""
    params.count(population, "population", 1)
    params.count(report_limit, "report_limit", 1)
    params.count(rounds, "rounds", 2)
    rho = params.open_unit(tolerance, "tolerance")
    inverse = 2 * rho / ((rounds - 1) * report_limit) + Fraction(2, population)
    return float(1 / inverse)


def probe_region_for(population: int, sample: int, report_limit: int) -> int:
    """Corollary 4.7's probe size m = floor(k N / (2 n)), whose expected sampled count is <= k/2."""
    return (report_limit * population) // (2 * sample)


def probe_rounding_limit(population: int, report_limit: int, rounds: int, tolerance: Number) -> int:
    """Largest n for which m = floor(k N / (2 n)) still meets r (m - k) > rho N (0 if none)."""
    rho = params.open_unit(tolerance, "tolerance")
    regions = rounds - 1
    n = math.ceil(probe_size_limit(population, report_limit, rounds, tolerance))
    # Rounding m down only shrinks the regions, so the integer limit sits at or below n*.
    while n >= 1:
        region = probe_region_for(population, n, report_limit)
        if regions * (region - report_limit) > rho * population:
            return n
        n -= 1
    return 0

