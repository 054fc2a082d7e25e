"""Durations: a small lexer turns the text into tokens, then a validator walks them."""
import re

UNITS = {}
for _name, _size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
    UNITS[_name] = _size

_TOKEN = re.compile(r"(?P<num>[0-9]+)|(?P<unit>[a-z])|(?P<space>\s+)|(?P<other>.)", re.S)


def _lex(body):
    return [(m.lastgroup, m.group()) for m in _TOKEN.finditer(body)]


def parse_duration(text):
    if not isinstance(text, str):
        raise TypeError("text must be str")
    body = text.strip()
    sign = 1
    if body and body[0] in "+-":
        sign = {"+": 1, "-": -1}[body[0]]
        body = body[1:]
    tokens = _lex(body)
    if not tokens:
        raise ValueError("nothing to parse")
    if len(tokens) == 1 and tokens[0][0] == "num":
        return sign * int(tokens[0][1])
    # Whitespace is only allowed between components, i.e. right after a unit letter.
    tokens = [t for i, t in enumerate(tokens) if not (t[0] == "space" and i > 0 and tokens[i - 1][0] == "unit")]
    if len(tokens) % 2:
        raise ValueError("incomplete duration")
    order = list(UNITS)
    total, previous = 0, None
    for (k1, number), (k2, unit) in zip(tokens[::2], tokens[1::2]):
        if k1 != "num" or k2 != "unit" or unit not in UNITS:
            raise ValueError(f"bad component {number!r}{unit!r}")
        if previous is not None and order.index(unit) <= order.index(previous):
            raise ValueError("units out of order")
        previous = unit
        total += int(number) * UNITS[unit]
    return sign * total


def format_duration(seconds, *, largest="w", max_units=None):
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise TypeError("seconds must be int")
    if largest not in UNITS:
        raise ValueError("unknown largest unit")
    if max_units is not None:
        if isinstance(max_units, bool) or not isinstance(max_units, int) or max_units < 1:
            raise ValueError("max_units must be >= 1")
    if seconds == 0:
        return "0s"
    magnitude = -seconds if seconds < 0 else seconds
    allowed = list(UNITS)[list(UNITS).index(largest):]
    # Work from the smallest unit upwards, collecting counts, then reverse.
    counts = []
    for unit in reversed(allowed):
        if unit == allowed[0]:
            counts.append((unit, magnitude // UNITS[unit]))
            break
        bigger = allowed[allowed.index(unit) - 1]
        within = UNITS[bigger] // UNITS[unit]
        counts.append((unit, (magnitude // UNITS[unit]) % within))
    nonzero = [f"{n}{u}" for u, n in reversed(counts) if n]
    if max_units is not None:
        del nonzero[max_units:]
    return ("-" if seconds < 0 else "") + "".join(nonzero)
