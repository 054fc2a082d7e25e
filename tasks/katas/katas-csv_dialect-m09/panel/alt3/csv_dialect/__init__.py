"""CSV dialect with a recursive-descent reader (records -> fields -> characters)."""
from dataclasses import dataclass
from typing import Optional


class CSVError(ValueError):
    def __init__(self, detail: str, line: int):
        super().__init__(f"{detail} (line {line})")
        self.line = line


@dataclass(frozen=True, eq=True)
class Dialect:
    delimiter: str = ","
    quotechar: str = '"'
    escapechar: Optional[str] = None

    def __post_init__(self):
        for name in ("delimiter", "quotechar", "escapechar"):
            value = getattr(self, name)
            if value is None and name == "escapechar":
                continue
            if not isinstance(value, str) or len(value) != 1:
                raise ValueError(f"{name} must be a single character")
            if value in ("\n", "\r"):
                raise ValueError(f"{name} cannot be a line break")
        if self.delimiter == self.quotechar or self.escapechar in (self.delimiter, self.quotechar):
            raise ValueError("dialect characters must differ")


class _Reader:
    def __init__(self, text, dialect):
        self.s = text
        self.d = dialect
        self.i = 0
        self.line = 1

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else None

    def take(self):
        c = self.s[self.i]
        self.i += 1
        if c == "\n":
            self.line += 1
        return c

    def break_len(self):
        if self.peek() == "\n":
            return 1
        if self.peek() == "\r" and self.peek(1) == "\n":
            return 2
        return 0

    def escaped(self):
        self.take()  # the escapechar
        if self.peek() is None:
            raise CSVError("escape character at end of text", self.line)
        return self.take()

    def quoted_field(self):
        opened_on = self.line
        self.take()
        chars = []
        while True:
            c = self.peek()
            if c is None:
                raise CSVError("missing closing quote", opened_on)
            if c == self.d.escapechar:
                chars.append(self.escaped())
            elif c == self.d.quotechar:
                self.take()
                if self.peek() != self.d.quotechar:
                    break
                chars.append(self.take())
            else:
                chars.append(self.take())
        if self.peek() is not None and self.peek() != self.d.delimiter and not self.break_len():
            raise CSVError("garbage after closing quote", self.line)
        return "".join(chars)

    def plain_field(self):
        chars = []
        while self.peek() is not None and self.peek() != self.d.delimiter and not self.break_len():
            if self.peek() == self.d.escapechar:
                chars.append(self.escaped())
            else:
                chars.append(self.take())
        return "".join(chars)

    def field(self):
        return self.quoted_field() if self.peek() == self.d.quotechar else self.plain_field()

    def record(self):
        fields = [self.field()]
        while self.peek() == self.d.delimiter:
            self.take()
            fields.append(self.field())
        for _ in range(self.break_len()):
            self.take()
        return fields

    def records(self):
        out = []
        while self.peek() is not None:
            out.append(self.record())
        return out


def parse(text, dialect=Dialect()):
    return _Reader(text, dialect).records()


def _needs_quotes(value, dialect, alone):
    if alone and not value:
        return True
    return any(c in value for c in {dialect.delimiter, dialect.quotechar, "\n", "\r"})


def format_row(fields, dialect=Dialect()):
    fields = list(fields)
    if len(fields) < 1:
        raise ValueError("row must have at least one field")
    if any(not isinstance(f, str) for f in fields):
        raise TypeError("every field must be a string")
    q = dialect.quotechar
    written = []
    for f in fields:
        wrap = _needs_quotes(f, dialect, len(fields) == 1)
        if dialect.escapechar is not None:
            f = f.replace(dialect.escapechar, dialect.escapechar * 2)
        written.append(f"{q}{f.replace(q, q + q)}{q}" if wrap else f)
    return dialect.delimiter.join(written)


def format_rows(rows, dialect=Dialect()):
    lines = [format_row(r, dialect) for r in rows]
    return "".join(line + "\n" for line in lines)
