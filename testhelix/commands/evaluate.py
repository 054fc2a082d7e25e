"""`testhelix evaluate`: run a submitted suite on a task's panel and score it (F, A, R, S).

Two modes:
  --task TASK_DIR --suite SUITE_DIR              one task, printed (or --json)
  --pack PACK --split NAME --suites DIR --run RUN_DIR
                                                 a whole split; suites in DIR/<task id>/ (a task
                                                 without one is "missing"), stored in the run's
                                                 DuckDB under run_label "evaluate"
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.commands.run_options import RunOptions, setup_options
from testhelix.core.errors import UserError
from testhelix.core.inputs import InputDir, InputFile, NewRunDir, PackDir
from testhelix.execution.shape import suite_problem
from testhelix.prism.coverage import CoverageMeter
from testhelix.prism.evaluation import evaluate_task, no_submission, record_panel_order
from testhelix.prism.judgement import Judgement, TaskMetrics
from testhelix.prism.metric_table import METRICS, indicator_key
from testhelix.prism.metrics import TaskOutcomes, split_metrics
from testhelix.tasks.task import Task, load_pack, load_task

if TYPE_CHECKING:
    from testhelix.execution.protocols import Executor
    from testhelix.store.runstore import RunStore

RUN_LABEL = "evaluate"
def _number(value: float | None, digits: int) -> str:
    """A metric for display: undefined (None) when its denominator is empty."""
    return "undefined" if value is None else f"{value:.{digits}f}"


def _print_task(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"task {result['task']}")
    for col in ("program", "outcome", "reason"):
        table.add_column(col)
    for pid, o in result["outcomes"].items():
        table.add_row(pid, o["outcome"], o["reason"] or "")
    console = Console()
    console.print(table)
    a, r = _number(result["A"], 2), _number(result["R"], 2)
    console.print(f"F={result['F']}  A={a}  R={r}  S={result['S']}")
    console.print(indicator_key(), highlight=False)


def _split_ids(pack: Path, split: str, split_file: Path | None, tasks: list[Task]) -> list[str]:
    if split == "all" and split_file is None:
        return [t.id for t in tasks]
    from testhelix.core.paths import splits_dir
    from testhelix.tasks.splits import load_split_file

    path = split_file or splits_dir() / f"{pack.resolve().name}.json"
    if not path.is_file():
        raise UserError(f"{path}: split file not found (pass --split-file, or --split all)")
    ids = load_split_file(path).ids(split)
    known = {t.id for t in tasks}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UserError(f"split {split!r} names tasks that are not in {pack}: {', '.join(unknown[:5])}")
    return ids


def evaluate_split(executor: Executor, store: RunStore, pack: Path, ids: list[str], tasks: list[Task], suites: Path,
                   progress: bool, coverage: bool = True, jobs: int = 1, run_label: str = RUN_LABEL,
                   run_config: dict[str, Any] | None = None,
                   extra: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Judge every task's suite, up to `jobs` tasks at once; the calling thread stores each task as it
    finishes (a killed run keeps what it stored). `extra`: task id -> task_results columns to store
    with it (an external agent's tokens, calls and detail; testhelix/helix/external.py)."""
    from testhelix.parallel.local import LocalBackend
    from testhelix.parallel.progress import TaskProgress

    by_id = {t.id: t for t in tasks}
    meter = CoverageMeter(executor)
    for_metrics: dict[str, TaskOutcomes | None] = {}
    submitted = 0
    store.record_run(run_label, "evaluate", {"pack": str(pack), "suites": str(suites), "tasks": len(ids),
                                             **(run_config or {})})

    def judge(task_id: str) -> tuple[Judgement, TaskMetrics, bool, float]:
        """(judgement, metrics, submitted, wall seconds) of one task."""
        task, suite, started = by_id[task_id], suites / task_id, time.monotonic()
        if suite.is_dir():
            judged = evaluate_task(executor, task, suite)
            cov = meter.measure(task, suite) if coverage else meter.measure(task, None)
        else:  # no submission: an error on every program, in every denominator
            judged, cov = no_submission(task), meter.measure(task, None)
        return judged, TaskMetrics(judged.indicators, cov), suite.is_dir(), round(time.monotonic() - started, 3)

    backend: LocalBackend[str] = LocalBackend(jobs)
    with TaskProgress("evaluating", total=len(ids), enabled=progress) as bar:
        backend.on_start = bar.started
        for task_id, (judged, task_metrics, was_submitted, wall_s) in backend.run(ids, judge):
            task = by_id[task_id]
            for_metrics[task_id] = judged.outcome_record()
            submitted += was_submitted
            with store.transaction():
                store.record_task(task.id, task.source, task.context, task.difficulty, task.reference.sha256)
                store.record_task_outcomes(run_label, task_id, [o.row() for o in judged.outcomes])
                record_panel_order(store, run_label, task_id, judged.panel_order)
                store.record_task_result({"run_label": run_label, "task_id": task_id, "submitted": was_submitted,
                                          "suite_digest": judged.suite_digest, **task_metrics.columns(),
                                          "tokens": None, "calls": None, "wall_s": wall_s,
                                          **(extra or {}).get(task_id, {})})
            bar.finished()
    for_metrics = {t: for_metrics[t] for t in ids}           # metrics in split order, whatever finished first
    metrics = split_metrics(for_metrics).as_dict()
    store.record_metrics(run_label, {k: (float(v) if v is not None else None) for k, v in metrics.items()})
    return {"tasks": len(ids), "missing": len(ids) - submitted, "metrics": metrics}


