"""The local backend: at most `jobs` at once, every result to the calling thread, failures raised."""

import os
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
    assert default_jobs(["sim:weak"]) == (os.cpu_count() or 1)  # CPU-bound: one task per core
    with pytest.raises(UserError, match="--ray-address needs --backend ray"):
        make_backend("local", 2, lambda j: j, None, "127.0.0.1:6379")
    with pytest.raises(UserError, match="unknown backend"):
        make_backend("dask", 2, lambda j: j)


def test_worker_settings_split_rate_limits_and_install_model_settings(monkeypatch):
    from testhelix.llm import ratelimit, registry
    from testhelix.parallel import WorkerSettings

    settings = WorkerSettings(executor_workers=1, coverage=False, panel=False, work_root="/nonexistent",
                              concurrent_pairs=False, call_timeout_s=30.0, context_windows=(("sim:weak", 50_000),),
                              rate_limits=(("sim:weak", 120.0, None), ("sim:strong", None, 9000.0)))
    part = settings.for_workers(3)
    assert part.rate_limits == (("sim:weak", 40.0, None), ("sim:strong", None, 3000.0))
    assert part.call_timeout_s == 30.0 and part.context_windows == settings.context_windows
    configured = []
    monkeypatch.setattr(registry, "_CONTEXT_OVERRIDES", {})
    monkeypatch.setattr(ratelimit, "configure", lambda name, rpm, tpm: configured.append((name, rpm, tpm)))
    part.apply_model_settings()
    assert registry._CONTEXT_OVERRIDES == {"sim:weak": 50_000} and configured == list(part.rate_limits)


def test_run_command_hands_its_model_settings_to_the_backend(tmp_path, monkeypatch):
    """`testhelix run` puts --call-timeout, --context-window, --rpm/--tpm into the worker settings."""
    from click.testing import CliRunner

    from testhelix.cli import cli
    from testhelix.commands import run as run_command

    seen = {}

    class Stop(Exception):
        pass

    def capture(kind, jobs, evaluate, settings=None, address=None):
        seen["settings"] = settings
        raise Stop

    monkeypatch.setattr(run_command, "make_backend", capture)
    CliRunner().invoke(cli, ["run", "--pack", "katas", "--split", "test", "--config", "C",
                             "--model", "sim:weak", "--limit", "1", "--no-coverage", "--run", str(tmp_path / "run"),
                             "--call-timeout", "45", "--context-window", "64000", "--rpm", "90", "--tpm", "80000",
                             "--workers", "1", "--json"])
    s = seen["settings"]
    assert s.call_timeout_s == 45.0 and s.context_windows == (("sim:weak", 64000),)
    assert s.rate_limits == (("sim:weak", 90.0, 80000.0),)


def test_execution_servers_for_concurrent_callers():
    from testhelix.parallel import execution_servers

    assert execution_servers(2, 1) == 2                   # one task at a time: the configured count
    assert execution_servers(2, 16) == 4                  # shared by many: two servers per execution slot
    assert execution_servers(2, 3) == 3 and execution_servers(5, 2) == 5   # never above jobs, never below workers
