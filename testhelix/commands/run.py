"""`testhelix run`: TestHelix over a split for every --model × --config, judged on the hidden panel."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from testhelix.cliutil import json_option, print_json
from testhelix.errors import UserError
from testhelix.helix.config import get_config
from testhelix.helix.runner import HelixRunner
from testhelix.llm.registry import resolve
from testhelix.prism.task import load_pack
from testhelix.store import RunStore
from testhelix.strategy.model import initial_strategy, load_strategy
from testhelix.tracking import mlflow_option, requested_mlflow_uri, track_helix_run


def split_task_ids(pack: Path, split: str, split_file: Path | None) -> list[str] | None:
    """Task ids of a split (None for 'all')."""
    if split == "all" and split_file is None:
        return None
    from testhelix.paths import splits_dir
    from testhelix.splits import check_splits, load_split_file

    path = split_file or splits_dir() / f"{pack.resolve().name}.json"
    if not path.is_file():
        raise UserError(f"{path}: split file not found (make one with `testhelix splits make`, or use --split all)")
    split_data = load_split_file(path)
    problems = check_splits(split_data, pack)
    if problems:
        raise UserError(f"{path}: the split file does not match {pack}", problems)
    return split_data.ids(split)


@click.command("run")
@click.option("--pack", "pack_dir", required=True, type=click.Path(path_type=Path), help="Task pack folder.")
@click.option("--split", required=True, help="Split name (proposal, development, release, test) or 'all'.")
@click.option("--split-file", type=click.Path(path_type=Path), help="Split file (default: splits/<pack>.json).")
@click.option("--config", "configs", multiple=True, required=True, help="A, B, C, D or E (repeatable).")
@click.option("--model", "models", multiple=True, required=True, help="e.g. sim:strong, anthropic:claude-opus-4-6.")
@click.option("--strategy", "strategy_file", type=click.Path(path_type=Path),
              help="Frozen strategy for configuration E (A-D use strategies/initial.json).")
@click.option("--run", "run_dir", required=True, type=click.Path(path_type=Path), help="Run folder.")
@click.option("--workers", type=click.IntRange(1, 64), default=None, help="Parallel executions (default: cores).")
@click.option("--token-cap", type=click.IntRange(1000), default=400_000, show_default=True,
              help="Per-task inference cap shared by every role, pair and retry.")
@click.option("--limit", type=click.IntRange(1), help="Only the first N tasks of the split.")
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--coverage/--no-coverage", default=True, show_default=True, help="Measure ΔC and Entry Coverage.")
@mlflow_option
@json_option
def command(pack_dir, split, split_file, configs, models, strategy_file, run_dir, workers, token_cap, limit, seed,
            coverage, as_json) -> None:
    """Run TestHelix configurations on a split and evaluate every submitted suite (resumable)."""
    from testhelix.prism.cache import StoreOutcomeCache
    from testhelix.prism.executor import default_executor

    for m in models:
        resolve(m)  # unknown model names fail before any work
    cfgs = [get_config(c, token_cap=token_cap, seed=seed) for c in configs]
    if any(c.name == "E" for c in cfgs) and strategy_file is None:
        raise UserError("--config E needs --strategy FILE (a frozen, improved strategy)")
    improved = load_strategy(strategy_file) if strategy_file else None
    plans = [(m, c, improved if c.name == "E" else initial_strategy()) for m in models for c in cfgs]
    ids = split_task_ids(pack_dir, split, split_file)
    tasks = load_pack(pack_dir)
    if ids is not None:
        by_id = {t.id: t for t in tasks}
        tasks = [by_id[i] for i in ids]
    tasks = tasks[:limit] if limit else tasks
    store = RunStore(run_dir)
    started = time.monotonic()
    results: list[dict] = []
    try:
        with default_executor(workers, cache=StoreOutcomeCache(store)) as executor, \
                Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                         disable=as_json) as bar:
            runner = HelixRunner(store, executor, Path(run_dir) / "work", coverage=coverage)
            job = bar.add_task("testhelix", total=len(tasks) * len(plans))

            def on_task(label, result):
                bar.update(job, advance=1, description=label)
                if result is not None:
                    results.append({"label": label, **result})

            runner.run(tasks, plans, on_task)
    finally:
        store.close()
    summary = {"run": str(run_dir), "tasks": len(tasks), "runs": [f"{m}/{c.name}" for m, c, _ in plans],
               "new_results": len(results), "wall_s": round(time.monotonic() - started, 1),
               "simulated": any(m.startswith("sim:") for m in models)}
    track_helix_run(run_dir, requested_mlflow_uri())  # no-op without --mlflow-uri
    if as_json:
        print_json(summary)
        return
    click.echo(f"ran {len(results)} task evaluation(s) ({len(tasks)} tasks x {len(plans)} runs; finished ones "
               f"skipped) in {summary['wall_s']} s into {run_dir}")
    if summary["simulated"]:
        click.echo("note: sim:* models are simulated test doubles, not real models")
    click.echo(f"next: testhelix report {run_dir}")
