"""`autosaddler search` and `autosaddler resume`."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console

from autosaddler.config import PRESETS, SearchConfig, config_from_data, load_config
from autosaddler.dag import EvolutionDAG, Node
from autosaddler.edits import in_words
from autosaddler.ledger import ReleaseLedger, refuse_spent_tasks
from autosaddler.optimizer import ModelOptimizer
from autosaddler.search import Search
from autosaddler.search_mlflow import track_search
from autosaddler.session import PackSplits, helix_evaluator, load_pack_splits, refuse_spent, search_setup
from autosaddler.store import parent_strategy
from testhelix.agent.budget import Budget
from testhelix.commands.plumbing import json_option, print_json
from testhelix.commands.run_options import MODEL, RunOptions, setup_options
from testhelix.core.errors import UserError
from testhelix.core.heartbeat import command_started
from testhelix.core.inputs import SEED, InputFile, NewRunDir, PackDir, RunDir
from testhelix.core.plaintext import output_width, wrap
from testhelix.llm.modelref import ModelRef
from testhelix.llm.registry import model_ref
from testhelix.parallel.progress import TaskProgress
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import initial_strategy
from testhelix.tasks.splits import spread_by_context
from testhelix.view.mlflow_log import mlflow_option, requested_mlflow_uri

OPTIMIZER_TOKEN_CAP = 5_000_000  # the optimizer's own accounting scope, separate from the generator's


def _run(run_dir: Path, meta: dict, cfg: SearchConfig, as_json: bool, options: RunOptions, model: ModelRef,
         optimizer_model: ModelRef) -> None:
    """`meta` records the names as given; `model` and `optimizer_model` are them resolved, once."""
    console = Console(quiet=as_json)
    splits = load_pack_splits(Path(meta["pack"]), Path(meta["split_file"]) if meta.get("split_file") else None)
    for role, name in (("proposal split (proposal_split)", cfg.proposal_split),
                       ("development split (development_split)", cfg.development_split)):
        if not splits.ids(name):  # checked before the store exists: a refused search leaves no file
            raise UserError(f"the {role} {name!r} of pack {splits.split.pack} is empty: a search needs tasks to train "
                            "and rank on")
    setup = search_setup(options, model, cfg)   # checked before the store exists
    store = RunStore(run_dir, command="autosaddler search", allowed={"search", "gate"})
    started = command_started()   # durations cover the whole command, start-up included
    try:
        store.refuse_other_kinds({"search", "gate"}, "autosaddler search")
        refuse_spent(store, splits.split.pack, cfg.proposal_split, cfg.development_split)
        for name in (cfg.proposal_split, cfg.development_split):  # tasks a gate spent anywhere on this machine
            refuse_spent_tasks(ReleaseLedger(), splits.split.pack, splits.split.pack_digest, name, splits.ids(name),
                               "a search")
        store.put_state("meta", meta)
        optimizer_settings = options.models([optimizer_model])  # the same model options for the optimizer
        timeouts = cfg.session_timeouts()
        opt_models = {session: optimizer_settings.create_optimizer_model(optimizer_model, seed=cfg.seed,
                                                                         timeout_s=limit)
                      for session, limit in timeouts.items()}
        optimizer = ModelOptimizer(opt_models, Budget(OPTIMIZER_TOKEN_CAP, label="optimizer", run_label="optimizer",
                                                      sink=store), timeouts=timeouts)

        def show(node: Node) -> None:
            dev = "" if node.dev_score is None else f" dev {100 * node.dev_score:.1f}%"
            mb = (f" minibatch {sum(node.parent_outcomes.values())}->{sum(node.child_outcomes.values())}"
                  if node.child_outcomes else "")
            edit = "" if node.edit is None else f": {in_words(node.edit, parent_strategy(store, node.node_id))}"
            reason = "" if not node.reason else f" ({' '.join(node.reason.split())[:80]})"
            text = f"[{time.monotonic() - started:6.1f}s] {node.node_id} {node.status}{mb}{dev}{edit}{reason}"
            console.print(wrap(text, console.width, hang=" " * 10),  # a log keeps lines within its width
                          markup=False, highlight=False, soft_wrap=True)

        with helix_evaluator(store, run_dir, splits.tasks, model, cfg, "search", setup) as evaluator, \
                TaskProgress("task evaluations", enabled=not as_json, console=console) as progress:
            evaluator.runner.progress = progress
            search = Search(cfg, store, evaluator, optimizer, splits.ids(cfg.proposal_split),
                            _development_order(splits, cfg.development_split, meta), known_task_ids=list(splits.tasks),
                            on_step=show)
            dag = search.run(initial_strategy())
        summary = dag.summary()
        why = why_none_screened_in(dag)
        if why:
            summary["none_screened_in"] = why
    finally:
        store.close()
    summary.update(run=str(run_dir), wall_s=round(time.monotonic() - started, 1),
                   simulated=model.simulated or optimizer_model.simulated)
    if as_json:
        print_json(summary)
        return
    print_summary(console, summary, run_dir)


def print_summary(console: Console, summary: dict, run_dir: Path) -> None:
    """What happened and what to do next, wrapped to the output's width (80 columns in a log)."""
    lines = [f"search finished in {summary['wall_s']} s: {summary['nodes']} nodes, "
             + ", ".join(f"{k} {v}" for k, v in summary["status"].items())]
    if summary["best"]:
        lines.append(f"best: {summary['best']['node']} with development {100 * summary['best']['dev_score']:.1f}%")
    if summary.get("none_screened_in"):
        lines.append(summary["none_screened_in"])
    if summary["simulated"]:
        lines.append("note: this search used simulated test doubles; these scores measure the simulation")
    lines += ["next:",
              f"  `autosaddler freeze {run_dir} --out {Path(run_dir) / 'frozen.json'}` freezes the best development "
              "score for the release gate;",
              f"  `autosaddler view {run_dir} --out {Path(run_dir) / 'search-report.html'}` shows every proposal, "
              "its minibatch and its fate;",
              f"  `autosaddler dag {run_dir}` prints the DAG"]
    width = output_width(console.file)
    # soft_wrap: the lines are wrapped already; rich must not wrap them again (inside a path).
    console.print(wrap("\n".join(lines), width), markup=False, highlight=False, soft_wrap=True)


