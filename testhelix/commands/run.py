"""`testhelix run`: TestHelix over a split for every --model × --config, judged on the hidden panel."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.commands.run_options import MODEL, RunOptions, setup_options
from testhelix.core.errors import UserError
from testhelix.core.heartbeat import command_started
from testhelix.core.inputs import SEED, FiniteFloat, InputFile, NewRunDir, PackDir, RunDir
from testhelix.helix.config import get_config, strategy_run_config
from testhelix.helix.promotion import describe, promotion_status
from testhelix.helix.results import Finished, Incomplete, TaskResult
from testhelix.llm.modelref import ModelRef
from testhelix.parallel.progress import TaskProgress
from testhelix.store.runstore import RunStore, check_run_folder
from testhelix.strategy.model import initial_strategy, load_strategy
from testhelix.tasks.splits import sample_across_groups
from testhelix.tasks.task import Task, load_pack
from testhelix.view.mlflow_log import mlflow_option, requested_mlflow_uri, run_meta, track_helix_run


def split_task_ids(pack: Path, split: str, split_file: Path | None) -> list[str] | None:
    """Task ids of a split (None for 'all')."""
    if split == "all" and split_file is None:
        return None
    from testhelix.tasks.splits import load_checked_split_file

    split_data = load_checked_split_file(
        pack, split_file, "split file not found (make one with `testhelix splits make`, or use --split all)")
    return split_data.ids(split)


def select_tasks(pack_dir: Path, split: str, split_file: Path | None, limit: int | None, first: bool,
                 seed: int) -> list[Task]:
    """The tasks a run evaluates: the split's, then with `limit` a seeded sample spread over the
    katas (or the first `limit` in split order)."""
    ids = split_task_ids(pack_dir, split, split_file)
    tasks = load_pack(pack_dir)
    if ids is not None:
        by_id = {t.id: t for t in tasks}
        tasks = [by_id[i] for i in ids]
    if limit:
        tasks = tasks[:limit] if first else sample_across_groups(
            tasks, limit, seed, lambda t: (t.meta.metadata.kata if t.meta else None) or t.id)
    return tasks


@click.command("run")
@click.option("--pack", "pack_dir", required=True, type=PackDir(), help="Task pack folder, or a bundled pack's name (katas).")
@click.option("--split", required=True, help="Split name (proposal, development, release, test) or 'all'.")
@click.option("--split-file", type=InputFile(bundled="split file"),
              help="Split file or a bundled one's name (default: splits/<pack>.json).")
@click.option("--config", "configs", multiple=True, required=True, help="A, B, C, D or E (repeatable).")
@click.option("--model", "models", multiple=True, required=True, type=MODEL, help="e.g. sim:strong, anthropic:claude-opus-4-6.")
@click.option("--strategy", "strategy_file", type=InputFile(bundled="strategy"),
              help="Frozen strategy for configuration E (A-D use strategies/initial.json).")
@click.option("--run", "run_dir", required=True, type=NewRunDir(), help="Run folder.")
@click.option("--token-cap", type=click.IntRange(1000, 10**12), default=400_000, show_default=True,
              help="Per-task inference cap shared by every role, pair and retry.")
@click.option("--limit", type=click.IntRange(1, 1_000_000),
              help="Only N tasks of the split: a seeded sample spread over the katas (see --first).")
@click.option("--first", is_flag=True, help="With --limit: the first N tasks in split order instead of a sample.")
@click.option("--seed", type=SEED, default=42, show_default=True)
@click.option("--coverage/--no-coverage", default=True, show_default=True, help="Measure ΔC and Entry Coverage.")
@click.option("--promoted-by", "promoted_by", type=RunDir(), default=None,
              help="Configuration E: the release-gate folder that judged the --strategy file; the run records "
                   "whether that gate promoted it (and `testhelix report` prints it).")
@click.option("--agent-time-limit", type=FiniteFloat(1, 86_400), default=None,
              help="Agent time limit T in seconds for every task (default: each task's declared agent timeout).")
@mlflow_option
@setup_options()
@json_option
def command(pack_dir: Path, split: str, split_file: Path | None, configs: tuple[str, ...], models: tuple[ModelRef, ...],
            strategy_file: Path | None, run_dir: Path, token_cap: int, limit: int | None, first: bool, seed: int,
            coverage: bool, promoted_by: Path | None, agent_time_limit: float | None, options: RunOptions,
            as_json: bool) -> int:
    """Run TestHelix configurations on a split and evaluate every submitted suite (resumable).
    \f
    Returns the exit status (plumbing.entry_point): 3 when the provider prevented a task evaluation."""
    from testhelix.parallel.build import task_runner

    for m in models:   # resolved by --model's type; unknown names failed before any work
        m.require_credentials()  # and so does a hosted model without its key: nothing is created
    setup = options.setup(models)   # the run's settings, built once and passed explicitly
    check_run_folder(run_dir, {"helix", "evaluate"}, "testhelix run")
    cfgs = [get_config(c, token_cap=token_cap, seed=seed, agent_time_limit_s=agent_time_limit) for c in configs]
    if any(c.name == "E" for c in cfgs) and strategy_file is None:
        raise UserError("--config E needs --strategy FILE (a frozen, improved strategy)")
    if strategy_file is not None and not any(c.name == "E" for c in cfgs):
        raise UserError(f"--strategy {strategy_file} would be ignored by --config "
                        f"{' --config '.join(c.name for c in cfgs)} (only configuration E runs a given strategy; "
                        "A-D run strategies/initial.json): add --config E or drop --strategy")
    improved = load_strategy(strategy_file) if strategy_file else initial_strategy()  # used by E only
    # before any work: a strategy the configuration would weaken is refused; C, E: K from the strategy
    plans = [(m, strategy_run_config(c, s), s) for m in models for c in cfgs
             for s in [improved if c.name == "E" else initial_strategy()]]
    if promoted_by is not None and not any(c.name == "E" for c in cfgs):
        raise UserError("--promoted-by applies to --config E only (the promoted strategy's configuration)")
    promotion = promotion_status(improved.content_hash(), promoted_by) if any(c.name == "E" for c in cfgs) else None
    tasks = select_tasks(pack_dir, split, split_file, limit, first, seed)
    store = RunStore(run_dir, command="testhelix run")
    store.refuse_other_kinds({"helix", "evaluate"}, "testhelix run")
    store.put_state("helix-run", run_meta(pack_dir, split, split_file, seed, limit, first))  # for tracking
    started = command_started()   # durations cover the whole command, start-up included
    results: list[TaskResult] = []
    try:
        with TaskProgress("testhelix", total=len(tasks) * len(plans), enabled=not as_json) as progress, \
                task_runner(setup, store, Path(run_dir).resolve() / "work", coverage=coverage, panel=True,
                            progress=progress) as runner:
            runner.promotion = promotion

            def on_task(_label: str, result: TaskResult | None) -> None:
                if result is None:
                    progress.skipped()
                    return
                results.append(result)

            runner.run(tasks, plans, on_task)
    finally:
        store.close()
    incomplete = [r for r in results if isinstance(r, Incomplete)]
    finished = [r for r in results if isinstance(r, Finished)]
    summary: dict[str, Any] = {"run": str(run_dir), "tasks": len(tasks), "runs": [runner.run_label(m, c) for m, c, _ in plans],
               "jobs": setup.concurrency.tasks_in_flight, "backend": setup.backend,
               "new_results": len(finished), "incomplete": len(incomplete),
               "incomplete_causes": _causes(incomplete), "wall_s": round(time.monotonic() - started, 1),
               # a served simulated model behind a real provider's name counts too (runner's detail)
               "simulated": any(m.simulated for m in models)
               or any(r.simulated for r in finished)}
    if promotion is not None:
        summary["configuration_e_strategy"] = promotion
    track_helix_run(run_dir, requested_mlflow_uri())  # no-op without --mlflow-uri
    if as_json:
        print_json(summary)
        return 3 if incomplete else 0
    click.echo(f"ran {len(finished)} task evaluation(s) ({len(tasks)} tasks x {len(plans)} runs; finished ones "
               f"skipped) in {summary['wall_s']} s into {run_dir}")
    if incomplete:
        causes = ", ".join(f"{k} {v}" for k, v in summary["incomplete_causes"].items())
        click.echo(f"incomplete: {len(incomplete)} task evaluation(s) prevented by the provider ({causes}); "
                   f"not scored; run the same command again to retry them", err=True)
        return 3
    if promotion is not None:
        click.echo(f"configuration E strategy: {describe(promotion)}")
    if summary["simulated"]:
        click.echo("note: this run used simulated test doubles, not real models")
    click.echo(f"next: testhelix report {run_dir}")
    return 0


def _causes(incomplete: list[Incomplete]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in incomplete:
        out[r.cause] = out.get(r.cause, 0) + 1
    return out
