"""`testhelix sql RUN_DIR "SELECT ..."`: query a run's store."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from testhelix.cliutil import json_option, print_json
from testhelix.inputs import RunDir
from testhelix.store import RunStore


@click.command("sql")
@click.argument("run_dir", type=RunDir())
@click.argument("query")
@json_option
def command(run_dir: Path, query: str, as_json: bool) -> None:
    """Run QUERY (DuckDB SQL, read-only) on RUN_DIR's store and print a table."""
    store = RunStore(run_dir, read_only=True)
    try:
        cols, rows = store.query(query)
    finally:
        store.close()
    if as_json:
        print_json([dict(zip(cols, r)) for r in rows])
        return
    table = Table(*cols, show_lines=False)
    for r in rows:
        table.add_row(*("" if v is None else str(v) for v in r))
    Console().print(table)
