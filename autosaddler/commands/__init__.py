"""Subcommands of the `autosaddler` command, one module each."""
