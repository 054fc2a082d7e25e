"""The agent loop end to end with sim:strong on the fixture task, replay, and loop edge cases."""

from __future__ import annotations

import json

from testhelix.agent.budget import Budget, Deadline, MemoryLedger
from testhelix.agent.loop import ELIDED, SessionConfig, fit_context, run_agent_session
from testhelix.agent.trajectory import Trajectory, replay
from testhelix.core.digest import tree_sha256
from testhelix.execution.executor import Limits
from testhelix.llm.base import Completion, Message, ToolCall, Usage
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.testing import ScriptedModel
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import initial_strategy


def session(task, executor, root, model="sim:strong", seed=3, budget=None, **kw):
    budget = budget or Budget(300000, task_id=task.id, run_label="test", sink=MemoryLedger())
    # the simulated model's own draws are keyed by the model string's ?seed=N (common random numbers);
    # create_model's seed only seeds sampling noise, which these models do not have
    result = run_agent_session(create_model(model_ref(f"{model}?seed={seed}"), task=task, seed=seed), budget, SessionConfig(
        task=task, strategy=kw.pop("strategy", initial_strategy()), workspace_root=root, executor=executor, **kw))
    return result, budget


def test_strong_session_qualifies_saves_trajectory_and_ledger_and_replays(sim_task, executor, tmp_path):
    store = RunStore(tmp_path / "run")
    budget = Budget(300000, task_id=sim_task.id, run_label="sim:strong/A", sink=store)
    result, _ = session(sim_task, executor, tmp_path / "pair0", budget=budget, direction="the bug report")
    assert result.submitted
    ws = result.workspace
    limits = Limits(wall_s=60)
    assert executor.run(ws.suite, sim_task.initial_dir, limits).status == "fail"
    assert executor.run(ws.suite, ws.repair, limits).status == "pass"
    # the trajectory was saved, names the model as simulated, and holds the full history
    traj = Trajectory.load(result.trajectory_path)
    assert traj.exit == "submitted" and traj.meta["simulated"] is True and traj.meta["model"] == "sim:strong"
    assert len(traj.steps) == result.steps and all(s["simulated"] for s in traj.steps)
    # one ledger row per call, in the run store
    rows = store.model_calls("sim:strong/A")
    assert len(rows) == result.steps == budget.calls
    assert {(r["model"], r["role"], r["pair"], r["status"], r["simulated"]) for r in rows} == {
        ("sim:strong", "generation", 0, "ok", True)}
    assert all(r["cost_usd"] is None and r["input_tokens"] > 0 for r in rows)
    assert sum(r["input_tokens"] + r["output_tokens"] for r in rows) == budget.used
    # replay without a model reproduces the same files
    again = replay(result.trajectory_path, tmp_path / "replayed", sim_task.initial_dir)
    assert tree_sha256(again.suite) == tree_sha256(ws.suite)
    assert tree_sha256(again.repair) == tree_sha256(ws.repair)
    store.close()


def test_messages_never_carry_hidden_material(sim_task, executor, tmp_path):
    result, _ = session(sim_task, executor, tmp_path / "p", model="sim:weak", seed=1)
    text = result.trajectory_path.read_text()
    reference = (sim_task.reference_dir / "chunker" / "__init__.py").read_text()
    hidden_lines = [line for line in reference.splitlines()
                    if "range(" in line] + ["def test_remainder_kept", "chunk size must be at least 1"]
    assert not any(json.dumps(line)[1:-1] in text for line in hidden_lines)
    assert str(sim_task.root) not in text


def test_same_seed_same_trajectory(sim_task, executor, tmp_path):
    a, _ = session(sim_task, executor, tmp_path / "a", seed=11)
    b, _ = session(sim_task, executor, tmp_path / "b", seed=11)
    strip = lambda p: json.loads(p.read_text())["messages"]  # noqa: E731
    assert strip(a.trajectory_path) == strip(b.trajectory_path)


def test_repair_round_reads_back_and_applies_feedback(sim_task, executor, tmp_path):
    first, budget = session(sim_task, executor, tmp_path / "p", seed=5)
    names = [line[4:line.index("(")] for line in (first.workspace.suite / "test_reproduction.py").read_text().splitlines()
             if line.startswith("def test_")]
    second, _ = session(sim_task, executor, tmp_path / "p", seed=5, budget=budget, phase="repair", round=1,
                        feedback=f"{names[0]} failed on a peer repair judged correct.")
    calls = [c.name for m in Trajectory.load(second.trajectory_path).messages for c in m.tool_calls]
    assert calls[0] == "read_file" and second.exit in ("submitted", "step_limit")
    assert budget.calls == first.steps + second.steps


def test_consecutive_malformed_replies_end_the_session(sim_task, executor, tmp_path):
    bad = Completion("", (ToolCall.from_json_text("x", "write_file", "{nope"),), "tool_use", Usage(10, 5), "fake")
    ledger = MemoryLedger()
    budget = Budget(100000, sink=ledger)
    result = run_agent_session(ScriptedModel([bad] * 3, context_window=10000), budget, SessionConfig(
        task=sim_task, strategy=initial_strategy(), workspace_root=tmp_path / "w", executor=executor,
        max_consecutive_errors=3))
    assert result.exit == "format_errors" and result.steps == 3
    assert [r["status"] for r in ledger.rows] == ["malformed"] * 3 and budget.used == 45
    msgs = Trajectory.load(result.trajectory_path).messages
    assert msgs[-1].role == "tool" and msgs[-1].content.startswith("error: could not read the arguments")


def test_budget_and_deadline_end_the_session(sim_task, executor, tmp_path):
    result, budget = session(sim_task, executor, tmp_path / "a", budget=Budget(3000))
    assert result.exit == "budget" and budget.used <= 3000
    now = [0.0]
    clock = lambda: now[0]  # noqa: E731
    deadline = Deadline(5.0, clock=clock)
    now[0] = 10.0
    result, _ = session(sim_task, executor, tmp_path / "b", deadline=deadline)
    assert result.exit == "deadline" and result.steps == 1


def test_fit_context_elides_old_observations_then_drops_steps():
    prefix = [Message("system", "s" * 400), Message("user", "task")]
    history = []
    for i in range(6):
        history.append(Message("assistant", f"step {i}", tool_calls=(ToolCall(f"c{i}", "write_file",
                                                                                {"path": "suite/t.py", "content": "z" * 800}),)))
        history.append(Message("tool", "o" * 800, tool_call_id=f"c{i}"))
    view, changed = fit_context(prefix + history, 2, 100000)
    assert view == prefix + history and changed == 0
    view, changed = fit_context(prefix + history, 2, 1200)
    assert view[:2] == prefix and view[-1] == history[-1] and changed > 0
    assert any(m.role == "tool" and m.content.startswith(ELIDED) for m in view)
    view, changed = fit_context(prefix + history, 2, 300)
    assert view[2].content.startswith("[") and "dropped" in view[2].content and view[-1] == history[-1]
    # every remaining observation still answers a call in the view
    ids = {c.id for m in view for c in m.tool_calls}
    assert all(m.tool_call_id in ids for m in view if m.role == "tool")
