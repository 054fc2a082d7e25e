"""`autosaddler dag RUN_DIR`: print or export the evolution DAG."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

from autosaddler.dag import EvolutionDAG, Node, read_search_run
from autosaddler.edits import in_words
from testhelix.commands.plumbing import json_option, print_json
from testhelix.core import atomic
from testhelix.core.inputs import OutputFile, RunDir

if TYPE_CHECKING:
    from testhelix.store.runstore import PendingEvaluation
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
    width = Console().width
    if width >= WIDE:
        Console().print(_table(dag))
    else:
        for line in _stacked(dag, width):
            click.echo(line)
    s = dag.summary()
    notes = [f"{s['nodes']} nodes, {s['edges']} edges; "
             + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in s["status"].items())
             + (f"; best {s['best']['node']} dev {100 * s['best']['dev_score']:.1f}%" if s["best"] else "")]
    pending = _incomplete(run_dir)
    if pending:
        causes = sorted({e.cause for e in pending})
        notes.append(f"incomplete: {len(pending)} evaluation(s) prevented by the provider ({', '.join(causes)}), "
                     f"not in the DAG and never ranked; `autosaddler resume {run_dir}` retries them")
    models = [meta.get("model", ""), meta.get("optimizer_model", "")]
    if any(is_simulated(m) for m in models):
        notes.append(f"models: {models[0]} (execution), {models[1]} (optimizer): simulated test doubles")
    if meta.get("_snapshot"):
        notes.append(f"live run: this is the snapshot after step {meta['_snapshot']['step']} "
                     f"(published {meta['_snapshot']['published_at']} UTC)")
    for note in notes:
        click.echo("\n".join(textwrap.wrap(note, width, subsequent_indent="  ", break_on_hyphens=False)))


# Below this many columns the nodes are printed one block each instead of as a table whose columns
# would be cut to `screened…` (the table needs about this much for its eight columns).
WIDE = 120
UNCLIPPED = 1_000_000   # in_words' width for the whole edit: the terminal wraps it instead


def _minibatch(n: Node) -> str:
    if n.child_outcomes:
        return f"{sum(n.parent_outcomes.values())}→{sum(n.child_outcomes.values())}"
    return f"{sum(n.parent_outcomes.values())}→–" if n.parent_outcomes else ""


def _edit(dag: EvolutionDAG, n: Node) -> str:
    """The edit in words, whole (never clipped): `agentSteps 12 → 16`."""
    parent = dag.parent(n.node_id)
    return in_words(n.edit, dag.node(parent).strategy if parent else None, width=UNCLIPPED)


def _table(dag: EvolutionDAG) -> Table:
    table = Table("node", "parent", "iter", "status", "edit", "minibatch parent→child", "dev", "reason")
    for column in table.columns:
        column.overflow = "fold"      # wrapped, never cut with an ellipsis
    for n in dag.nodes():
        table.add_row(n.node_id, dag.parent(n.node_id) or "", str(n.iteration), n.status.replace("_", " "),
                      _edit(dag, n), _minibatch(n), "" if n.dev_score is None else f"{100 * n.dev_score:.1f}%",
                      n.reason)
    return table


def _stacked(dag: EvolutionDAG, width: int) -> list[str]:
    """One block per node for a narrow terminal: a line of facts, then the edit and the reason, each
    wrapped to the width under a hanging indent."""
    lines: list[str] = []
    for n in dag.nodes():
        parent = dag.parent(n.node_id)
        facts = [f"iteration {n.iteration}", n.status.replace("_", " ")]
        if parent:
            facts.insert(0, f"from {parent}")
        if n.parent_outcomes:
            facts.append(f"minibatch {_minibatch(n)}")
        if n.dev_score is not None:
            facts.append(f"dev {100 * n.dev_score:.1f}%")
        lines += textwrap.wrap(f"{n.node_id}  " + " · ".join(facts), width, subsequent_indent=" " * 6)
        for label, text in (("edit", _edit(dag, n)), ("why", n.reason)):
            if text:
                lines += textwrap.wrap(f"{label}: {text}", width, initial_indent=" " * 6,
                                       subsequent_indent=" " * 8, break_on_hyphens=False)
    return lines


def _export(dag: EvolutionDAG, json_out: Path | None, graphml: Path | None, png: Path | None) -> None:
    """Every file is written under a temporary name and renamed: never a partial file. Each says
    where it went (on stderr, so that `--json` output stays one JSON document)."""
    if json_out:
        atomic.write_text(json_out, json.dumps(dag.to_json(), indent=2) + "\n")
        click.echo(f"wrote the DAG as JSON: {json_out}", err=True)
    if graphml:
        with atomic.atomic_path(graphml) as tmp:
            dag.write_graphml(tmp)
        click.echo(f"wrote the DAG as GraphML: {graphml}", err=True)
    if png:
        with atomic.atomic_path(png, suffix=".png") as tmp:
            dag.write_png(tmp)
        click.echo(f"wrote the DAG and the scores by iteration as PNG: {png}", err=True)


def _incomplete(run_dir: Path) -> list[PendingEvaluation]:
    from testhelix.core.errors import UserError
    from testhelix.store.runstore import RunStore

    store = RunStore(run_dir, read_only=True)
    try:
        return store.unresolved_incomplete()
    except UserError:           # a store from before incomplete evaluations were recorded
        return []
    finally:
        store.close()
