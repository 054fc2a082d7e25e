"""Hand-computed checks of the TestPrism metrics."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testhelix.prism.metrics import (
    PairedDifference,
    harmonic_h,
    paired_difference,
    round_percent,
    split_metrics,
    task_indicators,
    valid_acceptance_with_reference,
)


def outcomes(initial="fail", reference="pass", alts=("pass",) * 4, invs=("fail",) * 5):
    rec = {"initial": ("initial", initial), "reference": ("reference", reference)}
    rec.update({f"alt{i}": ("alternative", s) for i, s in enumerate(alts)})
    rec.update({f"inv{i}": ("invalid", s) for i, s in enumerate(invs)})
    return rec


def test_perfect_suite_has_every_indicator():
    t = task_indicators(outcomes())
    assert (t.F, t.A, t.R, t.S) == (True, 1.0, 1.0, True)


def test_error_counts_in_denominator_and_in_neither_numerator():
    t = task_indicators(outcomes(alts=("pass", "pass", "pass", "error"), invs=("fail",) * 4 + ("error",)))
    assert t.A == pytest.approx(3 / 4)
    assert t.R == pytest.approx(4 / 5)
    assert t.F and not t.S


def test_missing_leaves_denominator_but_denies_joint_success():
    t = task_indicators(outcomes(alts=("pass", "pass", "missing", "missing"), invs=("fail", "missing")))
    assert t.A == 1.0  # 2 of the 2 observed alternatives
    assert t.R == 1.0
    assert t.F and not t.S  # a missing required outcome gets no joint credit


def test_all_missing_candidates_leave_rates_undefined():
    t = task_indicators(outcomes(alts=("missing",) * 4, invs=()))
    assert t.A is None and t.R is None


def test_reference_transition_needs_initial_fail_and_reference_pass():
    assert not task_indicators(outcomes(initial="pass")).F
    assert not task_indicators(outcomes(initial="error")).F
    assert not task_indicators(outcomes(reference="fail")).F
    assert not task_indicators(outcomes(reference="missing")).F
    assert not task_indicators({}).F
    # A and R do not need the transition
    t = task_indicators(outcomes(initial="pass", alts=("pass", "fail"), invs=("fail", "pass", "pass")))
    assert (t.F, t.S) == (False, False)
    assert t.A == 0.5 and t.R == pytest.approx(1 / 3)


def test_joint_success_rejects_one_accepted_invalid():
    assert not task_indicators(outcomes(invs=("fail",) * 4 + ("pass",))).S


def test_unknown_role_or_status_is_refused():
    with pytest.raises(ValueError, match="role"):
        task_indicators({"x": ("mystery", "pass")})
    with pytest.raises(ValueError, match="status"):
        task_indicators({"x": ("invalid", "passed")})


def test_companion_includes_the_reference():
    rec = outcomes(reference="pass", alts=("pass", "fail", "fail", "fail"))
    assert valid_acceptance_with_reference(rec) == pytest.approx(2 / 5)
    assert task_indicators(rec).A == pytest.approx(1 / 4)


def test_rounding_rule_example_from_the_brief():
    # 12.35 % and 98.77 % -> 2*12.35*98.77/111.12 = 21.9548... -> 21.95 %
    assert round_percent(0.123456) == pytest.approx(0.1235)
    assert round_percent(0.98765) == pytest.approx(0.9877)
    assert harmonic_h(0.123456, 0.98765) == pytest.approx(0.2195)


def test_rounding_is_half_up_on_the_decimal_value():
    assert round_percent(0.12345) == pytest.approx(0.1235)  # binary 12.344999... must not win
    assert round_percent(0.00005) == pytest.approx(0.0001)
    assert round_percent(1 / 3) == pytest.approx(0.3333)


def test_h_zero_and_undefined_cases():
    assert harmonic_h(0.0, 0.0) == 0.0
    assert harmonic_h(0.0, 0.9) == 0.0
    assert harmonic_h(None, 0.5) is None
    assert harmonic_h(0.5, None) is None
    # rounding first matters: 0.00004 rounds to 0 %, so H is 0 although the raw mean is not
    assert harmonic_h(0.00004, 0.9) == 0.0


def test_split_metrics_by_hand():
    tasks = {
        "t1": outcomes(),  # F=1 S=1 A=1 R=1
        "t2": outcomes(alts=("pass", "fail", "fail", "fail"), invs=("fail", "pass", "pass", "pass", "pass")),
        # F=1 S=0 A=.25 R=.2
        "t3": outcomes(initial="pass", alts=("missing",) * 4, invs=("error",) * 5),  # F=0 A=None R=0
        "t4": None,  # no suite submitted: counted in N, no rates
    }
    m = split_metrics(tasks)
    assert m.n == 4
    assert m.reference_acceptance == pytest.approx(2 / 4)
    assert m.joint_success == pytest.approx(1 / 4)
    assert m.valid_acceptance == pytest.approx((1 + 0.25) / 2)
    assert m.invalid_rejection == pytest.approx((1 + 0.2 + 0) / 3)
    assert (m.valid_tasks, m.invalid_tasks, m.missing_tasks) == (2, 3, 1)
    # H from 62.50 % and 40.00 %: 2*62.5*40/102.5 = 48.780... -> 48.78 %
    assert m.h == pytest.approx(0.4878)
    # companion (valid incl. reference) per task: 1, 2/5 and 1 (t3: only the reference observed)
    assert m.valid_acceptance_with_reference == pytest.approx((1 + 2 / 5 + 1) / 3)
    assert m.valid_acceptance_with_reference is not None and m.invalid_rejection is not None
    assert m.balanced_accuracy == pytest.approx((m.valid_acceptance_with_reference + m.invalid_rejection) / 2)
    assert m.mutation_score == m.invalid_rejection


def test_empty_split_is_undefined_not_zero():
    m = split_metrics({})
    assert m.n == 0
    assert m.reference_acceptance is None and m.joint_success is None and m.h is None


def test_paired_difference_by_hand():
    x = {"t1": 0, "t2": 1, "t3": 0, "t4": 1, "t5": None}
    y = {"t1": 1, "t2": 1, "t3": 1, "t4": 0, "t5": 1, "t6": 1}
    d = paired_difference(x, y)
    assert isinstance(d, PairedDifference)
    assert d.n == 4  # t5 undefined in x, t6 absent from x
    assert (d.improved, d.worsened) == (2, 1)
    assert d.delta == pytest.approx((1 + 0 + 1 - 1) / 4)
    assert d.mean_x is not None and d.mean_y is not None
    assert d.mean_y - d.mean_x == pytest.approx(d.delta)
    assert d.sign_test_p == pytest.approx(1.0)  # 2 vs 1 of 3 discordant: exact two-sided p = 1


def test_paired_difference_all_ties():
    d = paired_difference({"a": 1}, {"a": 1})
    assert d.sign_test_p is None and d.delta == 0


status_st = st.sampled_from(["pass", "fail", "error", "missing"])
task_st = st.builds(
    outcomes,
    initial=status_st,
    reference=status_st,
    alts=st.lists(status_st, max_size=5).map(tuple),
    invs=st.lists(status_st, max_size=6).map(tuple),
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text("abc", min_size=1, max_size=3), st.one_of(st.none(), task_st), max_size=8))
def test_rates_are_bounded_and_h_between_its_rounded_inputs(tasks):
    m = split_metrics(tasks)
    for rate in (m.reference_acceptance, m.joint_success, m.valid_acceptance, m.invalid_rejection, m.h):
        assert rate is None or 0.0 <= rate <= 1.0
    if m.joint_success is not None:
        assert m.reference_acceptance is not None and m.joint_success <= m.reference_acceptance  # S implies F
    if m.h is not None:
        assert m.valid_acceptance is not None and m.invalid_rejection is not None  # H is made of both
        lo = min(round_percent(m.valid_acceptance), round_percent(m.invalid_rejection))
        hi = max(round_percent(m.valid_acceptance), round_percent(m.invalid_rejection))
        assert lo - 1e-4 <= m.h <= hi + 1e-4  # rounding may move H by half a basis point


@settings(max_examples=150, deadline=None)
@given(task_st)
def test_joint_success_implies_perfect_task_rates(rec):
    t = task_indicators(rec)
    if t.S:
        assert t.F and t.A in (None, 1.0) and t.R in (None, 1.0)


# The seed's outcome conventions, by hand (a task without a submitted suite is an error everywhere).
def test_no_submission_stays_in_every_denominator():
    perfect = outcomes()
    nothing = {pid: (role, "error") for pid, (role, _) in outcomes().items()}  # as no_submission records it
    m = split_metrics({"t1": perfect, "t2": nothing})
    # VAR = (4/4 + 0/4) / 2, IRR = (5/5 + 0/5) / 2, RAR = JSF = 1/2, H = 2*50*50/100 = 50 %
    assert (m.valid_acceptance, m.invalid_rejection) == (0.5, 0.5)
    assert (m.reference_acceptance, m.joint_success, m.h) == (0.5, 0.5, 0.5)
    assert (m.valid_tasks, m.invalid_tasks, m.missing_tasks) == (2, 2, 0)
    # the old convention (no record) flattered it: VAR and IRR 100 % from the one perfect task
    old = split_metrics({"t1": perfect, "t2": None})
    assert (old.valid_acceptance, old.invalid_rejection, old.reference_acceptance) == (1.0, 1.0, 0.5)


def test_collection_error_caused_by_the_program_is_a_rejection():
    from testhelix.execution.outcome import RawRun, classify

    # an invalid program lacking a function: the suite's import fails at collection (pytest exit 2)
    status, reason, _ = classify(RawRun("pytest", exit_code=2))
    assert status == "fail" and reason is not None and reason.startswith("collection error")
    t = task_indicators(outcomes(invs=(status, "fail", "fail", "fail", "error")))
    assert t.R == pytest.approx(4 / 5) and not t.S  # 4 rejections of 5; the error denies S


def test_unfinished_tasks_divide_rar_and_jsf_by_the_planned_size():
    # 4 planned, 2 finished (both perfect): RAR = JSF = 2/4; VAR and IRR over the finished tasks
    m = split_metrics({"t1": outcomes(), "t2": outcomes(), "u3": None, "u4": None})
    assert (m.n, m.reference_acceptance, m.joint_success) == (4, 0.5, 0.5)
    assert (m.valid_acceptance, m.invalid_rejection) == (1.0, 1.0)
