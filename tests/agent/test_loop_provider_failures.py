"""The agent loop and the pipeline facing provider failures: no second retry layer, a session
ended by a provider failure propagates (the host marks the task incomplete), context refusals are
answered by trimming, and a strategy larger than the model's window is clamped with a note."""

from __future__ import annotations

import json

import pytest

from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.agent.loop import SessionConfig, run_agent_session
from testhelix.core.errors import EvaluationIncomplete
from testhelix.helix.config import get_config
from testhelix.helix.runner import HelixRunner
from testhelix.llm.base import ContextOverflowError, ModelAuthError, ModelUnavailable
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.testing import FunctionModel
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import initial_strategy


def failing_on(inner, errors: dict[int, Exception]) -> FunctionModel:
    """The inner model, except that the given call numbers (1-based) raise the scripted errors."""
    model = FunctionModel(lambda request: errors.get(model.calls) or inner.complete(request),
                          name=inner.name, context_window=inner.context_window)
    return model


def test_a_strategy_larger_than_the_window_is_clamped_in_the_session(tmp_path, sim_task, executor):
    model = create_model(model_ref("sim:strong"), task=sim_task, seed=1, context_window=4000)
    strategy = initial_strategy().model_copy(update={"contextTokens": 64000})
    result = run_agent_session(model, Budget(10**6), SessionConfig(
        task=sim_task, strategy=strategy, workspace_root=tmp_path / "p", executor=executor))
    meta = json.loads(result.trajectory_path.read_text())["meta"]
    assert "clamped to 4000" in meta["context_note"]


def test_a_context_refusal_is_answered_by_trimming(tmp_path, sim_task, executor):
    model = failing_on(create_model(model_ref("sim:strong"), task=sim_task, seed=1), {2: ContextOverflowError("too long")})
    ledger = MemoryLedger()
    result = run_agent_session(model, Budget(10**6, sink=ledger), SessionConfig(
        task=sim_task, strategy=initial_strategy(), workspace_root=tmp_path / "p", executor=executor))
    assert result.exit in ("submitted", "step_limit") and model.calls >= 3
    assert [r["status"] for r in ledger.rows[:3]] == ["ok", "error", "ok"]


def test_an_unavailable_model_ends_the_session_without_a_loop_retry(tmp_path, sim_task, executor):
    model = failing_on(create_model(model_ref("sim:strong"), task=sim_task, seed=1), {2: ModelUnavailable("503", status=503)})
    with pytest.raises(ModelUnavailable):
        run_agent_session(model, Budget(10**6), SessionConfig(
            task=sim_task, strategy=initial_strategy(), workspace_root=tmp_path / "p", executor=executor,
            trajectory_path=tmp_path / "t.json"))
    assert model.calls == 2                                   # the SDK retried; the loop does not
    assert json.loads((tmp_path / "t.json").read_text())["exit"] == "model_error:server_error"


@pytest.mark.parametrize("config,call", [("C", 1), ("C", 5), ("C", 12), ("A", 3)])
def test_every_role_marks_the_task_incomplete_never_a_traceback(config, call, tmp_path, sim_task, executor):
    """Call 1 of C is planning; later calls are generation, self-correction, review, feedback."""
    store = RunStore(tmp_path / "run")
    def factory(name, task, seed):
        return failing_on(create_model(name, task=task, seed=seed),
                          {call: ModelUnavailable("HTTP 529", status=529, cause="overloaded")})

    runner = HelixRunner(store, executor, tmp_path / "work", model_factory=factory, coverage=False)
    cfg = get_config(config, token_cap=400_000)
    with pytest.raises(EvaluationIncomplete, match="incomplete \\(overloaded\\)"):
        runner.run_one(sim_task, initial_strategy(), cfg, model_ref("sim:strong"), "sim:strong/" + config)
    assert store.task_results() == [] and store.task_outcomes() == []
    pending = store.unresolved_incomplete()
    assert [(p.task_id, p.cause) for p in pending] == [(sim_task.id, "overloaded")]
    roles = store.query("SELECT role FROM model_calls WHERE status = 'error'")[1]
    assert len(roles) == 1
    store.close()


def test_an_auth_error_in_any_role_stops_the_job(tmp_path, sim_task, executor):
    store = RunStore(tmp_path / "run")
    def factory(name, task, seed):
        return failing_on(create_model(name, task=task, seed=seed), {1: ModelAuthError("check ANTHROPIC_API_KEY")})

    runner = HelixRunner(store, executor, tmp_path / "work", model_factory=factory, coverage=False)
    with pytest.raises(ModelAuthError):
        runner.run_one(sim_task, initial_strategy(), get_config("C"), model_ref("sim:strong"), "sim:strong/C")
    assert store.unresolved_incomplete() == [] and store.task_results() == []
    store.close()
