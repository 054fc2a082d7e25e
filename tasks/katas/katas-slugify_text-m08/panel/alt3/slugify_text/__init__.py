"""Class-based slugifier; truncation by prefix sums of word lengths."""
from itertools import accumulate
import string
import unicodedata

DEFAULT_TABLE = {}
for _src, _dst in (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("æ", "ae"), ("œ", "oe"),
                   ("ø", "o"), ("ł", "l"), ("đ", "d")):
    DEFAULT_TABLE[_src] = _dst
    DEFAULT_TABLE[_src.upper()] = _dst[0].upper() + _dst[1:]
DEFAULT_TABLE["Æ"] = "AE"
DEFAULT_TABLE["Œ"] = "OE"
DEFAULT_TABLE["ß"] = "ss"
DEFAULT_TABLE["&"] = " and "

_WORD_CHARS = set(string.ascii_letters + string.digits)


class Slugifier:
    def __init__(self, separator="-", max_length=None, lowercase=True, table=None):
        if not isinstance(separator, str) or len(separator) not in (1, 2, 3):
            raise ValueError("separator: expected 1 to 3 characters")
        if _WORD_CHARS.intersection(separator):
            raise ValueError("separator: letters and digits are not allowed")
        if max_length is not None:
            if isinstance(max_length, bool) or not isinstance(max_length, int):
                raise ValueError("max_length: expected an int")
            if max_length < 1:
                raise ValueError("max_length: must be at least 1")
        self.separator = separator
        self.max_length = max_length
        self.lowercase = lowercase
        self.table = {**DEFAULT_TABLE, **(table or {})}

    def _plain_char(self, ch):
        out = []
        for piece in self.table.get(ch, ch):
            for part in unicodedata.normalize("NFKD", piece):
                if not unicodedata.combining(part):
                    out.append(part)
        return "".join(out)

    def words(self, text):
        plain = "".join(self._plain_char(ch) for ch in text)
        marked = "".join(c if c in _WORD_CHARS else " " for c in plain)
        found = marked.split()
        return [w.lower() for w in found] if self.lowercase else found

    def join(self, words, limit):
        if limit is None or not words:
            return self.separator.join(words)
        sep = len(self.separator)
        # ends[i] = length of the slug made of words[0..i]
        ends = list(accumulate((len(w) + (sep if i else 0) for i, w in enumerate(words))))
        count = sum(1 for e in ends if e <= limit)
        if count == 0:
            return words[0][:limit]
        return self.separator.join(words[:count])


def slugify(text, *, separator="-", max_length=None, lowercase=True, table=None):
    if not isinstance(text, str):
        raise TypeError("expected str text")
    s = Slugifier(separator, max_length, lowercase, table)
    return s.join(s.words(text), max_length)


def unique_slug(text, existing, *, separator="-", max_length=None, lowercase=True, table=None):
    if not isinstance(text, str):
        raise TypeError("expected str text")
    s = Slugifier(separator, max_length, lowercase, table)
    words = s.words(text) or ["item"]
    first = s.join(words, max_length)
    if first not in existing:
        return first
    n = 2
    while True:
        tail = f"{separator}{n}"
        limit = None if max_length is None else max_length - len(tail)
        if limit is not None and limit < 1:
            raise ValueError("cannot make a unique slug within max_length")
        candidate = s.join(words, limit) + tail
        if candidate not in existing:
            return candidate
        n += 1
