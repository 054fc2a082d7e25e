"""`testhelix external`: run any coding agent's command on a split's tasks and score its suites
beside configurations A–E (testhelix/helix/external.py, docs/external-agents.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.commands.run import select_tasks
from testhelix.commands.run_options import RunOptions, setup_options
from testhelix.core.errors import UserError
from testhelix.core.inputs import FiniteFloat, InputDir, InputFile, NewRunDir, PackDir
from testhelix.helix.external import AgentRun, ExternalAgent, check_agent, run_external, suites_folder
from testhelix.store.runstore import RunStore, check_run_folder


@click.command("external")
@click.option("--pack", "pack_dir", required=True, type=PackDir(), help="Task pack folder, or a bundled pack's name.")
@click.option("--split", required=True, help="Split name (proposal, development, release, test) or 'all'.")
@click.option("--split-file", type=InputFile(bundled="split file"), help="Split file (default: splits/<pack>.json).")
@click.option("--limit", type=click.IntRange(1, 1_000_000),
              help="Only N tasks: the same seeded sample as `testhelix run --limit N`.")
@click.option("--first", is_flag=True, help="With --limit: the first N tasks in split order.")
@click.option("--seed", type=int, default=42, show_default=True)
@click.option("--command", "agent_command", required=True,
              help="The agent's command line, run by /bin/sh in the task's workspace (see TASK.md there).")
@click.option("--name", required=True, help="The agent's name: its run label is external:NAME/X.")
@click.option("--env", "env_names", multiple=True,
              help="Pass this environment variable to the agent (repeatable; e.g. the model's API key). "
                   "Nothing else of your environment reaches it.")
@click.option("--agent-time-limit", type=FiniteFloat(1, 86_400), default=None,
              help="Agent time limit T in seconds (default: each task's declared agent timeout).")
@click.option("--mask", "masks", multiple=True, type=InputDir(),
              help="Also hide this folder from the agent (repeatable; the packs and the run folder always are).")
@click.option("--run", "run_dir", required=True, type=NewRunDir(), help="Run folder (may hold `testhelix run` results).")
@click.option("--coverage/--no-coverage", default=True, show_default=True, help="Measure ΔC and Entry Coverage.")
@setup_options(models=False, backend=False)
@json_option
def command(pack_dir: Path, split: str, split_file: Path | None, limit: int | None, first: bool, seed: int,
            agent_command: str, name: str, env_names: tuple[str, ...], agent_time_limit: float | None,
            masks: tuple[Path, ...], run_dir: Path, coverage: bool, options: RunOptions, as_json: bool) -> None:
    """Run an external coding agent's COMMAND on every task and score the suites it wrote."""
    from testhelix.commands.evaluate import evaluate_split
    from testhelix.execution.outcome_cache import StoreOutcomeCache

    agent = ExternalAgent(name, agent_command, tuple(dict.fromkeys(env_names)), agent_time_limit, masks)
    check_agent(agent, dict(os.environ))
    execution = options.execution()
    check_run_folder(run_dir, {"helix", "evaluate"}, "testhelix external")
    tasks = select_tasks(pack_dir, split, split_file, limit, first, seed)
    store = RunStore(run_dir, command="testhelix external", allowed={"evaluate", "helix"})
    try:
        if store.task_results(agent.label):
            raise UserError(f"{run_dir}: already holds results of {agent.label}; use another --name or run folder")

        def echo(task_id: str, submitted: bool, run: AgentRun) -> None:
            if not as_json:
                click.echo(f"{task_id}: {run.exit}, {run.wall_s} s, "
                           f"{'suite written' if submitted else 'no test file written'}")

        runs = run_external(agent, tasks, run_dir, echo)
        extra = {tid: {"tokens": (u["input_tokens"] + u["output_tokens"]) if (u := r.usage) else None,
                       "calls": u.get("calls") if u else None, "wall_s": r.wall_s,
                       "detail": json.dumps({"submission": "external-agent" if submitted else "none", **r.detail()})}
                 for tid, (submitted, r) in runs.items()}
        isolation = next(iter(runs.values()))[1].isolation if runs else ""
        config = {"external": True, "name": name, "command": agent_command, "env": list(agent.env_names),
                  "time_limit_s": agent_time_limit, "isolation": isolation}
        with execution.create_executor(workers=options.workers, cache=StoreOutcomeCache(store)) as executor:
            summary = evaluate_split(executor, store, pack_dir, [t.id for t in tasks], tasks,
                                     suites_folder(agent, run_dir), progress=not as_json, coverage=coverage,
                                     jobs=options.tasks_in_flight([]), run_label=agent.label, run_config=config,
                                     extra=extra)
    finally:
        store.close()
    summary = {"run": str(run_dir), "run_label": agent.label, "isolation": isolation, **summary}
    if as_json:
        print_json(summary)
        return
    m = summary["metrics"]
    click.echo(f"{agent.label}: {summary['tasks']} tasks ({summary['missing']} without a suite) into {run_dir}; "
               f"isolation: {isolation}")
    click.echo("  ".join(f"{k}={'undefined' if m[k] is None else format(m[k], '.4f')}"
                         for k in ("reference_acceptance", "joint_success", "valid_acceptance", "invalid_rejection")))
    click.echo(f"next: testhelix report {run_dir}")

