"""The within-candidate supermartingale W_r and the across-candidate e-process Z_t."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gtdd.stats import CandidateSequenceEProcess, CandidateSupermartingale
from gtdd.stats.acceptance import exact_false_acceptance_bound, failure_threshold
from gtdd.stats.audit import audit_size
from testhelix.core.errors import UserError


@pytest.mark.parametrize("method", ["exact", "log"])
@pytest.mark.parametrize("epsilon", [Fraction(1, 20), Fraction(1, 640), Fraction(1, 3200)])
def test_all_passing_draws_cross_at_the_fixed_audit_size(method, epsilon):
    w = CandidateSupermartingale(500, "0.05", epsilon, method=method)
    size = audit_size(500, "0.05", epsilon).exact_n
    crossings = [w.observe(failed=False) for _ in range(size)]
    assert crossings[-1] and not any(crossings[:-1])
    assert w.crossed_at == size
    assert w.value >= 1 / epsilon


def test_a_failure_stops_the_process_for_good():
    w = CandidateSupermartingale(500, "0.05", "0.05")
    w.observe(False)
    w.observe(True)
    assert w.value == 0.0
    for _ in range(100):
        assert not w.observe(False)
    assert not w.crossed


def test_endpoint_proves_within_tolerance():
    w = CandidateSupermartingale(30, "0.1", Fraction(1, 10**12))
    endpoint = 30 - failure_threshold(30, "0.1") + 1
    assert w.endpoint == endpoint == 27
    for _ in range(endpoint - 1):
        w.observe(False)
    assert not w.within_tolerance_proven and not w.crossed
    w.observe(False)
    assert w.within_tolerance_proven and w.crossed and w.value == math.inf


def test_cannot_draw_more_than_the_population():
    w = CandidateSupermartingale(3, "0.5", "0.5")
    for _ in range(3):
        w.observe(True)
    with pytest.raises(UserError):
        w.observe(False)


@given(st.integers(2, 200), st.fractions(Fraction(1, 100), Fraction(99, 100)), st.data())
def test_supermartingale_under_the_null(population, rho, data):
    # E[W_{r+1} | r failure-free draws] <= W_r for every candidate with K >= K_rho failures.
    k_rho = failure_threshold(population, rho)
    failures = data.draw(st.integers(k_rho, population))
    r = data.draw(st.integers(0, population - k_rho - 1)) if population - k_rho >= 1 else 0
    if r >= population - k_rho:
        return
    q_r = exact_false_acceptance_bound(population, rho, r)
    q_next = exact_false_acceptance_bound(population, rho, r + 1)
    pass_next = Fraction(max(population - failures - r, 0), population - r)
    assert pass_next / q_next <= 1 / q_r


def test_eprocess_paper_example_crosses_on_a_bad_candidate():
    # Conservative factors (1 - rho)^-n, threshold 800 (alpha = 1/800).
    z = CandidateSequenceEProcess(Fraction(1, 800))
    for _ in range(130):  # earlier correct candidates, one failure-free draw each
        assert not z.observe(True, Fraction(19, 20))
    assert z.value == pytest.approx(786.92, abs=0.005)
    assert z.observe(True, Fraction(19, 20))  # a bad candidate (26 of 500 failing) passes once
    assert z.value == pytest.approx(828.34, abs=0.005)
    assert z.crossed_at == 131


def test_eprocess_with_exact_factors_and_a_failed_audit():
    alpha = Fraction(1, 20)
    q = exact_false_acceptance_bound(500, "0.05", 54)
    z = CandidateSequenceEProcess(alpha)
    assert not z.observe(False, q)
    assert z.value == 0.0
    assert not z.observe(True, q)  # a zero factor cannot be undone
    fresh = CandidateSequenceEProcess(alpha)
    assert fresh.observe(True, q)  # one pass at q(54) <= alpha crosses 1/alpha


def test_eprocess_rejects_a_bound_outside_unit_interval():
    with pytest.raises(UserError, match="null-pass-bound"):
        CandidateSequenceEProcess("0.05").observe(True, 0)
