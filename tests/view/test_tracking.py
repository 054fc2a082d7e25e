"""MLflow tracking into a local file store (no server): params, metrics per node and iteration,
artifacts; and a clear error when the extra is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autosaddler.cli import main as saddler_cli


@pytest.fixture
def mlflow_env(monkeypatch, tmp_path):
    mlflow = pytest.importorskip("mlflow", reason="the mlflow extra is not installed (CI installs it)")
    for name in ("MLFLOW_ALLOW_FILE_STORE", "MLFLOW_TRACKING_URI"):
        monkeypatch.delenv(name, raising=False)  # restored afterwards; the code sets what it needs
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return mlflow, (tmp_path / "mlruns").as_uri()


@pytest.mark.slow
def test_search_run_is_logged(search_run, mlflow_env, tmp_path, capsys):
    from autosaddler.search_mlflow import track_search

    mlflow, uri = mlflow_env
    run_id = track_search(search_run, uri)  # the code itself enables MLflow's file store for file:// URIs
    assert f"logged to MLflow: {uri} (experiment autosaddler-search" in capsys.readouterr().err  # says where
    client = mlflow.tracking.MlflowClient(uri)
    run = client.get_run(run_id)
    assert run.data.tags["simulated"] == "true" and run.data.tags["kind"] == "search"
    params = run.data.params
    assert params["model"] == "sim:weak" and params["optimizer_model"] == "sim:strong"
    assert params["best.node"] == "n004" and params["strategy.agentSteps"] == "16"
    assert params["config.train_minibatch_size"] == "3"
    history = [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, "dev_score")]
    assert sorted(history) == [(0, 0.4), (3, 0.55), (4, 0.6)]
    assert run.data.metrics["node/n003/dev_score"] == 0.55
    regressions = {m.step: m.value for m in client.get_metric_history(run.info.run_id, "minibatch_regressions")}
    assert regressions == {2: 1.0, 3: 0.0, 4: 0.0}
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"dag.json", "frozen_strategy.json", "report.html"} <= artifacts
    with open(client.download_artifacts(run.info.run_id, "dag.json", str(tmp_path))) as fh:
        dag = json.load(fh)
    assert len(dag["nodes"]) == 5 and len(dag["edges"]) == 4



@pytest.mark.slow
def test_helix_run_is_one_parent_with_a_nested_run_per_configuration_in_sqlite(helix_run, mlflow_env, tmp_path):
    from testhelix.store.runstore import RunStore
    from testhelix.view.mlflow_log import run_meta, track_helix_run

    mlflow, _ = mlflow_env
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"   # works with current MLflow, no environment variable
    pack = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task"
    store = RunStore(helix_run)
    store.put_state("helix-run", run_meta(pack, "test", None, 7, 2, False))
    store.close()
    parent_id = track_helix_run(helix_run, uri)
    client = mlflow.tracking.MlflowClient(uri)
    parent = client.get_run(parent_id)
    params = parent.data.params
    assert (params["split"], params["seed"], params["limit"], params["limit_rule"]) == ("test", "7", "2",
                                                                                         "sample across katas")
    assert params["pack"] == str(pack) and len(params["pack_digest"]) == 64
    artifacts = {a.path for a in client.list_artifacts(parent_id)}
    assert {"report.html", "results.json", "report_trajectories"} <= artifacts
    assert (tmp_path / "mlartifacts").is_dir()      # next to the database, not in the working folder
    children = client.search_runs([parent.info.experiment_id], f"tags.mlflow.parentRunId = '{parent_id}'")
    by_label = {c.data.tags["run_label"]: c for c in children}
    assert sorted(by_label) == ["sim:strong/A", "sim:strong/C"]
    assert by_label["sim:strong/C"].data.params["config"] == "C"
    assert by_label["sim:strong/C"].data.metrics["reference_acceptance"] == 0.5
    assert by_label["sim:strong/A"].data.metrics["n"] == 2
    assert by_label["sim:strong/A"].data.tags["simulated"] == "true"


@pytest.mark.slow
def test_gate_logs_its_decision(mlflow_env, tmp_path):
    mlflow, uri = mlflow_env
    csv = tmp_path / "outcomes.csv"
    csv.write_text("task,challenger,baseline\n" + "".join(f"t{i},1,0\n" for i in range(6)) + "t6,0,1\nt7,1,1\n")
    with pytest.raises(SystemExit) as info:
        saddler_cli(["gate", "--outcomes", str(csv), "--mlflow-uri", uri])
    assert info.value.code == 0
    client = mlflow.tracking.MlflowClient(uri)
    exp = client.get_experiment_by_name("autosaddler-gate")
    (run,) = client.search_runs([exp.experiment_id])
    assert run.data.metrics["wins"] == 6 and run.data.metrics["losses"] == 1
    assert run.data.metrics["p_value"] == pytest.approx(8 / 128) and run.data.metrics["promoted"] == 0.0
    assert {a.path for a in client.list_artifacts(run.info.run_id)} == {"gate_result.json", "outcomes.csv"}


def test_missing_mlflow_is_a_clear_error_before_any_work(monkeypatch, tmp_path, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    with pytest.raises(SystemExit) as info:
        saddler_cli(["gate", "--outcomes", str(tmp_path / "missing.csv"), "--mlflow-uri", "file:///x"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "MLflow is not installed" in err and "missing.csv" not in err


@pytest.mark.slow
def test_gate_in_run_mode_logs_its_files_and_report(search_run, mlflow_env, tmp_path):
    from autosaddler.gate import PairedOutcome, decide
    from autosaddler.search_mlflow import track_gate_command
    from testhelix.core.paths import strategies_dir
    from testhelix.strategy.model import load_strategy

    mlflow, uri = mlflow_env
    (search_run / "gate_report.md").write_text("# Release gate\n")
    (search_run / "gate_outcomes.csv").write_text("task,challenger,baseline\nt1,1,0\n")
    initial = strategies_dir() / "initial.json"
    result = decide([PairedOutcome("t1", 1, 0), PairedOutcome("t2", 1, 1)])
    run_id = track_gate_command(uri, result, outcomes_csv=None, challenger=initial, baseline=initial,
                                pack=tmp_path, split="release", model="sim:weak", run_dir=search_run)
    run = mlflow.tracking.MlflowClient(uri).get_run(run_id)
    assert run.data.params["challenger_hash"] == load_strategy(initial).content_hash()
    assert run.data.tags["simulated"] == "true" and run.data.metrics["wins"] == 1
    artifacts = {a.path for a in mlflow.tracking.MlflowClient(uri).list_artifacts(run_id)}
    assert artifacts == {"gate_result.json", "initial.json", "gate_report.md", "gate_outcomes.csv", "report.html"}
    assert track_gate_command(None, result, outcomes_csv=None, challenger=None, baseline=None, pack=None,
                              split="release", model=None, run_dir=None) is None
