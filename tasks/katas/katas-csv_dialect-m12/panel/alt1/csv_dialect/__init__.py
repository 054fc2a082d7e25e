"""CSV dialect with an explicit finite-state reader."""
from enum import Enum, auto


class CSVError(ValueError):
    def __init__(self, msg, line):
        super().__init__(msg)
        self.line = line


class Dialect:
    __slots__ = ("delimiter", "quotechar", "escapechar")

    def __init__(self, delimiter=",", quotechar='"', escapechar=None):
        chars = [delimiter, quotechar] + ([] if escapechar is None else [escapechar])
        for c in chars:
            if type(c) is not str or len(c) != 1 or c in "\r\n":
                raise ValueError("invalid dialect character %r" % (c,))
        if len(chars) != len(set(chars)):
            raise ValueError("dialect characters collide")
        self.delimiter, self.quotechar, self.escapechar = delimiter, quotechar, escapechar

    def __eq__(self, other):
        if not isinstance(other, Dialect):
            return NotImplemented
        return (self.delimiter, self.quotechar, self.escapechar) == (
            other.delimiter, other.quotechar, other.escapechar)

    def __hash__(self):
        return hash((self.delimiter, self.quotechar, self.escapechar))

    def __repr__(self):
        return f"Dialect({self.delimiter!r}, {self.quotechar!r}, {self.escapechar!r})"


class _S(Enum):
    FIELD_START = auto()
    UNQUOTED = auto()
    QUOTED = auto()
    QUOTE_IN_QUOTED = auto()   # saw a quotechar inside a quoted field
    ESCAPE = auto()            # saw an escapechar


def parse(text, dialect=None):
    d = dialect if dialect is not None else Dialect()
    rows, row, buf = [], [], []
    state, resume = _S.FIELD_START, None
    line, quote_line = 1, 1
    ended_by_break = False
    k = 0
    while k < len(text):
        c = text[k]
        is_break = c == "\n" or (c == "\r" and text[k + 1:k + 2] == "\n")
        width = 2 if c == "\r" and is_break else 1
        ended_by_break = False
        if state is _S.ESCAPE:
            buf.append(c)
            state = resume
        elif state is _S.QUOTED:
            if c == d.escapechar:
                state, resume = _S.ESCAPE, _S.QUOTED
            elif c == d.quotechar:
                state = _S.QUOTE_IN_QUOTED
            else:
                buf.append(c)
        elif state is _S.QUOTE_IN_QUOTED and c == d.quotechar:
            buf.append(c)
            state = _S.QUOTED
        elif state is _S.FIELD_START and c == d.quotechar:
            state, quote_line = _S.QUOTED, line
        elif c == d.escapechar and state is not _S.QUOTE_IN_QUOTED:
            state, resume = _S.ESCAPE, _S.UNQUOTED
        elif c == d.delimiter:
            row.append("".join(buf))
            buf, state = [], _S.FIELD_START
        elif is_break:
            row.append("".join(buf))
            rows.append(row)
            row, buf, state = [], [], _S.FIELD_START
            ended_by_break = True
            line += 1
            k += width
            continue
        elif state is _S.QUOTE_IN_QUOTED:
            raise CSVError("text after closing quote", line)
        else:
            buf.append(c)
            state = _S.UNQUOTED
        if c == "\n":
            line += 1
        k += 1
    if state is _S.QUOTED:
        raise CSVError("unterminated quoted field", quote_line)
    if state is _S.ESCAPE:
        raise CSVError("dangling escape character", line)
    if text and not ended_by_break:
        row.append("".join(buf))
        rows.append(row)
    return rows


def format_row(fields, dialect=None):
    d = dialect if dialect is not None else Dialect()
    fields = list(fields)
    if not fields:
        raise ValueError("empty row")
    out = []
    for f in fields:
        if not isinstance(f, str):
            raise TypeError("field is not a str: %r" % (f,))
        quote = any(ch in f for ch in (d.delimiter, d.quotechar, "\n", "\r")) or (f == "" and len(fields) == 1)
        if d.escapechar is not None:
            f = f.replace(d.escapechar, d.escapechar + d.escapechar)
        out.append(d.quotechar + f.replace(d.quotechar, d.quotechar * 2) + d.quotechar if quote else f)
    return d.delimiter.join(out)


def format_rows(rows, dialect=None):
    return "".join(f"{format_row(r, dialect)}\n" for r in rows)
