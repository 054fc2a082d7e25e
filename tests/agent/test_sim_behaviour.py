"""Simulated models: faults, context loss, and the signal strategy changes produce."""

from __future__ import annotations

import re

import pytest

from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.agent.loop import ELIDED, SessionConfig, run_agent_session
from testhelix.execution.executor import Limits
from testhelix.llm.base import CallTags, Message, ModelRequest, ModelUnavailable, ToolCall
from testhelix.llm.faults import FaultyModel
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.sim.agent import SUITE_FILE, read_view
from testhelix.llm.sim.bank import bank_for
from testhelix.strategy.model import Strategy, initial_strategy


def test_twenty_percent_faults_every_failure_in_the_ledger(sim_task, executor, tmp_path):
    ledger = MemoryLedger()
    budget = Budget(10**6, task_id=sim_task.id, run_label="faults", sink=ledger)
    injected: dict[str, int] = {}
    exits = []
    for pair in range(6):     # a provider failure ends a session, so more sessions to see every kind
        model = FaultyModel(create_model(model_ref("sim:strong"), task=sim_task, seed=pair), rate=0.2, seed=pair)
        try:
            result = run_agent_session(model, budget, SessionConfig(
                task=sim_task, strategy=initial_strategy(), workspace_root=tmp_path / f"pair{pair}",
                executor=executor, pair=pair))
            exits.append(result.exit)
        except ModelUnavailable as err:       # a provider failure ends the session: the host marks it incomplete
            exits.append("model_error")
            assert err.cause in ("unavailable", "timeout") or err.status in (429, 500)
        for kind, n in model.injected.items():
            injected[kind] = injected.get(kind, 0) + n
    assert set(exits) <= {"submitted", "step_limit", "model_error", "format_errors"}
    assert sum(injected.values()) >= 3                     # faults really happened
    statuses = [r["status"] for r in ledger.rows]
    assert statuses.count("error") == injected.get("rate_limit", 0) + injected.get("server", 0) + injected.get("timeout", 0)
    assert statuses.count("malformed") == injected.get("malformed", 0)
    assert len(ledger.rows) == budget.calls
    errors = [r for r in ledger.rows if r["status"] == "error"]
    assert all(r["error"] and not r["usage_reported"] for r in errors)
    # refused calls (429/500) cost nothing; a timeout keeps its reservation, in the ledger too
    assert all((r["charged_tokens"] == 0) == ("kept" not in r["error"]) for r in errors)
    assert sum(r["charged_tokens"] for r in ledger.rows) == budget.used


def test_an_elided_observation_is_forgotten(sim_task):
    bank = bank_for(sim_task)
    note = "Writing.\nstate: suite=test_keeps_last_partial_chunk | repair=1 | drop= | fb=0"
    run = ToolCall("r1", "run_tests", {"program": "repair"})
    seen = "suite on repair program: fail (1 failing test(s)); tests run: 1\nFAILED suite/t.py::test_keeps_last_partial_chunk"
    base = [Message("system", "s"), Message("user", "task"), Message("assistant", note, (ToolCall("w", "write_file", {}),)),
            Message("tool", "wrote", tool_call_id="w"), Message("assistant", "Running.", (run,))]
    visible = read_view(ModelRequest(tuple(base + [Message("tool", seen, tool_call_id="r1")])), bank, "generation")
    elided = read_view(ModelRequest(tuple(base + [Message("tool", ELIDED, tool_call_id="r1")])), bank, "generation")
    assert visible.runs and visible.runs[0].failing == ["test_keeps_last_partial_chunk"]
    assert elided.runs == [] and elided.suite == ["test_keeps_last_partial_chunk"]


def test_repair_round_view_starts_unknown(sim_task):
    view = read_view(ModelRequest((Message("user", "task"),), tags=CallTags(role="repair")), bank_for(sim_task), "repair")
    assert view.suite is None and view.repair is None


def _qualified(task, executor, result) -> bool:
    ws = result.workspace
    return (result.submitted and executor.run(ws.suite, task.initial_dir, Limits()).status == "fail"
            and executor.run(ws.suite, ws.repair, Limits()).status == "pass")


def _rate(task, executor, tmp_path, model, strategy, seeds):
    qualified, clean = 0, 0
    bank = bank_for(task)
    for seed in seeds:
        # `?seed=N` picks another simulated agent (without noise, the creation seed changes nothing)
        result = run_agent_session(create_model(model_ref(f"{model}?seed={seed}"), task=task), Budget(10**6), SessionConfig(
            task=task, strategy=strategy, workspace_root=tmp_path / f"{model}-{strategy.content_hash()[:8]}-{seed}",
            executor=executor))
        ok = _qualified(task, executor, result)
        suite = result.workspace.suite / SUITE_FILE.split("/", 1)[1]
        roles = [bank.role(n) for n in re.findall(r"^def (test_\w+)", suite.read_text(), re.M)] if suite.exists() else []
        qualified += ok
        clean += ok and "reproduces" in roles and set(roles) <= {"reproduces", "guard"}
    return qualified, clean


def test_more_steps_allow_more_self_correction(sim_task, executor, tmp_path):
    few = Strategy.model_validate(initial_strategy().model_dump(mode="json") | {"agentSteps": 4})
    q_few, _ = _rate(sim_task, executor, tmp_path, "sim:weak", few, range(6))
    q_many, _ = _rate(sim_task, executor, tmp_path, "sim:weak", initial_strategy(), range(6))
    assert q_many > q_few


@pytest.mark.slow
def test_strong_beats_weak(sim_task, executor, tmp_path):
    seeds = range(20)
    strong = _rate(sim_task, executor, tmp_path, "sim:strong", initial_strategy(), seeds)
    weak = _rate(sim_task, executor, tmp_path, "sim:weak", initial_strategy(), seeds)
    assert strong[0] > weak[0] and strong[1] > weak[1]
    # what strategy text changes is checked decision by decision in tests/llm/test_sim_policy.py
