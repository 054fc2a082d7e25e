"""CSV dialect in two passes: a lexer producing tokens, then a builder assembling records."""
import collections

DELIM, BREAK, QUOTE, CHAR, DANGLING = "delim", "break", "quote", "char", "dangling"
Token = collections.namedtuple("Token", "kind text line")


class CSVError(ValueError):
    """Malformed CSV input; `line` is 1-based."""

    def __init__(self, why, line):
        super().__init__(why)
        self.line = line


class Dialect:
    def __init__(self, delimiter=",", quotechar='"', escapechar=None):
        given = {"delimiter": delimiter, "quotechar": quotechar}
        if escapechar is not None:
            given["escapechar"] = escapechar
        for key, val in given.items():
            if not (isinstance(val, str) and len(val) == 1):
                raise ValueError(f"{key}={val!r} is not one character")
            if val == "\n" or val == "\r":
                raise ValueError(f"{key} may not be a line break")
        if len(set(given.values())) != len(given):
            raise ValueError("delimiter, quotechar and escapechar must all differ")
        self.delimiter = delimiter
        self.quotechar = quotechar
        self.escapechar = escapechar

    def _key(self):
        return (self.delimiter, self.quotechar, self.escapechar)

    def __eq__(self, other):
        return isinstance(other, Dialect) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def _lex(text, d):
    tokens, line, i = [], 1, 0
    while i < len(text):
        c = text[i]
        if d.escapechar is not None and c == d.escapechar:
            if i == len(text) - 1:
                # Reported by the builder, so earlier problems are reported first.
                tokens.append(Token(DANGLING, "", line))
                break
            tokens.append(Token(CHAR, text[i + 1], line))
            if text[i + 1] == "\n":
                line += 1
            i += 2
            continue
        if c == d.delimiter:
            tokens.append(Token(DELIM, c, line))
        elif c == d.quotechar:
            tokens.append(Token(QUOTE, c, line))
        elif c == "\n":
            tokens.append(Token(BREAK, c, line))
            line += 1
        elif c == "\r" and text[i + 1:i + 2] == "\n":
            tokens.append(Token(BREAK, "\r\n", line))
            line += 1
            i += 1
        else:
            tokens.append(Token(CHAR, c, line))
        i += 1
    return tokens


def _build(tokens):
    records, fields, current = [], [], ""
    pos = 0
    fresh = True  # at the start of a field
    while pos < len(tokens):
        tok = tokens[pos]
        if tok.kind == DANGLING:
            raise CSVError("input ends with the escape character", tok.line)
        if fresh and tok.kind == QUOTE:
            opened = tok.line
            pos += 1
            while True:
                if pos >= len(tokens):
                    raise CSVError("quote opened here is never closed", opened)
                t = tokens[pos]
                if t.kind == DANGLING:
                    raise CSVError("input ends with the escape character", t.line)
                if t.kind == QUOTE:
                    if pos + 1 < len(tokens) and tokens[pos + 1].kind == QUOTE:
                        current += t.text
                        pos += 2
                        continue
                    pos += 1
                    break
                current += t.text
                pos += 1
            if pos < len(tokens) and tokens[pos].kind not in (DELIM, BREAK):
                raise CSVError("closing quote must end the field", tokens[pos].line)
            fresh = False
            continue
        fresh = False
        if tok.kind == DELIM:
            fields.append(current)
            current, fresh = "", True
        elif tok.kind == BREAK:
            fields.append(current)
            records.append(fields)
            fields, current, fresh = [], "", True
        else:
            current += tok.text
        pos += 1
    if tokens and tokens[-1].kind != BREAK or (tokens and not fresh):
        fields.append(current)
        records.append(fields)
    return records


def parse(text, dialect=None):
    return _build(_lex(text, dialect or Dialect()))


def _quote_if_needed(value, d, alone):
    special = (d.delimiter, d.quotechar, "\n", "\r")
    escaped = value if d.escapechar is None else value.replace(d.escapechar, d.escapechar * 2)
    if (alone and value == "") or any(s in value for s in special):
        return d.quotechar + escaped.replace(d.quotechar, d.quotechar * 2) + d.quotechar
    return escaped


def format_row(fields, dialect=None):
    d = dialect or Dialect()
    if not isinstance(fields, (list, tuple)) or len(fields) == 0:
        if isinstance(fields, (list, tuple)):
            raise ValueError("no fields")
        fields = list(fields)
        if not fields:
            raise ValueError("no fields")
    for f in fields:
        if not isinstance(f, str):
            raise TypeError(f"{f!r} is not a str")
    return d.delimiter.join(_quote_if_needed(f, d, len(fields) == 1) for f in fields)


def format_rows(rows, dialect=None):
    return "".join(format_row(row, dialect) + "\n" for row in rows)
