"""The command lines (the interface layer): the `testhelix` group (cli.py) and its subcommands, one module
each; the plumbing the three packages' commands share (plumbing.py) and the options every command
that runs models or suites takes (run_options.py)."""
