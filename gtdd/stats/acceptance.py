"""Acceptance probability of a fixed candidate under a size-n audit (Propositions 4.1 and 4.2).

A candidate with K failures among N cases passes a zero-failure audit with probability
C(N-K, n) / C(N, n), and an audit that allows c failures with probability P(Hyp(N, K, n) <= c).
Both are nonincreasing in K, so every candidate above tolerance rho is accepted with probability at
most the value at K_rho = floor(rho N) + 1, written q_{N,rho}(n) (q^{(c)} when c failures are
allowed).
"""

from __future__ import annotations

import math
from fractions import Fraction

from gtdd.stats import hypergeom, params
from gtdd.stats.params import Method, Number

# Populations up to this size use exact big-integer arithmetic under method="auto"; larger ones use
# log space. bench/audit.py measures both methods from N = 500 to 50,000: the exact method stays
# within a small factor of log space up to here, while log space keeps N = 10,000,000 fast.
EXACT_POPULATION_LIMIT = 20_000


def resolve_method(method: Method, population: int) -> str:
    params.method(method)
    if method != "auto":
        return method
    return "exact" if population <= EXACT_POPULATION_LIMIT else "log"


def failure_threshold(population: int, tolerance: Number) -> int:
    """K_rho = floor(rho N) + 1: the fewest failures that put a candidate above tolerance."""
    n_cases = params.count(population, "population", 1)
    rho = params.open_unit(tolerance, "tolerance")
    return math.floor(rho * n_cases) + 1


def known_test_requirement(population: int, tolerance: Number) -> int:
    """N - floor(rho N): known tests needed so that passing them implies risk <= rho (eq. 12)."""
    return population - failure_threshold(population, tolerance) + 1


def _check_counts(population: int, failures: int, sample: int, failures_allowed: int) -> None:
    params.count(population, "population", 1)
    params.count(failures, "failures")
    params.count(sample, "sample")
    params.count(failures_allowed, "failures_allowed")
    params.at_most(failures, "failures", population, "population")
    params.at_most(sample, "sample", population, "population")


def exact_acceptance_probability(
    population: int, failures: int, sample: int, failures_allowed: int = 0
) -> Fraction:
    """P(at most c of the n sampled cases fail) as an exact fraction (equations 10 and 11)."""
    _check_counts(population, failures, sample, failures_allowed)
    return Fraction(*hypergeom.exact_lower_tail(population, failures, sample, failures_allowed))


def log_acceptance_probability(
    population: int, failures: int, sample: int, failures_allowed: int = 0
) -> float:
    """Natural log of the same probability computed in log space (-inf when it is zero)."""
    _check_counts(population, failures, sample, failures_allowed)
    return hypergeom.log_lower_tail(population, failures, sample, failures_allowed)


def acceptance_probability(
    population: int,
    failures: int,
    sample: int,
    failures_allowed: int = 0,
    method: Method = "auto",
) -> float:
    """The acceptance probability as a float, exact or log-space by population size."""
    _check_counts(population, failures, sample, failures_allowed)
    if resolve_method(method, population) == "exact":
        ratio = hypergeom.exact_lower_tail(population, failures, sample, failures_allowed)
        return hypergeom.ratio_float(ratio)
    return math.exp(hypergeom.log_lower_tail(population, failures, sample, failures_allowed))


def false_acceptance_bound(
    population: int,
    tolerance: Number,
    sample: int,
    failures_allowed: int = 0,
    method: Method = "auto",
) -> float:
    """q^{(c)}_{N,rho}(n): the largest acceptance probability of any candidate above tolerance."""
    k_rho = failure_threshold(population, tolerance)
    return acceptance_probability(population, k_rho, sample, failures_allowed, method)


def exact_false_acceptance_bound(
    population: int, tolerance: Number, sample: int, failures_allowed: int = 0
) -> Fraction:
    """q^{(c)}_{N,rho}(n) as an exact fraction."""
    k_rho = failure_threshold(population, tolerance)
    return exact_acceptance_probability(population, k_rho, sample, failures_allowed)
