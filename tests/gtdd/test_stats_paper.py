"""The GTDD paper's published numbers, recomputed (Sections 4-5, Tables 1-4, the case study)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gtdd.stats import (
    allocation,
    exact_acceptance_probability,
    exact_false_acceptance_bound,
    failure_threshold,
    history_bound,
    known_test_requirement,
    probe_size_limit,
    probe_success,
    uniform_generation_bound,
)
from gtdd.stats.audit import audit_size, audit_size_for
from gtdd.stats.probing import probe_rounding_limit
from gtdd.stats.tables import render, seed_tables

N, RHO, ALPHA = 500, "0.05", Fraction(1, 20)


@pytest.mark.parametrize("method", ["exact", "log"])
@pytest.mark.parametrize(
    ("divisor", "exact_n", "exponential_n", "q"),
    [(1, 54, 59, "0.0472088"), (32, 108, 126, "0.00148353"), (160, 131, 158, "0.000291773")],
)
def test_table2_sizes(method, divisor, exact_n, exponential_n, q):
    size = audit_size(N, RHO, ALPHA / divisor, method=method)
    assert (size.exact_n, size.exponential_n) == (exact_n, exponential_n)
    assert f"{size.q:.6g}" == q


def test_family_size_is_smallest():
    # q(131) ~ 0.000291773 <= 0.05/160 while q(130) ~ 0.000313825 is not.
    assert exact_false_acceptance_bound(N, RHO, 131) <= ALPHA / 160
    above = exact_false_acceptance_bound(N, RHO, 130)
    assert above > ALPHA / 160 and f"{float(above):.6g}" == "0.000313825"


def test_threshold_and_known_tests():
    assert failure_threshold(N, RHO) == 26
    assert known_test_requirement(N, RHO) == 475


def test_history_bound_sizes():
    with_bit = history_bound(N, RHO, ALPHA, rounds=4, report_limit=6)
    without = history_bound(N, RHO, ALPHA, rounds=4, report_limit=6, accept_bit=False)
    assert (with_bit.exact_n, with_bit.exponential_n) == (474, 2308)
    assert (without.exact_n, without.exponential_n) == (473, 2267)


def test_probe_size_limit_and_rounding():
    assert probe_size_limit(N, 6, 4, RHO) == pytest.approx(104.65, abs=0.005)
    assert probe_rounding_limit(N, 6, 4, RHO) == 100


@pytest.mark.parametrize("method", ["exact", "log"])
@pytest.mark.parametrize(
    ("n", "union", "exact"),
    [(54, "0.9989", "0.9989"), (100, "0.9504", "0.9511"), (104, "0.9385", "0.9395"),
     (108, "0.9245", "0.9260"), (131, "0.7963", "0.8082"), (158, "0.5199", "0.5876"),
     (200, "0.0000", "0.2195")],
)
def test_table3_probe(method, n, union, exact):
    r = probe_success(N, n, region=15, report_limit=6, rounds=4, tolerance=RHO, method=method)
    assert (f"{r.union_lower_bound:.4f}", f"{r.exact_success:.4f}") == (union, exact)


TABLE4 = {
    0: ("1.000000", "1.000000", "1.000000"),
    1: ("0.892000", "0.784000", "0.738000"),
    5: ("0.563334", "0.294558", "0.217358"),
    10: ("0.315393", "0.085553", "0.046396"),
    25: ("0.053264", "0.001920", "0.000403"),
    26: ("0.047209", "0.001484", "0.000292"),
}


@pytest.mark.parametrize("failures", sorted(TABLE4))
def test_table4_pass_probabilities(failures):
    probs = [exact_acceptance_probability(N, failures, n) for n in (54, 108, 131)]
    got = tuple(f"{float(p):.6f}" for p in probs)
    assert got == TABLE4[failures]


def test_audit_allowing_four_failures():
    # Joint repository acceptance at 0.05/32: 108 cases with zero failures, 221 with c = 4.
    plan = allocation.repository(ALPHA, trajectories=8, rounds=4)
    assert audit_size_for(plan, N, RHO).exact_n == 108
    assert audit_size_for(plan, N, RHO, failures_allowed=4).exact_n == 221
    assert audit_size(N, RHO, ALPHA / 32, 4, method="log").exact_n == 221
    assert round(float(exact_acceptance_probability(N, 5, 108)), 3) == 0.295
    assert round(float(exact_acceptance_probability(N, 5, 221, 4)), 3) == 0.984


def test_case_study_audits():
    # 2,000 evaluation traces, rho = 0.05: alpha over 4 rounds needs 83 cases, over 600 needs 174.
    assert audit_size(2000, RHO, ALPHA / 4).exact_n == 83
    assert audit_size(2000, RHO, ALPHA / 600).exact_n == 174


def test_uniform_generation_batch_of_twelve():
    bound = uniform_generation_bound(N, RHO, batch=12, rounds=4)
    assert round(bound.per_round, 3) == 0.523
    assert bound.over_rounds == 1.0


def test_tables_render_the_published_rows():
    text = render(seed_tables())
    for line in [
        "One candidate              54       59             0.0472088",
        "Repository over 32 rounds  108      126            0.00148353",
        "160 family conclusions     131      158            0.000291773",
        "200                     0.0000             0.2195",
        "26        0.052  0.047209      0.001484       0.000292",
        "Known fixed tests   n >= N - floor(rho N)",
    ]:
        assert line in text
    assert "474 (473 without the acceptance bit)" in text
