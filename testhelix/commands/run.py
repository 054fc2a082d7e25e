"""`testhelix run`: TestHelix over a split for every --model × --config, judged on the hidden panel."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from testhelix.cliutil import execution_options, json_option, print_json
from testhelix.errors import UserError
from testhelix.helix.config import get_config
from testhelix.helix.runner import HelixRunner
from testhelix.inputs import FiniteFloat, InputFile, NewRunDir, PackDir
from testhelix.llm.registry import is_simulated, resolve
from testhelix.parallel import WorkerSettings, default_jobs, execution_servers, make_backend
from testhelix.parallel.options import concurrency_options
from testhelix.parallel.progress import TaskProgress
from testhelix.store import RunStore, check_run_folder
from testhelix.strategy.model import check_run_compatibility, initial_strategy, load_strategy
from testhelix.tasks.task import load_pack
from testhelix.tracking import mlflow_option, requested_mlflow_uri, track_helix_run


def split_task_ids(pack: Path, split: str, split_file: Path | None) -> list[str] | None:
    """Task ids of a split (None for 'all')."""
    if split == "all" and split_file is None:
        return None
    from testhelix.splits import load_checked_split_file

    split_data = load_checked_split_file(
        pack, split_file, "split file not found (make one with `testhelix splits make`, or use --split all)")
    return split_data.ids(split)


@click.command("run")
@click.option("--pack", "pack_dir", required=True, type=PackDir(), help="Task pack folder, or a bundled pack's name (katas).")
@click.option("--split", required=True, help="Split name (proposal, development, release, test) or 'all'.")
@click.option("--split-file", type=InputFile(bundled="split file"),
              help="Split file or a bundled one's name (default: splits/<pack>.json).")
@click.option("--config", "configs", multiple=True, required=True, help="A, B, C, D or E (repeatable).")
@click.option("--model", "models", multiple=True, required=True, help="e.g. sim:strong, anthropic:claude-opus-4-6.")
@click.option("--strategy", "strategy_file", type=InputFile(bundled="strategy"),
              help="Frozen strategy for configuration E (A-D use strategies/initial.json).")
@click.option("--run", "run_dir", required=True, type=NewRunDir(), help="Run folder.")
@click.option("--workers", type=click.IntRange(1, 64), default=None, help="Parallel executions (default: cores).")
@click.option("--token-cap", type=click.IntRange(1000, 10**12), default=400_000, show_default=True,
              help="Per-task inference cap shared by every role, pair and retry.")
@click.option("--limit", type=click.IntRange(1, 1_000_000), help="Only the first N tasks of the split.")
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--coverage/--no-coverage", default=True, show_default=True, help="Measure ΔC and Entry Coverage.")
@click.option("--call-timeout", type=FiniteFloat(1, 86_400), help="Upper bound (s) on one model call; the task's "
              "remaining working time bounds every call anyway.")
@click.option("--context-window", type=click.IntRange(1024, 10_000_000), help="The model's context window in tokens (for "
              "openai-compatible servers; models.toml knows the others).")
@click.option("--rpm", type=FiniteFloat(0.1, 1e7), help="Requests per minute allowed per model (shared by all work).")
@click.option("--tpm", type=FiniteFloat(1, 1e12), help="Tokens per minute allowed per model (shared by all work).")
@concurrency_options
@mlflow_option
@execution_options
@json_option
def command(pack_dir, split, split_file, configs, models, strategy_file, run_dir, workers, token_cap, limit, seed,
            coverage, call_timeout, context_window, rpm, tpm, jobs, backend, ray_address, as_json) -> int:
    """Run TestHelix configurations on a split and evaluate every submitted suite (resumable).

    Returns the exit status (cliutil.entry_point): 3 when the provider prevented a task evaluation."""
    from testhelix.execution.cache import StoreOutcomeCache
    from testhelix.execution.seam import create_executor
    from testhelix.llm import ratelimit
    from testhelix.llm.registry import set_context_window

    for m in models:
        resolve(m)  # unknown model names fail before any work
        if context_window:
            set_context_window(m, context_window)
        if rpm or tpm:
            ratelimit.configure(m, rpm, tpm)
    check_run_folder(run_dir, {"helix", "evaluate"}, "testhelix run")
    cfgs = [get_config(c, token_cap=token_cap, seed=seed) for c in configs]
    if any(c.name == "E" for c in cfgs) and strategy_file is None:
        raise UserError("--config E needs --strategy FILE (a frozen, improved strategy)")
    if strategy_file is not None and not any(c.name == "E" for c in cfgs):
        raise UserError(f"--strategy {strategy_file} would be ignored by --config "
                        f"{' --config '.join(c.name for c in cfgs)} (only configuration E runs a given strategy; "
                        "A-D run strategies/initial.json): add --config E or drop --strategy")
    improved = load_strategy(strategy_file) if strategy_file else initial_strategy()  # used by E only
    plans = [(m, c, improved if c.name == "E" else initial_strategy()) for m in models for c in cfgs]
    for _, config, strategy in plans:  # before any work: a strategy the configuration would weaken
        check_run_compatibility(strategy, config.challenge_steps)
    ids = split_task_ids(pack_dir, split, split_file)
    tasks = load_pack(pack_dir)
    if ids is not None:
        by_id = {t.id: t for t in tasks}
        tasks = [by_id[i] for i in ids]
    tasks = tasks[:limit] if limit else tasks
    jobs = jobs or default_jobs(models)
    store = RunStore(run_dir, command="testhelix run")
    store.refuse_other_kinds({"helix", "evaluate"}, "testhelix run")
    started = time.monotonic()
    results: list[dict] = []
    try:
        servers = workers or (execution_servers(os.cpu_count() or 1, jobs) if backend == "local" else None)
        with create_executor(workers=servers, cache=StoreOutcomeCache(store)) as executor, \
                TaskProgress("testhelix", total=len(tasks) * len(plans), enabled=not as_json) as progress:
            runner = HelixRunner(store, executor, Path(run_dir).resolve() / "work", coverage=coverage, jobs=jobs,
                                 progress=progress, call_timeout_s=call_timeout)
            settings = WorkerSettings(executor_workers=executor.workers, coverage=coverage, panel=True,
                                      work_root=str(Path(run_dir).resolve() / "work"), concurrent_pairs=jobs > 1,
                                      call_timeout_s=call_timeout,
                                      context_windows=tuple((m, context_window) for m in models if context_window),
                                      rate_limits=tuple((m, rpm, tpm) for m in models if rpm or tpm))
            runner.backend = make_backend(backend, jobs, runner.evaluate_job, settings, ray_address)

            def on_task(label, result):
                if result is None:
                    progress.skipped()
                    return
                results.append({"label": label, **result})

            try:
                runner.run(tasks, plans, on_task)
            finally:
                runner.backend.close()
    finally:
        store.close()
    incomplete = [r for r in results if r.get("incomplete")]
    finished = [r for r in results if not r.get("incomplete")]
    summary = {"run": str(run_dir), "tasks": len(tasks), "runs": [runner.run_label(m, c) for m, c, _ in plans],
               "jobs": jobs, "backend": backend,
               "new_results": len(finished), "incomplete": len(incomplete),
               "incomplete_causes": _causes(incomplete), "wall_s": round(time.monotonic() - started, 1),
               "simulated": any(is_simulated(m) for m in models)}
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
    if summary["simulated"]:
        click.echo("note: this run used simulated test doubles, not real models")
    click.echo(f"next: testhelix report {run_dir}")
    return 0


def _causes(incomplete: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in incomplete:
        out[r["incomplete"]] = out.get(r["incomplete"], 0) + 1
    return out
