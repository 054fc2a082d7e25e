"""`testhelix`: strategies, splits, task packs, evaluation, runs and reports."""

from __future__ import annotations

import click

from testhelix import __version__
from testhelix.cliutil import entry_point


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="testhelix")
def cli() -> None:
    """Generate, evaluate and report test suites written by coding agents."""


def _register() -> None:
    # Each subcommand lives in its own module under testhelix/commands/.
    from testhelix.commands import evaluate, pack, report, run, serve, splits, sql, strategy

    for mod in (strategy, splits, sql, pack, report, evaluate, run, serve):
        cli.add_command(mod.command)
    from testhelix.commands import view  # the HTML report

    cli.add_command(view.command)


_register()
main = entry_point(cli)
