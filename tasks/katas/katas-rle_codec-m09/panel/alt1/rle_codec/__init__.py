"""RLE codec driven by one regular expression per item."""
import re

_ITEM = re.compile(r"([1-9][0-9]*)?(\\[0-9\\]|[^0-9\\])", re.S)
_NEEDS_ESCAPE = set("0123456789\\")


class RLEError(ValueError):
    def __init__(self, msg, position):
        super().__init__(msg)
        self.position = position


def runs(text):
    if not isinstance(text, str):
        raise TypeError("text must be a string")
    return [(m.group(1), len(m.group(0))) for m in re.finditer(r"(.)\1*", text, re.S)]


def encode(text):
    out = []
    for ch, n in runs(text):
        sym = "\\" + ch if ch in _NEEDS_ESCAPE else ch
        out.append(sym if n == 1 else str(n) + sym)
    return "".join(out)


def _diagnose(data, pos):
    if data[pos] == "0":
        return RLEError("leading zero in count", pos)
    j = pos
    while j < len(data) and data[j] in "0123456789":
        j += 1
    if j == len(data):
        return RLEError("missing symbol after count", j)
    return RLEError("invalid escape sequence", j)


def decode(data, max_length=None):
    if not isinstance(data, str):
        raise TypeError("data must be a string")
    if max_length is not None:
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 0:
            raise ValueError("bad max_length")
    pieces, size, pos = [], 0, 0
    while pos < len(data):
        m = _ITEM.match(data, pos)
        if m is None:
            raise _diagnose(data, pos)
        count = int(m.group(1)) if m.group(1) else 1
        symbol = m.group(2)[-1]
        if max_length is not None and size + count > max_length:
            raise RLEError("decoded output too long", pos)
        pieces.append(symbol * count)
        size += count
        pos = m.end()
    return "".join(pieces)