@click.command("evaluate")
@click.option("--task", "task_dir", type=InputDir(), help="One task folder.")
@click.option("--suite", "suite_dir", type=click.Path(path_type=Path), help="The submitted suite (with --task).")
@click.option("--pack", "pack_dir", type=PackDir(), help="A task pack or a bundled pack's name (with --split).")
@click.option("--split", help="Split name in splits/<pack>.json, or 'all'.")
@click.option("--split-file", type=InputFile(bundled="split file"),
              help="Split file or a bundled one's name (default: splits/<pack>.json).")
@click.option("--suites", "suites_dir", type=click.Path(path_type=Path), help="Folder of <task id>/ suites.")
@click.option("--run", "run_dir", type=NewRunDir(), help="Run folder (DuckDB store).")
@click.option("--coverage/--no-coverage", default=True, show_default=True,
              help="Measure ΔC and Entry Coverage (split mode; skipped coverage is stored as missing).")
@setup_options(models=False, backend=False)
@json_option
def command(task_dir: Path | None, suite_dir: Path | None, pack_dir: Path | None, split: str | None,
            split_file: Path | None, suites_dir: Path | None, run_dir: Path | None, coverage: bool,
            options: RunOptions, as_json: bool) -> None:
    """Run a submitted suite on the initial program, the reference and every panel candidate."""
    from testhelix.execution.outcome_cache import StoreOutcomeCache

    execution = options.execution()   # the executor and sandbox chosen (checked before any work)
    if task_dir is not None:
        if suite_dir is None or pack_dir is not None:
            raise UserError("--task needs --suite (and no --pack)")
        if not suite_dir.is_dir():
            raise UserError(f"{suite_dir}: suite folder does not exist")
        problem = suite_problem(suite_dir)
        if problem is not None:  # one task named on the command line: bad input (a split run judges it)
            raise UserError(f"{suite_dir}: suite refused: {problem}")
        task = load_task(task_dir)
        with execution.create_executor(workers=options.workers) as executor:
            result = evaluate_task(executor, task, suite_dir).public()
        print_json(result) if as_json else _print_task(result)
        return
    if pack_dir is None or split is None or suites_dir is None or run_dir is None:
        raise UserError("give --task and --suite, or --pack, --split, --suites and --run")
    if not suites_dir.is_dir():
        raise UserError(f"{suites_dir}: suites folder does not exist")
    tasks = load_pack(pack_dir)
    ids = _split_ids(pack_dir, split, split_file, tasks)
    from testhelix.store.runstore import RunStore

    store = RunStore(run_dir, command="testhelix evaluate", allowed={"evaluate", "helix"})
    store.refuse_other_kinds({"evaluate", "helix"}, "testhelix evaluate")
    try:
        with execution.create_executor(workers=options.workers, cache=StoreOutcomeCache(store)) as executor:
            summary = evaluate_split(executor, store, pack_dir, ids, tasks, suites_dir, progress=not as_json,
                                     coverage=coverage, jobs=options.tasks_in_flight([]))
    finally:
        store.close()
    summary = {"run": str(run_dir), "split": split, **summary}
    if as_json:
        print_json(summary)
    else:
        m = summary["metrics"]
        click.echo(f"evaluated {summary['tasks']} tasks ({summary['missing']} missing) into {run_dir}")
        rates = [metric for metric in METRICS if metric.key in m]
        click.echo("  ".join(f"{metric.abbreviation}={_number(m[metric.key], 4)}" for metric in rates))
        click.echo("key: " + "; ".join(f"{metric.abbreviation} = {metric.name}" for metric in rates))
