"""MLflow tracking (optional extra `testhelix[mlflow]`): `--mlflow-uri URI` on `testhelix run`,
`autosaddler search` and `autosaddler gate` logs what the run stored (params, metrics, artifacts).

Logging happens after the run from its store, so a run never depends on the tracking server and
the numbers in MLflow are exactly the stored ones. MLflow is imported only when asked for.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from testhelix.core.errors import UserError
from testhelix.llm.registry import is_simulated


def _remember_uri(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """Kept in the click context (not a function argument) so commands only add one call; checked
    before the run starts so a missing extra never costs a finished run its tracking."""
    if value:
        import importlib.util

        if importlib.util.find_spec("mlflow") is None:
            raise click.BadParameter("MLflow is not installed; install the extra: pip install -e '.[mlflow]'")
        ctx.meta["testhelix.mlflow_uri"] = value


mlflow_option = click.option("--mlflow-uri", default=None, metavar="URI", expose_value=False, callback=_remember_uri,
                             is_eager=True,  # a missing extra is reported before any other input is read
                             help="Also log params, metrics and artifacts to this MLflow tracking store "
                                  "(e.g. sqlite:///abs/mlflow.db, file:///abs/mlruns or http://127.0.0.1:5000; "
                                  "needs the mlflow extra).")


def requested_mlflow_uri() -> str | None:
    """The --mlflow-uri of the running command, if one was given."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get("testhelix.mlflow_uri") if ctx else None


PARAM_CHARS = 500  # long values (guidance, lessons) are cut here; the full text is in the artifacts


class Tracker:
    """The active MLflow run: small wrappers that keep names and values within MLflow's rules."""

    def __init__(self, mlflow: Any, run_id: str):
        self.mlflow = mlflow
        self.run_id = run_id

    def params(self, values: dict[str, Any]) -> None:
        flat = {k: (v if len(v) <= PARAM_CHARS else v[: PARAM_CHARS - 1] + "…")
                for k, v in flatten(values).items()}
        items = sorted(flat.items())
        for i in range(0, len(items), 100):  # MLflow takes at most 100 params per batch
            self.mlflow.log_params(dict(items[i:i + 100]))

    def metric(self, name: str, value: float | None, step: int | None = None) -> None:
        if value is not None:
            self.mlflow.log_metric(metric_name(name), float(value), step=step)

    def artifact(self, path: Path, folder: str | None = None) -> None:
        if Path(path).is_file():
            self.mlflow.log_artifact(str(path), artifact_path=folder)

    def folder(self, path: Path, folder: str | None = None) -> None:
        self.mlflow.log_artifacts(str(path), artifact_path=folder)

    @contextmanager
    def child(self, run_name: str, tags: dict[str, str]) -> Iterator[Tracker]:
        """A run nested under this one (one per configuration of a helix run)."""
        run = self.mlflow.start_run(run_name=run_name, nested=True, tags=tags)
        status = "FAILED"
        try:
            yield Tracker(self.mlflow, run.info.run_id)
            status = "FINISHED"
        finally:
            self.mlflow.end_run(status=status)

    def json_artifact(self, obj: Any, name: str) -> None:
        self.mlflow.log_text(json.dumps(obj, indent=2, default=str), name)


