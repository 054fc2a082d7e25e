"""Properties of the acceptance probabilities and audit sizes, checked with hypothesis."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gtdd.stats import hypergeom
from gtdd.stats.acceptance import (
    exact_acceptance_probability,
    exact_false_acceptance_bound,
    failure_threshold,
    log_acceptance_probability,
)
from gtdd.stats.audit import audit_size, exponential_audit_size


@st.composite
def population_case(draw, max_population=400):
    """(N, K, n, c) with 0 <= K, n <= N."""
    population = draw(st.integers(1, max_population))
    failures = draw(st.integers(0, population))
    sample = draw(st.integers(0, population))
    allowed = draw(st.integers(0, 6))
    return population, failures, sample, allowed


tolerances = st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(999, 1000))


@given(population_case())
def test_nonincreasing_in_failures(case):
    population, failures, sample, allowed = case
    if failures < population:
        here = exact_acceptance_probability(population, failures, sample, allowed)
        more = exact_acceptance_probability(population, failures + 1, sample, allowed)
        assert more <= here


@given(population_case())
def test_nonincreasing_in_sample(case):
    population, failures, sample, allowed = case
    if sample < population:
        here = exact_acceptance_probability(population, failures, sample, allowed)
        assert exact_acceptance_probability(population, failures, sample + 1, allowed) <= here


@given(st.integers(1, 400), tolerances, st.data())
def test_q_below_exponential_bound(population, rho, data):
    sample = data.draw(st.integers(0, population))
    assert exact_false_acceptance_bound(population, rho, sample) <= (1 - rho) ** sample


@given(st.integers(1, 400), tolerances, st.integers(0, 3))
def test_finite_population_endpoint(population, rho, allowed):
    k_rho = failure_threshold(population, rho)
    endpoint = population - k_rho + allowed + 1
    if endpoint <= population:  # otherwise no sample can exclude K_rho failures
        assert exact_false_acceptance_bound(population, rho, endpoint, allowed) == 0
        assert exact_false_acceptance_bound(population, rho, endpoint - 1, allowed) > 0


@given(population_case(max_population=3000))
def test_log_space_agrees_with_exact(case):
    population, failures, sample, allowed = case
    exact = exact_acceptance_probability(population, failures, sample, allowed)
    logged = log_acceptance_probability(population, failures, sample, allowed)
    if exact == 0:
        assert logged == -math.inf
    elif exact > Fraction(1, 10**250):  # comparable in double precision
        assert math.exp(logged) == pytest.approx(float(exact), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(10**6, 10**8), st.integers(1, 2000), st.integers(0, 3), st.data())
def test_log_space_agrees_with_exact_for_large_populations(population, sample, allowed, data):
    failures = data.draw(st.integers(0, 10**6))
    exact = Fraction(*hypergeom.exact_lower_tail(population, failures, sample, allowed))
    logged = hypergeom.log_lower_tail(population, failures, sample, allowed)
    if exact > Fraction(1, 10**250):
        assert math.exp(logged) == pytest.approx(float(exact), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 3000),
    tolerances,
    st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(99, 100)),
    st.integers(0, 3),
)
def test_audit_size_is_smallest_and_methods_agree(population, rho, eps, allowed):
    if allowed >= failure_threshold(population, rho):
        return
    size = audit_size(population, rho, eps, allowed, method="exact")
    assert audit_size(population, rho, eps, allowed, method="log").exact_n == size.exact_n
    n = size.exact_n
    assert exact_false_acceptance_bound(population, rho, n, allowed) <= eps
    if n > 0:
        assert exact_false_acceptance_bound(population, rho, n - 1, allowed) > eps
    assert n <= population - failure_threshold(population, rho) + allowed + 1
    if allowed == 0:
        expo = exponential_audit_size(rho, eps)
        assert size.exponential_n == expo
        assert (1 - rho) ** expo <= eps and (expo == 0 or (1 - rho) ** (expo - 1) > eps)
        assert n <= expo


def test_float_tolerance_means_its_decimal():
    # 0.07 * 100 is 7.000000000000001 in binary floating point; K_rho must still be 8.
    assert failure_threshold(100, 0.07) == 8
    assert failure_threshold(100, "7/100") == 8


@pytest.mark.parametrize("population", [500, 30_000, 10_000_000])
def test_allocation_equal_to_q_is_met_exactly(population):
    # At epsilon = q(n) exactly the answer is n; log space alone cannot see equality, so the
    # boundary check must settle it with integers.
    eps = exact_false_acceptance_bound(population, "0.05", 100)
    for method in ("exact", "log"):
        assert audit_size(population, "0.05", eps, method=method).exact_n == 100


def test_exponential_size_at_an_exact_power():
    assert exponential_audit_size("0.5", Fraction(1, 8)) == 3
    assert exponential_audit_size("0.5", Fraction(1, 8) - Fraction(1, 10**9)) == 4
