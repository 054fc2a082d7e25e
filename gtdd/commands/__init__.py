"""Subcommands of the `gtdd` command line."""
