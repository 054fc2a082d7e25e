"""The paired experiment end to end: fake domain in-process, the real key-value store via the CLI."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pytest
from scipy import stats

from gtdd.cli import main
from gtdd.execution import EvaluatorError
from gtdd.experiment import Experiment, ExperimentConfig
from gtdd.report import SIMULATED_NOTE, paired_contrast, write_report
from testhelix.core.errors import UserError
from tests.gtdd.loop_fakes import FakeDomain, InProcessRunner

ORDER = ["coding_end", "commitment", "testing_end", "audit_sampling", "audit_end", "acceptance_record",
         "population_end"]


def run_fake(run_dir, policies=("static-property", "dynamic-informed"), blocks=2, rounds=3, **kw):
    config = ExperimentConfig(policies=policies, blocks=blocks, rounds=rounds, domain="fake",
                              audit_seeded=True, **kw)
    experiment = Experiment(run_dir, config, domain=FakeDomain(), runner=InProcessRunner())
    try:
        return experiment.run()
    finally:
        experiment.store.close()


def rows(run_dir, sql):
    conn = duckdb.connect(str(run_dir / "run.duckdb"), read_only=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_paired_blocks_event_order_feedback_and_records(tmp_path):
    summary = run_fake(tmp_path)
    assert summary == {**summary, "trajectories": 4, "rounds_run": 12, "simulated": True}
    # every policy of a block starts from the same committed first module
    firsts = rows(tmp_path, "SELECT block, count(DISTINCT manifest_hash) FROM gtdd_rounds WHERE round = 1 GROUP BY block")
    assert sorted(firsts) == [(0, 1), (1, 1)]
    for (detail,) in rows(tmp_path, "SELECT detail FROM gtdd_rounds"):
        events = json.loads(detail)["events"]
        assert list(events) == ORDER and sorted(events.values()) == list(events.values())
    # at most k counterexamples a round, none reported twice, none in the last round
    cex = rows(tmp_path, "SELECT block, policy, round, id, original_id FROM gtdd_counterexamples")
    per_round: dict[tuple[int, str, int], list[str]] = {}
    for b, p, t, cid, _original_id in cex:
        per_round.setdefault((b, p, t), []).append(cid)
        assert t < 3
    assert all(len(v) <= 6 for v in per_round.values()) and per_round
    for b, p in {(b, p) for b, p, *_ in cex}:
        ids = [c for (bb, pp, _), v in per_round.items() if (bb, pp) == (b, p) for c in v]
        assert len(ids) == len(set(ids))
    # the regression set grows by V_t and E_t; static tests are proposed only in round 1
    for _block, p, t, proposed, _executed in rows(tmp_path, "SELECT block, policy, round, proposed, executed FROM gtdd_rounds"):
        if p == "static-property":
            assert (proposed > 0) == (t == 1)
    assert all(sim for (sim,) in rows(tmp_path, "SELECT simulated FROM gtdd_rounds"))
    audits = rows(tmp_path, "SELECT record FROM gtdd_audits")
    record = json.loads(audits[0][0])
    assert record["randomness"] and record["rule"]["trajectories"] == 4 and record["rule"]["rounds"] == 3
    # the coder-visible state never holds audit or population information
    for (state,) in rows(tmp_path, "SELECT state FROM gtdd_states"):
        text = state.lower()
        assert "sampled_ids" not in text and "population" not in text and "randomness" not in text


def test_resume_continues_where_it_stopped_and_reproduces(tmp_path):
    run_fake(tmp_path / "full")
    run_fake(tmp_path / "cut")
    conn = duckdb.connect(str(tmp_path / "cut" / "run.duckdb"))
    for table in ("gtdd_rounds", "gtdd_states", "gtdd_audits", "gtdd_counterexamples", "gtdd_generators"):
        conn.execute(f"DELETE FROM {table} WHERE block = 1 AND round >= 2")
    conn.close()
    summary = run_fake(tmp_path / "cut")
    assert summary["rounds_run"] == 4  # two policies x rounds 2 and 3 of block 1
    sql = "SELECT block, policy, round, manifest_hash, population_failures FROM gtdd_rounds ORDER BY 1, 2, 3"
    assert rows(tmp_path / "cut", sql) == rows(tmp_path / "full", sql)
    assert run_fake(tmp_path / "cut")["rounds_run"] == 0
    # extending with a policy reuses the blocks' first modules
    run_fake(tmp_path / "cut", policies=("static-property", "dynamic-informed", "public-only"))
    firsts = rows(tmp_path / "cut", "SELECT count(DISTINCT manifest_hash) FROM gtdd_rounds WHERE round = 1 AND block = 0")
    assert firsts == [(1,)]
    with pytest.raises(UserError, match="cannot be extended to 4.*start a new run directory with --rounds 4"):
        run_fake(tmp_path / "cut", rounds=4)
    with pytest.raises(UserError, match="different settings.*acceptance alpha"):
        run_fake(tmp_path / "cut", acceptance={"alpha": "0.1"})
    with pytest.raises(UserError, match="different settings.*seed"):
        run_fake(tmp_path / "cut", seed=5)


def audits(run_dir):
    return {(b, p, t): json.loads(r) for b, p, t, r in rows(run_dir, "SELECT block, policy, round, record FROM gtdd_audits")}


def test_extending_blocks_and_policies_recomputes_the_allocation_and_reaudits(tmp_path):
    run_fake(tmp_path)  # M = 2 blocks x 2 policies = 4, T = 3
    before = audits(tmp_path)
    assert {a["rule"]["trajectories"] for a in before.values()} == {4}
    summary = run_fake(tmp_path, policies=("static-property", "dynamic-informed", "public-only"))
    assert summary["reaudited"] == 12 and summary["rounds_run"] == 6  # the new policy's two trajectories
    after = audits(tmp_path)
    assert {a["rule"]["trajectories"] for a in after.values()} == {6}
    # every audit now has the sample sizes and error of M = 6, as a run made for M = 6 from the start
    fresh_dir = tmp_path / "fresh"
    run_fake(fresh_dir, policies=("static-property", "dynamic-informed", "public-only"))
    for key, audit in audits(fresh_dir).items():
        assert after[key]["per_audit_error"] == audit["per_audit_error"]
        assert {f: v["sample"] for f, v in after[key]["families"].items()} == \
               {f: v["sample"] for f, v in audit["families"].items()}
    assert all(after[k]["families"][f]["sample"] > before[k]["families"][f]["sample"]
               for k in before for f in before[k]["families"])
    superseded = rows(tmp_path, "SELECT trajectories, count(*) FROM gtdd_superseded_audits GROUP BY 1")
    assert superseded == [(4, 12)]
    decisions = rows(tmp_path, "SELECT r.accepted, r.audits_pass, a.record FROM gtdd_rounds r JOIN gtdd_audits a "
                               "USING (block, policy, round)")
    assert all(audits_pass == all(f["passed"] for f in json.loads(rec)["families"].values())
               for _, audits_pass, rec in decisions)
    # more blocks: M = 3 x 3 = 9, everything recorded so far is re-audited again
    summary = run_fake(tmp_path, policies=("static-property", "dynamic-informed", "public-only"), blocks=3)
    assert summary["reaudited"] == 18 and summary["rounds_run"] == 9
    assert {a["rule"]["trajectories"] for a in audits(tmp_path).values()} == {9}
    assert run_fake(tmp_path, policies=("static-property", "dynamic-informed", "public-only"), blocks=3) == {
        **summary, "rounds_run": 0, "reaudited": 0, "wall_s": pytest.approx(summary["wall_s"], abs=60)}


def test_results_are_the_same_for_any_number_of_jobs(tmp_path):
    run_fake(tmp_path / "one", blocks=3, jobs=1)
    run_fake(tmp_path / "two", blocks=3, jobs=3)
    for sql in ("SELECT * EXCLUDE (wall_s, detail) FROM gtdd_rounds ORDER BY 1, 2, 3",
                "SELECT * FROM gtdd_audits ORDER BY 1, 2, 3", "SELECT * FROM gtdd_states ORDER BY 1, 2, 3",
                "SELECT * FROM gtdd_counterexamples ORDER BY 1, 2, 3, 4", "SELECT * FROM gtdd_blocks ORDER BY 1"):
        assert rows(tmp_path / "one", sql) == rows(tmp_path / "two", sql)


def test_a_changed_execution_configuration_is_refused(tmp_path):
    run_fake(tmp_path, blocks=1, rounds=2)

    class OtherSandbox(InProcessRunner):
        def config(self) -> dict:
            return {**super().config(), "sandbox": "another"}

    class OtherLoss(FakeDomain):
        loss = "judged: anything goes"

    config = ExperimentConfig(policies=("static-property", "dynamic-informed"), blocks=1, rounds=2, domain="fake",
                              audit_seeded=True)
    with pytest.raises(UserError, match="execution configuration differs.*sandbox"):
        Experiment(tmp_path, config, domain=FakeDomain(), runner=OtherSandbox())
    with pytest.raises(UserError, match="execution configuration differs.*loss"):
        Experiment(tmp_path, config, domain=OtherLoss(), runner=InProcessRunner())


def test_fixed_tests_are_checked_against_their_manifest_before_a_rerun(tmp_path):
    run_fake(tmp_path, blocks=1, rounds=3)
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    row = conn.execute("SELECT state FROM gtdd_states WHERE policy = 'static-property' AND round = 2").fetchone()
    assert row is not None
    state = json.loads(row[0])
    some_id = next(iter(state["regression"]))
    state["regression"][some_id]["ops"] = state["regression"][some_id]["ops"][:1]  # altered after saving
    conn.execute("UPDATE gtdd_states SET state = ? WHERE policy = 'static-property' AND round = 2", [json.dumps(state)])
    conn.execute("DELETE FROM gtdd_states WHERE round = 3")
    conn.execute("DELETE FROM gtdd_rounds WHERE round = 3")
    conn.close()
    with pytest.raises(EvaluatorError, match="do not match their manifest"):
        run_fake(tmp_path, blocks=1, rounds=3)


def test_report_statistics_match_scipy_and_the_plot_is_written(tmp_path):
    run_fake(tmp_path, policies=("public-only", "static-property", "dynamic-blind"), blocks=3)
    report, text = write_report(tmp_path)
    assert text.startswith(SIMULATED_NOTE)
    assert (tmp_path / "failure_by_round.png").stat().st_size > 1000
    assert "Within-block differences after round 3" in text and "Audits of the recorded candidates" in text
    assert len(report["contrasts"]) == 3 and len(report["failure_table"]) == 3
    diffs = np.array([-0.2, -0.1, -0.05, 0.0, -0.3, 0.1])
    c = paired_contrast("a", "b", diffs)
    assert c.lower == 4 and c.higher == 1 and c.median == pytest.approx(-0.075)
    assert c.trimmed_mean == pytest.approx(stats.trim_mean(diffs, 0.1))
    assert c.p_sign_test == pytest.approx(stats.binomtest(4, 5).pvalue)
    assert c.interval is not None and c.interval[0] <= c.mean <= c.interval[1]
    # with 6 blocks all 64 sign assignments are enumerated: an exact p-value
    flips = np.array([[s * d for s, d in zip(signs, diffs)] for signs in
                      np.array(np.meshgrid(*[[1, -1]] * 6)).T.reshape(-1, 6)])
    exact = np.mean(np.abs(flips.mean(axis=1)) >= abs(diffs.mean()) - 1e-12)
    assert c.p_sign_flip == pytest.approx(exact)


@pytest.mark.slow
def test_cli_experiment_and_report_on_the_key_value_store(tmp_path, capsys):
    # Two blocks, three policies, two rounds, no acceptance gate in the loop (as in seed Section 6):
    # every trace of the 2,000-trace population runs in a fresh sandboxed process per distinct
    # candidate, so the test keeps the number of distinct candidates small. The report then applies
    # every acceptance rule to the same recorded candidates, with paired statistics.
    with pytest.raises(SystemExit) as done:
        main(["experiment", "--policies", "public-only,static-property,dynamic-informed", "--blocks", "2",
              "--rounds", "2", "--acceptance-rule", "none", "--run", str(tmp_path), "--quiet", "--json"])
    assert done.value.code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["rounds_run"] == 12 and summary["simulated"]
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path)])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "simulated test doubles" in out and "public-only - dynamic-informed" in out
    assert "editing a copy of the reference" in out or "copy of the reference source" in out
    assert "Development outcomes per policy" in out and "Within-block differences of unseen_risk" in out
    for rule in ("audit", "sequential", "regression-only", "public-screening"):
        for policy in ("public-only", "static-property", "dynamic-informed"):
            assert any(line.split()[:2] == [rule, policy] for line in out.splitlines()), (rule, policy)
        assert f"{rule}: guarantee:" in out
    assert "Acting acceptance rule: none" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert all(len(r["contrasts"]) == 3 and all(c["blocks"] == 2 for c in r["contrasts"])
               for r in report["acceptance_rules"].values())
    with pytest.raises(SystemExit) as done:
        main(["experiment", "--policies", "nope", "--run", str(tmp_path / "x")])
    assert done.value.code == 2
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path / "missing")])
    assert done.value.code == 2


def prompted_model():
    """An offline ChatModel for both roles: writes the fake domain's module or a generator."""
    from testhelix.llm.base import Usage
    from testhelix.llm.testing import FunctionModel
    from tests.gtdd.loop_fakes import REFERENCE, apply_defects

    def answer(request):
        prompt = request.messages[1].content
        if "generate(rng, n)" in prompt:
            return ("```python\ndef generate(rng, n):\n    return [[{'cmd': 'DEL', 'args': [rng.choice('ab')]},"
                    " {'cmd': 'POP', 'args': []}] for _ in range(n)]\n```")
        fixed = '"cmd": "DEL"' in prompt  # a DEL counterexample was reported
        module = apply_defects(REFERENCE, ["pop-empty-none"] + ([] if fixed else ["del-always-one"]))
        return f"```python\n{module}```"

    return FunctionModel(answer, name="scripted:fake", usage=Usage(100, 50))


