"""`autosaddler gate`: the release gate, from recorded outcomes or by running both strategies."""

from __future__ import annotations

import csv
import uuid
from pathlib import Path

import click

from autosaddler.config import load_config
from autosaddler.gate import GateResult, PairedOutcome, decide, read_outcomes_csv, render
from autosaddler.tracking import track_gate_command
from autosaddler.session import helix_evaluator, load_pack_splits, refuse_spent
from testhelix.cliutil import json_option, print_json
from testhelix.errors import UserError
from testhelix.store import RunStore
from testhelix.tracking import mlflow_option, requested_mlflow_uri
from testhelix.strategy.model import load_strategy


def run_gate(challenger_file: Path, baseline_file: Path, pack: Path, split: str, model: str, run_dir: Path,
             split_file: Path | None, preset: str) -> GateResult:
    """Evaluate both strategies with the same model on the release split, decide, record, and mark
    the split as spent for this run."""
    challenger, baseline = load_strategy(challenger_file), load_strategy(baseline_file)
    splits = load_pack_splits(pack, split_file)
    ids = splits.ids(split)
    cfg = load_config(preset)
    store = RunStore(run_dir)
    try:
        refuse_spent(store, splits.split.pack, split)
        with helix_evaluator(store, run_dir, splits.tasks, model, cfg, "gate") as evaluator:
            c = evaluator.evaluate(challenger, ids)
            b = evaluator.evaluate(baseline, ids)
        outcomes = [PairedOutcome(t, c[t].success, b[t].success) for t in ids]
        result = decide(outcomes)
        gate_id = f"gate-{uuid.uuid4().hex[:8]}"
        with store.transaction():
            store.upsert("gate_results", {
                "gate_id": gate_id, "challenger_hash": challenger.content_hash(), "baseline_hash": baseline.content_hash(),
                "split": split, "model": model, "n": result.n, "wins": result.wins, "losses": result.losses,
                "challenger_successes": result.challenger_successes, "baseline_successes": result.baseline_successes,
                "p_value": result.p_value, "ci95": list(result.ci95), "ci99": list(result.ci99),
                "promoted": result.promoted})
            store.upsert("spent_splits", {"pack": splits.split.pack, "split": split, "gate_id": gate_id})
        with (Path(run_dir) / "gate_outcomes.csv").open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["task", "challenger", "baseline"])
            writer.writerows((o.task, o.challenger, o.baseline) for o in outcomes)
        (Path(run_dir) / "gate_report.md").write_text(
            f"# Release gate\n\nchallenger: {challenger_file} ({challenger.content_hash()[:12]})\n"
            f"baseline: {baseline_file} ({baseline.content_hash()[:12]})\nmodel: {model}"
            f"{' (simulated test double)' if model.startswith('sim:') else ''}\nsplit: {split} of {pack}\n\n"
            f"```\n{render(result)}\n```\n")
    finally:
        store.close()
    return result


@click.command("gate")
@click.option("--outcomes", "outcomes_csv", type=click.Path(path_type=Path),
              help="CSV with columns task, challenger, baseline (0/1): decide without running anything.")
@click.option("--challenger", type=click.Path(path_type=Path), help="Frozen challenger strategy.")
@click.option("--baseline", type=click.Path(path_type=Path), help="Baseline strategy (strategies/initial.json).")
@click.option("--pack", type=click.Path(path_type=Path), help="Task pack folder.")
@click.option("--split", default="release", show_default=True, help="The release split (spent afterwards).")
@click.option("--split-file", type=click.Path(path_type=Path), help="Split file (default: splits/<pack>.json).")
@click.option("--model", help="Execution model for both strategies.")
@click.option("--run", "run_dir", type=click.Path(path_type=Path), help="Run folder for the gate.")
@click.option("--preset", type=click.Choice(["paper", "demo"]), default="paper", show_default=True,
              help="Execution settings (TestHelix configuration, caps) shared with the search.")
@mlflow_option
@json_option
def command(outcomes_csv, challenger, baseline, pack, split, split_file, model, run_dir, preset, as_json) -> None:
    """Promote a frozen challenger only on a positive difference with one-sided exact McNemar p <= 0.05."""
    if outcomes_csv is not None:
        result = decide(read_outcomes_csv(outcomes_csv))
    else:
        missing = [n for n, v in (("--challenger", challenger), ("--baseline", baseline), ("--pack", pack),
                                  ("--model", model), ("--run", run_dir)) if v is None]
        if missing:
            raise UserError(f"give --outcomes FILE.csv, or all of: {', '.join(missing)} (missing)")
        result = run_gate(challenger, baseline, pack, split, model, run_dir, split_file, preset)
    track_gate_command(requested_mlflow_uri(), result, outcomes_csv=outcomes_csv, challenger=challenger,
                       baseline=baseline, pack=pack, split=split, model=model, run_dir=run_dir)  # no-op without URI
    if as_json:
        print_json(result.to_json())
    else:
        click.echo(render(result))