def why_none_screened_in(dag: EvolutionDAG) -> str | None:
    """When proposals were evaluated and none passed the screen: each one's minibatch successes
    (parent -> child, regressions) and how many minibatch tasks the parents failed, the most any
    child could have gained. None when a proposal was screened in or none was evaluated."""
    tried = [n for n in dag.nodes() if n.status in ("screened_out", "developed") and n.child_outcomes]
    if not tried or any(n.status == "developed" for n in tried):
        return None
    parts = []
    for n in tried:
        lost = sum(1 for t, ok in n.parent_outcomes.items() if ok and not n.child_outcomes.get(t))
        parts.append(f"{sum(n.parent_outcomes.values())}->{sum(n.child_outcomes.values())}"
                     + (f" ({lost} regression{'s' if lost > 1 else ''})" if lost else ""))
    tasks = sum(len(n.parent_outcomes) for n in tried)
    failed = tasks - sum(sum(n.parent_outcomes.values()) for n in tried)
    return (f"none of the {len(tried)} evaluated proposals was screened in (the screen needs more minibatch "
            f"successes than the parent and no regression): minibatch successes parent->child {', '.join(parts)}; "
            f"the parents failed {failed} of {tasks} minibatch tasks, the most the children could gain")


@click.command("search")
@click.option("--pack", required=True, type=PackDir(), help="Task pack folder, or a bundled pack's name (katas).")
@click.option("--model", required=True, type=MODEL, help="Execution model (runs TestHelix), e.g. sim:strong.")
@click.option("--optimizer-model", required=True, type=MODEL, help="Optimizer model (three sessions), e.g. sim:strong.")
@click.option("--run", "run_dir", required=True, type=NewRunDir(), help="Run folder.")
@click.option("--preset", type=click.Choice(sorted(PRESETS)), default="paper", show_default=True)
@click.option("--settings", "settings_file", type=InputFile(),
              help="Search settings file (JSON or TOML) over the preset; the flags below override it.")
@click.option("--split-file", type=InputFile(bundled="split file"),
              help="Split file or a bundled one's name (default: splits/<pack>.json).")
@click.option("--seed", type=SEED, default=None, help="The search's seed (settings key `seed`; default 42).")
@click.option("--token-cap", type=click.IntRange(1000, 10**12), default=None,
              help="Per-task inference cap shared by every role, pair and retry (settings key "
                   "`per_task_token_cap`; default 400000).")
