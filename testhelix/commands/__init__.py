"""Subcommands of the `testhelix` command, one module each."""
