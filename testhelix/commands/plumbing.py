"""Shared command-line plumbing for the testhelix, autosaddler and gtdd commands.

Every command is a click command; `entry_point(group)` wraps a group so that a `UserError` (or a
click usage error) prints one clear message and exits 2, never a traceback. A `ModelError` that
reaches the top (rejected credentials, an unknown model, a provider failure outside any task
evaluation) prints one line and exits 2; incomplete evaluations (`EvaluationIncomplete`) exit 3.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from testhelix.core.errors import UserError, describe_os_error, describe_store_error
from testhelix.core.heartbeat import command_begins
from testhelix.llm.base import ModelError

json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")


def print_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, sort_keys=False, default=str))


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())[:400]


def entry_point(group: click.Group) -> Callable[[list[str] | None], None]:
    def main(argv: list[str] | None = None) -> None:
        command_begins()      # the durations a command reports count from here (or the process start)
        try:
            rv = group.main(args=argv, standalone_mode=False)
        except UserError as err:
            click.echo(err.render(), err=True)
            sys.exit(err.exit_code)
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(130)
        except click.ClickException as err:
            _show(err)
            sys.exit(2 if err.exit_code == 2 else err.exit_code)
        except click.exceptions.Exit as err:
            sys.exit(err.exit_code)
        except ModelError as err:            # auth, configuration or a provider failure nothing caught
            click.echo(f"error: {_one_line(err)}", err=True)
            sys.exit(2)
        except json.JSONDecodeError as err:  # a file the user named does not parse
            click.echo(f"error: JSON does not parse: {err}", err=True)
            sys.exit(2)
        except UnicodeDecodeError as err:  # a file read without an input check (see testhelix/core/inputs.py)
            click.echo(f"error: a file is not UTF-8 text ({err.reason} at byte {err.start})", err=True)
            sys.exit(2)
        except OSError as err:  # full disk, permissions, read-only file system: name the path
            from testhelix.store.lifecycle import OPEN_PATHS

            click.echo(describe_os_error(err, open_paths=OPEN_PATHS).render(), err=True)
            sys.exit(2)
        except Exception as err:  # DuckDB's I/O failures carry no errno; map the ones that are the machine's
            problem = _store_problem(err)
            if problem is None:
                raise
            click.echo(problem.render(), err=True)
            sys.exit(problem.exit_code)
        sys.exit(rv if isinstance(rv, int) else 0)

    return main


def _show(err: click.ClickException) -> None:
    """Click's own report (usage and a help hint for a usage error) with the `error:` every other
    failure of the three commands starts with, instead of Click's `Error:`."""
    ctx = getattr(err, "ctx", None)
    if isinstance(err, click.UsageError) and ctx is not None:
        click.echo(ctx.get_usage(), err=True)
        click.echo(f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help.\n", err=True)
    click.echo(f"error: {err.format_message()}", err=True)


def _store_problem(err: Exception) -> UserError | None:
    import duckdb

    from testhelix.store.lifecycle import OPEN_PATHS as _OPEN_PATHS

    if not isinstance(err, duckdb.Error):
        return None
    problem = describe_store_error(str(err), _OPEN_PATHS)
    if problem is not None:
        return problem
    # Any other DuckDB failure: a store that opened but cannot be read (a damaged block, a table
    # another version changed). One line, never a traceback.
    from testhelix.store.lifecycle import damaged

    return damaged(Path(sorted(_OPEN_PATHS)[0]) if _OPEN_PATHS else Path("the run store"), err)
