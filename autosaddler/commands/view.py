"""`autosaddler view RUN_DIR --out report.html`: a self-contained HTML report of a strategy search."""

from __future__ import annotations

from pathlib import Path

import click

from testhelix.commands.plumbing import json_option, print_json


@click.command("view")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="HTML file to write (default: RUN_DIR/search-report.html).")
@json_option
def command(run_dir: Path, out: Path | None, as_json: bool) -> None:
    """Write one HTML file (no network needed): the evolution DAG, edits, minibatches, scores and gates."""
    from autosaddler.view import render_search_report

    result = render_search_report(run_dir, out or Path(run_dir) / "search-report.html")
    if as_json:
        print_json(result)
        return
    click.echo(f"wrote {result['out']} ({result['bytes']:,} bytes): {result['nodes']} nodes, {result['edges']} edges"
               + (" (snapshot of a run in progress)" if result["in_progress"] else ""))
    if result["simulated"]:
        click.echo("note: simulated test doubles took part; the page says so")
