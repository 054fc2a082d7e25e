"""The agent loop as a class: named steps a subclass overrides, its frozen configuration, and the
pipeline's way to use a subclass (`HelixContext.session_class`). Models are the shipped test doubles."""

from __future__ import annotations

import dataclasses

import pytest

from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.agent.calls import review_suite
from testhelix.agent.loop import AgentSession, SessionConfig, run_agent_session
from testhelix.agent.tools import ToolError
from testhelix.agent.trajectory import Trajectory
from testhelix.helix.config import get_config
from testhelix.helix.context import HelixContext
from testhelix.helix.pairs import Pair, run_session
from testhelix.llm.base import Message, ToolCall, Usage
from testhelix.llm.testing import ScriptedModel, tool_call
from testhelix.strategy.model import initial_strategy


def config(task, executor, root, **kw) -> SessionConfig:
    return SessionConfig(task=task, strategy=initial_strategy(), workspace_root=root, executor=executor, **kw)


def test_the_configuration_is_frozen_and_keyword_only(sim_task, executor, tmp_path):
    cfg = config(sim_task, executor, tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.phase = "repair"  # type: ignore[misc]
    with pytest.raises(TypeError):
        SessionConfig(sim_task, initial_strategy(), tmp_path, executor)  # type: ignore[call-arg]
    assert cfg.role == "generation" and dataclasses.replace(cfg, phase="repair").role == "repair"


class Noting(AgentSession):
    """Adds a `note` tool (act) and keeps what the agent was shown (observe) and the views (trim)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.notes: list[str] = []
        self.shown: list[str] = []
        self.views: list[int] = []

    def act(self, call: ToolCall) -> str:
        if call.name == "note":
            if not call.arguments or "text" not in call.arguments:
                raise ToolError("note: missing text")
            self.notes.append(call.arguments["text"])
            return "noted"
        return super().act(call)

    def observe(self, message: Message) -> None:
        self.shown.append(message.content)
        super().observe(message)

    def trim(self):
        view, elided = super().trim()
        self.views.append(len(view))
        return view, elided


def test_a_subclass_overrides_act_observe_and_trim(sim_task, executor, tmp_path):
    model = ScriptedModel([tool_call("note", {"text": "boundary at 0"}), tool_call("note", {}),
                           tool_call("submit", {"summary": "done"})])
    session = Noting(model, Budget(10**6), config(sim_task, executor, tmp_path / "w"))
    result = session.run()
    assert result.submitted and result.steps == 3
    assert session.notes == ["boundary at 0"]
    assert session.shown == ["noted", "error: note: missing text", "submitted"]
    assert session.views == [len(m.messages) for m in model.requests]
    saved = [m.content for m in Trajectory.load(result.trajectory_path).messages if m.role == "tool"]
    assert saved == session.shown


def test_query_is_the_one_place_the_model_is_called(sim_task, executor, tmp_path):
    steps_seen: list[int] = []

    class Counted(AgentSession):
        def query(self, view, number):
            steps_seen.append(number)
            return super().query(view, number)

    model = ScriptedModel([tool_call("list_files", {}), tool_call("submit", {})])
    result = Counted(model, Budget(10**6), config(sim_task, executor, tmp_path / "w")).run()
    assert result.submitted and steps_seen == [1, 2] == [r.tags.step for r in model.requests]


def test_the_pipeline_runs_the_context_session_class(sim_task, executor, tmp_path):
    used = []

    class Marked(AgentSession):
        def run(self):
            used.append(self.config.pair)
            return super().run()

    model = ScriptedModel([tool_call("submit", {"summary": "nothing"})])
    ctx = HelixContext(task=sim_task, strategy=initial_strategy(), config=get_config("A"), model=model,
                       budget=Budget(10**6), executor=executor, work_dir=tmp_path / "work", session_class=Marked)
    pair = Pair(index=1, direction="the boundary")
    run_session(ctx, pair, "generation", 0)
    assert used == [1] and pair.sessions == ["submitted"]
    assert any("the boundary" in m.content for m in model.requests[0].messages)


def test_a_scripted_agent_session_through_the_budget(sim_task, executor, tmp_path):
    model = ScriptedModel([tool_call("write_file", {"path": "suite/test_a.py", "content": "def test_a():\n    pass\n"}),
                           "no tool this time",
                           tool_call("submit", {"summary": "done"})], usage=Usage(20, 5))
    ledger = MemoryLedger()
    budget = Budget(10**6, sink=ledger)
    result = run_agent_session(model, budget, SessionConfig(task=sim_task, strategy=initial_strategy(),
                                                            workspace_root=tmp_path / "w", executor=executor))
    assert result.submitted and result.steps == 3 and result.summary == "done"
    assert (result.workspace.suite / "test_a.py").read_text().startswith("def test_a")
    assert budget.used == 75 and [r["model"] for r in ledger.rows] == ["test:scripted"] * 3
    assert model.requests[2].messages[-1].content.startswith("error: your reply called no tool")
    traj = Trajectory.load(result.trajectory_path)
    assert all(step["simulated"] for step in traj.steps)


def test_a_single_call_role_with_a_scripted_reply(sim_task):
    model = ScriptedModel(['{"verdict": "revise", "reasons": ["r"], "suspect_tests": ["test_a"]}'])
    review = review_suite(model, Budget(10**6), sim_task, initial_strategy(), "src", {"t.py": ""}, "")
    assert review.parsed and review.suspect_tests == ("test_a",)
    assert model.requests[0].tags.role == "review"