def test_llm_agents_drive_the_loop_offline(tmp_path):
    from gtdd.agents import LLMCoder, LLMTester

    model = prompted_model()
    config = ExperimentConfig(policies=("dynamic-informed",), blocks=1, rounds=3, domain="fake",
                              coder="scripted:fake", tester="scripted:fake", audit_seeded=True)
    experiment = Experiment(tmp_path, config, domain=FakeDomain(), coder=LLMCoder(model),
                            tester=LLMTester(model), runner=InProcessRunner())
    try:
        assert experiment.run()["simulated"] is False
    finally:
        experiment.store.close()
    rates = rows(tmp_path, "SELECT round, population_failures, counterexamples, simulated FROM gtdd_rounds ORDER BY round")
    assert rates[0][1] > rates[1][1] > 0  # the DEL repair helped, the POP defect remains
    assert rates[0][2] >= 1 and all(r[3] for r in rates)  # the test double's replies say they are simulated
    assert any("current module" in r.messages[1].content for r in model.requests)  # the informed tester read the module
    calls = rows(tmp_path, "SELECT role, status, input_tokens FROM model_calls")
    assert {r[0].split(":")[0] for r in calls} >= {"first-module", "coder", "tester"}


def test_protected_file_edits_are_recorded_and_restored_in_the_loop(tmp_path):
    from gtdd.agents import CodingResult
    from gtdd.commit import PUBLIC_TESTS_FILE
    from gtdd.sim import SimCoder

    class TamperingCoder(SimCoder):
        def write_module(self, request):
            result = super().write_module(request)
            if request.current_module is None:
                return result
            return CodingResult(result.module, True, self.name, edits={PUBLIC_TESTS_FILE: "[]"})

    domain = FakeDomain()
    config = ExperimentConfig(policies=("public-only",), blocks=1, rounds=2, domain="fake", audit_seeded=True)
    experiment = Experiment(tmp_path, config, domain=domain, runner=InProcessRunner())
    experiment.coder = TamperingCoder("sim:strong", domain, experiment.executor)
    try:
        experiment.run()
    finally:
        experiment.store.close()
    changes = rows(tmp_path, "SELECT round, protected_changes, detail FROM gtdd_rounds ORDER BY round")
    assert [(r, n) for r, n, _ in changes] == [(1, 0), (2, 1)]
    assert json.loads(changes[1][2])["protected_changes"] == [{"path": PUBLIC_TESTS_FILE, "change": "modified"}]
    restored = (tmp_path / "workspaces" / "block000-public-only" / PUBLIC_TESTS_FILE).read_text()
    assert restored != "[]" and json.loads(restored)[0]["ops"]
