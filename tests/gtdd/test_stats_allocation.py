"""Error allocations: one candidate, fixed horizon, family-wise and unbounded horizon."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gtdd.stats import allocation
from gtdd.stats.audit import audit_size_for
from testhelix.core.errors import UserError

ALPHA = Fraction(1, 20)


def test_fixed_horizon_allocations():
    assert allocation.one_candidate(ALPHA).per_audit() == ALPHA
    assert allocation.repository(ALPHA, 8, 4).per_audit(3) == ALPHA / 32
    fw = allocation.family_wise(ALPHA, 8, 4, 5)
    assert fw.per_audit(4) == ALPHA / 160 and fw.opportunities() == 160


def test_unbounded_horizon_spends_at_most_alpha():
    plan = allocation.unbounded(ALPHA, trajectories=8)
    assert plan.per_audit(1) == ALPHA / 16 and plan.per_audit(3) == ALPHA / 96
    spent = sum(plan.per_audit(t) for t in range(1, 200)) * 8
    assert spent == ALPHA * (1 - Fraction(1, 200)) and plan.opportunities() is None


def test_unbounded_sizes_grow_slowly_until_the_endpoint():
    plan = allocation.unbounded(ALPHA, trajectories=8)
    sizes = [audit_size_for(plan, 500, "0.05", round_index=t).exact_n for t in (1, 10, 100, 10**6)]
    assert sizes == sorted(sizes)
    assert sizes[-1] <= 500 - 26 + 1


def test_round_past_the_horizon_is_an_error():
    with pytest.raises(ValueError):
        allocation.repository(ALPHA, 8, 4).per_audit(5)


@pytest.mark.parametrize("alpha", [0, 1, "1.2", -0.1])
def test_alpha_outside_unit_interval(alpha):
    with pytest.raises(UserError, match="alpha"):
        allocation.one_candidate(alpha)
