"""Bounded readers for the files a user hands to a command: JSON, TOML, CSV and JSONL.

Every file the testhelix, autosaddler and gtdd commands read from the user goes through here, so
that no input can reach a parser limit (Python's 4,300-digit integer limit, the recursion limit,
the csv module's field size) and end in a traceback, or make a later computation blow up. Each
refusal is a `UserError` (exit 2) naming the file, the place in it (line and column, JSON path or
CSV line) and the limit that was passed.

The limits are far above anything a strategy, config, split, task or outcome file needs.
"""

from __future__ import annotations

import csv
import json
import math
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from testhelix.core.errors import UserError

MAX_BYTES = 64 * 1024 * 1024  # an input file; a SWE-bench JSONL of a few thousand records fits
MAX_DEPTH = 64  # nesting of arrays/objects/tables; the deepest real input (a strategy) has 5
MAX_INT_DIGITS = 64  # decimal digits of an integer; seeds and token counts have at most 20
MAX_CSV_FIELD = 64 * 1024  # characters in one CSV field (a task id or a 0/1 cell has a few dozen)

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_OPEN, _CLOSE = frozenset("[{"), frozenset("]}")
_LONG_INT = re.compile(rf"(?<![\w.])[-+]?\d[\d_]{{{MAX_INT_DIGITS},}}")


def _refuse(path: Path | str, place: str, problem: str) -> UserError:
    where = f"{path}: {place}: " if place else f"{path}: "
    return UserError(where + problem)


