"""`autosaddler gate`: the release gate, from recorded outcomes or by running both strategies."""

from __future__ import annotations

from pathlib import Path

import click

from autosaddler.gate import decide, read_outcomes_csv, render
from testhelix.cliutil import json_option, print_json


@click.command("gate")
@click.option("--outcomes", "outcomes_csv", type=click.Path(path_type=Path),
              help="CSV with columns task, challenger, baseline (0/1): decide without running anything.")
@json_option
def command(outcomes_csv: Path | None, as_json: bool) -> None:
    """Promote a frozen challenger only on a positive difference with one-sided exact McNemar p <= 0.05."""
    if outcomes_csv is None:
        raise click.UsageError("give --outcomes FILE.csv")
    result = decide(read_outcomes_csv(outcomes_csv))
    if as_json:
        print_json(result.to_json())
    else:
        click.echo(render(result))
