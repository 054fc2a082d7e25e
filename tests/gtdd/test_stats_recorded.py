"""Audit outcomes on recorded trajectories under stopping at the first acceptance."""

from __future__ import annotations

import pytest

from gtdd.stats import exact_acceptance_probability, recorded_audit
from testhelix.core.errors import UserError


def test_two_candidate_trajectory_by_hand():
    # N = 20, rho = 0.1 -> K_rho = 3; candidate 1 is bad (K = 4), candidate 2 good (K = 1).
    p1 = exact_acceptance_probability(20, 4, 5)
    p2 = exact_acceptance_probability(20, 1, 5)
    result = recorded_audit([[4, 1]], 20, "0.1", 5)
    row = result.trajectories[0]
    assert row.false_acceptance == pytest.approx(float(p1))
    assert row.tolerable_acceptance == pytest.approx(float((1 - p1) * p2))
    assert row.no_acceptance == pytest.approx(float((1 - p1) * (1 - p2)))
    assert row.false_acceptance + row.tolerable_acceptance + row.no_acceptance == pytest.approx(1)


def test_totals_over_trajectories_and_methods_agree():
    counts = [[30, 12, 4], [50, 50], [0], [25, 26, 24]]
    exact = recorded_audit(counts, 500, "0.05", 54, method="exact")
    logged = recorded_audit(counts, 500, "0.05", 54, method="log")
    assert exact.candidates == 9 and exact.candidates_within_tolerance == 5
    assert exact.expected_false_acceptances == pytest.approx(
        logged.expected_false_acceptances, rel=1e-9
    )
    assert exact.expected_tolerable_acceptances == pytest.approx(
        logged.expected_tolerable_acceptances, rel=1e-9
    )
    assert exact.mean_no_acceptance == pytest.approx(logged.mean_no_acceptance, rel=1e-9)
    assert exact.trajectories[2].tolerable_acceptance == 1.0  # a perfect candidate always passes


def test_larger_audit_lowers_false_acceptances():
    counts = [[40, 30, 27, 26], [100, 60, 26, 3]]
    small = recorded_audit(counts, 500, "0.05", 54)
    large = recorded_audit(counts, 500, "0.05", 131)
    assert large.expected_false_acceptances < small.expected_false_acceptances


@pytest.mark.parametrize("counts", [[[501]], [[-1]], [[True]], []])
def test_bad_counts(counts):
    with pytest.raises(UserError):
        recorded_audit(counts, 500, "0.05", 54)
