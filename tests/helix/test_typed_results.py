"""Typed task results (`Finished | Incomplete`, testhelix/helix/results.py) from the runner through
the local and Ray backends to the store and AutoSaddler's evaluator (sim:* models are test doubles).

An evaluation the provider prevented is never a score: the evaluator raises it and stores its
cause, and yields nothing for it."""

from __future__ import annotations

import pickle
import tempfile

import pytest

from autosaddler.evaluator import HelixStrategyEvaluator
from testhelix.core.errors import EvaluationIncomplete
from testhelix.helix.config import get_config
from testhelix.helix.results import Finished, Incomplete, TaskResult, WorkerRecords
from testhelix.helix.runner import HelixRunner
from testhelix.llm.base import ModelUnavailable
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.testing import FunctionModel
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.tasks.task import Task

MODEL = model_ref("sim:strong")


def failing_after(calls: int):
    """A model factory whose models fail (the provider is overloaded) from call `calls` + 1 on."""
    def factory(name, task, seed):
        inner = create_model(name, task=task, seed=seed)

        def complete(request):
            if model.calls > calls:
                raise ModelUnavailable("HTTP 529 after retries", status=529, cause="overloaded")
            return inner.complete(request)
        model = FunctionModel(complete, name=inner.name, context_window=inner.context_window)
        return model
    return factory


def evaluate(runner: HelixRunner, task: Task, label: str) -> list[TaskResult]:
    return [result for _, result in runner.evaluate_jobs([runner.job(task, Strategy(), get_config("A"), MODEL, label)])]


@pytest.mark.slow
def test_a_finished_result_is_typed_whole_and_stored_as_its_row(tmp_path, executor, task):
    runner = HelixRunner(RunStore(tmp_path / "run"), executor, tmp_path / "work", coverage=False)
    try:
        (result,) = evaluate(runner, task, f"{MODEL}/A")
        assert isinstance(result, Finished) and result.records == WorkerRecords()
        # what crosses a process boundary (Ray pickles it) comes back equal
        assert pickle.loads(pickle.dumps(result)) == result
        assert result.metrics.columns()["F"] in (0, 1) and result.usage.calls > 0 and result.simulated
        runner.record(task, result)
        (stored,) = runner.require_store().task_results(f"{MODEL}/A")
        assert {k: stored[k] for k in result.row()} == result.row()
        outcomes = runner.require_store().task_outcomes(f"{MODEL}/A")
        assert [{k: o[k] for k in ("program_id", "role", "label", "status", "reason")} for o in outcomes] == \
            sorted(result.outcome_rows(), key=lambda r: str(r["program_id"]))
    finally:
        runner.require_store().close()


def test_the_runner_stores_an_incomplete_result_as_its_cause_never_a_row(tmp_path, executor, task):
    runner = HelixRunner(RunStore(tmp_path / "run"), executor, tmp_path / "work", model_factory=failing_after(2),
                         coverage=False)
    seen: list[TaskResult | None] = []
    try:
        runner.run([task], [(MODEL, get_config("A"), initial_strategy())], lambda label, r: seen.append(r))
        store = runner.require_store()
        assert store.task_results() == [] and store.task_outcomes() == []
        (pending,) = store.unresolved_incomplete()
    finally:
        runner.require_store().close()
    (result,) = seen
    assert isinstance(result, Incomplete) and result.cause == "overloaded" and result.usage.calls == 3
    assert (pending.task_id, pending.cause) == (task.id, "overloaded")


def test_the_strategy_evaluator_never_scores_an_incomplete_result(tmp_path, executor, task):
    runner = HelixRunner(RunStore(tmp_path / "run"), executor, tmp_path / "work", model_factory=failing_after(2),
                         coverage=False, panel=False)
    evaluator = HelixStrategyEvaluator(runner, {task.id: task}, MODEL, get_config("A"), "search")
    scored = []
    try:
        with pytest.raises(EvaluationIncomplete, match="overloaded"):
            for task_id, score in evaluator.evaluate_each(Strategy(), [task.id]):
                scored.append((task_id, score))
        pending = runner.require_store().unresolved_incomplete()
    finally:
        runner.require_store().close()
    assert scored == []                                   # nothing of the prevented evaluation became a score
    assert [(p.run_label, p.task_id, p.cause) for p in pending] == \
        [(f"search:{Strategy().content_hash()}", task.id, "overloaded")]


def test_the_strategy_evaluator_scores_a_finished_result_by_its_reference_transition(tmp_path, executor, task):
    runner = HelixRunner(RunStore(tmp_path / "run"), executor, tmp_path / "work", coverage=False, panel=False)
    evaluator = HelixStrategyEvaluator(runner, {task.id: task}, MODEL, get_config("A"), "search")
    try:
        (finished,) = evaluate(runner, task, evaluator.label(Strategy()))
        scores = evaluator.evaluate(Strategy(), [task.id])
    finally:
        runner.require_store().close()
    assert isinstance(finished, Finished)
    score = scores[task.id]
    assert score.trace is not None and score.success == int(finished.metrics.indicators.F) == score.trace.success
    assert score.usage == finished.usage


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")                           # short: socket paths
    ray.init(num_cpus=1, include_dashboard=False, _node_ip_address="127.0.0.1", _temp_dir=temp,
             log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_a_ray_worker_result_arrives_typed_and_its_records_are_stored_once(tmp_path, executor, task, ray_cluster):
    from testhelix.parallel import WorkerSettings
    from testhelix.parallel.build import worker_runner
    from testhelix.parallel.ray_backend import RayBackend
    from testhelix.run.setup import Concurrency, RunSetup

    local = HelixRunner(RunStore(tmp_path / "local"), executor, tmp_path / "lw", coverage=False)
    remote = HelixRunner(RunStore(tmp_path / "ray"), executor, tmp_path / "rw", coverage=False)
    setup = RunSetup(concurrency=Concurrency(tasks_in_flight=1, execution_slots=1), backend="ray")
    settings = WorkerSettings(setup=setup, coverage=False, panel=True, work_root=str(tmp_path / "worker"))
    remote.backend = RayBackend(settings, worker_runner, 1)
    try:
        (expected,) = evaluate(local, task, f"{MODEL}/A")
        (result,) = evaluate(remote, task, f"{MODEL}/A")
        calls = remote.require_store().model_calls(f"{MODEL}/A")
    finally:
        remote.backend.close()
        local.require_store().close()
        remote.require_store().close()
    assert isinstance(expected, Finished) and isinstance(result, Finished)
    assert result.records == WorkerRecords()              # taken off once stored by the driver
    assert len(calls) == result.usage.calls > 0           # the worker's ledger rows, stored by the driver
    same = {k: v for k, v in result.row().items() if k != "wall_s"}
    assert same == {k: v for k, v in expected.row().items() if k != "wall_s"}
    assert result.outcomes == expected.outcomes and result.metrics == expected.metrics
