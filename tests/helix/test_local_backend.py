"""The local backend: at most `jobs` at once, every result to the calling thread, failures raised."""

import threading
import time

import pytest

from testhelix.errors import UserError
from testhelix.parallel import default_jobs, make_backend
from testhelix.parallel.local import LocalBackend


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

    backend = LocalBackend(work, 4)
    started = []
    backend.on_start = started.append
    seen = list(backend.run(list(range(12))))
    assert sorted(i for i, _ in seen) == list(range(12)) and all(r["item"] == i for i, r in seen)
    assert state["peak"] <= 4 and started == list(range(12))          # submitted in the order given
    assert all(r["thread"] != threading.get_ident() for _, r in seen)


def test_one_job_runs_in_order_in_this_thread():
    seen = list(LocalBackend(lambda i: threading.get_ident(), 1).run([3, 1, 2]))
    assert [i for i, _ in seen] == [3, 1, 2] and {t for _, t in seen} == {threading.get_ident()}


def test_a_failure_reaches_the_caller():
    def work(i):
        if i == 2:
            raise ValueError("task 2 failed")
        return i

    with pytest.raises(ValueError, match="task 2"):
        list(LocalBackend(work, 3).run([0, 1, 2, 3]))


def test_defaults_and_bad_choices():
    assert default_jobs(["anthropic:claude-opus-4-6"]) == 8
    assert default_jobs(["openai-compatible:m@http://127.0.0.1:1/v1", "anthropic:x"]) == 4
    assert default_jobs(["sim:weak?latency=1"]) == 8
    with pytest.raises(UserError, match="--ray-address needs --backend ray"):
        make_backend("local", 2, lambda j: j, None, "127.0.0.1:6379")
    with pytest.raises(UserError, match="unknown backend"):
        make_backend("dask", 2, lambda j: j)
