"""MLflow tracking of a strategy search and of a release gate (see testhelix/view/mlflow_log.py).

A search logs its settings and the best strategy's fields as params, per-iteration and per-node
metrics (development score, minibatch successes, optimizer tokens), and the frozen strategy
document, the DAG as JSON and the HTML report as artifacts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from autosaddler.dag import read_search_run
from autosaddler.gate import GateResult
from testhelix.llm.registry import is_simulated
from testhelix.view.mlflow_log import mlflow_run


def track_search(run_dir: Path, uri: str | None) -> str | None:
    if not uri:
        return None
    from autosaddler.freeze import frozen_document
    from autosaddler.view import render_search_report

    run_dir = Path(run_dir)
    dag, meta = read_search_run(run_dir)
    simulated = any(is_simulated(str(meta.get(k, ""))) for k in ("model", "optimizer_model"))
    tags = {"kind": "search", "simulated": str(simulated).lower(), "run_dir": str(run_dir.resolve())}
    with mlflow_run(uri, "autosaddler-search", run_dir.name, tags) as tracker:
        params = {k: meta.get(k) for k in ("pack", "model", "optimizer_model", "preset")}
        params["config"] = meta.get("config") or {}
        if dag.developed():
            best = dag.best()
            params["best"] = {"node": best.node_id, "hash": best.strategy_hash}
            params["strategy"] = best.strategy
        tracker.params(params)
        best_so_far = None
        for n in dag.nodes():
            step = n.iteration
            if n.dev_score is not None:
                best_so_far = n.dev_score if best_so_far is None else max(best_so_far, n.dev_score)
                tracker.metric("dev_score", n.dev_score, step)
                tracker.metric(f"node/{n.node_id}/dev_score", n.dev_score)
            tracker.metric("best_dev_score", best_so_far, step)
            if n.child_outcomes:
                ps, cs = sum(n.parent_outcomes.values()), sum(n.child_outcomes.values())
                regressions = sum(1 for t, p in n.parent_outcomes.items() if p and not n.child_outcomes.get(t))
                tracker.metric("minibatch_parent_successes", ps, step)
                tracker.metric("minibatch_child_successes", cs, step)
                tracker.metric("minibatch_regressions", regressions, step)
                tracker.metric(f"node/{n.node_id}/minibatch_child_successes", cs)
            tokens = sum(int(s.get("tokens", 0)) for s in (n.optimizer_usage or {}).values())
            tracker.metric("optimizer_tokens_cumulative", tokens, step)
        tracker.metric("nodes", dag.graph.number_of_nodes())
        tracker.json_artifact(dag.to_json(), "dag.json")
        if dag.developed():
            tracker.json_artifact(frozen_document(run_dir), "frozen_strategy.json")
        with tempfile.TemporaryDirectory(prefix="autosaddler-mlflow-") as tmp:
            render_search_report(run_dir, Path(tmp) / "report.html")
            tracker.artifact(Path(tmp) / "report.html")
        return tracker.run_id


def track_gate(uri: str, result: GateResult, params: dict, run_dir: Path | None, files: list[Path]) -> str:
    """Log a gate decision; with a run directory also its report files and the HTML report."""
    simulated = is_simulated(str(params.get("model") or ""))
    tags = {"kind": "gate", "simulated": str(simulated).lower()}
    with mlflow_run(uri, "autosaddler-gate", Path(run_dir).name if run_dir else "gate", tags) as tracker:
        tracker.params({k: v for k, v in params.items() if v is not None})
        data = result.to_json()
        for name in ("n", "wins", "losses", "challenger_successes", "baseline_successes", "difference", "p_value"):
            tracker.metric(name, data[name])
        for level in ("ci95", "ci99"):
            tracker.metric(f"{level}_low", data[level][0])
            tracker.metric(f"{level}_high", data[level][1])
        tracker.metric("promoted", 1.0 if result.promoted else 0.0)
        tracker.json_artifact(data, "gate_result.json")
        for path in files:
            tracker.artifact(path)
        if run_dir is not None and (Path(run_dir) / "run.duckdb").is_file():
            from testhelix.view import render_run_report

            with tempfile.TemporaryDirectory(prefix="autosaddler-mlflow-") as tmp:
                render_run_report(Path(run_dir), Path(tmp) / "report.html")
                tracker.artifact(Path(tmp) / "report.html")
        return tracker.run_id


def track_gate_command(uri: str | None, result: GateResult, *, outcomes_csv: Path | None, challenger: Path | None,
                       baseline: Path | None, pack: Path | None, split: str, model: str | None,
                       run_dir: Path | None) -> str | None:
    """What `autosaddler gate --mlflow-uri` logs: the inputs it was given and the files it wrote."""
    if not uri:
        return None
    from testhelix.strategy.model import load_strategy

    params: dict = {"split": split, "model": model, "pack": str(pack) if pack else None,
                    "outcomes_csv": str(outcomes_csv) if outcomes_csv else None}
    files: list[Path] = [Path(outcomes_csv)] if outcomes_csv else []
    for role, path in (("challenger", challenger), ("baseline", baseline)):
        if path is not None:
            params[f"{role}_file"] = str(path)
            params[f"{role}_hash"] = load_strategy(path).content_hash()
            files.append(Path(path))
    if run_dir is not None and not outcomes_csv:
        files += [Path(run_dir) / "gate_report.md", Path(run_dir) / "gate_outcomes.csv"]
    return track_gate(uri, result, params, None if outcomes_csv else run_dir, files)
