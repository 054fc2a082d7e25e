"""`testhelix`: strategies, splits, task packs, evaluation, runs and reports."""

from __future__ import annotations

import click

from testhelix import __version__
from testhelix.commands.plumbing import entry_point
from testhelix.core.lazycli import LazyGroup

# Each subcommand lives in its own module under testhelix/commands/, imported when it runs.
COMMANDS = {name: f"testhelix.commands.{name}:command"
            for name in ("strategy", "splits", "sql", "pack", "report", "evaluate", "run", "serve", "view",
                         "plugin", "errors", "external")}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="testhelix")
def cli() -> None:
    """Generate, evaluate and report test suites written by coding agents."""


main = entry_point(cli)
