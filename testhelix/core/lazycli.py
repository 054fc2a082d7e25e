"""A click group whose subcommands are imported only when one is run.

Each command module imports what it needs (scipy, duckdb, rich, pydantic models, the SDKs) at its
top; importing all of them just to print `--help` cost over a second of CPU. `LazyGroup` names each
subcommand by `module:attribute` and imports it when click asks for it by name (running it, or its
own `--help`). The group's command list reads each subcommand's short help from the module's
source (its decorator's `short_help=`/`help=`, else the function's docstring) with `ast`, so the
listing imports no command module; tests/foundation/test_startup.py checks the listing equals the
one the imported commands give.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path
from typing import Any

import click


def _help_from_source(target: str) -> dict[str, str | None] | None:
    """The `help` and `short_help` the command `module:attribute` would get, read from its source
    (None: not found there)."""
    module, attr = target.split(":")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == attr:
            found: dict[str, str | None] = {"help": ast.get_docstring(node, clean=False), "short_help": None}
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") in ("command", "group"):
                    for kw in deco.keywords:
                        if kw.arg in ("short_help", "help") and isinstance(kw.value, ast.Constant):
                            found[kw.arg] = str(kw.value.value)
            return found
    return None


class LazyGroup(click.Group):
    """`lazy`: {command name: "package.module:attribute"}, imported on first use."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:  # click.Group's
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: ARG002 (click's signature)
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, attr = self.lazy[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)

    def listed_help(self, name: str, limit: int) -> str:
        """A command's one-line help, without importing it when it is not loaded yet."""
        if name in self.commands or name not in self.lazy:
            command = self.commands.get(name)
            return command.get_short_help_str(limit) if command is not None else ""
        found = _help_from_source(self.lazy[name])
        if found is None:   # not readable from source: import it after all
            command = self.get_command(click.Context(self), name)
            return command.get_short_help_str(limit) if command is not None else ""
        # a stand-in with the same texts, so click itself shortens them exactly as it would
        return click.Command(name, help=found["help"], short_help=found["short_help"]).get_short_help_str(limit)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        with formatter.section("Commands"):
            formatter.write_dl([(n, self.listed_help(n, limit)) for n in names])