@click.option("--limit", type=click.IntRange(1, 1_000_000), default=None,
              help="Only N development tasks, spread over the routing contexts and katas (settings key "
                   "`development_limit`).")
@mlflow_option
@setup_options()
@json_option
def search(pack: Path, model: ModelRef, optimizer_model: ModelRef, run_dir: Path, preset: str, settings_file: Path | None,
           split_file: Path | None, seed: int | None, token_cap: int | None,
           limit: int | None, options: RunOptions, as_json: bool) -> None:
    """Evolve a TestHelix strategy on the proposal split, ranking children on the development split."""
    for ref in (model, optimizer_model):   # unknown names failed in parsing; hosted models without a key: nothing created
        ref.require_credentials()
    flags = {"seed": seed, "per_task_token_cap": token_cap, "development_limit": limit, "workers": options.workers}
    cfg = load_config(preset, settings_file,
                      {key: value for key, value in flags.items() if value is not None})
    meta = {"pack": str(pack), "model": model.given, "optimizer_model": optimizer_model.given, "preset": preset,
            "config": cfg.model_dump(), "split_file": str(split_file) if split_file else None,
            "development_order": "by_context"}
    if (Path(run_dir) / "run.duckdb").exists():
        store = RunStore(run_dir, read_only=True)
        try:
            store.refuse_other_kinds({"search", "gate"}, "autosaddler search")
            started = store.get_state("search") is not None
            stored = store.get_state("meta")
        finally:
            store.close()
        if started and stored != meta:
            differ = sorted(k for k in set(meta) | set(stored if isinstance(stored, dict) else {})
                            if not isinstance(stored, dict) or stored.get(k) != meta.get(k))
            raise UserError(f"{run_dir}: a search with other settings already ran here ({', '.join(differ)} differ); "
                            f"use `autosaddler resume {run_dir}` or a new --run")
        if started and not as_json:
            # The same command again is the same search: it continues (a finished one has nothing left to do).
            click.echo(f"{run_dir}: this search already ran here with the same settings; continuing it "
                       "(finished steps are never redone)")
    _run(run_dir, meta, cfg, as_json, options, model, optimizer_model)
    track_search(run_dir, requested_mlflow_uri())  # no-op without --mlflow-uri


@click.command("resume")
@click.argument("run_dir", type=RunDir())
@setup_options()
@json_option
def resume(run_dir: Path, options: RunOptions, as_json: bool) -> None:
    """Continue a stopped search exactly where it stopped (same DAG as an uninterrupted run)."""
    store = RunStore(run_dir, read_only=True)
    try:
        store.require_kind("search", "autosaddler resume")
        meta = store.get_state("meta")
    finally:
        store.close()
    if meta is None:
        raise UserError(f"{run_dir}: no search to resume here")
    if not isinstance(meta, dict):
        raise UserError(f"{_meta_row(run_dir)} is not an object")
    cfg = _stored_config(run_dir, meta)
    # the resume's edge: the recorded names resolved once
    _run(run_dir, meta, cfg, as_json, options, model_ref(meta["model"]), model_ref(meta["optimizer_model"]))


def _development_order(splits: PackSplits, name: str, meta: dict) -> list[str]:
    """The development tasks in the order a `development_limit` takes them: spread over the routing
    contexts (and katas) for searches that recorded that order, sorted ids for older runs."""
    ids = splits.ids(name)
    if meta.get("development_order") != "by_context":
        return ids
    tasks = splits.tasks
    return spread_by_context(ids, {i: tasks[i].context for i in ids}, {i: tasks[i].id.rsplit("-", 1)[0] for i in ids})


def _meta_row(run_dir: Path) -> str:
    return f"{Path(run_dir) / 'run.duckdb'}: search_state row 'meta'"


def _stored_config(run_dir: Path, meta: dict) -> SearchConfig:
    """The stored search settings, validated exactly as on input (a damaged store names the field)."""
    where = _meta_row(run_dir)
    for key in ("pack", "model", "optimizer_model"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise UserError(f"{where}: {key!r} is missing or not a string")
    if not isinstance(meta.get("config"), dict):
        raise UserError(f"{where}: 'config' is not an object")
    try:
        return config_from_data(meta["config"])
    except UserError as err:
        raise UserError(f"{where}: the stored search configuration is invalid",
                        [("config." + field, why) for field, why in err.problems]) from None