def flatten(values: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            out[metric_name(name)] = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return out


def metric_name(name: str) -> str:
    """MLflow names allow letters, digits, _ - . / : and spaces."""
    return "".join(c if c.isalnum() or c in "_-./: " else "_" for c in name)


def _import_mlflow(uri: str) -> Any:
    if uri.startswith("file:") or "://" not in uri:
        # MLflow 3 refuses its file store unless told it is wanted; a file:// URI on the command line
        # is exactly that request (the file store needs no server and no database).
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    # No usage reports leave the machine unless the user asks for them (MLflow 3 sends telemetry).
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    try:
        import mlflow
    except ImportError:
        raise UserError("--mlflow-uri: MLflow is not installed; install the extra with "
                        "pip install -e '.[mlflow]' (mlflow-skinny)") from None
    return mlflow


@contextmanager
def mlflow_run(uri: str, experiment: str, run_name: str, tags: dict[str, str]) -> Iterator[Tracker]:
    mlflow = _import_mlflow(uri)
    try:
        mlflow.set_tracking_uri(uri)
        if uri.startswith("sqlite:///") and mlflow.get_experiment_by_name(experiment) is None:
            # MLflow would put a database store's artifacts in ./mlartifacts of whatever folder the
            # command ran in; keep them next to the database instead.
            db = Path(uri.removeprefix("sqlite:///"))
            mlflow.create_experiment(experiment, artifact_location=(db.parent / "mlartifacts").resolve().as_uri())
        mlflow.set_experiment(experiment)
        run = mlflow.start_run(run_name=run_name, tags=tags)
    except Exception as err:  # noqa: BLE001 - any tracking-store failure is the user's URI
        raise UserError(f"--mlflow-uri {uri}: cannot start an MLflow run: {err}") from None
    status = "FAILED"
    try:
        yield Tracker(mlflow, run.info.run_id)
        status = "FINISHED"
    finally:
        mlflow.end_run(status=status)
    # Said once per command (on stderr: stdout may be a --json document): where to look.
    print(f"logged to MLflow: {uri} (experiment {experiment}, run {run_name!r}, run id {run.info.run_id})",
          file=sys.stderr)


def run_meta(pack: Path, split: str, split_file: Path | None, seed: int, limit: int | None, first: bool) -> dict:
    """What a helix run was asked for, kept in its store for tracking: pack (and its digest), split,
    seed, and the --limit sample."""
    from testhelix.tasks.splits import pack_digest, scan_pack

    return {"pack": str(pack), "pack_digest": pack_digest(scan_pack(Path(pack))), "split": split,
            "split_file": str(split_file) if split_file else None, "seed": seed, "limit": limit,
            "limit_rule": None if not limit else "first" if first else "sample across katas"}


def track_helix_run(run_dir: Path, uri: str | None) -> str | None:
    """Log a helix run: a parent MLflow run with what the run was asked for (pack, pack digest,
    split, seed, limit), the per-task results and the HTML report; and one nested run per
    configuration (run label) with its settings and metrics. Returns the parent's MLflow run id."""
    if not uri:
        return None
    from testhelix.prism.metric_table import COUNTS, METRICS
    from testhelix.view import render_run_report
    from testhelix.view.helix import collect_helix
    from testhelix.view.source import open_run

    run_dir = Path(run_dir)
    with open_run(run_dir) as opened:
        data = collect_helix(opened.store)
        served = opened.store.served_by_simulation()
        meta = opened.store.get_state("helix-run")
    simulated = bool(served) or any(is_simulated(str(c.get("model", ""))) for c in data["configs"].values())
    with mlflow_run(uri, "testhelix-run", run_dir.name, {"kind": "helix", "simulated": str(simulated).lower(),
                                                         "run_dir": str(run_dir.resolve())}) as tracker:
        tracker.params({**(meta if isinstance(meta, dict) else {}),
                        "configurations": sorted(data["configs"])})
        for r in data["runs"]:
            label = r["run_label"]
            label_simulated = label in served or is_simulated(label.split("/")[0])
            with tracker.child(label, {"kind": "helix-configuration", "run_label": label,
                                       "simulated": str(label_simulated).lower()}) as sub:
                sub.params(data["configs"].get(label, {}))
                for metric in (COUNTS[0], *METRICS, *COUNTS[1:]):   # the metric table's keys
                    sub.metric(metric.key, r.get(metric.key))
        tracker.json_artifact({"runs": data["runs"], "per_task": data["per_task"], "rules": data["rules"]},
                              "results.json")
        with tempfile.TemporaryDirectory(prefix="testhelix-mlflow-") as tmp:
            render_run_report(run_dir, Path(tmp) / "report.html")
            tracker.folder(Path(tmp))  # the report and its trajectory pages, links intact
        return tracker.run_id
