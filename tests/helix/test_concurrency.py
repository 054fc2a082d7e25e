"""Results do not depend on --jobs, on completion order, or on the backend (sim:* models are test
doubles; a small latency with seeded jitter makes tasks and pairs finish in a scrambled order).

A small `testhelix run` (configuration C, so pairs and reviews run concurrently) and a small
`autosaddler search` are each run with --jobs 1, --jobs 8 and, when Ray is installed, --jobs 4 on a
local Ray cluster of 2 CPUs started by the test; stored results and the DAG must be identical.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from autosaddler.cli import cli as autosaddler_cli
from testhelix.commands.cli import cli as helix_cli
from testhelix.store.runstore import RunStore

pytestmark = pytest.mark.slow

PACK = os.environ.get("TESTHELIX_TEST_PACK", "katas")  # a folder, or the bundled pack by name
RUN_MODEL = "sim:weak?latency=0.02"
SEARCH_CONFIG = {"train_minibatch_size": 2, "completed_train_iterations": 1, "max_candidate_proposals": 2,
                 "development_limit": 2}
DAG_FIELDS = ("node_id", "iteration", "strategy_hash", "strategy", "edit", "status", "reason", "parent_outcomes",
              "child_outcomes", "dev_score")


def invoke(cli, *args: str) -> None:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def run_snapshot(run: Path) -> dict:
    store = RunStore(run, read_only=True)
    try:
        results = [{k: v for k, v in r.items() if k not in ("wall_s", "attempt_id")}  # attempt: per process
                   for r in store.task_results()]
        for r in results:
            detail = json.loads(r["detail"])
            r["detail"] = detail
        outcomes = store.task_outcomes()
        _, calls = store.query("SELECT task_id, role, pair, round, count(*), sum(input_tokens), sum(output_tokens) "
                               "FROM model_calls GROUP BY ALL ORDER BY ALL")
        _, execs = store.query("SELECT key, status FROM executions ORDER BY key")
    finally:
        store.close()
    return {"results": results, "outcomes": outcomes, "calls": calls, "executions": execs}


def search_snapshot(run: Path) -> list[dict]:
    store = RunStore(run, read_only=True)
    try:
        _, rows = store.query(f"SELECT {', '.join(DAG_FIELDS)} FROM dag_nodes ORDER BY node_id")
        _, edges = store.query("SELECT parent_id, child_id FROM dag_edges ORDER BY ALL")
        _, evals = store.query("SELECT strategy_hash, task_id, split, success, trace FROM search_evals ORDER BY 1, 2")
    finally:
        store.close()
    return [dict(zip(DAG_FIELDS, r)) for r in rows] + [{"edges": edges, "evals": evals}]


def helix_run(run: Path, jobs: int, *extra: str) -> dict:
    workers = () if "--workers" in extra else ("--workers", "2")
    invoke(helix_cli, "run", "--pack", str(PACK), "--split", "test", "--config", "C", "--model", RUN_MODEL,
           "--limit", "3", "--no-coverage", "--jobs", str(jobs), "--run", str(run), "--json", *workers, *extra)
    return run_snapshot(run)


@pytest.fixture(scope="module")
def search_setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("search")
    split = root / "splits.json"
    invoke(helix_cli, "splits", "make", "--pack", str(PACK), "--out", str(split), "--proposal", "6",
           "--development", "2", "--release", "2", "--test", "2")
    config = root / "mini.json"
    config.write_text(json.dumps(SEARCH_CONFIG))
    return root, split, config


def search(run: Path, setup, jobs: int, *extra: str) -> list[dict]:
    _, split, config = setup
    invoke(autosaddler_cli, "search", "--pack", str(PACK), "--split-file", str(split), "--model",
           "sim:strong?latency=0.01", "--optimizer-model", "sim:strong", "--run", str(run), "--preset", "demo",
           "--settings", str(config), "--jobs", str(jobs), "--json", *extra)
    return search_snapshot(run)


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    return helix_run(tmp_path_factory.mktemp("run") / "jobs1", 1)


@pytest.fixture(scope="module")
def reference_search(tmp_path_factory, search_setup):
    return search(tmp_path_factory.mktemp("s") / "jobs1", search_setup, 1)


def test_run_jobs_8_equals_jobs_1(tmp_path, reference_run):
    assert reference_run["results"] and len(reference_run["outcomes"]) >= 3
    assert any(r["detail"]["events"] for r in reference_run["results"])
    assert helix_run(tmp_path / "jobs8", 8) == reference_run


def test_search_jobs_8_equals_jobs_1(tmp_path, search_setup, reference_search):
    assert reference_search[0]["status"] == "root" and len(reference_search) >= 3
    assert search(tmp_path / "jobs8", search_setup, 8) == reference_search


def test_search_killed_with_jobs_8_resumes_to_the_jobs_1_dag(tmp_path, search_setup, reference_search):
    """kill -9 in the middle of a --jobs 8 search (after the root, while proposals are evaluated),
    `autosaddler resume --jobs 8`: the stored DAG, edges and evaluations equal the uninterrupted
    --jobs 1 search's."""
    _, split, config = search_setup
    run = tmp_path / "killed8"
    autosaddler = str(Path(sys.executable).parent / "autosaddler")
    proc = subprocess.Popen([autosaddler, "search", "--pack", str(PACK), "--split-file", str(split), "--model",
                             "sim:strong?latency=0.01", "--optimizer-model", "sim:strong", "--run", str(run),
                             "--preset", "demo", "--settings", str(config), "--jobs", "8"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None  # stdout=PIPE
    seen: list[str] = []
    while not any(line.lstrip().startswith("[") for line in seen):   # the root node is stored
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, "".join(seen)       # killed while it ran, not after it ended
    assert not any("search finished" in line for line in seen)
    resumed = subprocess.run([autosaddler, "resume", str(run), "--jobs", "8", "--json"], capture_output=True,
                             text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert search_snapshot(run) == reference_search


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    saved = {k: os.environ.get(k) for k in ("RAY_AUTH_MODE", "RAY_USAGE_STATS_ENABLED")}
    os.environ.update(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")   # nothing written to ~
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")                           # short: socket paths
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", _temp_dir=temp,
             log_to_driver=False)
    yield ray
    ray.shutdown()
    for k, v in saved.items():
        os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def test_ray_backend_run_equals_local(tmp_path, ray_cluster, reference_run):
    assert helix_run(tmp_path / "ray", 4, "--backend", "ray") == reference_run
    assert ray_cluster.is_initialized()          # the backend left the test's cluster running


def test_ray_backend_search_equals_local(tmp_path, ray_cluster, search_setup, reference_search):
    assert search(tmp_path / "ray", search_setup, 4, "--backend", "ray") == reference_search


def test_ray_workers_carry_the_drivers_run_setup(tmp_path, ray_cluster):
    """Each Ray worker rebuilds its executor and clients from the run's RunSetup, which travels in its
    settings: call timeout, context window, an equal part of the rate limits (workers do not share a
    limiter), and the executor and sandbox choice; nothing is inherited from the driver's process."""
    from testhelix.parallel import WorkerSettings
    from testhelix.parallel.build import worker_runner
    from testhelix.parallel.ray_backend import RayBackend
    from testhelix.run.setup import Concurrency, ExecutionChoice, ModelSettings, RunSetup

    models = ModelSettings(call_timeout_s=42.0, context_windows=(("sim:weak", 65_536),),
                           rate_limits=(("sim:weak", 120.0, 90_000.0),))
    setup = RunSetup(models=models, execution=ExecutionChoice("forkserver", "plain"),
                     concurrency=Concurrency(tasks_in_flight=2, execution_slots=1), backend="ray")
    settings = WorkerSettings(setup=setup, coverage=False, panel=False, work_root=str(tmp_path))
    backend = RayBackend(settings, worker_runner, jobs=2)
    try:
        count = len(backend.actors)
        seen = ray_cluster.get([a.setup.remote() for a in backend.actors])
        executions = ray_cluster.get([a.execution.remote() for a in backend.actors])
    finally:
        backend.close()
    assert count == 2
    share = ModelSettings(call_timeout_s=42.0, context_windows=(("sim:weak", 65_536),),
                          rate_limits=(("sim:weak", 60.0, 45_000.0),))
    assert seen == [RunSetup(models=share, execution=setup.execution, concurrency=setup.concurrency,
                             backend="ray")] * 2
    assert all(e["executor"] == "forkserver" and e["sandbox"] == "plain" and e["runner_version"].endswith("/plain")
               for e in executions)
