"""The development discrepancy Gamma_t = P_t - Q_t and C^dev_t = P_t(1 - Q_t) (gtdd/discrepancy.py)."""

from __future__ import annotations

import json
from fractions import Fraction

from gtdd.discrepancy import development_discrepancy
from gtdd.report import write_report
from tests.gtdd.test_loop_experiment import rows, run_fake

RULE = {"tolerance": "1/10", "family_tolerances": {"b": "0"}}


def row(block, policy, t, public, regression, failures):
    return {"block": block, "policy": policy, "round": t, "public_pass": public, "regression_pass": regression,
            "detail": json.dumps({"population_by_family": failures})}


def audit():
    return {"rule": RULE, "families": {"a": {"population": 10}, "b": {"population": 4}}}


def test_each_combination_of_p_and_q_and_exact_fractions():
    rs = [row(0, "x", 1, True, True, {"a": 2, "b": 0}),    # P=1, Q=0 (a: 2/10 > 1/10): Gamma +1, C^dev
          row(0, "x", 2, True, True, {"a": 1, "b": 0}),    # P=1, Q=1 (1/10 is within): Gamma 0
          row(0, "x", 3, True, False, {"a": 0, "b": 0}),   # P=0 (a development test fails), Q=1: Gamma -1
          row(1, "x", 1, False, True, {"a": 0, "b": 1}),   # P=0 (public fails), Q=0 (b tolerates 0): Gamma 0
          row(1, "x", 2, True, True, {"a": 0, "b": 1})]    # P=1, Q=0: Gamma +1, C^dev
    d = development_discrepancy(rs, {(r["block"], r["policy"], r["round"]): audit() for r in rs}, ["x"])
    by_traj = {t["block"]: t for t in d["trajectories"]}
    assert by_traj[0]["gamma"] == [1, 0, -1] and by_traj[0]["c_dev"] == [1, 0, 0]
    assert by_traj[1]["gamma"] == [0, 1] and by_traj[1]["c_dev"] == [0, 1]
    assert by_traj[0]["c_dev_frequency"]["exact"] == "1/3" and by_traj[1]["c_dev_frequency"]["exact"] == "1/2"
    overall = d["by_policy"]["x"]
    assert (overall["rounds"], overall["P"], overall["Q"], overall["C_dev"]) == (5, 3, 2, 2)
    assert overall["mean_gamma"] == {"exact": "1/5", "value": 0.2}
    assert overall["c_dev_frequency"]["exact"] == "2/5"
    assert overall["gamma_counts"] == {"-1": 1, "0": 2, "1": 2}
    round_one = d["by_round"]["x"][0]
    assert round_one["round"] == 1 and round_one["mean_gamma"]["exact"] == "1/2" and round_one["C_dev"] == 1


def test_the_report_carries_it_and_it_agrees_with_the_stored_rounds(tmp_path):
    run_fake(tmp_path, policies=("public-only", "dynamic-informed"), blocks=2)
    report, text = write_report(tmp_path)
    d = json.loads((tmp_path / "report.json").read_text())["development_discrepancy"]
    assert d == json.loads(json.dumps(report["development_discrepancy"]))
    assert "Development discrepancy (Definition 2.1): Gamma_t = P_t - Q_t" in text
    stored = rows(tmp_path, "SELECT r.policy, r.public_pass AND r.regression_pass, r.detail, a.record FROM gtdd_rounds r "
                            "JOIN gtdd_audits a USING (block, policy, round)")
    for policy in ("public-only", "dynamic-informed"):
        mine = [(p, detail, record) for q, p, detail, record in stored if q == policy]
        c_dev = 0
        for p, detail, record in mine:
            families = json.loads(record)["families"]
            tol = Fraction(json.loads(record)["rule"]["tolerance"])
            q = all(Fraction(n, families[f]["population"]) <= tol
                    for f, n in json.loads(detail)["population_by_family"].items())
            c_dev += int(p and not q)
        assert d["by_policy"][policy]["C_dev"] == c_dev
        assert Fraction(d["by_policy"][policy]["c_dev_frequency"]["exact"]) == Fraction(c_dev, len(mine))
