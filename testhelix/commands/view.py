"""`testhelix view RUN_DIR --out report.html`: a self-contained HTML report of a helix run and its gates."""

from __future__ import annotations

from pathlib import Path

import click

from testhelix.commands.plumbing import json_option, print_json


@click.command("view")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="HTML file to write (default: RUN_DIR/run-report.html); trajectories go to OUT_trajectories/.")
@json_option
def command(run_dir: Path, out: Path | None, as_json: bool) -> None:
    """Write one HTML file (no network needed) showing the run's metrics, task matrix, gates and trajectories."""
    from testhelix.view import render_run_report

    result = render_run_report(run_dir, out or Path(run_dir) / "run-report.html")
    if as_json:
        print_json(result)
        return
    click.echo(f"wrote {result['out']} ({result['bytes']:,} bytes) and {result['trajectory_pages']} trajectory page(s)")
    if result["simulated"]:
        click.echo("note: simulated test doubles took part; the page says so")
