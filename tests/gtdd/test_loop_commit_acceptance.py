"""Commitment (manifest hash, protected files) and acceptance (fresh per-family audits)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gtdd import acceptance
from gtdd.commit import PUBLIC_TESTS_FILE, SPEC_FILE, Workspace
from gtdd.stats.audit import audit_size
from testhelix.core.errors import UserError
from tests.gtdd.loop_fakes import REFERENCE, FakeDomain, apply_defects, fake_executor

CONFIG = {"domain": "fake", "per_trace_timeout_s": 1.0}


def make_ws(tmp_path):
    return Workspace.create(tmp_path / "ws", "store.py", "the spec", "[1, 2]", "print('v1')\n")


def test_manifest_hash_tracks_every_file_and_the_config(tmp_path):
    ws = make_ws(tmp_path)
    first = ws.commit(1, CONFIG)
    assert ws.commit(1, CONFIG).manifest_hash == first.manifest_hash  # canonical: stable
    assert ws.verify(first, CONFIG)
    (ws.root / "helper.py").write_text("x = 1\n")  # an added file changes the commitment
    added = ws.commit(2, CONFIG)
    assert added.manifest_hash != first.manifest_hash and not ws.verify(first, CONFIG)
    (ws.root / "helper.py").unlink()  # deleting it restores the old manifest
    assert ws.commit(3, CONFIG).manifest_hash == first.manifest_hash
    assert ws.commit(3, {**CONFIG, "per_trace_timeout_s": 2.0}).manifest_hash != first.manifest_hash
    ws.write_module("print('v2')\n")
    assert ws.commit(4, CONFIG).manifest_hash != first.manifest_hash


def test_protected_changes_are_recorded_and_restored(tmp_path):
    ws = make_ws(tmp_path)
    clean = ws.commit(1, CONFIG)
    assert clean.protected_changes == ()
    ws.apply_edits({PUBLIC_TESTS_FILE: "[]", SPEC_FILE: None, "../escape.txt": "no"})
    commitment = ws.commit(2, CONFIG)
    assert {(c.path, c.change) for c in commitment.protected_changes} == {
        (PUBLIC_TESTS_FILE, "modified"), (SPEC_FILE, "deleted")}
    assert (ws.root / PUBLIC_TESTS_FILE).read_text() == "[1, 2]"
    assert (ws.root / SPEC_FILE).read_text() == "the spec"
    assert commitment.manifest_hash == clean.manifest_hash  # restored material hashes as before
    assert not (tmp_path / "escape.txt").exists()


def test_audit_sizes_come_from_the_exact_statistics():
    rule = acceptance.AcceptanceRule(allocation="repository", alpha="0.05", tolerance="0.05",
                                     trajectories=8, rounds=4)
    sizes = rule.audit_sizes({"a": 500, "b": 250}, 1)
    assert sizes["a"] == 108  # the seed paper's Table 2: repository over 32 rounds
    assert sizes["b"] == audit_size(250, "0.05", Fraction(1, 20) / 32).exact_n
    one = acceptance.AcceptanceRule(allocation="one-candidate")
    assert one.audit_sizes({"a": 500}, 1)["a"] == 54
    unbounded = acceptance.AcceptanceRule(allocation="unbounded")
    assert unbounded.audit_sizes({"a": 500}, 3)["a"] == audit_size(500, "0.05", Fraction(1, 20) / 12).exact_n
    with pytest.raises(UserError):
        rule.audit_sizes({"a": 500}, 5)  # past the horizon the allocation was made for
    with pytest.raises(UserError):
        acceptance.AcceptanceRule(allocation="nonsense")


def test_audits_are_reproducible_from_the_recorded_randomness_and_decide_acceptance():
    domain = FakeDomain()
    ex = fake_executor(domain)
    families = acceptance.population_by_family(domain.population())
    rule = acceptance.AcceptanceRule(allocation="one-candidate")
    good = acceptance.run_audit(rule, families, 1, b"r" * 32, lambda ts: ex.failures(REFERENCE, ts))
    assert good.passed and set(good.families) == {"map", "stack"}
    again = acceptance.draw_audit(families, {f: v["sample"] for f, v in good.families.items()},
                                  bytes.fromhex(good.randomness))
    assert {f: [t.id for t in ts] for f, ts in again.items()} == {
        f: v["sampled_ids"] for f, v in good.families.items()}
    for v in good.families.values():
        assert len(set(v["sampled_ids"])) == v["sample"] <= v["population"]
    bad_source = apply_defects(REFERENCE, ["del-always-one"])
    bad = acceptance.run_audit(rule, families, 1, b"r" * 32, lambda ts: ex.failures(bad_source, ts))
    assert not bad.families["map"]["passed"] and bad.families["stack"]["passed"]
    assert acceptance.decide(rule, True, True, True, good).accepted
    assert not acceptance.decide(rule, True, True, True, bad).accepted
    assert not acceptance.decide(rule, False, True, True, good).accepted  # a changed snapshot
    assert not acceptance.decide(rule, True, False, True, good).accepted  # public tests fail
    assert not acceptance.decide(rule, True, True, False, good).accepted  # regression tests fail
    lenient = acceptance.AcceptanceRule(allocation="one-candidate", require_regression=False)
    assert acceptance.decide(lenient, True, True, False, good).accepted
    assert good.per_audit_error == "1/20"
