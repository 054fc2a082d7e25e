"""`gtdd compare RUN_A RUN_B [RUN ...]`: paired statistics across GTDD runs that differ in a setting."""

from __future__ import annotations

from pathlib import Path

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.core.inputs import RunDir


@click.command("compare")
@click.argument("run_dirs", nargs=-1, required=True, type=RunDir())
@json_option
def compare_command(run_dirs: tuple[Path, ...], as_json: bool) -> None:
    """Pair the trajectories of GTDD runs by block and policy and print paired statistics of every pair
    of runs (first minus second): e.g. `--fixed-tests hidden` against `--fixed-tests visible`.

    The runs must share domain, seed and rounds, and their blocks the same first modules; runs that do not
    are refused (exit 2) with the difference named."""
    from gtdd.compare import compare, render_text

    report = compare(list(run_dirs))
    if as_json:
        print_json(report)
    else:
        click.echo(render_text(report))
