"""RLE codec: itertools.groupby for runs, a character state machine for decoding."""
from itertools import groupby

DIGITS = frozenset("0123456789")
BACKSLASH = "\\"


class RLEError(ValueError):
    """Malformed encoded data; `position` indexes the offending character."""

    def __init__(self, reason, position):
        super().__init__(f"{reason} (index {position})")
        self.reason = reason
        self.position = position


def runs(text):
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text)!r}")
    return [(ch, sum(1 for _ in group)) for ch, group in groupby(text)]


def encode(text):
    encoded = ""
    for ch, length in runs(text):
        prefix = "" if length == 1 else str(length)
        encoded += prefix + (BACKSLASH + ch if (ch in DIGITS or ch == BACKSLASH) else ch)
    return encoded


def decode(data, max_length=None):
    if not isinstance(data, str):
        raise TypeError(f"expected str, got {type(data)!r}")
    if max_length is not None and (type(max_length) is not int or max_length < 0):
        raise ValueError("max_length must be a non-negative int")
    result = []
    total = 0
    digits = ""
    item_start = 0
    escaping = False
    for pos, ch in enumerate(data):
        if escaping:
            if ch not in DIGITS and ch != BACKSLASH:
                raise RLEError("backslash must precede a digit or backslash", pos - 1)
            symbol = ch
        elif ch in DIGITS:
            if not digits:
                if ch == "0":
                    raise RLEError("count may not start with zero", pos)
                item_start = pos
            digits += ch
            continue
        elif ch == BACKSLASH:
            if not digits:
                item_start = pos
            escaping = True
            continue
        else:
            if not digits:
                item_start = pos
            symbol = ch
        escaping = False
        times = int(digits) if digits else 1
        if max_length is not None and total + times > max_length:
            raise RLEError("output limit exceeded", item_start)
        result.append(symbol * times)
        total += times
        digits = ""
    if escaping:
        raise RLEError("dangling backslash", len(data) - 1)
    if digits:
        raise RLEError("count at end of data", len(data))
    return "".join(result)
