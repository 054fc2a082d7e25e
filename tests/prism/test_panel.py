"""Panel analysis: diversity, exact subset expectation by hand, schedules, correlations."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testhelix.prism import panel
from testhelix.prism.metrics import split_metrics
from testhelix.prism.panel import SubsetRecord


def jac(a, b):
    return 1 - len(a & b) / len(a | b) if a | b else 0.0


def test_diversity_is_mean_pairwise_distance():
    a, b, c = frozenset("xy"), frozenset("yz"), frozenset("xy")
    # d(a,b)=2/3, d(a,c)=0, d(b,c)=2/3 -> mean 4/9
    assert panel.panel_diversity([a, b, c], jac) == pytest.approx(4 / 9)
    assert panel.panel_diversity([a], jac) == 0.0
    assert panel.panel_diversity([], jac) == 0.0


def test_diversity_with_the_pack_helpers_ast_features(tmp_path):
    for name, body in {"p": "def f(x):\n    return x + 1\n", "q": "def f(x):\n    while x:\n        x -= 1\n"}.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "m.py").write_text(body)
    feats = panel.program_features([tmp_path / "p", tmp_path / "q", tmp_path / "p"])
    d = panel.panel_diversity(feats)
    assert 0 < d < 1
    assert feats[0] == feats[2]


def test_addition_order_schedules():
    valid, invalid = ["v1", "v2", "v3"], ["i1", "i2"]
    assert sorted(panel.addition_order(valid, invalid, "valid")) == valid
    assert sorted(panel.addition_order(valid, invalid, "invalid")) == invalid
    alt = panel.addition_order(valid, invalid, "alternating")
    assert [x[0] for x in alt] == ["i", "v", "i", "v"]  # stops when the invalid pool runs dry
    assert panel.addition_order(valid, invalid, "valid", seed=42) == panel.addition_order(valid, invalid, "valid", seed=42)
    assert len(panel.prefix_diversity(frozenset("a"), [frozenset("b"), frozenset("a")])) == 3


def test_survival_by_hand():
    assert panel.survival(3, 4, 2) == Fraction(3, 6)  # C(3,2)/C(4,2)
    assert panel.survival(0, 4, 0) == 1  # the empty draw always survives
    assert panel.survival(1, 4, 2) == 0
    with pytest.raises(ValueError):
        panel.survival(1, 2, 3)


def test_expected_joint_by_hand():
    recs = [
        SubsetRecord(F=True, n_valid=4, correct_valid=3, n_invalid=5, correct_invalid=4),
        SubsetRecord(F=True, n_valid=4, correct_valid=4, n_invalid=5, correct_invalid=5),
        SubsetRecord(F=False, n_valid=4, correct_valid=4, n_invalid=5, correct_invalid=5),
    ]
    # a=1, b=1: (3/4 * 4/5 + 1 + 0) / 3 = 1.6 / 3
    assert panel.expected_joint(recs, 1, 1) == pytest.approx(1.6 / 3)
    # k=1 equals the mean F; the full pool equals the joint success indicator mean
    assert panel.expected_joint(recs, 0, 0) == pytest.approx(2 / 3)
    assert panel.expected_joint(recs, 4, 5) == pytest.approx(1 / 3)
    assert panel.expected_joint([], 0, 0) is None


def test_curves_follow_the_schedules_to_the_largest_panel_with_the_tasks_counted():
    recs = [SubsetRecord(True, 4, 3, 5, 4), SubsetRecord(True, 3, 3, 5, 5)]
    pts = panel.panel_curves(recs)
    by = {s: [p for p in pts if p.schedule == s] for s in panel.SCHEDULES}
    # the second task has 3 alternatives: k = 5 on the valid schedule averages the first task alone
    assert [(p.k, p.a, p.b, p.tasks) for p in by["valid"]] == [(1, 0, 0, 2), (2, 1, 0, 2), (3, 2, 0, 2),
                                                               (4, 3, 0, 2), (5, 4, 0, 1)]
    assert all(p.all_tasks == 2 for p in pts)
    assert by["valid"][-1].expected_joint == pytest.approx(0.0)  # 3 of 4 alternatives pass: C(3,4) = 0
    assert [p.k for p in by["invalid"]] == list(range(1, 7)) and all(p.tasks == 2 for p in by["invalid"])
    assert [(p.a, p.b) for p in by["alternating"]] == [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2), (2, 3), (3, 3), (3, 4),
                                                       (4, 4), (4, 5)]
    assert [p.tasks for p in by["alternating"]] == [2] * 8 + [1, 1]
    # reference + 1 invalid: (1 * 4/5 + 1 * 1) / 2
    assert by["alternating"][1].expected_joint == pytest.approx(0.9)
    # the first task alone at (4, 4): its 3 correct alternatives cannot fill 4 draws
    assert by["alternating"][8].expected_joint == 0.0
    assert panel.max_added(recs, "valid") == 3 and panel.largest_added(recs, "valid") == 4


def test_a_point_past_the_smallest_panel_averages_only_the_tasks_that_supply_it():
    small, large = SubsetRecord(True, 1, 1, 1, 1), SubsetRecord(True, 3, 3, 1, 1)
    pts = [p for p in panel.panel_curves([small, large], ["valid"], unknown_panels=1)]
    # up to the smallest panel the unknown one counts as 0 among all three tasks; past it, it is left out
    assert [(p.k, p.tasks, p.all_tasks) for p in pts] == [(1, 3, 3), (2, 3, 3), (3, 1, 3), (4, 1, 3)]
    assert [p.expected_joint for p in pts] == pytest.approx([2 / 3, 2 / 3, 1.0, 1.0])


def test_subset_record_counts_missing_and_error_as_wrong():
    rec = panel.subset_record(
        {
            "initial": ("initial", "fail"),
            "reference": ("reference", "pass"),
            "a1": ("alternative", "pass"),
            "a2": ("alternative", "missing"),
            "i1": ("invalid", "fail"),
            "i2": ("invalid", "error"),
        }
    )
    assert rec == SubsetRecord(True, 2, 1, 2, 1)
    with pytest.raises(ValueError):
        SubsetRecord(True, 1, 2, 0, 0)


status = st.sampled_from(["pass", "fail", "error", "missing"])


def task_outcomes(draw_alts, draw_invs, init, ref):
    rec = {"initial": ("initial", init), "reference": ("reference", ref)}
    rec.update({f"a{i}": ("alternative", s) for i, s in enumerate(draw_alts)})
    rec.update({f"i{i}": ("invalid", s) for i, s in enumerate(draw_invs)})
    return rec


tasks_st = st.lists(
    st.builds(task_outcomes, st.lists(status, min_size=3, max_size=3), st.lists(status, min_size=3, max_size=3), status, status),
    min_size=1,
    max_size=6,
)


@settings(max_examples=100, deadline=None)
@given(tasks_st)
def test_curve_is_nonincreasing_and_spans_reference_acceptance_to_joint_success(tasks):
    recs = [panel.subset_record(t) for t in tasks]
    m = split_metrics({str(i): t for i, t in enumerate(tasks)})
    for schedule in panel.SCHEDULES:
        values = [p.expected_joint for p in panel.panel_curves(recs, [schedule])]
        assert values[0] == pytest.approx(m.reference_acceptance)
        assert all(x >= y - 1e-12 for x, y in itertools.pairwise(values))
    assert panel.expected_joint(recs, 3, 3) == pytest.approx(m.joint_success)


def test_correlations_match_known_values():
    xs, ys = [1, 2, 3, 4], [2, 4, 6, 9]
    c = panel.correlate("x", "y", xs, ys)
    assert c.spearman_rho == pytest.approx(1.0)
    assert c.pearson_r is not None and 0.98 < c.pearson_r < 1.0
    assert c.n == 4


def test_correlations_undefined_for_tiny_or_constant_series():
    assert panel.correlate("x", "y", [1, 2], [1, 2]).pearson_r is None
    assert panel.correlate("x", "y", [1, 1, 1], [1, 2, 3]).spearman_rho is None
    c = panel.correlate("x", "y", [1, None, 2, 3], [3, 5, 2, 1])
    assert c.n == 3 and c.spearman_rho == pytest.approx(-1.0)


def test_correlation_table_pairs_configurations():
    configs = {"m/A": {"x": 0.1, "y": 0.2}, "m/B": {"x": 0.2, "y": 0.5}, "m/C": {"x": 0.3, "y": 0.4}}
    (row,) = panel.correlation_table(configs, [("x", "y")])
    assert row.spearman_rho == pytest.approx(0.5)
