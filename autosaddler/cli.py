"""`autosaddler` command line."""

from __future__ import annotations

import click

from testhelix import __version__
from testhelix.commands.plumbing import entry_point
from testhelix.core.lazycli import LazyGroup

# Subcommands live under autosaddler/commands/, imported when they run.
COMMANDS = {"search": "autosaddler.commands.search:search", "resume": "autosaddler.commands.search:resume",
            "dag": "autosaddler.commands.dag:command", "freeze": "autosaddler.commands.freeze:freeze",
            "export": "autosaddler.commands.freeze:export", "gate": "autosaddler.commands.gate:command",
            "view": "autosaddler.commands.view:command"}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="autosaddler")
def cli() -> None:
    """Search, freeze, export and gate TestHelix strategies."""


main = entry_point(cli)
