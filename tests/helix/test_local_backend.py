"""The local backend: at most `jobs` at once, every result to the calling thread, failures raised."""

import os
import threading
import time

import pytest

from testhelix.core.errors import UserError
from testhelix.llm.registry import model_ref
from testhelix.parallel import default_jobs
from testhelix.parallel.build import make_backend
from testhelix.parallel.local import LocalBackend
from testhelix.run.setup import Concurrency, ExecutionChoice, ModelSettings, RunSetup


def test_bounded_concurrency_and_results_in_the_calling_thread():
    lock, state = threading.Lock(), {"now": 0, "peak": 0}

    def work(item):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.02 * (item % 3))            # finish out of order
        with lock:
            state["now"] -= 1
        return {"item": item, "thread": threading.get_ident()}

    backend = LocalBackend[int](4)
    started: list[int] = []
    backend.on_start = started.append
    seen = list(backend.run(list(range(12)), work))
    assert sorted(i for i, _ in seen) == list(range(12)) and all(r["item"] == i for i, r in seen)
    assert state["peak"] <= 4 and started == list(range(12))          # submitted in the order given
    assert all(r["thread"] != threading.get_ident() for _, r in seen)


def test_one_job_runs_in_order_in_this_thread():
    seen = list(LocalBackend[int](1).run([3, 1, 2], lambda i: threading.get_ident()))
    assert [i for i, _ in seen] == [3, 1, 2] and {t for _, t in seen} == {threading.get_ident()}


def test_a_failure_reaches_the_caller():
    def work(i):
        if i == 2:
            raise ValueError("task 2 failed")
        return i

    with pytest.raises(ValueError, match="task 2"):
        list(LocalBackend[int](3).run([0, 1, 2, 3], work))


def test_defaults_and_bad_choices():
    assert default_jobs([model_ref("anthropic:claude-opus-4-6")]) == 8
    assert default_jobs([model_ref("openai-compatible:m@http://127.0.0.1:1/v1"), model_ref("anthropic:x")]) == 4
    assert default_jobs([model_ref("sim:weak?latency=1")]) == 8
    assert default_jobs([model_ref("sim:weak")]) == (os.cpu_count() or 1)  # CPU-bound: one task per core
    with pytest.raises(UserError, match="--ray-address needs --backend ray"):
        make_backend(RunSetup(concurrency=Concurrency(2), ray_address="127.0.0.1:6379"))
    with pytest.raises(UserError, match="unknown backend"):
        make_backend(RunSetup(backend="dask"))
    with pytest.raises(UserError, match="not available for this command"):
        make_backend(RunSetup(backend="ray"))                       # no worker builder given


def test_worker_settings_carry_the_run_setup_with_a_share_of_the_rate_limits():
    from testhelix.parallel import WorkerSettings

    models = ModelSettings(call_timeout_s=30.0, context_windows=(("sim:weak", 50_000),),
                           rate_limits=(("sim:weak", 120.0, None), ("sim:strong", None, 9000.0)))
    setup = RunSetup(models=models, execution=ExecutionChoice("forkserver", "plain"), concurrency=Concurrency(4, 2))
    settings = WorkerSettings(setup=setup, coverage=False, panel=False, work_root="/nonexistent")
    part = settings.for_workers(3)
    assert part.setup.models.rate_limits == (("sim:weak", 40.0, None), ("sim:strong", None, 3000.0))
    assert part.setup.models.call_timeout_s == 30.0 and part.setup.models.context_windows == models.context_windows
    assert part.setup.execution == setup.execution and part.setup.concurrency == setup.concurrency
    assert settings.setup.models.rate_limits == models.rate_limits          # the driver's own is unchanged


def test_concurrency_is_three_named_quantities():
    one = Concurrency(tasks_in_flight=1, execution_slots=2)
    assert not one.pairs_in_parallel and one.fork_servers() == 2    # one task at a time: the configured slots
    many = Concurrency(tasks_in_flight=16, execution_slots=2)
    assert many.pairs_in_parallel and many.fork_servers() == 4      # shared by many: two servers per slot
    assert Concurrency(3, 2).fork_servers() == 3 and Concurrency(2, 5).fork_servers() == 5  # never above tasks,
    # never below the slots
