"""CSV dialect whose reader matches whole fields with regular expressions built per dialect."""
import re
from typing import NamedTuple, Optional


class CSVError(ValueError):
    def __init__(self, message, line):
        ValueError.__init__(self, message)
        self.line = line


class Dialect(NamedTuple("_DialectBase", [("delimiter", str), ("quotechar", str), ("escapechar", Optional[str])])):
    def __new__(cls, delimiter=",", quotechar='"', escapechar=None):
        used = [delimiter, quotechar]
        if escapechar is not None:
            used.append(escapechar)
        if not all(isinstance(u, str) and len(u) == 1 for u in used):
            raise ValueError("delimiter/quotechar/escapechar must be one character")
        if "\n" in used or "\r" in used or len(set(used)) < len(used):
            raise ValueError("dialect characters must be distinct and not line breaks")
        return super().__new__(cls, delimiter, quotechar, escapechar)


def _patterns(d):
    q, dl = re.escape(d.quotechar), re.escape(d.delimiter)
    if d.escapechar is None:
        quoted = rf"{q}((?:[^{q}]|{q}{q})*+){q}"
        plain = rf"((?:(?!\r\n)[^{dl}\n])*)"
    else:
        e = re.escape(d.escapechar)
        quoted = rf"{q}((?:[^{q}{e}]|{q}{q}|{e}[\s\S])*+){q}"
        plain = rf"((?:{e}[\s\S]|(?!\r\n)[^{dl}\n{e}])*)"
    return re.compile(quoted), re.compile(plain)


def _unescape(raw, d, quoted):
    out, i = [], 0
    while i < len(raw):
        c = raw[i]
        if d.escapechar is not None and c == d.escapechar:
            out.append(raw[i + 1])
            i += 2
        elif quoted and c == d.quotechar:
            out.append(c)  # first of a doubled pair
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse(text, dialect=Dialect()):
    d = dialect
    quoted_re, plain_re = _patterns(d)
    rows, row, pos, end = [], [], 0, len(text)
    if not text:
        return rows
    while True:
        line = text.count("\n", 0, pos) + 1
        if text.startswith(d.quotechar, pos):
            m = quoted_re.match(text, pos)
            if m is None:
                tail = text[pos + 1:]
                if d.escapechar is not None and re.fullmatch(
                        rf"(?:[^{re.escape(d.quotechar + d.escapechar)}]|{re.escape(d.quotechar * 2)}|{re.escape(d.escapechar)}[\s\S])*{re.escape(d.escapechar)}",
                        tail):
                    raise CSVError("escape at end of input", text.count("\n") + 1)
                raise CSVError("unclosed quote", line)
            row.append(_unescape(m.group(1), d, True))
        else:
            m = plain_re.match(text, pos)
            if d.escapechar is not None and m.end() == end - 1 and text[-1] == d.escapechar:
                raise CSVError("escape at end of input", text.count("\n") + 1)
            row.append(_unescape(m.group(1), d, False))
        pos = m.end()
        if pos == end:
            rows.append(row)
            return rows
        if text.startswith(d.delimiter, pos):
            pos += 1
            continue
        for brk in ("\r\n", "\n"):
            if text.startswith(brk, pos):
                rows.append(row)
                row = []
                pos += len(brk)
                break
        else:
            raise CSVError(f"unexpected character {text[pos]!r}", text.count("\n", 0, pos) + 1)
        if pos == end:
            return rows


def format_row(fields, dialect=Dialect()):
    if not fields:
        raise ValueError("a row needs at least one field")
    special = re.compile("[" + re.escape(dialect.delimiter + dialect.quotechar) + "\r\n]")
    parts = []
    for value in fields:
        if not isinstance(value, str):
            raise TypeError(f"not a string: {value!r}")
        must_quote = special.search(value) is not None or (value == "" and len(fields) == 1)
        if dialect.escapechar:
            value = value.replace(dialect.escapechar, 2 * dialect.escapechar)
        if must_quote:
            value = dialect.quotechar + value.replace(dialect.quotechar, 2 * dialect.quotechar) + dialect.quotechar
        parts.append(value)
    return dialect.delimiter.join(parts)


def format_rows(rows, dialect=Dialect()):
    return "".join(format_row(r, dialect) + "\n" for r in rows)
