"""Slug generation written as a character scanner (no regular expressions)."""
import unicodedata

DEFAULT_TABLE = {
    "&": " and ",
    "ß": "ss",
    "ä": "ae", "Ä": "Ae", "ö": "oe", "Ö": "Oe", "ü": "ue", "Ü": "Ue",
    "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE",
    "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D",
}

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def _validate(text, separator, max_length):
    if type(text) is not str and not isinstance(text, str):
        raise TypeError("slugify() needs text as str")
    if not isinstance(separator, str) or len(separator) == 0 or len(separator) > 3:
        raise ValueError("bad separator")
    for ch in separator:
        if ch in _ALNUM:
            raise ValueError("separator may not contain alphanumerics")
    if max_length is None:
        return
    if type(max_length) is not int or max_length <= 0:
        raise ValueError("bad max_length")


def _scan_words(text, lowercase, table):
    lookup = DEFAULT_TABLE if not table else {**DEFAULT_TABLE, **table}
    words, current = [], []
    for original in text:
        for ch in unicodedata.normalize("NFKD", lookup.get(original, original)):
            if unicodedata.combining(ch):
                continue
            if ch in _ALNUM:
                current.append(ch.lower() if lowercase else ch)
            elif current:
                words.append("".join(current))
                current = []
    if current:
        words.append("".join(current))
    return words


def _join_limited(words, separator, max_length):
    slug, cut_points = "", []
    for i, word in enumerate(words):
        if i:
            cut_points.append(len(slug))
            slug += separator
        slug += word
    if max_length is None or len(slug) <= max_length:
        return slug
    usable = [p for p in cut_points if p <= max_length]
    if usable:
        return slug[:usable[-1]]
    return slug[:max_length]


def slugify(text, *, separator="-", max_length=None, lowercase=True, table=None):
    _validate(text, separator, max_length)
    return _join_limited(_scan_words(text, lowercase, table), separator, max_length)


def unique_slug(text, existing, *, separator="-", max_length=None, lowercase=True, table=None):
    _validate(text, separator, max_length)
    words = _scan_words(text, lowercase, table)
    if not words:
        words = ["item"]
    slug = _join_limited(words, separator, max_length)
    n = 1
    while slug in existing:
        n += 1
        tail = separator + str(n)
        limit = None
        if max_length is not None:
            limit = max_length - len(tail)
            if limit <= 0:
                raise ValueError("no room left for the slug base")
        slug = _join_limited(words, separator, limit) + tail
    return slug
