"""Checked command-line parameters shared by the testhelix, autosaddler and gtdd commands.

Each type refuses a bad value before any work starts, with click's usual message, which names the
option and the value ("Invalid value for '--strategy': x.json: not UTF-8 text ..."), exit code 2:

- `InputFile`: exists, is a file (not a folder), readable and, for text files, valid UTF-8.
  `InputFile(bundled="strategy")` / `InputFile(bundled="split file")` also take the name of a
  bundled strategy (`initial`) or split file (`katas`) when no file of that name exists.
- `InputDir`: exists and is a folder.
- `PackDir`: a task pack folder, or the name of a bundled pack (`katas`), unpacked on first use.
  Names are resolved in one place, `testhelix.core.paths.resolve`: a path always wins, and one line on
  stderr says which was used whenever a bundled name is involved.
- `RunDir`: an existing run folder with a `run.duckdb` store (for commands that read a run).
- `NewRunDir`: a run folder to create or continue (not a file, parent writable).
- `OutputFile`: a file to write (not a folder; the nearest existing parent is a writable folder).
- `FiniteFloat`: a number within documented bounds; NaN and infinity are refused.
- `SEED`: a seed, an integer in 0 ... 2**63 - 1 (what every seeded generator of the project accepts).
- `PluginName`: the name of a plug-in (`--executor`, `--sandbox`, ...): not empty, no surrounding spaces.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

import click

from testhelix.core.bundled_data import Kind, bundled_names, resolve
from testhelix.core.errors import UserError
from testhelix.core.plaintext import output_width, wrap

MAX_TEXT_BYTES = 256 * 1024 * 1024  # larger inputs are not strategy, split, config or CSV files


def _echo(line: str) -> None:
    click.echo(wrap(line, output_width(sys.stderr)), err=True)  # a notice may hold a long cache path


def _bundled(ptype: click.ParamType, value: Any, kind: Kind, param: click.Parameter | None,
             ctx: click.Context | None) -> tuple[Path | None, str]:
    """(the path to use, or None when `value` is neither a path nor a bundled name; a hint naming
    the bundled names for the error message)."""
    try:
        found = resolve(value, kind, log=_echo)
        names = bundled_names(kind)
    except UserError as err:
        ptype.fail(err.message, param, ctx)
    if found is not None:
        if found.note:
            _echo(found.note)
        return found.path, ""
    hint = f"; no bundled {kind} has that name either (bundled: {', '.join(names) or 'none'})" \
        if "/" not in str(value) else ""
    return None, hint


class InputFile(click.ParamType):
    name = "file"

    def __init__(self, text: bool = True, bundled: Kind | None = None):
        self.text = text
        self.bundled = bundled

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path, hint = Path(value), ""
        if self.bundled:
            found, hint = _bundled(self, value, self.bundled, param, ctx)
            path = found or path
        problem = check_input_file(path, self.text)
        if problem:
            self.fail(problem + (hint if not path.exists() else ""), param, ctx)
        return path


def check_input_file(path: Path, text: bool = True) -> str | None:
    """None when `path` is a readable (UTF-8 text) file, else what is wrong, naming the path."""
    if not path.exists():
        return f"{path}: no such file (does not exist)"
    if path.is_dir():
        return f"{path}: is a folder, not a file"
    if not path.is_file():
        return f"{path}: is not a regular file"
    try:
        size = path.stat().st_size
        if text and size > MAX_TEXT_BYTES:
            return f"{path}: {size} bytes is larger than the {MAX_TEXT_BYTES} bytes any input file may have"
        data = path.read_bytes() if text else b""
    except OSError as err:
        return f"{path}: cannot read ({err.strerror})"
    if text:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            return f"{path}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})"
    return None


class InputDir(click.ParamType):
    name = "folder"
    missing, not_dir = "no such folder (does not exist)", "is a file, not a folder"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path = Path(value)
        if not path.exists():
            self.fail(f"{path}: {self.missing}", param, ctx)
        if not path.is_dir():
            self.fail(f"{path}: {self.not_dir}", param, ctx)
        return path


class PackDir(click.ParamType):
    """A task pack folder or the name of a bundled pack."""

    name = "pack"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path, hint = _bundled(self, value, "pack", param, ctx)
        if path is None:
            self.fail(f"{value}: no such folder (does not exist){hint}", param, ctx)
        if not path.is_dir():
            self.fail(f"{path}: is a file, not a folder", param, ctx)
        return path


class RunDir(InputDir):
    """An existing run folder holding a store."""

    name = "run_dir"
    missing, not_dir = "no run store here (no such folder)", "is a file, not a run folder"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path = super().convert(value, param, ctx)
        if not (path / "run.duckdb").is_file():
            self.fail(f"{path}: no run store here (expected run.duckdb)", param, ctx)
        return path


class NewRunDir(click.ParamType):
    """A run folder to create or continue."""

    name = "run_dir"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path = Path(value)
        problem = _broken_symlink(path)
        if problem:
            self.fail(problem, param, ctx)
        if path.exists() and not path.is_dir():
            self.fail(f"{path}: is a file, not a run folder", param, ctx)
        if (path / "run.duckdb").exists() and not (path / "run.duckdb").is_file():
            self.fail(f"{path / 'run.duckdb'}: is not a file", param, ctx)
        problem = _writable_target(path)
        if problem:
            self.fail(problem, param, ctx)
        return path


class OutputFile(click.ParamType):
    name = "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        path = Path(value)
        if str(value).strip() == "":
            self.fail("an empty path", param, ctx)
        if path.is_dir():
            self.fail(f"{path}: is a folder; give a file name", param, ctx)
        problem = _writable_target(path.parent if path.exists() else path)
        if problem:
            self.fail(problem, param, ctx)
        return path


def _broken_symlink(path: Path) -> str | None:
    """What is wrong with `path` if it is a symlink that leads nowhere (dangling, or a loop)."""
    if not path.is_symlink():
        return None
    try:
        path.resolve(strict=True)
    except FileNotFoundError:
        return f"{path}: is a symlink to {os.readlink(path)}, which does not exist (remove the link or create its target)"
    except (RuntimeError, OSError):
        return f"{path}: is a symlink that loops (it leads back to itself); remove it or point it at a folder"
    return None


def _writable_target(path: Path) -> str | None:
    """The nearest existing ancestor must be a folder we may write into."""
    probe = path if path.exists() else path.parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return f"{path}: {probe} is a file, not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{path}: folder {probe} is not writable"
    return None


class FiniteFloat(click.ParamType):
    """A finite number in [low, high] (or (low, high] with `low_open`)."""

    name = "number"

    def __init__(self, low: float | None = None, high: float | None = None, low_open: bool = False):
        self.low, self.high, self.low_open = low, high, low_open

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r}: must be a finite number", param, ctx)
        if self.low is not None and (number <= self.low if self.low_open else number < self.low):
            self.fail(f"{value} must be {'>' if self.low_open else '>='} {self.low}", param, ctx)
        if self.high is not None and number > self.high:
            self.fail(f"{value} must be <= {self.high}", param, ctx)
        return number


SEED_MAX = 2**63 - 1
SEED = click.IntRange(0, SEED_MAX)  # every --seed: 0 ... 2**63 - 1


class PluginName(click.ParamType):
    """A built-in name, `package.module:OBJECT` or an entry point's name; an empty text is refused
    (it would silently mean the default)."""

    name = "name"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not text.strip():
            self.fail("an empty name; give a built-in name, package.module:OBJECT or an entry point's name, "
                      "or leave the option out for the default", param, ctx)
        if text != text.strip():
            self.fail(f"{text!r}: leading or trailing spaces", param, ctx)
        return text