def _line_col(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    return f"line {line}, column {offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def read_text(path: Path | str, max_bytes: int = MAX_BYTES) -> str:
    """The file as text (UTF-8, a byte-order mark accepted), refusing a file that is missing, a
    folder, larger than `max_bytes`, or not UTF-8 (naming the line and byte offset)."""
    path = Path(path)
    try:
        if path.is_dir():
            raise _refuse(path, "", "is a folder, not a file")
        size = path.stat().st_size
        if size > max_bytes:
            raise _refuse(path, "", f"{size} bytes is larger than the limit of {max_bytes} bytes for an input file")
        data = path.read_bytes()
    except FileNotFoundError:
        raise _refuse(path, "", "no such file (does not exist)") from None
    except OSError as err:
        raise _refuse(path, "", f"cannot read ({err.strerror or err})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise _refuse(path, f"line {line}, byte offset {err.start}",
                      f"not UTF-8 text (byte 0x{data[err.start]:02x}: {err.reason})") from None


def _check_depth(text: str, path: Path | str, strings: re.Pattern = _STRING) -> None:
    """Refuse nesting deeper than MAX_DEPTH before a recursive parser sees it (strings removed
    first, so brackets inside them do not count)."""
    stripped = strings.sub(lambda m: " " * len(m.group()), text)
    depth = 0
    for m in re.finditer(r"[\[\]{}]", stripped):
        depth += 1 if m.group() in _OPEN else -1
        if depth > MAX_DEPTH:
            raise _refuse(path, _line_col(text, m.start()), f"nested deeper than the limit of {MAX_DEPTH} levels")


def _check_int_digits(text: str, path: Path | str, strings: re.Pattern = _STRING) -> None:
    stripped = strings.sub(lambda m: " " * len(m.group()), text)
    m = _LONG_INT.search(stripped)
    if m:
        digits = sum(c.isdigit() for c in m.group())
        if digits > MAX_INT_DIGITS:
            raise _refuse(path, _line_col(text, m.start()),
                          f"an integer of {digits} digits is longer than the limit of {MAX_INT_DIGITS} digits")


def check_value(value: Any, path: Path | str, where: str = "$") -> None:
    """Walk a parsed value: depth, integer size and float finiteness within the limits (a place is
    a JSON path: `$.lessons[0].text`)."""
    stack = [(value, where, 0)]
    while stack:
        item, at, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _refuse(path, at, f"nested deeper than the limit of {MAX_DEPTH} levels")
        if isinstance(item, bool):
            continue
        if isinstance(item, float) and not math.isfinite(item):
            raise _refuse(path, at, f"{item} is not a finite number")
        if isinstance(item, int) and item.bit_length() > MAX_INT_DIGITS * 3.33:
            raise _refuse(path, at, f"an integer longer than the limit of {MAX_INT_DIGITS} digits")
        if isinstance(item, dict):
            stack.extend((v, f"{at}.{k}", depth + 1) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((v, f"{at}[{i}]", depth + 1) for i, v in enumerate(item))


def parse_json(text: str, path: Path | str, line_offset: str = "") -> Any:
    """Parse JSON text within the limits; `path` (and `line_offset`, e.g. 'line 7: ') name it."""
    _check_depth(text, path)
    _check_int_digits(text, path)
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)  # NaN and Infinity parse; check_value refuses them
    except _DuplicateKey as dup:
        raise _refuse(path, line_offset.rstrip(": "), f"the key {dup.key!r} appears twice in one object (which one "
                      "was meant?); keep one") from None
    except json.JSONDecodeError as err:
        raise _refuse(path, f"{line_offset}line {err.lineno}, column {err.colno}",
                      f"JSON does not parse ({err.msg})") from None
    except (ValueError, RecursionError) as err:  # the checks above should make these unreachable
        raise _refuse(path, line_offset.rstrip(": "), f"JSON refused ({' '.join(str(err).split())[:200]})") from None
    check_value(value, path)
    return value


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique (json.loads would keep the last of two silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


SETTINGS_FORMATS = {".json": "JSON", ".toml": "TOML"}


def read_settings(path: Path | str, max_bytes: int = MAX_BYTES) -> Any:
    """A settings file, JSON or TOML by its extension; any other extension is refused naming the
    formats accepted (a YAML file is not parsed as JSON and reported as broken JSON)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return read_toml(path, max_bytes)
    if suffix == ".json":
        return read_json(path, max_bytes)
    found = "YAML is not accepted" if suffix in (".yaml", ".yml") else (
        f"the extension {suffix!r} is not one of them" if suffix else "it has no extension")
    raise _refuse(path, "", f"settings files are JSON (.json) or TOML (.toml); {found}: convert it and name it "
                            "accordingly")


def read_json(path: Path | str, max_bytes: int = MAX_BYTES) -> Any:
    return parse_json(read_text(path, max_bytes), path)


_TOML_STRING = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*')


def parse_toml(text: str, path: Path | str) -> dict:
    _check_depth(text, path, _TOML_STRING)
    _check_int_digits(text, path, _TOML_STRING)
    try:
        value = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise _refuse(path, "", f"TOML does not parse ({err})") from None
    except (ValueError, RecursionError) as err:
        raise _refuse(path, "", f"TOML refused ({' '.join(str(err).split())[:200]})") from None
    check_value(value, path)
    return value


def read_toml(path: Path | str, max_bytes: int = MAX_BYTES) -> dict:
    return parse_toml(read_text(path, max_bytes), path)


def read_jsonl(path: Path | str, max_bytes: int = MAX_BYTES) -> Iterator[tuple[int, Any | UserError]]:
    """(line number, parsed record or the UserError refusing that line) for each non-empty line."""
    for number, line in enumerate(read_text(path, max_bytes).splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield number, parse_json(line, path, f"line {number}: ")
        except UserError as err:
            yield number, err


def read_csv(path: Path | str, required: tuple[str, ...] = (), max_bytes: int = MAX_BYTES,
             **reader_options: Any) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """(header, [(line number, row)]) of a CSV file with one header line: header names are
    stripped, must be unique and include `required`; a field over MAX_CSV_FIELD characters, a
    NUL byte or a row with more fields than the header is refused naming its line."""
    text = read_text(path, max_bytes)
    nul = text.find("\0")
    if nul >= 0:
        raise _refuse(path, _line_col(text, nul), "a NUL character (CSV text cannot hold one)")
    old_limit = csv.field_size_limit(MAX_CSV_FIELD)
    try:
        reader = csv.reader(text.splitlines(keepends=True), **reader_options)
        try:
            header = [h.strip() for h in next(reader, [])]
            rows = []
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) > len(header):
                    raise _refuse(path, f"line {reader.line_num}",
                                  f"{len(row)} fields but the header has {len(header)}")
                rows.append((reader.line_num, dict(zip(header, row + [""] * (len(header) - len(row)), strict=True))))
        except csv.Error as err:
            raise _refuse(path, f"line {reader.line_num}",
                          f"CSV does not parse ({err}; a field may have at most {MAX_CSV_FIELD} characters)") from None
    finally:
        csv.field_size_limit(old_limit)
    if not header:
        raise _refuse(path, "line 1", "no header line")
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise _refuse(path, "line 1", f"column(s) {', '.join(map(repr, dupes))} appear more than once in the header")
    missing = [c for c in required if c not in header]
    if missing:
        raise _refuse(path, "line 1", f"missing column(s) {', '.join(missing)}")
    return header, rows
