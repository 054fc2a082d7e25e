"""GTDD's acceptance rules (seed Section 3.3), acting in the loop and compared in the report."""

from __future__ import annotations

import json
from fractions import Fraction

import duckdb
import pytest

from gtdd import rules
from gtdd.acceptance import AcceptanceRule, population_by_family, run_audit
from gtdd.cli import main
from gtdd.experiment import Experiment, ExperimentConfig
from gtdd.report import write_report
from gtdd.stats.audit import audit_size
from testhelix.core.errors import UserError
from tests.gtdd.loop_fakes import FakeDomain, InProcessRunner

POLICIES = ("public-only", "static-property", "dynamic-informed")


def audit_json(failing_at: dict[str, list[int]], sample: int = 54, population: int = 500,
               tolerance: str = "0.05", epsilon: str = "1/20") -> dict:
    families = {f: {"population": population, "sample": sample, "failures": len(at), "passed": not at,
                    "first_failure": min(at) if at else None} for f, at in failing_at.items()}
    return {"rule": {"tolerance": tolerance, "family_tolerances": {}}, "per_audit_error": epsilon,
            "families": families}


def test_each_rule_asks_for_its_evidence():
    good, bad = audit_json({"a": [], "b": []}), audit_json({"a": [], "b": [30]})
    ev = rules.Evidence
    assert rules.decide("audit", ev(True, True, True, good), True).accepted
    assert not rules.decide("audit", ev(True, True, True, bad), True).accepted
    assert not rules.decide("audit", ev(True, True, False, good), True).accepted  # regression gate
    assert rules.decide("audit", ev(True, True, False, good), False).accepted
    assert rules.decide("regression-only", ev(True, True, True, bad), True).accepted  # no audit asked
    assert not rules.decide("regression-only", ev(True, True, False, good), True).accepted
    assert rules.decide("public-screening", ev(True, True, False, bad), True).accepted
    assert not rules.decide("public-screening", ev(True, False, True, good), True).accepted
    assert not rules.decide("public-screening", ev(False, True, True, good), True).accepted  # snapshot
    assert rules.decide("none", ev(True, True, True, good), True).accepted is None


def test_sequential_rule_crosses_where_the_audit_size_says_and_stops_early_on_a_failure():
    # N = 500, rho = alpha = 0.05: the smallest exact zero-failure audit is 54 (seed Corollary 4.13)
    assert audit_size(500, "0.05", Fraction(1, 20)).exact_n == 54
    ev = rules.Evidence
    passing = rules.decide("sequential", ev(True, True, True, audit_json({"a": []})), True)
    assert passing.accepted and passing.audit_cases == 54
    failing = rules.decide("sequential", ev(True, True, True, audit_json({"a": [9]})), True)
    assert not failing.accepted and failing.audit_cases == 10  # stopped at the first failure
    assert rules.decide("audit", ev(True, True, True, audit_json({"a": [9]})), True).audit_cases == 54
    # a sample too small to reach 1/epsilon cannot accept sequentially
    short = rules.decide("sequential", ev(True, True, True, audit_json({"a": []}, sample=53)), True)
    assert not short.accepted
    # a record made before draw positions were kept: a failure counts as before the crossing
    old = audit_json({"a": [40]})
    del old["families"]["a"]["first_failure"]
    assert rules.decide("sequential", ev(True, True, True, old), True).audit_cases == 1


def test_family_tolerances_size_each_family_and_unknown_families_are_refused(tmp_path):
    domain = FakeDomain()
    families = population_by_family(domain.population())
    rule = AcceptanceRule(family_tolerances={"map": "0.2"})
    sizes = rule.audit_sizes({f: len(t) for f, t in families.items()}, 1)
    assert sizes["map"] < sizes["stack"]
    record = run_audit(rule, families, 1, b"x" * 32, lambda traces: [None] * len(traces))
    assert record.families["map"]["sample"] == sizes["map"] and record.families["map"]["first_failure"] is None
    with pytest.raises(UserError, match="'nope'"):
        Experiment(tmp_path, ExperimentConfig(policies=("public-only",), blocks=1, domain="fake",
                                              acceptance={"family_tolerances": {"nope": "0.1"}}),
                   domain=domain)
    assert not (tmp_path / "run.duckdb").exists()  # refused before anything was stored
    with pytest.raises(UserError, match="tolerance of family 'map'"):
        AcceptanceRule(family_tolerances={"map": "1.5"})


def run(tmp_path, policies=POLICIES, **kw):
    config = ExperimentConfig(policies=policies, blocks=2, rounds=3, domain="fake", audit_seeded=True, **kw)
    experiment = Experiment(tmp_path, config, domain=FakeDomain(), runner=InProcessRunner())
    try:
        experiment.run()
    finally:
        experiment.store.close()
    conn = duckdb.connect(str(tmp_path / "run.duckdb"), read_only=True)
    try:
        got = conn.execute("SELECT r.block, r.policy, r.round, r.accepted, r.public_pass, r.regression_pass, "
                           "r.detail, a.record, s.state FROM gtdd_rounds r JOIN gtdd_audits a "
                           "USING (block, policy, round) JOIN gtdd_states s USING (block, policy, round) "
                           "ORDER BY 1, 2, 3").fetchall()
    finally:
        conn.close()
    return got


