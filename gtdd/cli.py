"""`gtdd` command line."""

from __future__ import annotations

import click

from testhelix import __version__
from testhelix.commands.plumbing import entry_point
from testhelix.core.lazycli import LazyGroup

# Subcommands live under gtdd/commands/ (the audit statistics commands share one module), imported
# when they run.
COMMANDS = {"audit-size": "gtdd.commands.stats:audit_size_command",
            "accept-prob": "gtdd.commands.stats:accept_prob_command",
            "history-bound": "gtdd.commands.stats:history_bound_command",
            "probe": "gtdd.commands.stats:probe_command",
            "tables": "gtdd.commands.stats:tables_command",
            "recorded-audit": "gtdd.commands.stats:recorded_audit_command",
            "experiment": "gtdd.commands.loop:experiment_command",
            "run": "gtdd.commands.loop:run_command",
            "report": "gtdd.commands.loop:report_command",
            "compare": "gtdd.commands.compare:compare_command",
            "supermartingale": "gtdd.commands.sequential:supermartingale_command",
            "e-process": "gtdd.commands.sequential:e_process_command",
            "plugin": "gtdd.commands.plugin:command"}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gtdd")
def cli() -> None:
    """Generative test-driven development: exact audit statistics, the GTDD loop and experiments."""


main = entry_point(cli)
