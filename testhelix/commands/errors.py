"""`testhelix errors sample|agreement`: the error-analysis workflow (testhelix/erroranalysis.py)."""

from __future__ import annotations

from pathlib import Path

import click

from testhelix.cliutil import json_option, print_json
from testhelix.erroranalysis import SUBTYPES, agreement, read_labels, render_agreement, sample_failed, write_sheet
from testhelix.inputs import BoundedInt, InputFile, OutputFile, RunDir


@click.group("errors")
def command() -> None:
    """Annotate failed trajectories: draw a seeded sample, then measure two annotators' agreement."""


@command.command("sample")
@click.argument("run_dirs", nargs=-1, required=True, type=RunDir())
@click.option("--out", "out", required=True, type=OutputFile(),
              help="The annotation sheet: .csv, or JSON Lines for any other suffix.")
@click.option("--per-family", default=50, show_default=True, type=BoundedInt(1, 100_000),
              help="Failed trajectories drawn per agent family (before timeouts are set aside).")
@click.option("--seed", default=42, show_default=True, type=int)
@click.option("--config", "configuration", default=None,
              help="Sample this configuration (A-E) of every family; default: each family's configuration "
                   "with the highest Joint Success Function.")
@json_option
def sample(run_dirs: tuple[Path, ...], out: Path, per_family: int, seed: int, configuration: str | None,
           as_json: bool) -> None:
    """Sample failed trajectories (S = 0) of RUN_DIRS by agent family and write an annotation sheet
    (trajectory folder, task, final suite, empty `subtype` and `notes` columns)."""
    drawn = sample_failed(run_dirs, per_family, seed, configuration)
    write_sheet(drawn.rows, out)
    if as_json:
        print_json({"sheet": str(out), "rows": len(drawn.rows), "by_family": drawn.by_family})
        return
    for family, s in drawn.by_family.items():
        click.echo(f"{family} (configuration {s['configuration']}): {s['failed']} failed, {s['sampled']} drawn "
                   f"with seed {seed}, {s['timeouts_excluded']} timeouts set aside, {s['annotate']} to annotate")
    click.echo(f"wrote {len(drawn.rows)} rows to {out}; label each row's `subtype` with one of: {', '.join(SUBTYPES)}")


@command.command("agreement")
@click.argument("first", type=InputFile())
@click.argument("second", type=InputFile())
@json_option
def agreement_command(first: Path, second: Path, as_json: bool) -> None:
    """Cohen's kappa of two annotators' filled sheets (per subtype and per parent category) and the
    aggregation into the three parent categories."""
    result = agreement(read_labels(first), read_labels(second))
    if as_json:
        print_json(result)
    else:
        click.echo(render_agreement(result))
