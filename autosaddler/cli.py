"""`autosaddler` command line."""

from __future__ import annotations

import click

from testhelix import __version__
from testhelix.cliutil import entry_point


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="autosaddler")
def cli() -> None:
    """Search, freeze, export and gate TestHelix strategies."""


def _register() -> None:
    from autosaddler.commands import dag, freeze, gate, search

    for command in (search.search, search.resume, dag.command, freeze.freeze, freeze.export, gate.command):
        cli.add_command(command)
    from autosaddler.commands import view  # the HTML report

    cli.add_command(view.command)


_register()
main = entry_point(cli)