@pytest.mark.parametrize("rule", rules.RULE_NAMES)
def test_the_chosen_rule_acts_in_the_loop_and_the_report_compares_every_rule(tmp_path, rule):
    recorded = run(tmp_path, acceptance={"rule": rule})
    assert len(recorded) == 2 * len(POLICIES) * 3
    for _b, _p, _t, accepted, public, regression, detail, record, state in recorded:
        expected = rules.decide(rule, rules.Evidence(json.loads(detail)["snapshot_intact"], public, regression,
                                                     json.loads(record)), True).accepted
        assert accepted == expected
        assert json.loads(state)["accepted"] == expected  # what the next coding request carries
    report, text = write_report(tmp_path)
    assert f"Acting acceptance rule: {rule}" in text
    for compared in ("audit", "sequential", "regression-only", "public-screening"):
        by_policy = report["acceptance_rules"][compared]["by_policy"]
        assert set(by_policy) == set(POLICIES) and all(s["trajectories"] == 2 for s in by_policy.values())
        assert len(report["acceptance_rules"][compared]["contrasts"]) == 3  # paired, every pair of policies
    assert "Development outcomes per policy" in text and "Within-block differences of repair_rate" in text
    assert "Rule against rule on the same trajectories" in text


def test_stop_at_first_acceptance_ends_the_trajectory(tmp_path):
    recorded = run(tmp_path, acceptance={"rule": "public-screening"}, stop_at_first_acceptance=True)
    by_trajectory: dict = {}
    for b, p, t, accepted, *_ in recorded:
        by_trajectory.setdefault((b, p), []).append((t, accepted))
    assert any(len(v) < 3 for v in by_trajectory.values())  # some stopped before round 3
    for rounds in by_trajectory.values():
        assert all(not acc for _, acc in rounds[:-1])  # nothing after an acceptance was run
    report, _ = write_report(tmp_path)
    assert all(None not in row["rates"] for row in report["failure_table"])  # delivered rate carried
    with pytest.raises(UserError, match="needs an acceptance rule"):
        ExperimentConfig(policies=POLICIES, blocks=1, acceptance={"rule": "none"}, stop_at_first_acceptance=True)


def test_visible_fixed_tests_reach_the_coder_and_hidden_ones_do_not(tmp_path):
    visible = run(tmp_path / "v", ("static-property",), fixed_tests="visible")
    hidden = run(tmp_path / "h", ("static-property",))
    states = [json.loads(s) for *_, s in visible]
    assert any(s["visible_failures"] for s in states)
    for s in states:  # every visible failure is a saved test, shown with its expected replies
        assert all(f["id"] in s["regression"] and "expected" in f for f in s["visible_failures"])
    assert not any(json.loads(s)["visible_failures"] for *_, s in hidden)


def test_cli_sequential_commands_reproduce_the_seed_example(capsys):
    with pytest.raises(SystemExit) as done:
        main(["e-process", "--alpha", "1/800", "--tolerance", "0.05", "--audit", "130:pass", "--audit", "1:pass",
              "--json"])
    assert done.value.code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["Z"] == [pytest.approx(786.92, abs=0.01), pytest.approx(828.34, abs=0.01)] and out["crossed_at"] == 2
    with pytest.raises(SystemExit) as done:
        main(["supermartingale", "-N", "500", "--tolerance", "0.05", "--epsilon", "0.05", "--draws", "53P", "--json"])
    assert json.loads(capsys.readouterr().out)["decision"] == "continue"
    with pytest.raises(SystemExit) as done:
        main(["supermartingale", "-N", "500", "--tolerance", "0.05", "--epsilon", "0.05", "--draws", "54P", "--json"])
    assert json.loads(capsys.readouterr().out)["crossed_at"] == 54
    for bad in (["e-process", "--alpha", "0.05", "--tolerance", "0.05", "--audit", "x:pass"],
                ["supermartingale", "-N", "5", "--tolerance", "0.05", "--epsilon", "0.05", "--draws", "PQ"],
                ["experiment", "--policies", "public-only", "--family-tolerance", "map", "--run", "/tmp/unused-i34"]):
        with pytest.raises(SystemExit) as done:
            main(bad)
        assert done.value.code == 2, bad


def test_the_section_6_preset_sets_its_values_and_explicit_options_win(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["experiment", "--preset", "section-6", "--policies", "public-only", "--blocks", "1", "--rounds", "2",
              "--domain", "loop_fakes:DOMAIN", "--run", str(tmp_path), "--quiet", "--json"])
    assert done.value.code == 0, capsys.readouterr().err
    conn = duckdb.connect(str(tmp_path / "run.duckdb"), read_only=True)
    try:
        row = conn.execute("SELECT config FROM gtdd_config WHERE key = 'experiment'").fetchone()
        assert row is not None
        stored = json.loads(row[0])
    finally:
        conn.close()
    # the preset's values ...
    assert (stored["public_examples"], stored["k"], stored["rule"], stored["per_trace_timeout_s"]) == (1, 6, "standard", 0.5)
    assert stored["acceptance"]["rule"] == "none" and not stored["stop_at_first_acceptance"]
    # ... and the options given explicitly
    assert (stored["policies"], stored["blocks"], stored["rounds"]) == (["public-only"], 1, 2)
