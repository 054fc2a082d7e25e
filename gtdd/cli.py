"""`gtdd` command line."""

from __future__ import annotations

import click

from testhelix import __version__
from testhelix.cliutil import entry_point


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gtdd")
def cli() -> None:
    """Generative test-driven development: exact audit statistics, the GTDD loop and experiments."""


def _register() -> None:
    # Subcommands live under gtdd/commands/; the audit statistics commands share one module.
    from gtdd.commands import loop, sequential, stats

    for command in [*stats.COMMANDS, *sequential.COMMANDS, *loop.COMMANDS]:
        cli.add_command(command)


_register()
main = entry_point(cli)
