"""`autosaddler freeze` and `autosaddler export`."""

from __future__ import annotations

from pathlib import Path

import click

from autosaddler.freeze import export as export_strategy
from autosaddler.freeze import freeze as freeze_strategy
from testhelix.commands.plumbing import json_option, print_json
from testhelix.core import atomic
from testhelix.core.inputs import InputFile, OutputFile, RunDir
from testhelix.core.plaintext import output_width, wrap


@click.command("freeze")
@click.argument("run_dir", type=RunDir())
@click.option("--out", required=True, type=OutputFile(), help="e.g. strategies/frozen/NAME.json")
@json_option
def freeze(run_dir: Path, out: Path, as_json: bool) -> None:
    """Freeze the best development score of RUN_DIR (ties: fewer edits, then earliest)."""
    doc = freeze_strategy(run_dir, out)
    if as_json:
        print_json({"file": str(out), "hash": doc["hash"], "provenance": doc["provenance"]})
        return
    prov = doc["provenance"]
    if doc.get("repeat"):
        click.echo(wrap(f"{out} already holds node {prov['node']} of this run (hash {doc['hash'][:12]}): a repeat, "
                        "nothing written", output_width()))
        return
    click.echo(wrap(f"froze node {prov['node']} (development {100 * prov['scores']['development']:.1f}% vs initial "
                    f"{100 * prov['scores']['initial_development']:.1f}%, {len(prov['edits'])} edit(s)) to {out}",
                    output_width()))
    click.echo(f"hash {doc['hash']}")


@click.command("export")
@click.argument("frozen", type=InputFile(bundled="strategy"))
@click.option("--format", "fmt", type=click.Choice(["json", "yaml"]), default="json", show_default=True)
@click.option("--out", type=OutputFile(), help="Write here instead of printing.")
def export(frozen: Path, fmt: str, out: Path | None) -> None:
    """Write a frozen strategy (hash verified) as JSON or YAML for other tools."""
    text = export_strategy(frozen, fmt)
    if out:
        atomic.write_text(out, text)
    else:
        click.echo(text, nl=False)
