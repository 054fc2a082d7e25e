"""Slugs via str.translate and a regex split; truncation drops words from the end."""
import re
import unicodedata

DEFAULT_TABLE = dict(
    zip("äöüÄÖÜßæÆøØœŒłŁđĐ&",
        ["ae", "oe", "ue", "Ae", "Oe", "Ue", "ss", "ae", "AE", "o", "O", "oe", "OE",
         "l", "L", "d", "D", " and "])
)

_NON_WORD = re.compile(r"[^0-9A-Za-z]+")


class _Options:
    def __init__(self, separator, max_length, lowercase, table):
        if not isinstance(separator, str):
            raise ValueError("separator must be a string")
        if not (0 < len(separator) < 4) or re.search(r"[0-9A-Za-z]", separator):
            raise ValueError("separator must be 1-3 non-alphanumeric characters")
        if max_length is not None and (isinstance(max_length, bool)
                                       or not isinstance(max_length, int) or max_length < 1):
            raise ValueError("max_length must be None or an int >= 1")
        self.separator = separator
        self.max_length = max_length
        self.lowercase = lowercase
        mapping = dict(DEFAULT_TABLE)
        mapping.update(table or {})
        self.translation = str.maketrans(mapping)


def _words(text, opts):
    folded = unicodedata.normalize("NFKD", text.translate(opts.translation))
    no_marks = "".join(c for c in folded if unicodedata.combining(c) == 0)
    if opts.lowercase:
        no_marks = no_marks.lower()
    return [w for w in _NON_WORD.split(no_marks) if w]


def _fit(words, separator, limit):
    if limit is None:
        return separator.join(words)
    kept = list(words)
    while len(kept) > 1 and len(separator.join(kept)) > limit:
        kept.pop()
    joined = separator.join(kept)
    return joined if len(joined) <= limit else joined[:limit]


def slugify(text, *, separator="-", max_length=None, lowercase=True, table=None):
    if not isinstance(text, str):
        raise TypeError("text must be str")
    opts = _Options(separator, max_length, lowercase, table)
    return _fit(_words(text, opts), separator, max_length)


def unique_slug(text, existing, *, separator="-", max_length=None, lowercase=True, table=None):
    if not isinstance(text, str):
        raise TypeError("text must be str")
    opts = _Options(separator, max_length, lowercase, table)
    words = _words(text, opts) or ["item"]
    candidate = _fit(words, separator, max_length)
    counter = 2
    while candidate in existing:
        suffix = separator + str(counter)
        room = None if max_length is None else max_length - len(suffix)
        if room is not None and room < 1:
            raise ValueError("max_length too small for a numbered slug")
        candidate = _fit(words, separator, room) + suffix
        counter += 1
    return candidate
