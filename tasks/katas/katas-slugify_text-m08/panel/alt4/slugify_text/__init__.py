"""Functional slugify: re.split into tokens, generator of numbered candidates."""
import itertools
import re
from unicodedata import combining, normalize

DEFAULT_TABLE = {
    "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss",
    "Æ": "AE", "æ": "ae", "Ø": "O", "ø": "o", "Œ": "OE", "œ": "oe",
    "Ł": "L", "ł": "l", "Đ": "D", "đ": "d", "&": " and ",
}


def _check(text, separator, max_length):
    if not isinstance(text, str):
        raise TypeError(f"need str, not {type(text)!r}")
    ok_sep = isinstance(separator, str) and re.fullmatch(r"[^A-Za-z0-9]{1,3}", separator, re.S)
    if not ok_sep:
        raise ValueError(f"invalid separator {separator!r}")
    if max_length is not None and not (type(max_length) is int and max_length >= 1):
        raise ValueError(f"invalid max_length {max_length!r}")


def _tokens(text, lowercase, table):
    merged = DEFAULT_TABLE.copy()
    merged.update(table or {})
    replaced = [merged[c] if c in merged else c for c in text]
    decomposed = normalize("NFKD", "".join(replaced))
    kept = "".join(filter(lambda c: not combining(c), decomposed))
    tokens = [t for t in re.split(r"[^A-Za-z0-9]", kept) if t != ""]
    return [t.lower() for t in tokens] if lowercase else tokens


def _shorten(tokens, separator, limit):
    full = separator.join(tokens)
    if limit is None or len(full) <= limit:
        return full
    best = ""
    for n in range(1, len(tokens) + 1):
        attempt = separator.join(tokens[:n])
        if len(attempt) > limit:
            break
        best = attempt
    return best or tokens[0][:limit]


def slugify(text, *, separator="-", max_length=None, lowercase=True, table=None):
    _check(text, separator, max_length)
    return _shorten(_tokens(text, lowercase, table), separator, max_length)


def unique_slug(text, existing, *, separator="-", max_length=None, lowercase=True, table=None):
    _check(text, separator, max_length)
    tokens = _tokens(text, lowercase, table) or ["item"]

    def candidates():
        yield _shorten(tokens, separator, max_length)
        for n in itertools.count(2):
            suffix = separator + str(n)
            room = None if max_length is None else max_length - len(suffix)
            if room is not None and room < 1:
                raise ValueError("max_length leaves no room")
            yield _shorten(tokens, separator, room) + suffix

    return next(c for c in candidates() if c not in existing)
