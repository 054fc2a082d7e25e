"""`testhelix sql RUN_DIR "SELECT ..."`: query a run's store."""

from __future__ import annotations

from pathlib import Path

import click
import duckdb
from rich.console import Console
from rich.table import Table

from testhelix.commands.plumbing import json_option, print_json
from testhelix.core.errors import UserError
from testhelix.core.inputs import RunDir
from testhelix.store.runstore import RunStore


@click.command("sql")
@click.argument("run_dir", type=RunDir())
@click.argument("query")
@json_option
def command(run_dir: Path, query: str, as_json: bool) -> None:
    """Run QUERY (one SELECT, read-only, no file access) on RUN_DIR's store and print a table
    (tab-separated lines when the output is not a terminal).

    While a run is in progress this reads the snapshot its writer published after the last step."""
    check_read_only_query(query)
    store = RunStore(run_dir, read_only=True)
    try:
        store.lock_down()
        cols, rows = store.query(query)
    finally:
        store.close()
    if as_json:
        print_json([dict(zip(cols, r)) for r in rows])
        return
    cells = [["" if v is None else str(v) for v in r] for r in rows]
    console = Console()
    if not console.is_terminal:
        # a pipe or a log: tab-separated lines with whole column names and values, never cut to a width
        for line in [cols, *cells]:
            click.echo("\t".join(" ".join(c.split()) for c in line))
        return
    table = Table(show_lines=False)
    for c in cols:
        table.add_column(c, min_width=len(c), overflow="fold")
    for r in cells:
        table.add_row(*r)
    console.print(table)


ALLOWED = {"SELECT", "EXPLAIN"}


def check_read_only_query(query: str) -> None:
    """Only SELECT (and EXPLAIN) statements: no COPY, EXPORT, ATTACH, INSTALL, LOAD, SET, PRAGMA..."""
    if not query.strip():
        raise UserError("QUERY: empty; give one SELECT statement")
    try:
        statements = duckdb.connect(":memory:").extract_statements(query)
    except duckdb.Error as err:
        raise UserError(f"QUERY: does not parse: {str(err).splitlines()[0]}") from None
    if not statements:
        raise UserError("QUERY: no statement; give one SELECT statement")
    for st in statements:
        kind = st.type.name
        if kind not in ALLOWED:
            raise UserError(f"QUERY: {kind} statements are refused; `testhelix sql` is read-only (SELECT only)")

