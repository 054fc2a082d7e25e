"""`autosaddler dag RUN_DIR`: print or export the evolution DAG."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

from autosaddler.dag import EvolutionDAG, read_search_run
from autosaddler.edits import describe
from testhelix import atomic
from testhelix.cliutil import json_option, print_json
from testhelix.inputs import OutputFile, RunDir

if TYPE_CHECKING:
    from testhelix.store import PendingEvaluation
from testhelix.llm.registry import is_simulated


@click.command("dag")
@click.argument("run_dir", type=RunDir())
@json_option
@click.option("--json-out", type=OutputFile(), help="Write the DAG as JSON to this file.")
@click.option("--graphml", type=OutputFile(), help="Write the DAG as GraphML to this file.")
@click.option("--png", type=OutputFile(), help="Draw the DAG and the development score over iterations.")
def command(run_dir: Path, as_json: bool, json_out: Path | None, graphml: Path | None, png: Path | None) -> None:
    """Print the evolution DAG of a search run (`--json`: the DAG as JSON on stdout)."""
    dag, meta = read_search_run(run_dir)
    _export(dag, json_out, graphml, png)
    if as_json:
        print_json(dag.to_json())
        return
    table = Table("node", "parent", "iter", "status", "edit", "minibatch parent→child", "dev", "reason")
    for n in dag.nodes():
        mb = (f"{sum(n.parent_outcomes.values())}→{sum(n.child_outcomes.values())}"
              if n.child_outcomes else (f"{sum(n.parent_outcomes.values())}→–" if n.parent_outcomes else ""))
        edit = "" if n.edit is None else describe(n.edit, width=30)
        table.add_row(n.node_id, dag.parent(n.node_id) or "", str(n.iteration), n.status, edit, mb,
                      "" if n.dev_score is None else f"{100 * n.dev_score:.1f}%", n.reason[:50])
    Console().print(table)
    s = dag.summary()
    click.echo(f"{s['nodes']} nodes, {s['edges']} edges; " + ", ".join(f"{k} {v}" for k, v in s["status"].items())
               + (f"; best {s['best']['node']} dev {100 * s['best']['dev_score']:.1f}%" if s["best"] else ""))
    pending = _incomplete(run_dir)
    if pending:
        causes = sorted({e.cause for e in pending})
        click.echo(f"incomplete: {len(pending)} evaluation(s) prevented by the provider ({', '.join(causes)}), not "
                   f"in the DAG and never ranked; `autosaddler resume {run_dir}` retries them")
    models = [meta.get("model", ""), meta.get("optimizer_model", "")]
    if any(is_simulated(m) for m in models):
        click.echo(f"models: {models[0]} (execution), {models[1]} (optimizer): simulated test doubles")
    if meta.get("_snapshot"):
        click.echo(f"live run: this is the snapshot after step {meta['_snapshot']['step']} "
                   f"(published {meta['_snapshot']['published_at']} UTC)")


def _export(dag: EvolutionDAG, json_out: Path | None, graphml: Path | None, png: Path | None) -> None:
    """Every file is written under a temporary name and renamed: never a partial file."""
    if json_out:
        atomic.write_text(json_out, json.dumps(dag.to_json(), indent=2) + "\n")
    if graphml:
        with atomic.atomic_path(graphml) as tmp:
            dag.write_graphml(tmp)
    if png:
        with atomic.atomic_path(png, suffix=".png") as tmp:
            dag.write_png(tmp)


def _incomplete(run_dir: Path) -> list[PendingEvaluation]:
    from testhelix.errors import UserError
    from testhelix.store import RunStore

    store = RunStore(run_dir, read_only=True)
    try:
        return store.unresolved_incomplete()
    except UserError:           # a store from before incomplete evaluations were recorded
        return []
    finally:
        store.close()
