"""Configuration E's promotion status: was its strategy file promoted by a release gate, and by which?

Configuration E is meant to run a frozen strategy that the release gate promoted. `testhelix run
--config E --promoted-by GATE_RUN` looks the strategy's content hash up in that gate folder's
`gate_results` table (AutoSaddler's, written by `autosaddler gate`) and records what it finds
with the run; `testhelix report` prints it for every /E run label. Without --promoted-by the status
is "not checked", and a strategy the named gate did not promote is recorded as NOT promoted --
the run still goes ahead, because evaluating an unpromoted strategy is a legitimate experiment, but
no report can then present it as the promoted configuration E.
"""

from __future__ import annotations

from pathlib import Path

from testhelix.core.errors import UserError
from testhelix.store.gates import gate_decisions
from testhelix.store.runs import run_records
from testhelix.store.runstore import RunStore

NOT_CHECKED = {"status": "not checked", "note": "no --promoted-by gate folder was given"}


def promotion_status(strategy_hash: str, gate_run: Path | None) -> dict:
    if gate_run is None:
        return dict(NOT_CHECKED)
    if not (Path(gate_run) / "run.duckdb").exists():
        raise UserError(f"--promoted-by {gate_run}: no run store here (expected the folder of an `autosaddler gate` run)")
    store = RunStore(Path(gate_run), read_only=True)
    try:
        gates = gate_decisions(store, strategy_hash)
    except Exception as err:  # noqa: BLE001 - a folder of another kind has no gate_results table
        raise UserError(f"--promoted-by {gate_run}: not a release-gate folder ({err})") from None
    finally:
        store.close()
    if not gates:
        raise UserError(f"--promoted-by {gate_run}: no gate there judged this strategy (content hash "
                        f"{strategy_hash[:12]}); give the folder of the gate that judged it")
    promoted = [g for g in gates if g.promoted]
    chosen = promoted[-1] if promoted else gates[-1]
    return {"status": "promoted" if promoted else "NOT promoted", "gate_id": chosen.gate_id,
            "split": chosen.split, "model": chosen.model, "p_value": chosen.p_value,
            "gate_run": str(Path(gate_run).resolve()), "strategy_hash": strategy_hash}


def describe(status: dict | None) -> str:
    if not status:
        return "promotion status not recorded (run made before it was recorded)"
    if status.get("status") == "not checked":
        return "promotion not checked (no --promoted-by gate folder was given)"
    p = status.get("p_value")
    return (f"{status['status']} by gate {status['gate_id']} on split {status['split']} ({status['model']}, "
            f"one-sided McNemar p = {'n/a' if p is None else f'{p:.4g}'}; {status['gate_run']})")


def recorded_statuses(store: RunStore) -> dict[str, dict | None]:
    """run label -> recorded promotion status, for labels of configuration E."""
    out = {}
    for run in run_records(store):
        if run.config.get("config") == "E":
            out[run.run_label] = run.config.get("promotion")
    return out
