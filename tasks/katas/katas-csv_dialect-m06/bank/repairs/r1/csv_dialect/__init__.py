"""A small CSV dialect: reader as a character state machine, writer with minimal quoting."""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CSVError", "Dialect", "format_row", "format_rows", "parse"]

_BREAKS = ("\n", "\r")


class CSVError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True)
class Dialect:
    delimiter: str = ","
    quotechar: str = '"'
    escapechar: str | None = None

    def __post_init__(self) -> None:
        specials = [self.delimiter, self.quotechar]
        if self.escapechar is not None:
            specials.append(self.escapechar)
        for ch in specials:
            if not isinstance(ch, str) or len(ch) != 1:
                raise ValueError(f"dialect characters must be single characters, got {ch!r}")
            if ch in _BREAKS:
                raise ValueError("line break characters cannot be dialect characters")
        if len(set(specials)) != len(specials):
            raise ValueError(f"dialect characters must be distinct: {specials!r}")


def _at_break(text: str, i: int) -> int:
    """Length of the line break starting at text[i] (0 if none)."""
    if text.startswith("\r\n", i):
        return len("\r\n")
    if text.startswith("\n", i):
        return 1
    return 0


def parse(text: str, dialect: Dialect = Dialect()) -> list[list[str]]:
    delim, quote, esc = dialect.delimiter, dialect.quotechar, dialect.escapechar
    records: list[list[str]] = []
    record: list[str] = []
    field: list[str] = []
    line = 1
    i, n = 0, len(text)
    if n == 0:
        return records
    at_field_start = True
    while i < n:
        ch = text[i]
        if at_field_start and ch == quote:
            start_line = line
            i += 1
            while True:
                if i >= n:
                    raise CSVError("quoted field is not closed", start_line)
                ch = text[i]
                if esc is not None and ch == esc:
                    if i + 1 >= n:
                        raise CSVError("escape character at end of input", line)
                    field.append(text[i + 1])
                    line += text[i + 1] == "\n"
                    i += 2
                elif ch == quote:
                    if i + 1 < n and text[i + 1] == quote:
                        field.append(quote)
                        i += 2
                    else:
                        i += 1
                        break
                else:
                    field.append(ch)
                    line += ch == "\n"
                    i += 1
            if i < n and text[i] != delim and not _at_break(text, i):
                raise CSVError(f"unexpected {text[i]!r} after closing quote", line)
            at_field_start = False
            continue
        at_field_start = False
        if esc is not None and ch == esc:
            if i + 1 >= n:
                raise CSVError("escape character at end of input", line)
            field.append(text[i + 1])
            line += text[i + 1] == "\n"
            i += 2
        elif ch == delim:
            record.append("".join(field))
            field = []
            at_field_start = True
            i += 1
        elif _at_break(text, i):
            record.append("".join(field))
            records.append(record)
            record, field = [], []
            at_field_start = True
            line += 1
            i += _at_break(text, i)
            if i >= n:
                return records
        else:
            field.append(ch)
            i += 1
    record.append("".join(field))
    records.append(record)
    return records


def _format_field(field: str, dialect: Dialect, alone: bool) -> str:
    if not isinstance(field, str):
        raise TypeError(f"fields must be str, got {type(field).__name__}")
    quote = dialect.quotechar
    needs_quotes = (dialect.delimiter in field or quote in field or "\n" in field
                    or "\r" in field or (alone and field == ""))
    if dialect.escapechar is not None:
        field = field.replace(dialect.escapechar, dialect.escapechar * 2)
    if needs_quotes:
        return quote + field.replace(quote, quote * 2) + quote
    return field


def format_row(fields: list[str], dialect: Dialect = Dialect()) -> str:
    if len(fields) == 0:
        raise ValueError("cannot format an empty row")
    alone = len(fields) == 1
    return dialect.delimiter.join(_format_field(f, dialect, alone) for f in fields)


def format_rows(rows: list[list[str]], dialect: Dialect = Dialect()) -> str:
    return "".join(format_row(row, dialect) + "\n" for row in rows)
